//! An adaptive video player (`[[traffic]] kind = "video"`): the client's
//! side of DASH/HLS streaming as the engine runs it (`world/video.rs`).
//! The keys and their defaults are in [`crate::scenario::video`].
//!
//! The player asks for one segment at a time over its persistent
//! connection. When a segment has fully arrived its play time joins the
//! buffer, its download rate (payload bits over the time from the request
//! to the last byte) joins the estimate, and the next segment is asked for
//! at once if it fits in the buffer, else when playback has drained enough
//! for it to fit. Its bitrate is the highest of the ladder at most
//! `safety` times the harmonic mean of the last `window` download rates;
//! the first segment's is the lowest.
//!
//! Playback starts once `startup` of play time is buffered. It drains the
//! buffer in real time; an empty buffer stalls it until `startup` is
//! buffered again. Every figure is exact in integer nanoseconds of play
//! time; nothing is drawn at random.

use crate::scenario::VideoSpec;
use crate::units::{BitRate, SimTime};

/// Where playback is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Play {
    /// The session has not asked for its first segment.
    Idle,
    /// Filling the buffer before playback starts.
    Startup,
    Playing,
    /// The buffer ran empty; filling it again.
    Stalled,
}

/// What a segment's arrival did to playback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// A stall that ended with this segment: its start and end.
    pub stall: Option<(SimTime, SimTime)>,
    /// Playback started with this segment (the first time).
    pub started: bool,
}

/// One session's player.
#[derive(Clone, Debug)]
pub struct Player {
    ladder: Vec<BitRate>,
    segment: SimTime,
    buffer_max: SimTime,
    startup: SimTime,
    safety: f64,
    window: usize,
    pub play: Play,
    /// Play time buffered at `at`.
    buffered: SimTime,
    at: SimTime,
    /// When the current stall began (`Stalled`).
    stalled_since: SimTime,
    /// When the first segment was asked for.
    pub began: SimTime,
    /// When playback first started.
    pub played_from: Option<SimTime>,
    /// The last `window` download rates, bits per second (a ring).
    rates: Vec<f64>,
    next_rate: usize,
    /// The level (index in the ladder) of the segment being fetched or
    /// last fetched, and of the one before it.
    pub level: usize,
    pub prev_level: Option<usize>,
    /// Segments asked for.
    pub requested: u64,
    /// When the current segment was asked for, and its payload bytes.
    pub asked_at: SimTime,
    pub bytes: u64,
    /// A segment is on its way.
    pub fetching: bool,
    /// Segments the client must have received on the connection when the
    /// current one is complete.
    pub end: u64,
}

impl Player {
    pub fn new(v: &VideoSpec) -> Player {
        Player {
            ladder: v.bitrates.clone(),
            segment: v.segment,
            buffer_max: v.buffer,
            startup: v.startup,
            safety: v.safety,
            window: v.window as usize,
            play: Play::Idle,
            buffered: SimTime::ZERO,
            at: SimTime::ZERO,
            stalled_since: SimTime::ZERO,
            began: SimTime::ZERO,
            played_from: None,
            rates: Vec::with_capacity(v.window as usize),
            next_rate: 0,
            level: 0,
            prev_level: None,
            requested: 0,
            asked_at: SimTime::ZERO,
            bytes: 0,
            fetching: false,
            end: 0,
        }
    }

    /// The bitrate of level `l`.
    pub fn bitrate(&self, l: usize) -> BitRate {
        self.ladder[l]
    }

    /// Ask for the next segment at `now`: its level from the estimate, its
    /// payload bytes (the bitrate times the play time, at least one).
    pub fn ask(&mut self, now: SimTime) -> u64 {
        self.advance(now);
        if self.play == Play::Idle {
            self.play = Play::Startup;
            self.began = now;
            self.at = now;
        }
        if self.requested > 0 {
            self.prev_level = Some(self.level);
        }
        self.level = self.choose();
        self.requested += 1;
        self.asked_at = now;
        self.fetching = true;
        let bits = u128::from(self.ladder[self.level].bps()) * u128::from(self.segment.0);
        self.bytes = ((bits + 4_000_000_000) / 8_000_000_000).max(1) as u64;
        self.bytes
    }

    /// The level the estimate allows: the highest whose bitrate is at most
    /// `safety` x the harmonic mean of the recorded rates; the lowest
    /// before any.
    pub fn choose(&self) -> usize {
        if self.rates.is_empty() {
            return 0;
        }
        let inv: f64 = self.rates.iter().map(|r| 1.0 / r).sum();
        let allowed = self.safety * self.rates.len() as f64 / inv;
        self.ladder
            .iter()
            .rposition(|b| b.bps() as f64 <= allowed)
            .unwrap_or(0)
    }

    /// Bring playback to `now`: drain the buffer while playing; if it runs
    /// out, the stall begins where it did.
    pub fn advance(&mut self, now: SimTime) {
        if now <= self.at {
            return;
        }
        if self.play == Play::Playing {
            let gone = now - self.at;
            if gone <= self.buffered {
                self.buffered = self.buffered - gone;
            } else {
                self.stalled_since = self.at + self.buffered;
                self.buffered = SimTime::ZERO;
                self.play = Play::Stalled;
            }
        }
        self.at = now;
    }

    /// The current segment's last byte arrived at `now`.
    pub fn arrive(&mut self, now: SimTime) -> Arrival {
        self.advance(now);
        self.fetching = false;
        self.buffered += self.segment;
        let took = (now - self.asked_at).as_secs_f64().max(1e-9);
        let rate = self.bytes as f64 * 8.0 / took;
        if self.rates.len() < self.window {
            self.rates.push(rate);
        } else {
            self.rates[self.next_rate] = rate;
        }
        self.next_rate = (self.next_rate + 1) % self.window;
        let mut a = Arrival::default();
        if self.play != Play::Playing && self.buffered >= self.startup {
            match self.play {
                Play::Stalled => a.stall = Some((self.stalled_since, now)),
                _ => {
                    a.started = true;
                    self.played_from = Some(now);
                }
            }
            self.play = Play::Playing;
        }
        a
    }

    /// How long after `now` (the state brought to it) the next segment
    /// may be asked for: at once while it fits in the buffer, else when
    /// playback has drained the excess. Playback runs whenever the buffer
    /// is that full (`startup` <= `buffer` - `segment`).
    pub fn wait(&self) -> SimTime {
        let after = self.buffered + self.segment;
        if after <= self.buffer_max {
            SimTime::ZERO
        } else {
            after - self.buffer_max
        }
    }

    /// The stall under way at `now`, if any: when it began (without
    /// changing the state).
    pub fn open_stall(&self, now: SimTime) -> Option<SimTime> {
        match self.play {
            Play::Stalled => Some(self.stalled_since),
            Play::Playing if now > self.at && now - self.at > self.buffered => {
                Some(self.at + self.buffered)
            }
            _ => None,
        }
    }

    /// Play time buffered at the last update.
    pub fn buffered(&self) -> SimTime {
        self.buffered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::traffic::Direction;
    use crate::scenario::video::{BUFFER, SAFETY, SEGMENT, WINDOW};
    use crate::scenario::TimeDist;

    fn spec() -> VideoSpec {
        VideoSpec {
            sessions: 1,
            direction: Direction::Forward,
            start: TimeDist::Fixed(SimTime::ZERO),
            base_rtt: None,
            bitrates: [300_000, 750_000, 1_200_000, 1_850_000]
                .map(BitRate)
                .to_vec(),
            segment: SEGMENT,
            buffer: BUFFER,
            startup: SEGMENT,
            safety: SAFETY,
            window: WINDOW,
            request_size: 300,
            ecn: None,
            tcp: Default::default(),
            path: None,
            extra_delay: None,
        }
    }

    fn s(x: f64) -> SimTime {
        SimTime::from_secs_f64(x)
    }

    /// The first segment at the lowest bitrate: 0.3 Mbit/s x 2 s = 75 000
    /// bytes; it arrives after 0.5 s (1.2 Mbit/s), so the next may take
    /// 0.9 x 1.2 = 1.08 Mbit/s: 0.75 Mbit/s.
    #[test]
    fn first_segment_lowest_then_the_estimate() {
        let mut p = Player::new(&spec());
        assert_eq!(p.ask(s(1.0)), 75_000);
        assert_eq!(p.level, 0);
        let a = p.arrive(s(1.5));
        assert!(a.started && a.stall.is_none());
        assert_eq!(p.played_from, Some(s(1.5)));
        assert_eq!(p.choose(), 1);
        assert_eq!(p.ask(s(1.5)), 187_500);
        assert_eq!(p.prev_level, Some(0));
    }

    /// The harmonic mean of 1, 2 and 4 Mbit/s is 12/7 = 1.714 Mbit/s; 0.9
    /// of it is 1.543: level 2 (1.2 Mbit/s). With safety 1 as well (1.85
    /// is above 1.714).
    #[test]
    fn harmonic_mean_of_the_window() {
        let mut p = Player::new(&spec());
        p.rates = vec![1e6, 2e6, 4e6];
        assert_eq!(p.choose(), 2);
        p.safety = 1.0;
        assert_eq!(p.choose(), 2);
        p.rates = vec![2.1e6];
        assert_eq!(p.choose(), 3);
        // The window keeps the last five: a sixth replaces the first.
        let mut p = Player::new(&spec());
        for (i, t) in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0].iter().enumerate() {
            p.ask(s(*t));
            p.arrive(s(*t + 0.1 * (i + 1) as f64));
        }
        assert_eq!(p.rates.len(), 5);
    }

    /// Playback drains the buffer in real time; the player waits while the
    /// next segment would not fit below 12 s; an empty buffer stalls
    /// playback until one segment (the startup) is in again.
    #[test]
    fn buffer_wait_and_stall() {
        let mut p = Player::new(&spec());
        p.ask(s(0.0));
        p.arrive(s(1.0)); // 2 s buffered, playing from 1 s
        assert_eq!(p.wait(), SimTime::ZERO);
        for k in 1..6 {
            p.ask(s(1.0 + 0.1 * (k - 1) as f64));
            p.arrive(s(1.0 + 0.1 * k as f64));
        }
        // At 1.5 s: 6 segments in (12 s), 0.5 s played: 11.5 s buffered.
        assert_eq!(p.buffered(), s(11.5));
        assert_eq!(p.wait(), s(1.5));
        // Nothing arrives until 14 s: the buffer ran out at 13 s.
        p.ask(s(3.0));
        assert_eq!(p.open_stall(s(14.0)), Some(s(13.0)));
        let a = p.arrive(s(14.0));
        assert_eq!(a.stall, Some((s(13.0), s(14.0))));
        assert_eq!(p.play, Play::Playing);
        assert_eq!(p.buffered(), SEGMENT);
        assert_eq!(p.open_stall(s(15.0)), None);
        assert_eq!(p.open_stall(s(16.5)), Some(s(16.0)));
    }

    /// A startup of two segments: playback waits for both.
    #[test]
    fn startup_of_two_segments() {
        let mut v = spec();
        v.startup = SimTime::from_secs(4);
        let mut p = Player::new(&v);
        p.ask(s(0.0));
        assert!(!p.arrive(s(1.0)).started);
        assert_eq!(p.play, Play::Startup);
        p.ask(s(1.0));
        assert!(p.arrive(s(2.0)).started);
        assert_eq!(p.played_from, Some(s(2.0)));
    }
}
