//! Transport protocols: the packet-level TCP sender/receiver pair and UDP
//! sources.

pub mod tcp;
pub mod udp;

pub use tcp::{FlowStats, SackBlocks, Seg, TcpConfig, TcpFlow};
pub use udp::UdpSource;
