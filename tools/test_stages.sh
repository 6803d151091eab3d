#!/usr/bin/env bash
# `make test`: every check, in three lanes that run beside each other, so that the machine's two
# cores stay busy from the first compile to the last cross-check without waiting at the end of a
# stage for its slowest part, then the presets' quick forms (a sweep of their own on two workers).
# Each part is timed; the parts' times and each lane's are printed at the end (also when a part
# fails). The lanes:
#   engine   make wheel (the venv, the engine and its router, the wheel), make lint, Debian's
#            chromium, ns2 and tshark and PyPI's ns3 wheel (the browser test, the cross-checks,
#            the capture test); then pytest, every test but the cross-checks; then the ns-2.35
#            module's longest test (six 40 s ns-2 runs of web traffic at 100 Mbit/s, two at a time)
#   rust     make test-rust (cargo fmt, clippy, doc, and the Rust tests in a release build of
#            their own); then, once the engine lane has its tools, the rest of the ns-2.35 module
#            and the other cross-checks (ns-3.44, the demo's full form)
#   clock    once the engine lane has its tools: the runs that wait on the clock rather than the
#            CPU (the testbed's real-time runs, whose router runs at nice -10, and the wheel
#            installed in a fresh venv); the CPU-bound pytest runs are at nice 10
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
PY=${VENV:-.venv}/bin/python
total0=$(date +%s)

# pytest's status 5 means "no test collected": a part whose tests were all deselected.
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

NS2=tests/test_ns2_crosscheck.py
NS2_LONG=$NS2::test_open_pages_and_a_common_start_give_the_papers_collapse_in_ns2_and_ours
CLOCK=(tests/test_testbed.py tests/test_wheel.py)
PRESETS=tests/test_presets_quick.py
RUN=$(mktemp -d)
trap 'rm -rf "$RUN"' EXIT

# part LANE NAME COMMAND...: COMMAND timed; its time and status go to the lane's record.
part() {
    local lane=$1 name=$2 t0 s
    shift 2
    echo "-- $name"
    t0=$(date +%s)
    "$@"
    s=$?
    echo "$name|$(($(date +%s) - t0))|$s" >>"$RUN/$lane.parts"
    return "$s"
}

# The engine lane's tools are ready (or failed): the other lanes wait for this file.
tools_ready() {
    while [ ! -e "$RUN/ready" ]; do sleep 2; done
    [ "$(cat "$RUN/ready")" = ok ] || {
        echo "not run: the engine lane's build or tools failed"
        return 1
    }
}

pytest_nice() { nice -n 10 "$PY" -m pytest -q -p no:cacheprovider "$@"; }

lane_engine() {
    if part engine "make wheel" $MAKE --no-print-directory wheel &&
        part engine "make lint" $MAKE --no-print-directory lint &&
        part engine "make browser ns2 ns3 tshark" $MAKE --no-print-directory browser ns2 ns3 tshark
    then
        echo ok >"$RUN/ready"
    else
        echo failed >"$RUN/ready"
        return 1
    fi
    part engine "pytest -m 'not crosscheck'" pytest_stage_nice -m 'not crosscheck' &&
        part engine "pytest $NS2_LONG" pytest_nice -m crosscheck --durations=1 "$NS2_LONG"
}

lane_rust() {
    part rust "make test-rust" $MAKE --no-print-directory test-rust &&
        tools_ready &&
        part rust "pytest -m crosscheck $NS2 (but its longest test)" \
            pytest_nice -m crosscheck --durations=10 "$NS2" --deselect "$NS2_LONG" &&
        part rust "pytest -m crosscheck, the others (ns-3.44, the demo's full form)" \
            pytest_stage_nice -m crosscheck --durations=5 --ignore="$NS2" --ignore="$PRESETS" \
            "${CLOCK[@]/#/--ignore=}"
}

lane_clock() {
    tools_ready || return 1
    AQMLAB_WHEEL=$(ls -t dist/aqmlab-*.whl 2>/dev/null | head -n 1)
    export AQMLAB_WHEEL
    part clock "pytest -m crosscheck ${CLOCK[*]}" \
        pytest_stage -q -p no:cacheprovider -m crosscheck --durations=5 "${CLOCK[@]}"
}

pytest_stage_nice() {
    pytest_nice "$@"
    local s=$?
    [ "$s" -eq 0 ] || [ "$s" -eq 5 ]
}

report() {
    echo
    echo "times (s):"
    local lane line name secs status
    for lane in engine rust clock presets; do
        [ -e "$RUN/$lane.parts" ] || continue
        while IFS= read -r line; do
            name=${line%%|*}
            line=${line#*|}
            secs=${line%%|*}
            status=${line#*|}
            printf '  %-8s %5d  %s%s\n' "$lane" "$secs" "$name" \
                "$([ "$status" -eq 0 ] || echo " (failed, status $status)")"
        done <"$RUN/$lane.parts"
    done
    for i in "${!names[@]}"; do
        printf '  %-8s %5d  %s\n' "lanes" "${secs_of[$i]}" "${names[$i]}"
    done
    printf '  %-8s %5d\n' "total" "$(($(date +%s) - total0))"
}

names=()
secs_of=()
timed() {
    local name=$1 t0 s
    shift
    t0=$(date +%s)
    "$@"
    s=$?
    names+=("$name")
    secs_of+=("$(($(date +%s) - t0))")
    return "$s"
}

if ! timed "the three lanes, side by side" jobs_beside "engine lane" lane_engine \
    "rust lane" lane_rust "clock lane" lane_clock; then
    echo "make test failed" >&2
    report
    exit 1
fi
if ! part presets "pytest $PRESETS (every preset's quick form, two workers)" \
    pytest_stage -q -p no:cacheprovider -m crosscheck --durations=1 "$PRESETS"; then
    echo "make test failed" >&2
    report
    exit 1
fi
report
