//! HyStart++ (RFC 9406), in CUBIC's initial slow start (`tcp.hystart`):
//! slow start ends when the RTT starts to rise, before the queue overflows.
//!
//! Rounds (section 4.2): a round ends when the cumulative ACK reaches
//! `window_end`, the segment sent next when it began (SND.NXT). Per round
//! the minimum of the ACKs' RTT samples is kept; at the start of a round
//!
//! ```text
//! lastRoundMinRTT = currentRoundMinRTT;  currentRoundMinRTT = inf;
//! rttSampleCount = 0;  windowEnd = SND.NXT
//! ```
//!
//! and on each ACK, after N_RTT_SAMPLE samples of the round and with both
//! minima known:
//!
//! ```text
//! RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH))
//! slow start:  currentRoundMinRTT >= lastRoundMinRTT + RttThresh
//!              -> Conservative Slow Start, cssBaselineMinRtt = currentRoundMinRTT
//! CSS:         currentRoundMinRTT < cssBaselineMinRtt -> back to slow start
//! ```
//!
//! In slow start each ACK grows the window by min(N, L) segments (N the
//! segments it acknowledges; L = 8 without pacing, no limit with it), in
//! CSS by min(N, L) / CSS_GROWTH_DIVISOR; after CSS_ROUNDS rounds of CSS
//! slow start ends (ssthresh = cwnd, section 4.2). A loss or an ECN-Echo
//! ends it as it ends slow start; HyStart++ runs in the initial slow start
//! only (ssthresh still infinite), standard slow start after (section 4.2).
//!
//! Linux's `tcp_cubic` runs classic HyStart instead (Ha and Rhee 2011: the
//! ACK train and the delay increase, `hystart_detect = 3`), which sets
//! ssthresh at once where HyStart++ first slows to a quarter's growth for
//! five rounds; this module models the RFC, `hystart_linux.rs` Linux's
//! (with `tcp.cubic = "linux"`; `docs/tcp.md`).

use crate::units::SimTime;

/// MIN_RTT_THRESH (section 4.3).
pub const MIN_RTT_THRESH: SimTime = SimTime::from_millis(4);
/// MAX_RTT_THRESH (section 4.3).
pub const MAX_RTT_THRESH: SimTime = SimTime::from_millis(16);
/// MIN_RTT_DIVISOR (section 4.3).
pub const MIN_RTT_DIVISOR: u64 = 8;
/// N_RTT_SAMPLE: samples of a round before its minimum is trusted.
pub const N_RTT_SAMPLE: u32 = 8;
/// CSS_GROWTH_DIVISOR: CSS grows the window this many times more slowly.
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;
/// CSS_ROUNDS: rounds of CSS before slow start ends.
pub const CSS_ROUNDS: u32 = 5;
/// L without pacing, segments per ACK (section 4.3).
pub const L_UNPACED: u64 = 8;

/// Where HyStart++ stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start with the delay test.
    SlowStart,
    /// Conservative Slow Start since the baseline minimum RTT (ns).
    Css { baseline: u64, rounds: u32 },
    /// Done: slow start ended by HyStart++ (or by a loss).
    Done,
}

/// One connection's HyStart++ state (section 4.2's variables, RTTs in ns,
/// u64::MAX for infinity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyStart {
    pub phase: Phase,
    last_round_min: u64,
    current_round_min: u64,
    samples: u32,
    /// The round ends when the cumulative ACK reaches this segment.
    window_end: u64,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart {
            phase: Phase::SlowStart,
            last_round_min: u64::MAX,
            current_round_min: u64::MAX,
            samples: 0,
            window_end: 0,
        }
    }
}

/// What an ACK's RTT sample asks of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Go,
    /// CSS_ROUNDS rounds of CSS are over: ssthresh = cwnd.
    EndSlowStart,
}

impl HyStart {
    /// An ACK's RTT sample `rtt` ns, with `snd_una` and `snd_nxt` after the
    /// ACK (section 4.2).
    pub fn on_rtt(&mut self, rtt: u64, snd_una: u64, snd_nxt: u64) -> Verdict {
        if self.phase == Phase::Done {
            return Verdict::Go;
        }
        if snd_una >= self.window_end {
            // A round ends and the next begins (round tracking by the
            // sequence number sent when the round began).
            self.last_round_min = self.current_round_min;
            self.current_round_min = u64::MAX;
            self.samples = 0;
            self.window_end = snd_nxt;
            if let Phase::Css { baseline, rounds } = self.phase {
                // Section 4.2: after CSS_ROUNDS rounds in CSS, congestion
                // avoidance.
                if rounds + 1 >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    return Verdict::EndSlowStart;
                }
                self.phase = Phase::Css {
                    baseline,
                    rounds: rounds + 1,
                };
            }
        }
        self.current_round_min = self.current_round_min.min(rtt);
        self.samples += 1;
        if self.samples < N_RTT_SAMPLE
            || self.current_round_min == u64::MAX
            || self.last_round_min == u64::MAX
        {
            return Verdict::Go;
        }
        match self.phase {
            Phase::SlowStart => {
                // Section 4.2: the delay increase test.
                let thresh = (self.last_round_min / MIN_RTT_DIVISOR)
                    .clamp(MIN_RTT_THRESH.0, MAX_RTT_THRESH.0);
                if self.current_round_min >= self.last_round_min.saturating_add(thresh) {
                    self.phase = Phase::Css {
                        baseline: self.current_round_min,
                        rounds: 0,
                    };
                }
            }
            Phase::Css { baseline, .. } => {
                // Section 4.2: a new minimum below the baseline: the rise
                // was spurious, back to slow start.
                if self.current_round_min < baseline {
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Done => {}
        }
        Verdict::Go
    }

    /// The window's growth for an ACK of `acked` segments in slow start
    /// (section 4.2): min(N, L), a quarter of it in CSS.
    pub fn growth(&self, acked: u64, paced: bool) -> f64 {
        let n = if paced { acked } else { acked.min(L_UNPACED) } as f64;
        match self.phase {
            Phase::Css { .. } => n / CSS_GROWTH_DIVISOR,
            _ => n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// One ACK per sample of `rtts_ms`, the k-th with snd_una = start + k
    /// and snd_nxt = `nxt`.
    fn round(h: &mut HyStart, start: u64, nxt: u64, rtts_ms: &[u64]) -> Vec<Verdict> {
        rtts_ms
            .iter()
            .enumerate()
            .map(|(i, &r)| h.on_rtt(r * MS, start + i as u64, nxt))
            .collect()
    }

    /// Hand-worked rounds: round 1 (segments 0-9, min 100 ms); round 2
    /// (min 104 ms): RttThresh = max(4, min(100 / 8, 16)) = 12.5 ms, 104 <
    /// 112.5, slow start goes on; round 3 (min 117 ms, 13 ms above 104
    /// with RttThresh 13 ms): the 8th sample of the round enters CSS with
    /// baseline 117. Growth then 2 / 4 = 0.5 for an ACK of two; five
    /// rounds of CSS end slow start at the start of the sixth.
    #[test]
    fn rounds_by_hand() {
        let mut h = HyStart::default();
        // Round 1 begins with the first ACK (snd_una 1 >= window_end 0):
        // window_end = 10.
        round(&mut h, 1, 10, &[100; 9]);
        assert_eq!(h.current_round_min, 100 * MS);
        // Round 2: snd_una 10 reaches window_end; the next ends at 30.
        round(
            &mut h,
            10,
            30,
            &[110, 105, 104, 106, 108, 110, 111, 112, 113],
        );
        assert_eq!(h.phase, Phase::SlowStart);
        assert_eq!(
            (h.last_round_min, h.current_round_min),
            (100 * MS, 104 * MS)
        );
        // Round 3: 7 samples are not enough, the 8th decides.
        round(&mut h, 30, 70, &[117; 7]);
        assert_eq!(h.phase, Phase::SlowStart);
        round(&mut h, 37, 70, &[120]);
        assert_eq!(
            h.phase,
            Phase::Css {
                baseline: 117 * MS,
                rounds: 0
            }
        );
        assert_eq!(h.growth(2, false), 0.5);
        assert_eq!(h.growth(20, false), 2.0); // L = 8, then / 4
        assert_eq!(h.growth(20, true), 5.0);
        // Four more rounds of CSS at a steady 120 ms, then the fifth's end.
        let mut una = 70;
        for k in 1..CSS_ROUNDS {
            let v = round(&mut h, una, una + 10, &[120; 8]);
            assert!(v.iter().all(|&v| v == Verdict::Go));
            assert_eq!(
                h.phase,
                Phase::Css {
                    baseline: 117 * MS,
                    rounds: k
                }
            );
            una += 10;
        }
        assert_eq!(h.on_rtt(120 * MS, una, una + 10), Verdict::EndSlowStart);
        assert_eq!(h.phase, Phase::Done);
        assert_eq!(h.growth(2, false), 2.0);
    }

    /// A round in CSS whose minimum falls below the baseline returns to
    /// slow start (the rise was a transient).
    #[test]
    fn a_new_minimum_leaves_css() {
        let mut h = HyStart::default();
        round(&mut h, 1, 10, &[50; 8]);
        // RttThresh = max(4, 50 / 8 = 6.25) = 6.25 ms: 57 enters CSS.
        round(&mut h, 10, 30, &[57; 8]);
        assert!(matches!(h.phase, Phase::Css { .. }));
        round(&mut h, 30, 60, &[60, 60, 60, 60, 60, 60, 60, 56]);
        assert_eq!(h.phase, Phase::SlowStart);
        // The floor of 4 ms at short RTTs: 20 ms then 23.9 ms stays.
        let mut h = HyStart::default();
        round(&mut h, 1, 10, &[20; 8]);
        round(&mut h, 10, 30, &[23; 8]);
        assert_eq!(h.phase, Phase::SlowStart);
        round(&mut h, 30, 60, &[27; 8]);
        assert!(matches!(h.phase, Phase::Css { .. })); // 27 >= 23 + 4
    }
}
