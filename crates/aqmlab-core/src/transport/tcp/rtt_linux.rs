//! Linux's RTT estimator (`tcp.rtt_estimator = "linux"`), from
//! net/ipv4/tcp_input.c: which ACKs give a sample (`tcp_clean_rtx_queue`,
//! `tcp_sacktag_one`, `tcp_ack_update_rtt`) and what a sample does
//! (`tcp_rtt_estimator`, `tcp_set_rto`).
//!
//! Samples: every ACK that newly acknowledges or SACKs data gives one, the
//! time since the oldest segment it covers was sent: the oldest newly
//! acknowledged by the cumulative ACK, if none of those was ever
//! retransmitted (Karn), else the oldest newly SACKed that never was. So a
//! flow measures its RTT in recovery too, where the one timed segment of
//! RFC 6298 (`tcp.rtt_estimator = "timed"`) gives none.
//!
//! The estimator is Jacobson's (SIGCOMM '88) as Linux scales it, with s the
//! smoothed RTT, d the mean deviation, m the sample:
//!
//! ```text
//! first sample:  s = m,  4d = 2m,  var = max(4d, min_rto),  dmax = var
//! then:          e = m - s;  s += e / 8
//!                4d += |e| - 4d / 4               if e >= 0
//!                4d += max(|e| - 4d / 4, 0) / 8   if e < 0  (a falling RTT
//!                                                  moves d more slowly)
//!                dmax = max(dmax, 4d);  var = max(var, dmax)
//!                once per round trip (snd_una beyond the mark):
//!                    var -= (var - dmax) / 4 if dmax < var;  dmax = min_rto
//! RTO = s + var   (at most max_rto)
//! ```
//!
//! so RTO >= SRTT + `min_rto` (Linux's `tcp_rto_min`, 200 ms), where RFC
//! 6298's is max(SRTT + 4 RTTVAR, `min_rto`). A sample also ends an
//! exponential backoff (`icsk_backoff = 0`: RFC 6298 section 5 (5.7)).
//! Integer nanoseconds where Linux has microseconds.

/// The estimator's state (Linux's `srtt_us`, `mdev_us`, `mdev_max_us`,
/// `rttvar_us`, `rtt_seq`), in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LinuxRtt {
    /// 8 x the smoothed RTT (0: no sample yet).
    srtt8: i64,
    /// 4 x the mean deviation.
    mdev4: i64,
    /// The largest `mdev4` of the current round trip, at least `min_rto`.
    mdev_max: i64,
    /// The RTO's deviation term: the round trips' `mdev_max`, smoothed
    /// downward; at least `min_rto`.
    rttvar: i64,
    /// The round trip ends when `snd_una` passes this segment.
    rtt_seq: u64,
}

impl LinuxRtt {
    /// A sample of `m` ns with `snd_una` and `snd_nxt` as they are after the
    /// ACK; returns the smoothed RTT and the RTO before its upper bound, ns.
    pub fn sample(&mut self, m: u64, snd_una: u64, snd_nxt: u64, min_rto: u64) -> (u64, u64) {
        let m = i64::try_from(m).unwrap_or(i64::MAX / 16);
        let min_rto = i64::try_from(min_rto).unwrap_or(i64::MAX / 16);
        if self.srtt8 == 0 {
            self.srtt8 = m << 3;
            self.mdev4 = m << 1; // RTO = 3 x the first sample, or more
            self.rttvar = self.mdev4.max(min_rto);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        } else {
            let mut e = m - (self.srtt8 >> 3);
            self.srtt8 += e;
            if e < 0 {
                e = -e - (self.mdev4 >> 2);
                if e > 0 {
                    e >>= 3;
                }
            } else {
                e -= self.mdev4 >> 2;
            }
            self.mdev4 += e;
            if self.mdev4 > self.mdev_max {
                self.mdev_max = self.mdev4;
                self.rttvar = self.rttvar.max(self.mdev_max);
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = min_rto;
            }
        }
        self.srtt8 = self.srtt8.max(1);
        let srtt = (self.srtt8 >> 3) as u64;
        (srtt, srtt + self.rttvar as u64)
    }

    /// The smoothed RTT, ns (0 before a sample).
    #[cfg(test)]
    pub fn srtt(&self) -> u64 {
        (self.srtt8 >> 3) as u64
    }

    /// The deviation term of the RTO, ns.
    pub fn rttvar(&self) -> u64 {
        self.rttvar as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn first_samples_by_hand() {
        let mut r = LinuxRtt::default();
        // 100 ms: s = 100, 4d = 200, var = max(200, 200): RTO 300 ms.
        assert_eq!(r.sample(100 * MS, 0, 10, 200 * MS), (100 * MS, 300 * MS));
        // 120 ms in the next round trip: e = 20, s = 102.5; 4d = 200 + 20 -
        // 50 = 170, below dmax = 200; the round ends (una 11 > 10): var
        // stays 200 (dmax is not below it), dmax = 200. RTO 302.5 ms.
        assert_eq!(
            r.sample(120 * MS, 11, 20, 200 * MS),
            (102_500_000, 302_500_000)
        );
        assert_eq!(r.mdev4, 170 * MS as i64);
        // A spike of 400 ms in the same round trip: e = 297.5, s = 139.6875;
        // 4d = 170 + 297.5 - 42.5 = 425 > dmax: var = 425. RTO 564.6875 ms.
        assert_eq!(
            r.sample(400 * MS, 15, 25, 200 * MS),
            (139_687_500, 564_687_500)
        );
        // The next round trip: a sample equal to s leaves s, 4d = 425 -
        // 106.25 = 318.75; the round ends: var -= (425 - 425) / 4 (dmax is
        // 425 until then), dmax = 200.
        let (s, _) = r.sample(139_687_500, 21, 30, 200 * MS);
        assert_eq!(s, 139_687_500);
        assert_eq!(r.mdev4, 318_750_000);
        assert_eq!((r.rttvar, r.mdev_max), (425 * MS as i64, 200 * MS as i64));
        // And the one after: var moves a quarter of the way to dmax (the
        // new round's largest 4d, 239.0625 ms after one more equal sample).
        let (_, rto) = r.sample(139_687_500, 31, 40, 200 * MS);
        assert_eq!(r.mdev4, 239_062_500);
        assert_eq!(r.rttvar, 425_000_000 - (425_000_000 - 239_062_500) / 4);
        assert_eq!(rto, 139_687_500 + r.rttvar as u64);
    }

    /// A falling RTT moves the deviation by an eighth of what a rising
    /// one would (Linux's answer to Eifel), and not at all while the fall
    /// is within a quarter of 4d.
    #[test]
    fn a_falling_rtt_barely_moves_the_deviation() {
        let mut r = LinuxRtt::default();
        r.sample(100 * MS, 0, 10, 200 * MS); // s 100, 4d 200
        r.sample(50 * MS, 1, 10, 200 * MS); // e = -50: |e| - 50 = 0
        assert_eq!((r.srtt(), r.mdev4), (93_750_000, 200 * MS as i64));
        // e = 10 - 93.75 = -83.75: (83.75 - 50) / 8 = 4.21875 ms.
        r.sample(10 * MS, 2, 10, 200 * MS);
        assert_eq!(r.mdev4, 200_000_000 + 4_218_750);
    }

    /// The RTO never falls below SRTT + min_rto.
    #[test]
    fn rto_is_srtt_plus_at_least_min_rto() {
        let mut r = LinuxRtt::default();
        let mut una = 0;
        for _ in 0..200 {
            una += 10;
            let (s, rto) = r.sample(10 * MS, una, una + 10, 200 * MS);
            assert!(rto >= s + 200 * MS);
        }
        assert_eq!(
            r.sample(10 * MS, una + 10, una + 20, 200 * MS),
            (10 * MS, 210 * MS)
        );
    }
}
