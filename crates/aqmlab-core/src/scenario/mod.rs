//! The scenario: the one definition of everything a user can write in a
//! scenario file, its decoding from a parsed document and its validation.
//!
//! Decoding goes through [`value::Value`] so that every error names its field
//! path (`traffic[1].flows`), the offending value and what is allowed, and
//! unknown keys are errors. `docs/scenario.md` documents every key.

pub mod decode;
pub mod limits;
pub mod metrics;
pub mod schedule;
pub mod seeds;
pub mod spec;
pub mod tcp;
pub mod tcp_group;
pub mod tcp_profile;
pub mod tcp_switches;
pub mod topo;
pub mod traffic;
pub mod value;
pub mod video;
pub mod web;

pub use decode::{SpecError, SpecResult};
pub use metrics::*;
pub use schedule::{Action, LinkDir, LinkSel, Occurrence, ScheduleEntry, MAX_SCHEDULE_ENTRIES};
pub use seeds::{Purpose, Seeds, SEED_KEYS};
pub use spec::*;
pub use tcp::*;
pub use tcp_switches::TcpSwitches;
pub use topo::*;
pub use traffic::*;
pub use value::Value;
pub use video::VideoSpec;
