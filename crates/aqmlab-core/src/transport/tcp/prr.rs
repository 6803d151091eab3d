//! Proportional Rate Reduction (RFC 6937) during fast recovery, as Linux
//! 6.x computes it (`tcp_cwnd_reduction` in `net/ipv4/tcp_input.c`).
//!
//! On entering recovery (RFC 6937 section 3): `prr_delivered = prr_out =
//! 0`, and the window before the cut is kept (`prior_cwnd`; the RFC's
//! RecoverFS is the flight then, Linux uses the window, and so does
//! aqmlab). On every ACK in recovery that delivers data, with
//! `DeliveredData` the segments newly acknowledged, cumulatively or by SACK
//! (without SACK: estimated from the duplicate ACKs, section 3), and `pipe`
//! after the ACK:
//!
//! ```text
//! prr_delivered += DeliveredData
//! if pipe > ssthresh:                     (proportional part)
//!     sndcnt = ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out
//! else:                                   (PRR-SSRB, the slow start bound)
//!     sndcnt = max(prr_delivered - prr_out, DeliveredData)
//!              + 1 if the ACK advanced snd_una and marked nothing newly lost
//!     sndcnt = min(ssthresh - pipe, sndcnt)
//! sndcnt = max(sndcnt, 1 if prr_out = 0)  (the fast retransmission goes)
//! cwnd = pipe + sndcnt
//! ```
//!
//! and every segment sent in recovery adds to `prr_out`. Where Linux and
//! the RFC differ, Linux's choice is taken: RecoverFS is the window before
//! the cut; SSRB's extra segment needs an ACK that advanced snd_una and found
//! no new loss (the RFC adds one MSS on every ACK); the first ACK of a
//! recovery always lets one segment go. An ACK that delivers nothing
//! leaves cwnd as it is. Recovery ends with cwnd = ssthresh (Linux's
//! `tcp_end_cwnd_reduction`; RFC 6937 section 3).

/// PRR's state for one recovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Prr {
    /// The window when recovery began, segments (at least 1).
    pub prior_cwnd: u64,
    /// Segments delivered to the receiver since then.
    pub delivered: u64,
    /// Segments sent since then (retransmissions and new data).
    pub out: u64,
}

impl Prr {
    /// A recovery begins with the window `prior_cwnd` (before the cut).
    pub fn start(prior_cwnd: u64) -> Prr {
        Prr {
            prior_cwnd: prior_cwnd.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// An ACK in recovery delivered `delivered` segments, leaving `pipe` in
    /// flight; `ssthresh` in whole segments. Returns the new cwnd (`pipe +
    /// sndcnt`, at least 1), or `None` when the ACK delivered nothing.
    pub fn on_ack(
        &mut self,
        ssthresh: u64,
        pipe: u64,
        delivered: u64,
        una_advanced: bool,
        newly_lost: bool,
    ) -> Option<u64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let (ss, pipe_i, out) = (ssthresh as i64, pipe as i64, self.out as i64);
        let mut sndcnt = if pipe_i > ss {
            // RFC 6937 section 3, the proportional part: ceil by integers.
            let num = ssthresh * self.delivered + self.prior_cwnd - 1;
            (num / self.prior_cwnd) as i64 - out
        } else {
            // PRR-SSRB.
            let mut s = (self.delivered as i64 - out).max(delivered as i64);
            if una_advanced && !newly_lost {
                s += 1;
            }
            s.min(ss - pipe_i)
        };
        if self.out == 0 {
            sndcnt = sndcnt.max(1);
        }
        Some((pipe_i + sndcnt).max(1) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6937's single loss by hand: prior_cwnd 20, ssthresh 10, each
    /// ACK delivering one segment; pipe is 18 after the first (20 out, 3
    /// SACKed, 1 lost, 2 sent on the first SACKs). While pipe > ssthresh,
    /// sndcnt = ceil(10 d / 20) - prr_out sends one segment for every two
    /// delivered: 1 (the fast retransmission), 0, 1, 0, ... for d = 1..16,
    /// and pipe falls by one every second ACK, to 11. The 17th ACK leaves
    /// pipe = 10 = ssthresh: SSRB's bound ssthresh - pipe = 0 sends nothing.
    /// From then on each ACK leaves pipe 9 and SSRB sends min(1, d -
    /// prr_out) = 1: packet conservation at ssthresh.
    #[test]
    fn one_segment_for_every_two_delivered() {
        let mut p = Prr::start(20);
        let mut pipe = 19;
        let (mut sent, mut pipes) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            pipe -= 1; // this ACK's segment left the network
            let cwnd = p.on_ack(10, pipe, 1, false, false).unwrap();
            let n = cwnd.saturating_sub(pipe);
            p.out += n;
            pipe += n;
            sent.push(n);
            pipes.push(pipe);
        }
        let mut want = [1, 0].repeat(8);
        want.extend([0, 1, 1, 1]);
        assert_eq!(sent, want);
        assert_eq!(&pipes[14..], &[12, 11, 10, 10, 10, 10]);
        assert_eq!((p.delivered, p.out), (20, 11));
    }

    /// PRR-SSRB when pipe fell below ssthresh (more losses): with
    /// prr_delivered - prr_out = 2 and one segment delivered, an ACK that
    /// advanced snd_una sends 2 + 1 = 3, bounded by ssthresh - pipe; one
    /// that also found a new loss sends 2; one that delivers nothing
    /// changes nothing.
    #[test]
    fn slow_start_reduction_bound() {
        let p0 = Prr {
            prior_cwnd: 20,
            delivered: 11,
            out: 10,
        };
        let mut p = p0;
        assert_eq!(p.on_ack(10, 5, 1, true, false), Some(5 + 3));
        let mut p = p0;
        assert_eq!(p.on_ack(10, 5, 1, true, true), Some(5 + 2));
        let mut p = p0;
        assert_eq!(
            p.on_ack(10, 9, 1, true, false),
            Some(9 + 1),
            "ssthresh - pipe"
        );
        let mut p = p0;
        assert_eq!(p.on_ack(10, 5, 0, true, false), None);
        assert_eq!(p, p0);
        // A stretch ACK delivering 4: max(15 - 10, 4) + 1 = 6.
        let mut p = p0;
        assert_eq!(p.on_ack(10, 2, 4, true, false), Some(2 + 6));
    }

    /// The first ACK of a recovery lets the fast retransmission go even when
    /// the proportional part rounds to zero.
    #[test]
    fn the_first_ack_sends_one() {
        let mut p = Prr::start(100);
        // ceil(10 * 1 / 100) = 1 anyway; with ssthresh 0 it would be 0.
        assert_eq!(p.on_ack(0, 50, 1, false, false), Some(51));
    }
}
