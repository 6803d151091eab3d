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
//! Every algorithm answers the same events, the seam [`CongestionControl`]:
//! an ACK of data (its ECN-Echo, before loss recovery reads it), a new ACK
//! outside recovery (the window grows), a congestion event by loss or by
//! ECN-Echo (ssthresh is set, the window cut), a retransmission timeout
//! (ssthresh set, one segment), an undone reduction (the window back), and,
//! for a pacing flow, what it may send after an ACK's rate sample: its
//! window and pacing rate. Each algorithm
//! implements it in its own file (`Reno` for `reno` and `newreno`,
//! [`Cubic`], [`Dctcp`], [`Prague`], [`Bbr`], [`Ledbat`]); the default methods are
//! Reno's rules, which most share. The window's variables that loss
//! recovery shares (cwnd, ssthresh, the RTT estimates, the recovery's
//! state) live in the flow, so the trait's functions take the flow; the
//! algorithm's own state is in `TcpFlow::cc` ([`State`]) or, for BBR, in
//! the pacing flow's box. The flow's [`TcpFlow`] methods `echo_rules`,
//! `grow_window`, `rtt_seen`, `loss_cut`, `timeout_cut` and `pace_model` call the
//! algorithm of its `tcp.variant` (one `match`, statically dispatched: no
//! dynamic call on the per-ACK path). A new algorithm adds a file here, a
//! [`State`] variant if it keeps state, and an arm in `by_variant!`.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod hystart;
pub mod hystart_linux;
pub mod ledbat;
pub mod prague;
mod reno;

pub use bbr::{Bbr, CaState};
pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use ledbat::Ledbat;
pub use prague::Prague;

use super::pacing::Paced;
use super::rate::RateSample;
use super::undo::Prior;
use super::TcpFlow;
use crate::scenario::{TcpSpec, TcpVariant};
use crate::units::SimTime;
pub(in crate::transport::tcp) use reno::Reno;

/// The congestion-control seam: the events every algorithm answers. The
/// functions take the flow, whose window variables loss recovery shares;
/// the defaults are Reno's rules (RFC 5681, RFC 3168).
pub(in crate::transport::tcp) trait CongestionControl: Sized {
    /// Whether a timeout during fast recovery keeps the cut the recovery
    /// made (with `timeout_in_recovery = "keep"`, Linux's `tcp_enter_loss`).
    const KEEPS_RECOVERY_CUT: bool = true;

    /// An ACK of data arrives (`ack` its cumulative ACK), before loss
    /// recovery reads it: its ECN-Echo (`ece`: echoed to an ECN-capable
    /// flow). Default: RFC 3168 section 6.1.2's cut, once per window.
    #[inline(always)]
    fn on_ack(f: &mut TcpFlow, now: SimTime, ack: u64, ece: bool) {
        f.rfc3168_echo::<Self>(now, ack, ece);
    }

    /// A new ACK outside fast recovery and without ECN-Echo, for `acked`
    /// segments: the window grows. Default: slow start, then
    /// [`Self::avoidance`]; by the segments acknowledged (HyStart, byte
    /// counting: [`TcpFlow::counted_growth`]) where the flow counts them.
    #[inline(always)]
    fn on_new_ack(f: &mut TcpFlow, now: SimTime, acked: u64) {
        f.reno_growth::<Self>(now, acked);
    }

    /// Congestion avoidance's growth (cwnd >= ssthresh) for an ACK of
    /// `acked` segments; `counted`: the flow counts the segments
    /// acknowledged (RFC 3465), else each ACK. Default: Reno's (RFC 5681
    /// section 3.1: +1/cwnd per ACK; counted, one segment per window of
    /// segments acknowledged).
    #[inline(always)]
    fn avoidance(f: &mut TcpFlow, now: SimTime, acked: u64, counted: bool) {
        let _ = now;
        if counted {
            f.counted_avoidance(acked);
        } else {
            f.cwnd += 1.0 / f.cwnd;
        }
    }

    /// An RTT sample `rtt` taken at `now`, before the estimator takes it.
    /// Default: nothing (Prague's classic-ECN detector and LEDBAT's delays
    /// read it).
    #[inline(always)]
    fn on_rtt(f: &mut TcpFlow, now: SimTime, rtt: SimTime) {
        let _ = (f, now, rtt);
    }

    /// ssthresh after a congestion event by loss or ECN-Echo, given Reno's
    /// value `reno` (RFC 5681 eq. (4), or RFC 3168's halving).
    #[inline(always)]
    fn event_ssthresh(f: &mut TcpFlow, reno: f64) -> f64 {
        let _ = f;
        reno
    }

    /// A congestion event by loss (a fast retransmission, RACK's marks, a
    /// loss probe's repair); `after_ecn`: in a window an ECN cut already
    /// answered. Default: RFC 5681's cut with [`Self::event_ssthresh`].
    #[inline(always)]
    fn on_loss(f: &mut TcpFlow, after_ecn: bool) {
        f.reno_loss_cut::<Self>(after_ecn);
    }

    /// ssthresh at a retransmission timeout that cuts, given Reno's `reno`.
    #[inline(always)]
    fn timeout_ssthresh(f: &mut TcpFlow, reno: f64) -> f64 {
        let _ = f;
        reno
    }

    /// A retransmission timeout. Default: ssthresh by
    /// [`Self::timeout_ssthresh`] and one segment (RFC 5681 section 3.1).
    #[inline(always)]
    fn on_timeout(f: &mut TcpFlow) {
        f.reno_timeout_cut::<Self>();
    }

    /// Whether the algorithm sets the window itself (Linux's
    /// `cong_control`): no PRR acts on it in a recovery (`tcp_cong_control`
    /// and `tcp_rack_reo_timeout` skip `tcp_cwnd_reduction`: a recovery
    /// starts with the window it had), and no restart after idle shrinks it
    /// (`tcp_slow_start_after_idle_check`); it sets its window in a
    /// recovery by [`Self::on_recovery_ack`] or [`Self::pace`]. Default:
    /// no, PRR sets it with `tcp.prr`.
    #[inline(always)]
    fn owns_window(f: &TcpFlow) -> bool {
        let _ = f;
        false
    }

    /// A reduction found needless and undone, with `prior` the state from
    /// before it (Linux's `tcp_undo_cwnd_reduction`, which calls the
    /// algorithm's `undo_cwnd`). Default: the larger window and ssthresh
    /// of before and now (`tcp_reno_undo_cwnd`, which CUBIC, DCTCP and
    /// Prague use too).
    #[inline(always)]
    fn on_undo(f: &mut TcpFlow, prior: Prior) {
        f.reno_undo(prior);
    }

    /// An ACK in a SACK recovery, for an algorithm that owns its window,
    /// before anything is sent. Default: the window stays.
    #[inline(always)]
    fn on_recovery_ack(f: &mut TcpFlow) {
        let _ = f;
    }

    /// What a pacing flow may send after an ACK's rate sample `rs`: its
    /// window and pacing rate (`pacing.rs`). `flight`: segments in the
    /// network before the ACK and after it, and segments duplicate ACKs
    /// took out of it without SACK. Default: the window stays, the pacing
    /// rate is Linux's (`pacing::linux_rate`).
    #[inline(always)]
    fn pace(f: &mut TcpFlow, p: &mut Paced, now: SimTime, rs: &RateSample, flight: Flight) {
        let _ = (now, rs, flight);
        f.linux_pace(p);
    }
}

/// The flight around an ACK of a pacing flow ([`CongestionControl::pace`]).
#[derive(Clone, Copy, Debug)]
pub(in crate::transport::tcp) struct Flight {
    pub prior_in_flight: u64,
    pub in_flight: u64,
    pub held: u64,
}

/// Calls `$f` of the algorithm of `$flow`'s `tcp.variant`.
macro_rules! by_variant {
    ($flow:expr, $f:ident ( $($arg:expr),* )) => {
        match $flow.cfg.tcp.variant {
            TcpVariant::Reno | TcpVariant::NewReno => <Reno as CongestionControl>::$f($flow, $($arg),*),
            TcpVariant::Cubic => <Cubic as CongestionControl>::$f($flow, $($arg),*),
            TcpVariant::Dctcp => <Dctcp as CongestionControl>::$f($flow, $($arg),*),
            TcpVariant::Prague => <Prague as CongestionControl>::$f($flow, $($arg),*),
            TcpVariant::Bbr => <Bbr as CongestionControl>::$f($flow, $($arg),*),
            TcpVariant::Ledbat => <Ledbat as CongestionControl>::$f($flow, $($arg),*),
        }
    };
}

impl TcpFlow {
    /// [`CongestionControl::on_ack`] of the flow's algorithm.
    #[inline(always)]
    pub(in crate::transport::tcp) fn echo_rules(&mut self, now: SimTime, ack: u64, ece: bool) {
        by_variant!(self, on_ack(now, ack, ece))
    }

    /// [`CongestionControl::on_new_ack`] of the flow's algorithm.
    #[inline]
    pub(in crate::transport::tcp) fn grow_window(&mut self, now: SimTime, acked: u64) {
        by_variant!(self, on_new_ack(now, acked))
    }

    /// [`CongestionControl::on_rtt`] of the flow's algorithm.
    #[inline]
    pub(in crate::transport::tcp) fn rtt_seen(&mut self, now: SimTime, rtt: SimTime) {
        by_variant!(self, on_rtt(now, rtt))
    }

    /// [`CongestionControl::on_loss`] of the flow's algorithm.
    #[inline]
    pub(in crate::transport::tcp) fn loss_cut(&mut self, after_ecn: bool) {
        by_variant!(self, on_loss(after_ecn))
    }

    /// [`CongestionControl::on_timeout`] of the flow's algorithm.
    #[inline]
    pub(in crate::transport::tcp) fn timeout_cut(&mut self) {
        by_variant!(self, on_timeout())
    }

    /// [`CongestionControl::owns_window`] of the flow's algorithm.
    #[inline]
    pub(in crate::transport::tcp) fn cc_owns_window(&self) -> bool {
        by_variant!(self, owns_window())
    }

    /// [`CongestionControl::on_undo`] of the flow's algorithm.
    #[inline]
    pub(in crate::transport::tcp) fn cc_undo(&mut self, prior: Prior) {
        by_variant!(self, on_undo(prior))
    }

    /// [`CongestionControl::on_recovery_ack`] of the flow's algorithm.
    #[inline]
    pub(in crate::transport::tcp) fn recovery_step(&mut self) {
        by_variant!(self, on_recovery_ack())
    }

    /// [`CongestionControl::pace`] of the flow's algorithm.
    #[inline]
    pub(in crate::transport::tcp) fn pace_model(
        &mut self,
        p: &mut Paced,
        now: SimTime,
        rs: &RateSample,
        flight: Flight,
    ) {
        by_variant!(self, pace(p, now, rs, flight))
    }
}

/// The state an algorithm keeps beyond Reno's variables (one box per flow
/// that needs one).
#[derive(Clone, Debug)]
pub enum State {
    Cubic(Cubic),
    Dctcp(Dctcp),
    Prague(Prague),
    Ledbat(Ledbat),
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
            TcpVariant::Ledbat => Some(State::Ledbat(if tcp.ledbat_rfc7928() {
                Ledbat::rfc7928()
            } else {
                Ledbat::rfc6817()
            })),
            TcpVariant::Prague => {
                let mut p = Prague::default();
                p.rtt_scaling = tcp.prague_rtt_scaling();
                Some(State::Prague(p))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{TcpSpec, TcpVariant};
    use crate::transport::tcp::testing::sender;

    /// Through the one seam, each algorithm cuts by its own rule: with
    /// cwnd 20 and 20 segments in flight, a loss sets ssthresh to half the
    /// flight for Reno and NewReno (RFC 5681 eq. (4): 10), to beta x the
    /// window for CUBIC (RFC 9438 section 4.6: 0.7 x 20 = 14) and to half
    /// the window for DCTCP (Linux's `dctcp_react_to_loss`: 10); a timeout
    /// then sets the same ssthresh again and one segment.
    #[test]
    fn each_algorithm_cuts_by_its_own_rule() {
        for (variant, cut) in [
            (TcpVariant::Reno, 10.0),
            (TcpVariant::NewReno, 10.0),
            (TcpVariant::Cubic, 14.0),
            (TcpVariant::Dctcp, 10.0),
        ] {
            let tcp = TcpSpec {
                variant,
                ecn: true,
                ..TcpSpec::default()
            };
            let (mut tx, _) = sender(20.0, tcp);
            tx.loss_cut(false);
            assert_eq!(tx.ssthresh, cut, "{variant:?} loss");
            assert_eq!(tx.exit_cwnd, cut, "{variant:?} loss");
            tx.timeout_cut();
            assert_eq!((tx.ssthresh, tx.cwnd), (cut, 1.0), "{variant:?} timeout");
        }
    }
}
