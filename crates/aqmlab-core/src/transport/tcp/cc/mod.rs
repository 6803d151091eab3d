//! Congestion control: how the window grows on ACKs and how it is cut on
//! a loss, a timeout or an ECN-Echo. One file per algorithm; loss
//! detection and recovery, which decide what is sent next, are apart
//! (`recovery.rs`).

//! The algorithm is chosen per flow by `tcp.variant`: Reno's rules
//! (`reno.rs`) for `reno` and `newreno`, RFC 9438's for `cubic`
//! (`cubic.rs`), RFC 8257's for `dctcp` (`dctcp.rs`) and the L4S team's
//! reference for `prague` (`prague.rs`), whose state a
//! flow holds boxed in `TcpFlow::cc` ([`State`]; none for Reno and
//! NewReno, so their flows carry nothing more), and BBR v1's for `bbr`
//! (`bbr.rs`), whose state lives in the pacing flow's cold box and which
//! sets the window after every ACK (`pacing.rs`). `tcp.byte_counting`
//! (RFC 3465) changes how Reno, CUBIC and DCTCP count ACKs (`reno.rs`).
//! Every algorithm
//! answers the same events: a new ACK outside recovery (the window grows),
//! a congestion event by loss or by ECN-Echo (ssthresh is set, the window
//! cut), and a retransmission timeout (ssthresh set, one segment).
//!
//! The seam is four methods of the flow, not a trait object:
//! `grow_window` (a new ACK), `ecn_echo` and `loss_cut` (a congestion
//! event), `timeout_cut` (a timeout), each in `reno.rs` and each matching
//! on [`State`] to reach the algorithm's own rules; what the sender may
//! send is the flow's `cwnd` and, for a pacing flow, its pacing rate
//! (`pacing.rs`). Every algorithm reads and writes the variables the loss
//! recovery shares (cwnd, ssthresh, the RTT estimates, the recovery's
//! state), which live in the flow, so a trait's methods would take the
//! flow itself; the match keeps the variant's state beside them in one
//! box and the per-ACK path without a dynamic call. A new algorithm adds
//! a file here, a [`State`] variant and an arm in each of the four.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod hystart;
pub mod hystart_linux;
pub mod prague;
mod reno;

pub use bbr::{AckInfo, Bbr, CaState};
pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use prague::Prague;

use crate::scenario::{TcpSpec, TcpVariant};

/// The state an algorithm keeps beyond Reno's variables (one box per flow
/// that needs one).
#[derive(Clone, Debug)]
pub enum State {
    Cubic(Cubic),
    Dctcp(Dctcp),
    Prague(Prague),
}

impl State {
    /// The state a flow of `tcp.variant` starts with: with `tcp.hystart`
    /// CUBIC's slow start runs HyStart++ (RFC 9406), or Linux's classic
    /// HyStart with `tcp.cubic = "linux"`, whose window then follows
    /// Linux's rules.
    pub fn of(tcp: &TcpSpec) -> Option<State> {
        match tcp.variant {
            TcpVariant::Reno | TcpVariant::NewReno | TcpVariant::Bbr => None,
            TcpVariant::Cubic => {
                let mut c = Cubic::default();
                c.linux = tcp.cubic_linux();
                if tcp.hystart() && c.linux {
                    c.hystart_linux = Some(hystart_linux::LinuxHyStart::default());
                } else {
                    c.hystart = tcp.hystart().then(hystart::HyStart::default);
                }
                Some(State::Cubic(c))
            }
            TcpVariant::Dctcp => {
                let mut d = Dctcp::default();
                d.linux = tcp.dctcp_linux();
                Some(State::Dctcp(d))
            }
            TcpVariant::Prague => {
                let mut p = Prague::default();
                p.rtt_scaling = tcp.prague_rtt_scaling();
                Some(State::Prague(p))
            }
        }
    }
}
