//! Congestion control: how the window grows on ACKs and how it is cut on
//! a loss, a timeout or an ECN-Echo. One file per algorithm; loss
//! detection and recovery, which decide what is sent next, are apart
//! (`recovery.rs`).

//! The algorithm is chosen per flow by `tcp.variant`: Reno's rules
//! (`reno.rs`) for `reno` and `newreno`, RFC 9438's for `cubic`
//! (`cubic.rs`), whose state a flow holds in [`TcpFlow::cubic`] (none for
//! Reno and NewReno, so their flows carry nothing more), and BBR v1's for
//! `bbr` (`bbr.rs`), whose state lives in the pacing flow's cold box and
//! which sets the window after every ACK (`pacing.rs`). Every algorithm
//! answers the same events: a new ACK outside recovery (the window grows),
//! a congestion event by loss or by ECN-Echo (ssthresh is set, the window
//! cut), and a retransmission timeout (ssthresh set, one segment).
//!
//! [`TcpFlow::cubic`]: super::TcpFlow

pub mod bbr;
pub mod cubic;
mod reno;

pub use bbr::{AckInfo, Bbr, CaState};
pub use cubic::Cubic;
