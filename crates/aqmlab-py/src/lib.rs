//! `aqmlab._core`: the Python face of the engine, kept thin.
//!
//! A scenario comes in as a JSON document (the Python side parses TOML and
//! applies overrides); the engine decodes and validates it once. Results go
//! out as the resolved scenario and the summary (JSON text, so that they are
//! byte-for-byte what the engine serialised) and the tables as dicts of
//! column name -> list. All error conversion lives in the `error` module.

mod columns;
mod error;

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::units::SimTime;
use error::{internal, json_error, run_error, spec_error};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Parse and validate a scenario document given as JSON text.
fn decode(py: Python<'_>, json: &str) -> PyResult<Scenario> {
    let doc: Value = serde_json::from_str(json).map_err(|e| json_error(py, e))?;
    Scenario::from_value(doc).map_err(|e| spec_error(py, e))
}

fn to_json<T: serde::Serialize>(what: &str, v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| internal(what, e))
}

/// Validate a scenario (JSON text) and return the resolved scenario as JSON
/// text, every default filled in. Raises `ScenarioError` on a bad document.
#[pyfunction]
fn validate(py: Python<'_>, json: &str) -> PyResult<String> {
    let sc = decode(py, json)?;
    to_json("scenario", &sc)
}

/// What a valid scenario (JSON text) will store: a dict of `bytes` (in
/// all), `limit` (`metrics.memory_limit`), `warn` (the bytes above which a
/// run deserves a warning) and the rows by part.
#[pyfunction]
fn estimate<'py>(py: Python<'py>, json: &str) -> PyResult<Bound<'py, PyDict>> {
    let sc = decode(py, json)?;
    let e = sc.estimate_memory();
    let d = PyDict::new(py);
    d.set_item("bytes", e.bytes())?;
    d.set_item("limit", sc.metrics.memory_limit)?;
    d.set_item("warn", aqmlab_core::scenario::limits::WARN_MEMORY)?;
    d.set_item("queue_rows", e.queue_rows)?;
    d.set_item("param_rows", e.param_rows)?;
    d.set_item("flows", e.flows)?;
    d.set_item("flow_series_rows", e.flow_series_rows)?;
    d.set_item("trace_rows", e.trace_rows)?;
    d.set_item("pcap_packets", e.pcap_packets)?;
    d.set_item("phases", e.phases)?;
    d.set_item("snapshot_flows", e.snapshot_flows)?;
    d.set_item("group_delays", e.group_delays)?;
    Ok(d)
}

/// Run a scenario (JSON text) to the end.
///
/// `available`: the bytes the machine has free for the run; a run whose
/// estimated results exceed it (and `metrics.memory_limit`) is refused with
/// `ScenarioError` before it starts.
/// `progress(simulated_seconds, events)` is called now and then (`events`:
/// processed so far, 0 while the network is built); returning `False`
/// stops the run with `KeyboardInterrupt`, and an exception it raises stops
/// the run and propagates. Ctrl-C stops the run too. The GIL is released
/// while the engine runs.
///
/// Returns a dict: `scenario` and `summary` (JSON text), `queue`, `flows`,
/// `params`, `responses`, `pings`, `delay`, `group_delay`, `flow_series` and `events` (dicts of
/// column name -> Arrow buffers, see [`columns`]), `pcap` (the bytes of
/// `packets.pcap`, empty without `metrics.pcap`), `peak_packets` and
/// `version` (the engine's).
///
/// `every_s`: the least wall time between two calls (0, the default: at
/// every one of the engine's progress points, which fall at the same
/// simulated times in every run). Each call takes the interpreter's lock;
/// the `aqmlab run` command asks for 0.1 s so that the engine seldom waits
/// for the lock while numpy and pyarrow load beside it. Ctrl-C is noticed
/// at the calls.
#[pyfunction]
#[pyo3(signature = (json, progress=None, available=None, every_s=0.0))]
fn run<'py>(
    py: Python<'py>,
    json: &str,
    progress: Option<Py<PyAny>>,
    available: Option<u64>,
    every_s: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = decode(py, json)?;
    if let Some(bytes) = available {
        sc.check_machine_memory(bytes)
            .map_err(|e| spec_error(py, e))?;
    }
    let every = if every_s.is_finite() && every_s > 0.0 {
        std::time::Duration::from_secs_f64(every_s.min(3600.0))
    } else {
        std::time::Duration::ZERO
    };
    let mut last = std::time::Instant::now();
    let mut pending: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let mut tick = |now: SimTime, events: u64| -> bool {
            if !every.is_zero() {
                if last.elapsed() < every {
                    return true;
                }
                last = std::time::Instant::now();
            }
            Python::attach(|py| match keep_going(py, progress.as_ref(), now, events) {
                Ok(go) => go,
                Err(e) => {
                    pending = Some(e);
                    false
                }
            })
        };
        aqmlab_core::run(&sc, &mut tick)
    });
    let r = outcome.map_err(|e| run_error(e, pending.take()))?;
    hand_over(py, r)
}

/// The dict `run` returns. Each table is converted (see [`columns`]) and
/// then freed before the next, so that the run's results are held about
/// twice at most; a copy that does not fit raises `MemoryError`.
fn hand_over(py: Python<'_>, r: aqmlab_core::RunResult) -> PyResult<Bound<'_, PyDict>> {
    let aqmlab_core::RunResult {
        scenario,
        summary,
        queue,
        params,
        flows,
        responses,
        pings,
        peak_packets,
        delay,
        group_delay,
        flow_series,
        events,
        pcap,
    } = r;
    let d = PyDict::new(py);
    d.set_item("scenario", to_json("scenario", &scenario)?)?;
    d.set_item("summary", to_json("summary", &summary)?)?;
    d.set_item("peak_packets", peak_packets)?;
    d.set_item("version", aqmlab_core::VERSION)?;
    put(&d, "flows", flows)?;
    put(&d, "params", params)?;
    put(&d, "responses", responses)?;
    put(&d, "pings", pings)?;
    put(&d, "delay", delay)?;
    put(&d, "group_delay", group_delay)?;
    put(&d, "flow_series", flow_series)?;
    put(&d, "events", events)?;
    put(&d, "queue", queue)?;
    d.set_item("pcap", pyo3::types::PyBytes::new(py, &pcap))?;
    Ok(d)
}

/// `d[name]` = the table's columns, the table freed once copied; a
/// `MemoryError` from Python itself (it has no message) says where it
/// happened.
fn put<T: serde::Serialize>(d: &Bound<'_, PyDict>, name: &str, table: T) -> PyResult<()> {
    let py = d.py();
    columns::table(py, &table)
        .and_then(|t| d.set_item(name, t))
        .map_err(|e| {
            let bare = e.is_instance_of::<PyMemoryError>(py)
                && e.value(py)
                    .str()
                    .is_ok_and(|m| m.is_empty().unwrap_or(false));
            if bare {
                PyMemoryError::new_err(format!(
                    "out of memory: handing the {name} table of the results to Python"
                ))
            } else {
                e
            }
        })
}

/// Whether the run goes on: no pending signal, and the callback (if any)
/// did not return `False`.
fn keep_going(
    py: Python<'_>,
    progress: Option<&Py<PyAny>>,
    now: SimTime,
    events: u64,
) -> PyResult<bool> {
    py.check_signals()?;
    let Some(cb) = progress else {
        return Ok(true);
    };
    let answer = cb.call1(py, (now.as_secs_f64(), events))?;
    let answer = answer.bind(py);
    if answer.is_none() {
        return Ok(true);
    }
    answer.is_truthy()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    error::register(m)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add("ENGINE_VERSION", aqmlab_core::VERSION)?;
    Ok(())
}
