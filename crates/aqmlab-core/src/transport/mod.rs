//! Transport protocols: the packet-level TCP sender/receiver pair, UDP
//! sources, and the web-browsing application that drives TCP.

pub mod tcp;
pub mod udp;
pub mod web;

pub use tcp::{FlowStats, Seg, TcpConfig, TcpFlow};
pub use udp::UdpSource;
