#!/usr/bin/env bash
# `make test`: the checks in stages, each timed; the stage times are printed at the end
# (also when a stage fails, up to it). Each stage runs its parts as jobs beside each other, so
# that the machine's two cores stay busy, and prints their outputs one after the other when all
# are done, with the time each part took. More CPU-bound processes than cores cost more than
# they share here (measured: lanes that overlapped the stages, with three or four CPU-bound
# processes at once, took 1 546 s against 1 424 for these stages on the same day). Stages:
#   build+rust   the venv and the engine (make build), the wheel from that engine (make wheel),
#                ruff and mypy (make lint), Debian's chromium, ns2, tshark and user-mode-linux
#                and PyPI's ns3 wheel (the browser test, the cross-checks, the capture test,
#                Linux's queue discs), in this order;
#                beside them cargo fmt, clippy, doc and test (make test-rust), whose release
#                build shares the engine's dependencies (a test profile of its own built them
#                twice: measured no faster here, 249 s against 238)
#   python+ns2   pytest, every test but the cross-checks, beside the ns-2.35 cross-check (its
#                longest test after the others), both at a lower CPU priority (nice 10); beside
#                them the runs that wait on the clock rather than the CPU: the testbed's
#                real-time runs (its router, and below it the hosts' programs, in the real-time
#                class unless a test names nice -10), Linux's queue discs in a user-mode Linux
#                guest, and the wheel installed in a fresh venv
#   crosscheck   pytest -m crosscheck, the rest: ns-3.44, every preset in quick form
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
    [ "$s" -eq 0 ] || [ "$s" -eq 5 ]
}

# jobs TITLE COMMAND [TITLE COMMAND ...]: each COMMAND (a shell function or a command line
# without arguments) in the background, its output in a file; when all are done their outputs
# in order, each headed by its title and the seconds it took; fails if any failed.
jobs_beside() {
    local dir i n status=0
    dir=$(mktemp -d)
    local titles=() pids=()
    n=0
    while [ $# -gt 0 ]; do
        titles+=("$1")
        (
            t0=$(date +%s)
            $2 >"$dir/$n.log" 2>&1
            s=$?
            echo "$(($(date +%s) - t0))" >"$dir/$n.secs"
            exit "$s"
        ) &
        pids+=($!)
        n=$((n + 1))
        shift 2
    done
    local codes=()
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}"
        codes+=($?)
    done
    for i in "${!titles[@]}"; do
        echo "-- ${titles[$i]} ($(cat "$dir/$i.secs" 2>/dev/null || echo '?') s, status ${codes[$i]})"
        cat "$dir/$i.log"
        [ "${codes[$i]}" -eq 0 ] || status=1
    done
    rm -rf "$dir"
    return "$status"
}

build_lint_tools() {
    $MAKE --no-print-directory wheel &&
        $MAKE --no-print-directory lint &&
        $MAKE --no-print-directory browser ns2 ns3 tshark uml
}
rust() { $MAKE --no-print-directory test-rust; }
stage build+rust jobs_beside "make wheel, lint, then browser ns2 ns3 tshark uml" build_lint_tools \
    "make test-rust" rust
wheel=$(ls -t dist/aqmlab-*.whl 2>/dev/null | head -n 1)
export AQMLAB_WHEEL=$wheel

# The tests but the cross-checks run beside the ns-2.35 cross-check, in two jobs of about the same
# length on the machine's two cores: the ns-2 module's longest test (six 40 s ns-2 runs of web
# traffic at 100 Mbit/s, two at a time) follows the other tests, and the rest of the module runs
# beside them. Both yield the CPU to a third job, the runs that wait on the clock.
NS2=tests/test_ns2_crosscheck.py
NS2_LONG=$NS2::test_open_pages_and_a_common_start_give_the_papers_collapse_in_ns2_and_ours
CLOCK=(tests/test_testbed.py tests/test_linux_qdisc.py tests/test_wheel.py)
python_then_long() {
    nice -n 10 bash -c "$(declare -f pytest_stage); PY=$PY
        pytest_stage -q -p no:cacheprovider -m 'not crosscheck' &&
            pytest_stage -q -p no:cacheprovider -m crosscheck --durations=3 '$NS2_LONG'"
}
ns2_rest() {
    nice -n 10 "$PY" -m pytest -q -p no:cacheprovider -m crosscheck --durations=10 "$NS2" \
        --deselect "$NS2_LONG"
}
clock_bound() {
    pytest_stage -q -p no:cacheprovider -m crosscheck --durations=5 "${CLOCK[@]}"
}
stage python+ns2 jobs_beside "pytest -m 'not crosscheck', then $NS2_LONG" python_then_long \
    "pytest -m crosscheck $NS2 (but the test above)" ns2_rest \
    "pytest -m crosscheck ${CLOCK[*]} (the testbed's real-time runs, the wheel)" clock_bound
stage crosscheck pytest_stage -q -m crosscheck --durations=15 --ignore="$NS2" \
    "${CLOCK[@]/#/--ignore=}"
report
