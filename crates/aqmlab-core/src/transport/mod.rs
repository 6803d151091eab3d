//! Transport protocols: the packet-level TCP sender/receiver pair.

pub mod tcp;

pub use tcp::{FlowStats, Seg, TcpConfig, TcpFlow};
