#!/usr/bin/env bash
# The engine's speed against an earlier revision's, alternated on this machine.
#
#   tools/bench_against.sh BENCH REV [ROUNDS] [SCENARIO]
#
# BENCH is the bench example as built now (`make bench-against` passes the one `make bench`
# runs). REV's bench example is built plain (`cargo build --release`) in a temporary worktree,
# once per commit (kept in target/bench-ref/COMMIT). Each round runs both in turn on SCENARIO
# (scenarios/canonical.toml by default), three repetitions each, and takes each one's best
# simulated seconds per wall second: alternating puts both under the same spells of a shared
# machine's load, which moves a single figure by a third. Prints each round, the medians of
# the two and their ratio, and the range of the rounds' ratios. A figure, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: tools/bench_against.sh BENCH REV [ROUNDS] [SCENARIO]" >&2; exit 2; }
[ $# -ge 2 ] || usage
bench=$1 rev=$2 rounds=${3:-8} scenario=${4:-scenarios/canonical.toml}
[ -x "$bench" ] || { echo "bench_against.sh: BENCH: no executable at '$bench'" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench_against.sh: ROUNDS: '$rounds' is not a positive whole number" >&2; exit 2; }
[ -f "$scenario" ] || { echo "bench_against.sh: SCENARIO: no file '$scenario'" >&2; exit 2; }
commit=$(git rev-parse --verify --quiet "$rev^{commit}") \
    || { echo "bench_against.sh: REV: '$rev' is not a commit of this repository" >&2; exit 2; }
ref=target/bench-ref/$commit/bench
if [ ! -x "$ref" ]; then
    tree=$(mktemp -d)
    trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true; rm -rf "$tree" "$tree-target"' EXIT
    git worktree add --quiet --detach "$tree" "$commit"
    echo "building the bench example of ${commit:0:12} (plain release build)"
    (cd "$tree" && CARGO_TARGET_DIR="$tree-target" cargo build --release --quiet -p aqmlab-core --example bench)
    mkdir -p "$(dirname "$ref")"
    cp "$tree-target/release/examples/bench" "$ref"
    git worktree remove --force "$tree"
    rm -rf "$tree" "$tree-target"
    trap - EXIT
fi

# The best simulated s per wall s of one run: the "best" column of the scenario's row.
best() {
    "$1" --reps 3 "$scenario" 2>"$errors" | awk '
        $1 == "scenario" { for (i = 1; i <= NF; i++) if ($i == "best") col = i; next }
        col && NF >= col && $col ~ /^[0-9.]+$/ { print $col; exit }'
}

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
echo "$(basename "$scenario"), best of 3 repetitions, simulated s per wall s; ${commit:0:12} (reference) and now, alternated"
printf '%-6s %10s %10s %7s\n' round reference now ratio
refs=() nows=() ratios=()
for i in $(seq 1 "$rounds"); do
    a=$(best "$ref") b=$(best "$bench")
    [ -n "$a" ] && [ -n "$b" ] || { echo "bench_against.sh: a bench run printed no figure:" >&2; cat "$errors" >&2; exit 1; }
    r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')
    printf '%-6s %10s %10s %7s\n' "$i" "$a" "$b" "$r"
    refs+=("$a") nows+=("$b") ratios+=("$r")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ma=$(median "${refs[@]}") mb=$(median "${nows[@]}")
lo=$(printf '%s\n' "${ratios[@]}" | sort -g | head -1) hi=$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)
awk -v a="$ma" -v b="$mb" -v lo="$lo" -v hi="$hi" \
    'BEGIN { printf "median   %10.1f %10.1f %7.3f  (rounds %s-%s)\n", a, b, b / a, lo, hi }'
