#!/usr/bin/env bash
# `make test`: the checks in stages, each timed; the stage times are printed at the end
# (also when a stage fails, up to it). Stages:
#   build        the venv and the engine (make build), the wheel from that engine (make wheel)
#   rust         cargo fmt, clippy, doc and test (make test-rust)
#   lint         ruff and mypy (make lint)
#   tools        Debian's chromium, ns2 and tshark (the browser test, the ns-2 cross-check, the
#                capture test), and PyPI's ns3 wheel for the ns-3 cross-check
#   python+ns2   pytest, every test but the cross-checks, beside the ns-2.35 cross-check (its
#                longest test after the others)
#   crosscheck   pytest -m crosscheck, the rest: ns-3.44, the testbed's real-time runs, the wheel
#                in a fresh venv, every preset in quick form
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
PY=${VENV:-.venv}/bin/python
names=()
secs=()
total0=$(date +%s)

report() {
    echo
    echo "stage times:"
    for i in "${!names[@]}"; do
        printf '  %-12s %5d s\n' "${names[$i]}" "${secs[$i]}"
    done
    printf '  %-12s %5d s\n' "total" "$(($(date +%s) - total0))"
}

stage() {
    local name=$1 t0 status
    shift
    echo "== stage $name: $*"
    t0=$(date +%s)
    "$@"
    status=$?
    names+=("$name")
    secs+=("$(($(date +%s) - t0))")
    if [ "$status" -ne 0 ]; then
        echo "stage $name failed (status $status)" >&2
        report
        exit "$status"
    fi
}

# pytest's status 5 means "no test collected": a stage whose tests were all deselected.
pytest_stage() {
    "$PY" -m pytest "$@"
    local s=$?
    [ "$s" -eq 5 ] && return 0
    return "$s"
}

stage build $MAKE --no-print-directory wheel
wheel=$(ls -t dist/aqmlab-*.whl 2>/dev/null | head -n 1)
stage rust $MAKE --no-print-directory test-rust
stage lint $MAKE --no-print-directory lint
stage tools $MAKE --no-print-directory browser ns2 ns3 tshark
# The tests but the cross-checks run beside the ns-2.35 cross-check, in two jobs of about the same
# length on the machine's two cores: the ns-2 module's longest test (six 40 s ns-2 runs of web
# traffic at 100 Mbit/s, two at a time) follows the other tests, and the rest of the module runs
# beside them. Their outputs follow each other when both are done.
NS2=tests/test_ns2_crosscheck.py
NS2_LONG=$NS2::test_open_pages_and_a_common_start_give_the_papers_collapse_in_ns2_and_ours
both() {
    local dir status_a status_b
    dir=$(mktemp -d)
    {
        pytest_stage -q -p no:cacheprovider -m "not crosscheck" &&
            pytest_stage -q -p no:cacheprovider -m crosscheck --durations=3 "$NS2_LONG"
    } >"$dir/python.log" 2>&1 &
    local a=$!
    pytest_stage -q -p no:cacheprovider -m crosscheck --durations=10 "$NS2" \
        --deselect "$NS2_LONG" >"$dir/ns2.log" 2>&1 &
    local b=$!
    wait "$a"
    status_a=$?
    wait "$b"
    status_b=$?
    echo "-- pytest -m 'not crosscheck', then $NS2_LONG"
    cat "$dir/python.log"
    echo "-- pytest -m crosscheck $NS2 (but the test above)"
    cat "$dir/ns2.log"
    rm -rf "$dir"
    [ "$status_a" -eq 0 ] && [ "$status_b" -eq 0 ]
}
stage python+ns2 both
export AQMLAB_WHEEL=$wheel
stage crosscheck pytest_stage -q -m crosscheck --durations=15 --ignore=tests/test_ns2_crosscheck.py
report
