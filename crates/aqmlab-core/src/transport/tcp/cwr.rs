//! An ECN reduction as Linux makes it (`tcp.ecn_reduction = "prr"`, on in
//! the linux profile): the CWR state of `net/ipv4/tcp_input.c`.
//!
//! An ACK carrying ECN-Echo, in the open state and past the last
//! reduction's window, enters CWR (`tcp_enter_cwr`): ssthresh is set by the
//! congestion control's rule at once (`tcp_init_cwnd_reduction`), the
//! window is not. From that ACK on, every ACK that delivers data sets the
//! window by PRR (`tcp_cwnd_reduction`, `prr.rs`): the pipe plus what PRR
//! allows, so that the flow sends about ssthresh / prior window of what is
//! delivered (one segment for every two after a halving) and reaches
//! ssthresh as the round trip ends, instead of the at-once rule's silence
//! until the pipe falls below ssthresh and one segment an ACK after it. The
//! window does not grow meanwhile. The state ends when the cumulative ACK
//! passes the highest segment sent at the echo (`snd_una` above
//! `high_seq`, so that the segment carrying CWR has arrived), with cwnd =
//! ssthresh (`tcp_end_cwnd_reduction`); an ECE on that ACK enters it again.
//! A loss found during it starts a recovery that continues the same
//! reduction (`tcp_enter_recovery` initialises none while
//! `tcp_in_cwnd_reduction`): no second cut, PRR's counts go on, and the
//! recovery ends at the same ssthresh. A timeout ends it (Linux's loss
//! state). There is no RFC 3168 one-segment hold: ssthresh is two segments
//! at least, as Linux's. SACK flows only (PRR's pipe is the scoreboard's);
//! BBR and Prague set their windows themselves and are not touched.

use super::sack_recovery::Lr;
use super::TcpFlow;
use crate::transport::tcp::prr::Prr;

/// Linux's CWR state, kept with SACK's state (`sack_recovery::Lr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Cwr {
    /// No ECN reduction under way.
    #[default]
    Off,
    /// An ECE entered it on this ACK; PRR starts from the window now.
    Entered,
    /// PRR sets the window on every ACK.
    On,
}

impl TcpFlow {
    /// The CWR state (off without SACK's state).
    fn cwr(&self) -> Cwr {
        self.lr.as_deref().map_or(Cwr::Off, |l| l.cwr)
    }

    fn set_cwr(&mut self, c: Cwr) {
        if let Some(l) = self.lr.as_deref_mut() {
            l.cwr = c;
        }
    }

    /// With `tcp.ecn_reduction = "prr"`, before an ACK's ECE (`ece`) is
    /// answered: the reduction under way ends on an ACK above
    /// `ecn_recover`. Returns whether the ECE enters a new one (not in a
    /// reduction or a recovery). A flow without ECN never enters it.
    #[inline]
    pub(super) fn cwr_echo(&mut self, ack: u64, ece: bool) -> bool {
        if !self.cfg.tcp.ecn {
            return false;
        }
        if self.cwr() != Cwr::Off && ack > self.ecn_recover {
            self.cwnd = self.ssthresh;
            self.set_cwr(Cwr::Off);
        }
        ece && self.cwr() == Cwr::Off && !self.in_recovery && ack > self.ecn_recover
    }

    /// An ECE enters the CWR state, ssthresh already set: one reduction
    /// for this window of data, marks and losses together, and CWR on the
    /// next new segment (RFC 3168 section 6.1.2).
    pub(super) fn cwr_enter(&mut self) {
        self.ecn_recover = self.snd_max;
        self.recover = self.snd_max;
        self.last_cut = super::Cut::Ecn;
        self.cwr_pending = true;
        self.cwnd_cnt = 0;
        self.set_cwr(Cwr::Entered);
        self.stats.ecn_reductions += 1;
    }

    /// The window of an ACK in the CWR state (a SACK flow's step 6):
    /// PRR's, toward ssthresh in whole segments. Returns whether the flow
    /// is in the state.
    #[inline]
    pub(super) fn cwr_window(
        &mut self,
        lr: &mut Lr,
        delivered: u64,
        advanced: bool,
        newly_lost: bool,
    ) -> bool {
        if lr.cwr == Cwr::Off {
            return false;
        }
        self.cwr_prr_started(lr);
        let target = self.prr_goal(self.ssthresh);
        if let Some(c) = lr
            .prr
            .on_ack(target, lr.sb.pipe(), delivered, advanced, newly_lost)
        {
            self.cwnd = c as f64;
        }
        true
    }

    /// A recovery starts: whether it continues a CWR reduction under way
    /// (no new cut; PRR's counts go on; it ends at the same ssthresh).
    pub(super) fn cwr_into_recovery(&mut self, lr: &mut Lr) -> bool {
        if lr.cwr == Cwr::Off {
            return false;
        }
        self.cwr_prr_started(lr);
        lr.cwr = Cwr::Off;
        self.exit_cwnd = self.ssthresh;
        true
    }

    /// PRR's counts from the window when the reduction's first ACK is
    /// taken (the state entered on this ACK), then on.
    fn cwr_prr_started(&self, lr: &mut Lr) {
        if lr.cwr == Cwr::Entered {
            lr.prr = Prr::start(self.window());
            lr.cwr = Cwr::On;
        }
    }

    /// A segment sent counts toward PRR's `prr_out`: in a recovery or a
    /// CWR reduction.
    #[inline(always)]
    pub(super) fn in_cwnd_reduction(&self, lr: &Lr) -> bool {
        self.in_recovery || lr.cwr == Cwr::On
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::TcpSpec;
    use crate::transport::tcp::testing::Net;
    use crate::units::SimTime;

    fn spec(prr_rule: bool) -> TcpSpec {
        let mut s = TcpSpec {
            sack: true,
            rack: true,
            prr: true,
            ecn: true,
            initial_cwnd: 20,
            ..TcpSpec::default()
        };
        s.set_ecn_prr(prr_rule);
        s
    }

    fn new_sent(n: &Net, from: u64, to: u64) -> Vec<(f64, u64)> {
        (n.sent.iter())
            .filter(|s| !s.2 && s.1 >= from && s.1 <= to)
            .map(|s| (s.0.as_secs_f64() * 1e3, s.1))
            .collect()
    }

    /// One CE mark, by hand: 20 segments leave at 0 ms, 1 ms apart through
    /// the bottleneck, 50 ms each way; segment 0 is marked. Its ACK (101 ms)
    /// echoes it: ssthresh = 20 / 2 = 10. With the CWR state the window is
    /// PRR's: that ACK delivers one segment, the pipe is 19, and PRR's
    /// first ACK sends one (20 at 101 ms); then ceil(10 d / 20) - prr_out
    /// sends one for every second ACK, 21 to 28 at 103, 105, ..., 117 ms.
    /// The 19th ACK (119 ms) leaves the pipe at 10 = ssthresh, where
    /// PRR-SSRB's bound sends nothing; the 20th leaves 9 and sends 29 at
    /// 120 ms. The ACK of 20 (202 ms, above the 20 segments sent at the
    /// echo) ends the state with cwnd = 10 and grows it, 10.1, as Linux's
    /// `tcp_cong_control` does after the state's end on the same ACK. At
    /// once (the other rule), cwnd = 10 at 101 ms and nothing goes until the
    /// pipe is below it: 20 to 29 at 111 to 120 ms, one an ACK.
    #[test]
    fn an_echo_reduces_the_window_by_prr_over_the_round() {
        let mut n = Net::new(spec(true), 60, 50, 1000, &[]);
        n.set_marks(&[(0, 1)]);
        n.run(5000);
        let got = new_sent(&n, 20, 29);
        let want: Vec<(f64, u64)> = (20..=29)
            .map(|q| {
                (
                    if q == 29 {
                        120.0
                    } else {
                        101.0 + 2.0 * (q - 20) as f64
                    },
                    q,
                )
            })
            .collect();
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(&want) {
            assert!((g.0 - w.0).abs() < 1e-6 && g.1 == w.1, "{got:?}");
        }
        assert_eq!(n.cwnd_at(101), 20.0);
        let before = |ms: u64| {
            n.cwnd
                .iter()
                .rfind(|c| c.0 < SimTime::from_millis(ms))
                .unwrap()
                .1
        };
        assert_eq!(before(202), 10.0);
        assert!((n.cwnd_at(202) - 10.1).abs() < 1e-9);
        assert_eq!(n.tx.ssthresh, 10.0);
        assert_eq!((n.tx.stats.ecn_reductions, n.tx.stats.retransmits), (1, 0));

        let mut once = Net::new(spec(false), 60, 50, 1000, &[]);
        once.set_marks(&[(0, 1)]);
        once.run(5000);
        let got = new_sent(&once, 20, 29);
        let at = |q: u64| 111.0 + (q - 20) as f64;
        assert!(
            got.iter().all(|&(t, q)| (t - at(q)).abs() < 1e-6),
            "{got:?}"
        );
        assert_eq!(once.cwnd_at(101), 10.0);
    }

    /// A loss in the round a CWR reduction answers continues it: segment
    /// 0 is marked and 5 lost. The recovery that the SACKs above 5 start
    /// makes no second cut: ssthresh stays 10, and the recovery ends with
    /// cwnd = 10 (then grown by its last ACK); the at-once rule's recovery
    /// also keeps the one cut.
    #[test]
    fn a_loss_in_the_reductions_round_makes_no_second_cut() {
        for rule in [true, false] {
            let mut n = Net::new(spec(rule), 60, 50, 1000, &[(5, 1)]);
            n.set_marks(&[(0, 1)]);
            n.run(5000);
            let s = &n.tx.stats;
            assert_eq!((s.ecn_reductions, s.sack_recoveries, s.timeouts), (1, 1, 0));
            assert_eq!(n.tx.ssthresh, 10.0, "rule {rule}");
            let end = n
                .recovery
                .iter()
                .find(|r| !r.1 && r.0 > SimTime::ZERO)
                .unwrap()
                .0;
            let w = n.cwnd.iter().find(|c| c.0 >= end).unwrap().1;
            assert!((10.0..10.2).contains(&w), "rule {rule}: {w} at {end:?}");
        }
    }
}
