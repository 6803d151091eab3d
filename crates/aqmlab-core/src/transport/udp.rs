//! Unresponsive UDP sources: constant bit rate, and ON/OFF with
//! exponentially distributed ON and OFF times sending at a constant rate
//! while ON (`003_b277268f444f7691.txt` section 5.5.5: means of 1 s, rate
//! density x C / flows while ON).
//!
//! A constant bit rate may be sent as video frames (`frames`): every 1 /
//! fps a frame leaves whole, its packets at once (the sender's access link
//! spaces them at its own rate); in a group of pictures of `gop` frames the
//! first, the I-frame, is `i_ratio` times the size of each other, so with a
//! mean frame of M = rate / (8 fps) bytes a P-frame has gop M / (gop - 1 +
//! i_ratio) bytes. A frame's bytes go in whole packets and the part of a
//! packet left over joins the next frame, so the rate over a group of
//! pictures is the rate asked.
//!
//! A source only decides when its packets leave; the engine sends them and
//! counts them in the flow's statistics like TCP data (sent, arrived,
//! dropped). Receivers send nothing back.

use crate::rng::Rng;
use crate::scenario::VideoFrames;
use crate::units::{BitRate, SimTime};

/// A frame source's state (see the module's head).
#[derive(Clone, Debug)]
struct Frames {
    spec: VideoFrames,
    /// Bytes of a P-frame and of an I-frame at the current rate.
    p_bytes: f64,
    i_bytes: f64,
    /// Time between frames.
    period: SimTime,
    /// Frames begun; the next is an I-frame when this is a multiple of gop.
    count: u64,
    /// When the next frame leaves.
    next: SimTime,
    /// Packets of the current frame not yet sent.
    left: u64,
    /// Bytes short of a whole packet carried to the next frame.
    carry: f64,
}

impl Frames {
    fn new(spec: VideoFrames, rate: BitRate) -> Frames {
        let mut f = Frames {
            spec,
            p_bytes: 0.0,
            i_bytes: 0.0,
            period: SimTime::from_secs_f64(1.0 / spec.fps),
            count: 0,
            next: SimTime::ZERO,
            left: 0,
            carry: 0.0,
        };
        f.set_rate(rate);
        f
    }

    fn set_rate(&mut self, rate: BitRate) {
        let mean = rate.0 as f64 / 8.0 / self.spec.fps;
        let gop = f64::from(self.spec.gop);
        self.p_bytes = gop * mean / (gop - 1.0 + self.spec.i_ratio);
        self.i_bytes = self.spec.i_ratio * self.p_bytes;
    }

    /// The frames due by `now` join the packets to send.
    fn catch_up(&mut self, now: SimTime, size: u32) {
        while now >= self.next {
            let i = self.count % u64::from(self.spec.gop) == 0;
            let bytes = if i { self.i_bytes } else { self.p_bytes } + self.carry;
            let n = (bytes / f64::from(size)).floor();
            self.carry = bytes - n * f64::from(size);
            self.left += n as u64;
            self.count += 1;
            self.next += self.period;
        }
    }
}

/// One UDP source.
#[derive(Clone, Debug)]
pub struct UdpSource {
    /// Bytes on the wire of each packet.
    pub size: u32,
    /// Packet spacing at the current rate.
    interval: SimTime,
    /// Mean ON and OFF times in seconds (ON/OFF sources only).
    onoff: Option<(f64, f64)>,
    on: bool,
    /// When the current ON or OFF period ends (`SimTime::MAX` for CBR).
    next_toggle: SimTime,
    /// When the next packet is due while ON.
    next_send: SimTime,
    stopped: bool,
    rng: Rng,
    /// Next sequence number.
    pub seq: u64,
    /// A frame source's state (`frames`).
    frames: Option<Box<Frames>>,
}

impl UdpSource {
    /// `onoff`: mean ON and OFF times, or `None` for constant bit rate.
    pub fn new(size: u32, rate: BitRate, onoff: Option<(SimTime, SimTime)>, rng: Rng) -> UdpSource {
        UdpSource {
            size,
            interval: rate.tx_time(size),
            onoff: onoff.map(|(a, b)| (a.as_secs_f64(), b.as_secs_f64())),
            on: true,
            next_toggle: SimTime::MAX,
            next_send: SimTime::ZERO,
            stopped: false,
            rng,
            seq: 0,
            frames: None,
        }
    }

    /// A constant bit rate sent as video frames (module head).
    pub fn frames(size: u32, rate: BitRate, spec: VideoFrames, rng: Rng) -> UdpSource {
        UdpSource {
            frames: Some(Box::new(Frames::new(spec, rate))),
            ..UdpSource::new(size, rate, None, rng)
        }
    }

    /// A source of one `size`-byte packet every `interval` (latency probes).
    pub fn every(size: u32, interval: SimTime, rng: Rng) -> UdpSource {
        UdpSource {
            interval,
            ..UdpSource::new(size, BitRate(1), None, rng)
        }
    }

    /// Change the sending rate (from the next packet on).
    pub fn set_rate(&mut self, rate: BitRate) {
        if let Some(f) = self.frames.as_deref_mut() {
            // From the next frame on.
            f.set_rate(rate);
            return;
        }
        let old = self.interval;
        self.interval = rate.tx_time(self.size);
        // Re-space the pending packet from the last one sent.
        if self.on && self.next_send != SimTime::MAX && self.seq > 0 {
            self.next_send = self.next_send.saturating_sub(old) + self.interval;
        }
    }

    /// Stop sending for good.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    fn period(&mut self, on: bool, now: SimTime) -> SimTime {
        let (a, b) = self.onoff.expect("ON/OFF source");
        let mean = if on { a } else { b };
        now + SimTime::from_secs_f64(self.rng.exp(mean))
    }

    /// The source starts at `now`; returns when it next needs the engine.
    /// An ON/OFF source starts ON with probability on / (on + off) (the
    /// stationary share), so a group's rate is stationary from the start.
    pub fn start(&mut self, now: SimTime) -> Option<SimTime> {
        if let Some(f) = self.frames.as_deref_mut() {
            f.next = now;
            return self.wake(now);
        }
        if let Some((a, b)) = self.onoff {
            self.on = self.rng.uniform() < a / (a + b);
            self.next_toggle = self.period(self.on, now);
        }
        self.next_send = now;
        self.wake(now)
    }

    /// Called at the time returned before: advance the ON/OFF state and
    /// say whether a packet leaves now, and when to call again.
    pub fn on_timer(&mut self, now: SimTime) -> (bool, Option<SimTime>) {
        if self.stopped {
            return (false, None);
        }
        if let Some(f) = self.frames.as_deref_mut() {
            f.catch_up(now, self.size);
            let send = f.left > 0;
            if send {
                f.left -= 1;
                self.seq += 1;
            }
            return (send, self.wake(now));
        }
        while now >= self.next_toggle {
            let t = self.next_toggle;
            self.on = !self.on;
            self.next_toggle = self.period(self.on, t);
            if self.on {
                self.next_send = t;
            }
        }
        let send = self.on && now >= self.next_send;
        if send {
            self.seq += 1;
            self.next_send = now + self.interval;
        }
        (send, self.wake(now))
    }

    fn wake(&self, now: SimTime) -> Option<SimTime> {
        if self.stopped {
            return None;
        }
        if let Some(f) = self.frames.as_deref() {
            // The frame's packets one after another at this instant.
            return Some(if f.left > 0 { now } else { f.next });
        }
        Some(if self.on {
            self.next_send.min(self.next_toggle)
        } else {
            self.next_toggle
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn cbr_spacing() {
        // 500 B at 1 Mb/s: one packet every 4 ms.
        let mut u = UdpSource::new(500, BitRate(1_000_000), None, Rng::new(1, Stream::App(0)));
        let mut t = u.start(SimTime::from_secs(1)).unwrap();
        let mut sent = Vec::new();
        for _ in 0..5 {
            let (s, next) = u.on_timer(t);
            if s {
                sent.push(t);
            }
            t = next.unwrap();
        }
        let ms: Vec<u64> = sent.iter().map(|x| x.0 / 1_000_000).collect();
        assert_eq!(ms, vec![1000, 1004, 1008, 1012, 1016]);
    }

    /// 2 Mbit/s at 25 frames a second: a mean frame of 10 000 bytes; in
    /// groups of 12 with the I-frame 5 times a P-frame, P = 12 x 10 000 /
    /// 16 = 7 500 bytes (5 packets of 1 500) and I = 37 500 (25 packets),
    /// each frame's packets at its instant, every 40 ms; 80 packets a
    /// group of pictures (0.48 s), 2 Mbit/s.
    /// A source of 1 500-byte packets, 25 frames a second in groups of 12
    /// whose I-frame is 5 times a P-frame, at `bps`.
    fn video(bps: u64) -> UdpSource {
        let spec = VideoFrames {
            fps: 25.0,
            gop: 12,
            i_ratio: 5.0,
        };
        UdpSource::frames(1500, BitRate(bps), spec, Rng::new(1, Stream::App(0)))
    }

    #[test]
    fn frames_by_hand() {
        let mut u = video(2_000_000);
        let mut t = u.start(SimTime::from_secs(1)).unwrap();
        let mut per_frame: Vec<(u64, u64)> = Vec::new(); // (ms, packets)
        while t < SimTime::from_millis(1000 + 960) {
            let (s, next) = u.on_timer(t);
            if s {
                let ms = t.0 / 1_000_000;
                match per_frame.last_mut() {
                    Some((m, n)) if *m == ms => *n += 1,
                    _ => per_frame.push((ms, 1)),
                }
            }
            t = next.unwrap();
        }
        let counts: Vec<u64> = per_frame.iter().map(|&(_, n)| n).collect();
        let mut want = vec![25];
        want.extend([5; 11]);
        want.push(25);
        want.extend([5; 11]);
        assert_eq!(counts, want);
        let times: Vec<u64> = per_frame.iter().map(|&(m, _)| m - 1000).collect();
        assert_eq!(times, (0..24).map(|k| 40 * k).collect::<Vec<_>>());
        assert_eq!(u.seq, 160); // 2 x 80 packets of 1 500 bytes in 0.96 s: 2 Mbit/s
    }

    /// A frame that is not a whole number of packets carries the rest: at
    /// 1 Mbit/s (P = 3 750 bytes, 2.5 packets; I = 18 750, 12.5) a group
    /// of pictures sends 12 + 3 + 2 + 3 + 2 + ... and 40 packets in all.
    #[test]
    fn frames_carry_the_part_of_a_packet() {
        let mut u = video(1_000_000);
        let mut t = u.start(SimTime::ZERO).unwrap();
        while t < SimTime::from_millis(480) {
            t = u.on_timer(t).1.unwrap();
        }
        assert_eq!(u.seq, 40);
    }

    #[test]
    fn onoff_duty_cycle() {
        // Means 1 s ON, 3 s OFF: a quarter of the time ON, so a quarter of
        // the CBR packet count over a long run (within 3 %).
        let rate = BitRate(1_000_000);
        let mut u = UdpSource::new(
            500,
            rate,
            Some((SimTime::from_secs(1), SimTime::from_secs(3))),
            Rng::new(7, Stream::App(3)),
        );
        let end = SimTime::from_secs(20_000);
        let mut t = u.start(SimTime::ZERO).unwrap();
        let mut n = 0u64;
        while t < end {
            let (s, next) = u.on_timer(t);
            n += u64::from(s);
            t = next.unwrap();
        }
        let full = 20_000.0 / 0.004;
        let share = n as f64 / full;
        assert!((share - 0.25).abs() < 0.25 * 0.03, "{share}");
    }
}
