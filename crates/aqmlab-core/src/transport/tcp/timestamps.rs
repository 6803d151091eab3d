//! TCP timestamps for RTT measurement (`tcp.timestamps`), RFC 7323
//! sections 3 and 4. A data packet's send time stands for its TSval (the
//! packet already carries it, so the packet stays 40 bytes) and an ACK's
//! echoed time for its TSecr.
//!
//! The receiver (section 4.3) keeps TS.Recent (the echo, `last_ts`) and
//! knows Last.ACK.sent (`rcv_nxt` when it last sent an ACK: today's less
//! the one in-order segment a delayed ACK may hold):
//!
//! ```text
//! (2) a segment with SEG.TSval >= TS.Recent and SEG.SEQ <= Last.ACK.sent
//!     sets TS.Recent = SEG.TSval; any other segment leaves it
//! (3) every ACK echoes TSecr = TS.Recent
//! ```
//!
//! so with delayed ACKs an ACK echoes the earliest segment it acknowledges
//! (the second segment's SEQ lies beyond Last.ACK.sent), an out-of-order
//! segment's ACK echoes the last segment in order (the sender is not told
//! an RTT shortened by a hole), and the segment that fills a hole (SEQ =
//! Last.ACK.sent) sets it: its retransmission's send time comes back.
//!
//! The sender (section 4.2, the RTTM rule): an ACK that advances the left
//! edge (`snd_una`) gives the sample RTT = now - TSecr, whether or not it
//! covers a retransmitted segment: Karn's rule (RFC 6298 section 3) is not
//! needed, since the echo names the transmission that was acknowledged.
//! So the first ACK after a backed-off timeout gives a sample and the RTO
//! is computed again (RFC 6298 (5.7)'s backoff ends).
//!
//! Which estimator takes the sample:
//! - `rtt_estimator = "timed"`: RFC 6298's on the exact clock with RFC
//!   7323 appendix G's weights, as every ACK now samples: with
//!   ExpectedSamples = ceil(FlightSize / 2) (FlightSize in segments, the
//!   factor 2 for delayed ACKs), alpha' = (1/8) / ExpectedSamples and
//!   beta' = (1/4) / ExpectedSamples replace alpha and beta:
//!   RTTVAR = (1 - beta') RTTVAR + beta' |SRTT - R'|,
//!   SRTT = (1 - alpha') SRTT + alpha' R'. (A ticking clock is refused.)
//! - `rtt_estimator = "linux"`: Linux's `tcp_ack_update_rtt` prefers the
//!   ACK's own sample from the send times (the oldest newly acknowledged
//!   segment never retransmitted, else the oldest newly SACKed); only
//!   when there is none and the ACK advances `snd_una` does the echo give
//!   one, on Linux's millisecond timestamp clock (`TCP_TS_HZ` = 1000):
//!   RTT = (floor(now / 1 ms) - floor(TSecr / 1 ms)) ms, at least 1 ms.
//!
//! On the handshake (`connection.rs`) the SYN/ACK echoes the SYN it
//! answers and the request the SYN/ACK, so a SYN or SYN/ACK sent again
//! gives a sample too, as in Linux.
//!
//! Not modelled: PAWS (section 5; sequence numbers never wrap here), the
//! 12 option bytes on the wire (`docs/tcp.md`).

use super::TcpFlow;
use crate::units::SimTime;

/// Linux's timestamp clock (`TCP_TS_HZ` = 1000 Hz), ns per tick.
const TS_TICK_NS: u64 = 1_000_000;

/// The RTT Linux takes from an echo (`tcp_ack_update_rtt`): whole ticks of
/// its millisecond clock between the echoed send time and `now`, at
/// least one.
pub(super) fn linux_ts_rtt(now: SimTime, tsecr: SimTime) -> SimTime {
    let ticks = (now.0 / TS_TICK_NS).saturating_sub(tsecr.0 / TS_TICK_NS);
    SimTime::from_nanos(ticks.max(1) * TS_TICK_NS)
}

impl TcpFlow {
    /// RFC 7323 section 4.3 (2): a data segment `seq` sent at `ts` updates
    /// TS.Recent (`last_ts`) only if it covers Last.ACK.sent and is not
    /// older.
    #[inline(never)]
    pub(super) fn ts_recent(&mut self, seq: u64, ts: SimTime, last_ack_sent: u64) {
        if seq <= last_ack_sent && ts >= self.last_ts {
            self.last_ts = ts;
        }
    }

    /// RFC 7323 section 4.2: a new ACK echoing `tsecr` times the round
    /// trip (the `"timed"` estimator, with appendix G's weights). Called
    /// before `snd_una` moves, so the flight is the one the ACK found.
    #[inline(never)]
    pub(super) fn ts_timed_ack(&mut self, now: SimTime, ece: bool, tsecr: SimTime) {
        self.rtt_seq = None;
        let backed_off = self.rto;
        let flight = self.snd_max - self.snd_una;
        self.ts_rtt_sample(now - tsecr, flight);
        if ece && self.ecn_backoff_on && self.cfg.tcp.ecn_backoff() {
            // As `time_ack`: ns-2 keeps the backoff while ECN-Echo goes on
            // at one segment.
            self.rto = self.rto.max(backed_off);
        }
    }

    /// RFC 6298 section 2 with RFC 7323 appendix G's weights for a sample
    /// `r` taken with `flight` segments outstanding.
    fn ts_rtt_sample(&mut self, r: SimTime, flight: u64) {
        self.stats.rtt_sum_s += r.0 as f64 * 1e-9;
        self.stats.rtt_samples += 1;
        let r = r.0 as f64;
        if self.has_rtt {
            // Appendix G: ExpectedSamples = ceil(FlightSize / (SMSS x 2)).
            let expected = flight.div_ceil(2).max(1) as f64;
            let (alpha, beta) = (0.125 / expected, 0.25 / expected);
            self.rttvar_ns = (1.0 - beta) * self.rttvar_ns + beta * (self.srtt_ns - r).abs();
            self.srtt_ns = (1.0 - alpha) * self.srtt_ns + alpha * r;
        } else {
            // RFC 6298 (2.2).
            self.srtt_ns = r;
            self.rttvar_ns = r / 2.0;
            self.has_rtt = true;
        }
        let rto = SimTime::from_nanos_f64(self.srtt_ns + 4.0 * self.rttvar_ns);
        self.rto = rto.clamp(self.cfg.tcp.min_rto, self.cfg.tcp.max_rto);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Net;
    use super::super::{Seg, TcpConfig};
    use super::*;
    use crate::packet::{flags, Ecn};
    use crate::scenario::TcpSpec;

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    fn ts_spec(delayed_ack: bool) -> TcpSpec {
        let mut s = TcpSpec {
            delayed_ack,
            ..TcpSpec::default()
        };
        s.set_timestamps(true);
        s
    }

    /// Segment `seq` sent at `sent_ms` reaches the receiver at `at_ms`;
    /// the ACKs it draws.
    fn data(rx: &mut TcpFlow, seq: u64, sent_ms: u64, retx: bool, at_ms: u64) -> Vec<Seg> {
        let mut out = Vec::new();
        let f = if retx {
            flags::DATA | flags::RETX
        } else {
            flags::DATA
        };
        rx.on_data(ms(at_ms), seq, f, Ecn::NotEct, ms(sent_ms), &mut out);
        out
    }

    /// Section 4.3 at the receiver, by hand. Delayed ACKs: segments 0 and
    /// 1, sent at 10 and 11 ms, are acknowledged by one ACK (for 2) that
    /// echoes 10 ms, the earlier. Out of order: 2 and 3 are lost, 4 (sent
    /// 14 ms) draws an ACK for 2 at once that echoes TS.Recent, still 10 ms
    /// (its SEQ lies beyond Last.ACK.sent = 2). The retransmission of 2
    /// (sent 300 ms) covers Last.ACK.sent: its ACK (for 3, a hole remains)
    /// echoes 300 ms; 3's retransmission (sent 301 ms) then fills the rest
    /// (ACK for 5, echo 301 ms). Without timestamps the echo is the last
    /// segment's send time, whatever it was (14 ms for the out-of-order one).
    #[test]
    fn the_echo_rule_of_section_4_3() {
        let mut rx = TcpFlow::new(TcpConfig::from_spec(&ts_spec(true), false, false));
        assert!(data(&mut rx, 0, 10, false, 60).is_empty()); // held back
        let a = data(&mut rx, 1, 11, false, 61);
        assert_eq!((a[0].seq, a[0].ts), (2, ms(10)));
        let a = data(&mut rx, 4, 14, false, 64);
        assert_eq!((a[0].seq, a[0].ts), (2, ms(10)));
        let a = data(&mut rx, 2, 300, true, 350);
        assert_eq!((a[0].seq, a[0].ts), (3, ms(300)));
        let a = data(&mut rx, 3, 301, true, 351);
        assert_eq!((a[0].seq, a[0].ts), (5, ms(301)));
        // An old duplicate (2 again, first sent at 12 ms) arriving late is
        // older than TS.Recent: the echo stays.
        let a = data(&mut rx, 2, 12, false, 352);
        assert_eq!((a[0].seq, a[0].ts), (5, ms(301)));

        let mut plain = TcpFlow::new(TcpConfig::from_spec(
            &TcpSpec {
                delayed_ack: true,
                ..TcpSpec::default()
            },
            false,
            false,
        ));
        data(&mut plain, 0, 10, false, 60);
        assert_eq!(data(&mut plain, 1, 11, false, 61)[0].ts, ms(11));
        assert_eq!(data(&mut plain, 4, 14, false, 64)[0].ts, ms(14));
    }

    /// The sender's samples with the `"timed"` estimator, by hand: the
    /// first ACK (RTT 100 ms) sets SRTT 100, RTTVAR 50, RTO 300 ms. With 4
    /// segments out, ExpectedSamples = 2: a 120 ms sample moves RTTVAR by
    /// (1/4)/2 of |100 - 120| - 50 = -30: 46.25, SRTT by (1/8)/2 of 20:
    /// 101.25; RTO = 101.25 + 185 = 286.25 ms.
    #[test]
    fn appendix_g_weights_by_hand() {
        let mut tx = TcpFlow::new(TcpConfig::from_spec(&ts_spec(false), false, false));
        tx.ts_rtt_sample(ms(100), 1);
        assert_eq!(tx.rto, ms(300));
        tx.ts_rtt_sample(ms(120), 4);
        assert_eq!(tx.rttvar_ns, 46_250_000.0);
        assert_eq!(tx.srtt_ns, 101_250_000.0);
        assert_eq!(tx.rto, SimTime::from_nanos(286_250_000));
    }

    /// Linux's echo sample: whole milliseconds of its clock, at least one.
    #[test]
    fn linux_samples_in_milliseconds() {
        let t = |us: u64| SimTime::from_micros(us);
        assert_eq!(linux_ts_rtt(t(100_900), t(999)), ms(100));
        assert_eq!(linux_ts_rtt(t(101_000), t(999)), ms(101));
        assert_eq!(linux_ts_rtt(t(1_200), t(1_100)), ms(1));
    }

    /// A retransmission's ACK gives a sample (section 4.2): the first
    /// segment of a one-segment window is lost twice (100 ms path, RTO
    /// backed off to 1.2 s then 2.4 s); the third transmission's ACK
    /// brings the RTO back from 2.4 s. Without timestamps Karn's rule
    /// refuses that sample and the backed-off RTO stays for the next
    /// segment.
    #[test]
    fn a_retransmission_ends_the_backoff() {
        let run = |timestamps: bool| {
            let mut tcp = TcpSpec {
                initial_rto: ms(600),
                ..TcpSpec::default()
            };
            tcp.set_timestamps(timestamps);
            // 1 segment: sent at 0, lost; again at 600 ms, lost; again at
            // 1800 ms, delivered at 1900 ms.
            let mut net = Net::new(tcp, 2, 50, 0, &[(0, 1), (0, 2)]);
            net.run(1_950);
            (net.tx.rto, net.tx.stats.timeouts, net.tx.stats.rtt_samples)
        };
        let (rto, timeouts, samples) = run(true);
        assert_eq!((timeouts, samples), (2, 1));
        // The first sample, 100 ms: RTO = 100 + 4 x 50 = 300 ms.
        assert_eq!(rto, ms(300));
        let (rto, timeouts, samples) = run(false);
        assert_eq!((timeouts, samples), (2, 0));
        assert_eq!(rto, ms(2_400));
    }
}
