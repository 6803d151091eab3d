//! Adaptive video sessions in the run (`kind = "video"`): the player of
//! [`crate::traffic::video`] asks for its segments over one persistent
//! connection (the first over a new connection opened with SYN / SYN-ACK,
//! the rest as requests on it), each segment recorded when its last byte is
//! in, each stall when it ends; and the figures of a measurement interval.

use super::web::WebApp;
use super::World;
use crate::scenario::Phase;
use crate::sim::Event;
use crate::traffic::video::Player;
use crate::traffic::web::segments;
use crate::units::SimTime;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the video sessions did: one row per segment received, one per
/// stall that ended.
#[derive(Clone, Debug, Default)]
pub struct VideoTable {
    pub seg_flow: Vec<u32>,
    pub seg_bitrate_bps: Vec<u64>,
    /// Its level differs from the session's segment before it.
    pub seg_switched: Vec<bool>,
    pub seg_end_s: Vec<f64>,
    pub stall_flow: Vec<u32>,
    pub stall_start_s: Vec<f64>,
    pub stall_end_s: Vec<f64>,
}

/// The video sessions' figures over a measurement interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VideoSummary {
    /// Sessions that had asked for a segment by the interval's end.
    pub sessions: u64,
    /// Segments whose last byte arrived in the interval.
    pub segments: u64,
    /// Their mean bitrate.
    pub bitrate_mean_bps: f64,
    /// Of those segments, how many changed bitrate from the session's
    /// segment before.
    pub switches: u64,
    /// Stalls (rebuffering) begun in the interval.
    pub stalls: u64,
    /// Time stalled within the interval, summed over the sessions.
    pub stall_time_s: f64,
    /// Time stalled over time watched (after playback first started),
    /// both within the interval.
    pub rebuffer_ratio: f64,
    /// Mean time from the first request to the start of playback, over
    /// the sessions whose playback started in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_delay_mean_s: Option<f64>,
    /// The same figures for each video group's sessions alone, keyed by
    /// the group's index in `[[traffic]]` (as a string: `groups.9.stalls`);
    /// empty in a group's own figures.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, VideoSummary>,
}

/// The length of [a, b] within [from, to].
fn overlap(a: f64, b: f64, from: f64, to: f64) -> f64 {
    (b.min(to) - a.max(from)).max(0.0)
}

/// The time of [a, b] (seconds) that `phase` measures up to `end` (now):
/// its span, or a periodic phase's windows.
fn measured_overlap(phase: &Phase, a: f64, b: f64, end: f64) -> f64 {
    let from = phase.from.as_secs_f64();
    let Some(w) = phase.windows else {
        return overlap(a, b, from, end);
    };
    let first = from + w.offset.as_secs_f64();
    let b = b.min(end);
    if b <= first || b <= a {
        return 0.0;
    }
    let mut k = ((a - first) / w.every.as_secs_f64()).floor().max(0.0) as u64;
    let mut sum = 0.0;
    while let Some((s, e)) = phase.window(k) {
        let (s, e) = (s.as_secs_f64(), e.as_secs_f64());
        if s >= b {
            break;
        }
        sum += overlap(a, b, s, e);
        k += 1;
    }
    sum
}

impl World {
    /// A video session's `FlowStart`: its first segment, or the next one
    /// once the buffer has room.
    pub(super) fn video_event(&mut self, f: usize) {
        let now = self.now;
        let mss = self.flows[f].mss();
        let Some(WebApp::Video(p)) = self.web[f].as_deref_mut() else {
            return;
        };
        if p.fetching {
            return;
        }
        let reuse = p.requested > 0;
        let bytes = p.ask(now);
        let (n, last) = segments(bytes, mss);
        p.end = if reuse { p.end + n } else { n };
        self.client_ask(f, reuse, n, last);
    }

    /// A packet of video session `f` arrived: if the segment's last byte is
    /// in, record it and ask for the next when the buffer has room.
    pub(super) fn video_progress(&mut self, f: usize) {
        let now = self.now;
        let delivered = self.flows[f].delivered();
        let mss = u64::from(self.flows[f].mss());
        let Some(WebApp::Video(p)) = self.web[f].as_deref_mut() else {
            return;
        };
        if !p.fetching || delivered < p.end {
            return;
        }
        let a = p.arrive(now);
        // The segment's last packet was short by what its bytes leave of
        // whole segments.
        self.short_bytes[f] += (mss - p.bytes % mss) % mss;
        let v = &mut self.videos;
        v.seg_flow.push(f as u32);
        v.seg_bitrate_bps.push(p.bitrate(p.level).bps());
        v.seg_switched
            .push(p.prev_level.is_some_and(|l| l != p.level));
        v.seg_end_s.push(now.as_secs_f64());
        if let Some((from, to)) = a.stall {
            v.stall_flow.push(f as u32);
            v.stall_start_s.push(from.as_secs_f64());
            v.stall_end_s.push(to.as_secs_f64());
        }
        let wait = p.wait();
        if self.meta[f].stopped.is_some() {
            return;
        }
        if wait == SimTime::ZERO {
            self.video_event(f);
        } else if wait < self.sc.duration - now {
            self.events.schedule(now + wait, Event::FlowStart(f as u32));
        }
    }

    /// The video sessions' figures over `phase` (the measurement
    /// interval, or a phase: over its windows if periodic) up to `end`,
    /// now: all sessions together, and each video group's apart.
    pub(super) fn video_summary(&self, phase: &Phase, end: SimTime) -> Option<VideoSummary> {
        let mut all = self.video_figures(phase, end, |_| true)?;
        let mut groups: Vec<u32> = (0..self.web.len())
            .filter(|&f| matches!(self.web[f].as_deref(), Some(WebApp::Video(_))))
            .map(|f| self.meta[f].group)
            .collect();
        groups.sort_unstable();
        groups.dedup();
        for g in groups {
            let of_group = |f: usize| self.meta[f].group == g;
            if let Some(s) = self.video_figures(phase, end, of_group) {
                all.groups.insert(g.to_string(), s);
            }
        }
        Some(all)
    }

    /// [`World::video_summary`]'s figures of the sessions of the flows
    /// `keep` takes (`None` if it takes none that asked for a segment).
    fn video_figures(
        &self,
        phase: &Phase,
        end: SimTime,
        keep: impl Fn(usize) -> bool,
    ) -> Option<VideoSummary> {
        let (from, to) = (phase.from.as_secs_f64(), end.as_secs_f64());
        let within = |t: f64| match phase.windows {
            None => t >= from && t <= to,
            Some(_) => t <= to && phase.contains(SimTime::from_secs_f64(t)),
        };
        let mut s = VideoSummary::default();
        let mut bits = 0.0;
        let v = &self.videos;
        for i in 0..v.seg_end_s.len() {
            if keep(v.seg_flow[i] as usize) && within(v.seg_end_s[i]) {
                s.segments += 1;
                bits += v.seg_bitrate_bps[i] as f64;
                s.switches += u64::from(v.seg_switched[i]);
            }
        }
        for i in 0..v.stall_start_s.len() {
            if !keep(v.stall_flow[i] as usize) {
                continue;
            }
            let (a, b) = (v.stall_start_s[i], v.stall_end_s[i]);
            s.stall_time_s += measured_overlap(phase, a, b, to);
            s.stalls += u64::from(within(a));
        }
        let (mut watched, mut startup, mut started) = (0.0, 0.0, 0u64);
        for (f, app) in self.web.iter().enumerate() {
            let Some(WebApp::Video(p)) = app.as_deref() else {
                continue;
            };
            if !keep(f) {
                continue;
            }
            if p.requested == 0 {
                continue;
            }
            s.sessions += 1;
            if let Some(a) = p.open_stall(end) {
                let a = a.as_secs_f64();
                s.stall_time_s += measured_overlap(phase, a, to, to);
                s.stalls += u64::from(within(a));
            }
            if let Some(t) = p.played_from {
                let t = t.as_secs_f64();
                watched += measured_overlap(phase, t, to, to);
                if within(t) {
                    startup += t - p.began.as_secs_f64();
                    started += 1;
                }
            }
        }
        if s.sessions == 0 {
            return None;
        }
        s.bitrate_mean_bps = if s.segments == 0 {
            0.0
        } else {
            bits / s.segments as f64
        };
        s.rebuffer_ratio = if watched > 0.0 {
            s.stall_time_s / watched
        } else {
            0.0
        };
        s.startup_delay_mean_s = (started > 0).then(|| startup / started as f64);
        Some(s)
    }
}

/// A session's player, boxed with the web sessions' applications.
pub(super) fn player(v: &crate::scenario::VideoSpec) -> Box<WebApp> {
    Box::new(WebApp::Video(Player::new(v)))
}

#[cfg(test)]
mod tests {
    use super::{measured_overlap, overlap};
    use crate::scenario::{Phase, Windows};
    use crate::units::SimTime;

    #[test]
    fn overlap_of_intervals() {
        assert_eq!(overlap(1.0, 3.0, 2.0, 5.0), 1.0);
        assert_eq!(overlap(1.0, 3.0, 4.0, 5.0), 0.0);
        assert_eq!(overlap(2.5, 3.0, 2.0, 5.0), 0.5);
        assert_eq!(overlap(0.0, 9.0, 2.0, 5.0), 3.0);
    }

    /// A periodic phase from 10 s to 20 s, 1 s every 4 s from 11 s:
    /// windows [11, 12), [15, 16), [19, 20). A stall over [11.5, 17] is
    /// measured 0.5 + 1 = 1.5 s; one over [0, 30] with now at 19.5 s,
    /// 1 + 1 + 0.5 = 2.5 s; between two windows, nothing; a plain phase
    /// takes its span.
    #[test]
    fn overlap_with_a_periodic_phase() {
        let s = SimTime::from_secs;
        let p = Phase {
            from: s(10),
            to: s(20),
            windows: Some(Windows {
                every: s(4),
                length: s(1),
                offset: s(1),
            }),
        };
        // Seconds in floating point: equal to a nanosecond.
        let near = |x: f64, y: f64| assert!((x - y).abs() < 1e-9, "{x} against {y}");
        near(measured_overlap(&p, 11.5, 17.0, 20.0), 1.5);
        near(measured_overlap(&p, 0.0, 30.0, 19.5), 2.5);
        near(measured_overlap(&p, 12.0, 15.0, 20.0), 0.0);
        near(
            measured_overlap(&Phase::span(s(10), s(20)), 0.0, 30.0, 20.0),
            10.0,
        );
    }
}
