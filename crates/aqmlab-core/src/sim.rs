//! The event queue: a binary min-heap on (time, insertion sequence), so that
//! events at equal times run in the order they were scheduled (FIFO ties) and
//! a run is reproducible.

use crate::packet::PktId;
use crate::units::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet reaches the far end of the link it was sent on.
    Arrive(PktId),
    /// A link finishes transmitting and may start its next packet.
    TxDone(u32),
    /// A flow's retransmission (or SYN) timer may have expired.
    RtoTimer(u32),
    /// A flow receiver's delayed-ACK timer may have expired.
    DelAckTimer(u32),
    /// A flow starts.
    FlowStart(u32),
    /// A UDP source's timer (next packet or ON/OFF switch).
    UdpSend(u32),
    /// A link's AQM asked for a periodic tick.
    AqmTick(u32),
    /// Take a queue sample.
    Sample,
    /// Measurement interval `i` begins (0: the main one; then the phases).
    IntervalStart(u32),
    /// Measurement interval `i` (a phase) ends.
    IntervalEnd(u32),
    /// `[[schedule]]` entry `i` is due.
    Schedule(u32),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` pops the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// Pending events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> EventQueue {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
            popped: 0,
        }
    }

    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        self.heap.push(Entry {
            time: at.0,
            seq: self.seq,
            ev,
        });
        self.seq += 1;
    }

    /// The earliest event, if any is due at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        match self.heap.peek() {
            Some(e) if e.time <= until.0 => {
                let e = self.heap.pop().expect("peeked");
                self.popped += 1;
                Some((SimTime(e.time), e.ev))
            }
            _ => None,
        }
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_fifo() {
        let mut q = EventQueue::default();
        q.schedule(SimTime(5), Event::TxDone(1));
        q.schedule(SimTime(3), Event::TxDone(2));
        q.schedule(SimTime(5), Event::TxDone(3));
        q.schedule(SimTime(3), Event::TxDone(4));
        let order: Vec<Event> =
            std::iter::from_fn(|| q.pop_until(SimTime(10)).map(|x| x.1)).collect();
        assert_eq!(
            order,
            vec![
                Event::TxDone(2),
                Event::TxDone(4),
                Event::TxDone(1),
                Event::TxDone(3)
            ]
        );
    }

    #[test]
    fn stops_at_horizon() {
        let mut q = EventQueue::default();
        q.schedule(SimTime(5), Event::Sample);
        q.schedule(SimTime(15), Event::Sample);
        assert!(q.pop_until(SimTime(10)).is_some());
        assert!(q.pop_until(SimTime(10)).is_none());
        assert_eq!(q.len(), 1);
    }
}
