//! Opening and closing the measurement intervals. A plain interval opens
//! once and (a phase) closes once. A periodic phase (`[metrics] phases`
//! entry `{from, to, every, length, offset}`) opens at the start of each of
//! its windows and closes at each one's end: between two windows its queue
//! integrals and delay histogram pause, and its counters at its start are
//! moved on by what the gap counted ([`super::summary::Snapshot::skip_gap`]), so that its
//! figures at the end of its last window are those of its windows alone.
//!
//! A figure belongs to a window by the time the engine counts it: a
//! packet's queueing delay when it leaves the queue, a drop when it is
//! dropped, an arrival when the packet reaches the queue, a segment's
//! goodput when it is delivered in order to the receiver, a web response
//! when it ends.

use super::World;

impl World {
    /// Interval `i` opens: its start, or the start of one of its windows.
    pub(super) fn window_start(&mut self, i: usize) {
        if self.intervals[i].windows.is_none() || self.window_k[i] == 0 {
            self.interval_start(i);
            return;
        }
        self.settle_all(self.now);
        let now = self.now;
        for (l, _) in &self.monitored {
            if let Some(m) = self.links[*l].monitor.as_mut() {
                m.resume(i, now);
            }
        }
        let counters = self.snapshot();
        let gap = std::mem::take(&mut self.gaps[i]);
        self.snaps[i].skip_gap(&counters, &gap);
    }

    /// Interval `i` (a phase) closes: at its end its figures are taken; a
    /// periodic phase's window that is not its last pauses it.
    pub(super) fn window_end(&mut self, i: usize) {
        self.settle_all(self.now);
        let ph = self.intervals[i];
        self.window_k[i] += 1;
        if ph.windows.is_some() && self.window_k[i] < ph.window_count() {
            let now = self.now;
            for (l, _) in &self.monitored {
                if let Some(m) = self.links[*l].monitor.as_mut() {
                    m.pause(i, now);
                }
            }
            self.gaps[i] = self.snapshot();
            return;
        }
        self.phase_results[i] = self.interval_summary(i, self.now).0;
    }
}
