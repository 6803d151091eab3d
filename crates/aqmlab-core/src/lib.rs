//! aqmlab-core: a fast, deterministic packet-level network simulator for
//! Active Queue Management research.
//!
//! Layers (data flows top to bottom): [`scenario`] (the spec and its
//! validation), [`world`] (the run), [`traffic`] (the applications: web
//! sessions), [`transport`] (TCP, UDP), [`net`] (links and
//! topologies), [`aqm`] (queue disciplines), [`metrics`], and the base:
//! [`units`], [`rng`], [`sim`], [`packet`].
//!
//! ```
//! use aqmlab_core::{scenario::{Scenario, Value}, run};
//! let doc = Value::Table(vec![
//!     ("duration".into(), Value::Str("2s".into())),
//!     ("topology".into(), Value::Table(vec![
//!         ("bottleneck_rate".into(), Value::Str("10Mbps".into())),
//!     ])),
//!     ("traffic".into(), Value::Array(vec![Value::Table(vec![
//!         ("kind".into(), Value::Str("bulk".into())),
//!         ("flows".into(), Value::Int(2)),
//!     ])])),
//! ]);
//! let sc = Scenario::from_value(doc).unwrap();
//! let r = run(&sc, &mut |_, _| true).unwrap();
//! assert!(r.summary.bottleneck.departures > 0);
//! ```

pub mod aqm;
pub mod mem;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod traffic;
pub mod transport;
pub mod units;
pub mod world;

pub use world::{run, run_checked, Progress, RunError, RunResult, Summary};

/// The engine's version, recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
