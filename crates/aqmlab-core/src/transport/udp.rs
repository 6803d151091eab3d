//! Unresponsive UDP sources: constant bit rate, and ON/OFF with
//! exponentially distributed ON and OFF times sending at a constant rate
//! while ON (`003_b277268f444f7691.txt` section 5.5.5: means of 1 s, rate
//! density x C / flows while ON).
//!
//! A source only decides when its packets leave; the engine sends them and
//! counts them in the flow's statistics like TCP data (sent, arrived,
//! dropped). Receivers send nothing back.

use crate::rng::Rng;
use crate::units::{BitRate, SimTime};

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

    fn wake(&self, _now: SimTime) -> Option<SimTime> {
        if self.stopped {
            return None;
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
