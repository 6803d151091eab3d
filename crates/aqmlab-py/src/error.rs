//! Every conversion of an engine error into a Python exception.
//!
//! - [`SpecError`] (and a document that does not parse) becomes
//!   `aqmlab._core.ScenarioError(path, msg)`, a `ValueError` whose `str()` is
//!   `"path: msg"` (just `msg` when the path is empty).
//! - [`RunError::Interrupted`] becomes the error the progress callback or the
//!   signal check raised, or `KeyboardInterrupt` when the callback asked to stop.
//! - Failures to convert results become `RuntimeError`: they are bugs, not
//!   user errors.

use aqmlab_core::scenario::SpecError;
use aqmlab_core::RunError;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use std::ffi::CStr;
use std::fmt::Display;

/// The class `aqmlab._core.ScenarioError`, defined at import.
///
/// It is a Python class (abi3 builds cannot subclass native exceptions from
/// Rust): a `ValueError` with `.path` (`traffic[1].flows`, `""` for the whole
/// document) and `.msg` (what is wrong with the value and what is allowed);
/// `str()` is `"path: msg"`. Its args are `(path, msg)`, so it pickles.
const SCENARIO_ERROR_SRC: &CStr = c"
class ScenarioError(ValueError):
    \"\"\"A scenario that does not parse or does not validate.

    ``path`` names the field (``traffic[1].flows``; empty for the whole
    document) and ``msg`` says what is wrong and what is allowed.
    \"\"\"

    def __init__(self, path, msg):
        super().__init__(path, msg)
        self.path = path
        self.msg = msg

    def __str__(self):
        return f'{self.path}: {self.msg}' if self.path else self.msg
";

static SCENARIO_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Define `ScenarioError` in the module `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    py.run(SCENARIO_ERROR_SRC, Some(&m.dict()), None)?;
    let ty = m.getattr("ScenarioError")?.cast_into::<PyType>()?;
    let _ = SCENARIO_ERROR.set(py, ty.unbind());
    Ok(())
}

/// Raise `ScenarioError(path, msg)`.
pub fn scenario_error(py: Python<'_>, path: impl Into<String>, msg: impl Into<String>) -> PyErr {
    let (path, msg) = (path.into(), msg.into());
    match SCENARIO_ERROR.get(py) {
        Some(ty) => PyErr::from_type(ty.bind(py).clone(), (path, msg)),
        None => PyValueError::new_err(format!("{path}: {msg}")),
    }
}

/// A validation error of the core.
pub fn spec_error(py: Python<'_>, e: SpecError) -> PyErr {
    scenario_error(py, e.path, e.msg)
}

/// A scenario document that is not valid JSON (or holds values the scenario
/// format has no place for, such as null).
pub fn json_error(py: Python<'_>, e: serde_json::Error) -> PyErr {
    scenario_error(py, "", format!("the scenario document does not parse: {e}"))
}

/// Why the run stopped: the callback's own error if it raised one (or the
/// signal check failed), else `KeyboardInterrupt`.
pub fn run_error(e: RunError, pending: Option<PyErr>) -> PyErr {
    if let Some(err) = pending {
        return err;
    }
    // Later engine errors that are not interruptions are not user errors either.
    #[allow(unreachable_patterns)]
    match e {
        RunError::Interrupted(t) => PyKeyboardInterrupt::new_err(format!(
            "run stopped by the progress callback at simulated time {t}"
        )),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// A result that could not be converted: a bug in the bindings.
pub fn internal(what: &str, e: impl Display) -> PyErr {
    PyRuntimeError::new_err(format!("aqmlab internal error: {what}: {e}"))
}
