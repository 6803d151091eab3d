#!/usr/bin/env bash
# Profile-guided optimisation of aqmlab's engine (the Makefile's `build` and `bench`).
#
#   tools/pgo.sh tool            print the llvm-profdata that reads rustc's profiles (the one of
#                                rustc's own LLVM major version); exit 1 if there is none
#   tools/pgo.sh profile VENV    build the engine instrumented (the Python extension, installed
#                                into VENV, and the bench example), run the training set
#                                (tools/pgo_train.py, then the bench's scenarios briefly: the
#                                files $BENCH_FILES and the schemes on the canonical dumbbell,
#                                $AQM_KINDS, both the Makefile's) and merge the counts into
#                                target/pgo/merged.profdata
#
# The Makefile then builds both with -Cprofile-use in target/pgo-use. The two are trained
# separately because the bench example's dev-dependencies give the engine crate other symbol
# names than it has inside the extension. Nothing computed changes, only the speed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The schemes trained on the canonical dumbbell (the Makefile passes its AQM_KINDS, the bench's).
KINDS=${AQM_KINDS:-droptail red pi codel}

tool() {
    local major sysroot host t
    major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
    sysroot=$(rustc --print sysroot)
    host=$(rustc -vV | sed -n 's/^host: //p')
    # rustup's llvm-tools component, then the distribution's versioned and plain tools.
    for t in "$sysroot/lib/rustlib/$host/bin/llvm-profdata" "$(command -v "llvm-profdata-$major" || true)" \
        "$(command -v llvm-profdata || true)"; do
        if [ -n "$t" ] && [ -x "$t" ] && "$t" --version 2>/dev/null | grep -q "LLVM version $major\."; then
            echo "$t"
            return 0
        fi
    done
    return 1
}

profile() {
    local venv=$1 profdata dir=target/pgo
    [ -n "${BENCH_FILES:-}" ] || { echo "pgo.sh: BENCH_FILES is not set: the bench's scenario files, which the Makefile passes (make build)" >&2; exit 2; }
    profdata=$(tool) || { echo "pgo.sh: no llvm-profdata for rustc's LLVM" >&2; exit 1; }
    mkdir -p "$dir"
    rm -rf "$dir/raw" "$dir/merged.profdata"
    export RUSTFLAGS="-Cprofile-generate=$PWD/$dir/raw" CARGO_TARGET_DIR=target/pgo-gen
    echo "pgo: building the engine instrumented"
    "$venv/bin/maturin" develop --release --quiet --extras dask >/dev/null
    cargo build --release --quiet -p aqmlab-core --example bench
    rm -rf "$dir/raw" # what the build scripts and macros counted
    echo "pgo: training"
    "$venv/bin/python" tools/pgo_train.py $KINDS
    local bench=target/pgo-gen/release/examples/bench k args=()
    read -ra args <<<"$BENCH_FILES"
    for k in $KINDS; do args+=("scenarios/canonical.toml@$k"); done
    # Their figures go to a log (shown if a run fails).
    local log=$dir/bench-training.log
    { "$bench" --reps 1 "${args[@]}" &&
        "$bench" --scale --events 500000 --warmup 1 --reps 1 --setup 0 scenarios/canonical.toml; } \
        >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
    "$profdata" merge -o "$dir/merged.profdata" "$dir"/raw/*.profraw
    echo "pgo: profile in $dir/merged.profdata"
}

case "${1:-}" in
tool) tool ;;
profile) profile "${2:?usage: tools/pgo.sh profile VENV}" ;;
*)
    echo "usage: tools/pgo.sh tool | profile VENV" >&2
    exit 2
    ;;
esac
