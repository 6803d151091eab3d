//! Links and topologies.

pub mod link;
pub mod topology;

pub use link::{Link, LossModel, WireFloor};
