//! Transport protocols: the packet-level TCP sender/receiver pair and UDP
//! sources.

pub mod tcp;
pub mod udp;

pub use tcp::{FlowStats, Seg, TcpConfig, TcpFlow};
pub use udp::UdpSource;
