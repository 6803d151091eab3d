//! The event queue, ordered on (time, insertion sequence), so that events at
//! equal times run in the order they were scheduled (FIFO ties) and a run is
//! reproducible.

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
    /// A pacing flow's sender may send its next segment (`tcp.pacing`).
    PaceTimer(u32),
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

impl Entry {
    /// Earlier in (time, seq) order.
    #[inline]
    fn before(&self, o: &Entry) -> bool {
        counted();
        (self.time, self.seq) < (o.time, o.seq)
    }
}

#[cfg(test)]
thread_local! {
    /// Comparisons of events made on this thread (unit tests count the
    /// queue's work with it, instead of timing it).
    pub(crate) static COMPARISONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Count one comparison (in unit tests only).
#[inline(always)]
fn counted() {
    #[cfg(test)]
    COMPARISONS.with(|c| c.set(c.get() + 1));
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
        counted();
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// log2 of a calendar bucket's width in nanoseconds: 16.4 us by default
/// ([`EventQueue::with_capacity`]); [`EventQueue::with_width`] sets it
/// (see [`bucket_shift_for`]).
const SHIFT: u32 = 14;
/// Width of a default calendar bucket, ns.
pub const BUCKET_NS: u64 = 1 << SHIFT;
/// The widths [`EventQueue::with_width`] takes: log2 ns, even (the radix
/// sort takes half the bits in each of its two passes).
pub const SHIFTS: [u32; 2] = [14, 16];
/// Buckets in the calendar ring: it spans 4096 x 16.4 us = 67 ms ahead
/// (268 ms with 65.5 us buckets; the figures below scale alike).
const NB: usize = 4096;
/// log2 of a far bucket's width in ring buckets: 2048 x 16.4 us = 33.6 ms,
/// half the ring, so that the ring always has room for the whole of the
/// next far bucket.
const FAR_REL: u32 = 11;
/// Far buckets: they span 2048 x 33.6 ms = 68.7 s ahead.
const NF: usize = 2048;
/// At most this many far buckets' storage is kept for reuse, each of at
/// most `FAR_POOL_CAP` events.
const FAR_POOL: usize = 8;
const FAR_POOL_CAP: usize = 1 << 14;
/// An event scheduled into the bucket being consumed is inserted into it
/// if at most this many of its events come before.
const INSERT_SCAN: usize = 16;
/// Buckets of at least this many events are sorted by radix, in two
/// digits of half the bucket's bits each of the time within the bucket.
const RADIX_FROM: usize = 128;
/// The widest digit of the radix sort (half the widest bucket's bits).
const MAX_DIGIT: u32 = 8;
const _: () = assert!(2 * MAX_DIGIT >= SHIFTS[1]);

/// The most events a ring bucket holds in its own storage: 2^6.
pub const MAX_SLOT_BITS: u32 = 6;

/// log2 of the events a ring bucket of 2^`shift` ns holds in its own
/// storage, for a network whose fastest bottleneck sends `bps`: about
/// twice the events such a bucket sees (some 8 per 500-byte packet time
/// on the canonical dumbbell), at least 4, at most 64.
///
/// Measured against a vector per bucket (2-core EPYC VM): the canonical
/// scenario 551-562 -> 604-617 simulated s per s (`bench`, six runs
/// alternated, with the one-event pop of [`EventQueue::pop_until`]);
/// `bench --scale` (each slice timed by its fastest of 3 repetitions, runs
/// alternated on a quiet host, ns per event) 66.9-67.6 -> 63.1-64.0 at 120
/// flows, and no change beyond the spread at 1200 (77.5-81.5 / 75.5-79.5),
/// 12 000 (112.7-117.9 / 107.7-117.1) and 120 000 (135.1-139.8 /
/// 132.0-139.2), where the misses of the pushes into dense buckets stay.
/// Under cachegrind the canonical run makes 8 % fewer L1 data misses for
/// 7 % more instructions (a bucket is copied out where a vector was
/// swapped). The storage costs 4096 x 2^bits x 24 bytes: 393 KB at
/// 10 Mbit/s, 6.3 MB from 1 Gbit/s on. Room for 512 events a bucket at
/// 1 Gbit/s (about three times a bucket's average) ran no faster and took
/// the peak memory at 12 000 flows from 71 to 95 MB.
pub fn slot_bits_for(bps: u64, shift: u32) -> u32 {
    let pkts = bps as f64 * (1u64 << shift) as f64 * 1e-9 / 4000.0;
    let want = ((16.0 * pkts).ceil() as u64).clamp(4, 1 << MAX_SLOT_BITS);
    want.next_power_of_two().trailing_zeros()
}

/// The bucket width (log2 ns) for a network whose fastest bottleneck
/// sends `bps`.
///
/// Measured on the scaled canonical dumbbell (`bench --scale`, 2-core EPYC
/// VM, ns per event, 65.5 us buckets (16) against 16.4 us (14), runs
/// alternated): 12 000 flows at 1 Gbit/s 118-120 against 138-147 (about 44
/// events a narrow bucket; wider still, 18, gives no more: 106-115); but
/// 1200 flows at 100 Mbit/s 101-110 against 84-100 in one series (median
/// 103.4 / 86.9; a second was too noisy to tell, 77-108 either way),
/// 120 000 at 10 Gbit/s 148-152 against 135 (hundreds of events a bucket
/// outgrow the caches as they are sorted and warmed), and 120 flows at
/// 10 Mbit/s the same within the noise (66.8 / 68.1). So 65.5 us between
/// 0.5 and 4 Gbit/s, 16.4 us otherwise. The width changes no result:
/// events run in (time, seq) order whatever the buckets.
pub fn bucket_shift_for(bps: u64) -> u32 {
    if (500_000_001..=4_000_000_000).contains(&bps) {
        SHIFTS[1]
    } else {
        SHIFTS[0]
    }
}

/// Pending events: a calendar ring for the near future, where nearly all
/// events of a packet network fall (transmissions and propagation), and a
/// binary heap for the rest (timers, flow starts, samples far ahead).
///
/// Every event sits in the bucket of its time; a bitmap finds the next
/// non-empty bucket. The buckets share one array, each with room for
/// 2^`slot_bits` events (a vector per bucket holds any more). The bucket
/// being consumed is sorted once into `now` (latest first, so that a pop
/// takes the last element; a bucket of one event is popped straight from
/// the array), and events scheduled into it meanwhile go to a small heap
/// (`ins`): a pop costs
/// O(1) or O(log) and a bucket O(b log b) whatever the number b of events
/// it holds (hundreds on a 10 Gbit/s link, 10^5 when as many flows start at
/// one instant; finding the earliest by a scan cost O(b) per pop, which
/// made such a start quadratic). A pop takes the earliest of the first
/// events of `now`, `ins` and the far heap, so the order is exactly that
/// of one heap on (time, seq): by time, then FIFO.
///
/// Events beyond the ring (retransmission timers, flow starts, samples)
/// wait in a second, coarser ring of far buckets (33.6 ms wide, 68.7 s
/// ahead), unsorted; a far bucket moves into the ring, each event into its
/// own bucket, when the cursor enters the far bucket before it. Only
/// events beyond that go to the binary heap. Scheduling and popping a
/// timer thus cost O(1) whatever the number of flows (a heap of 10^5
/// timers cost a cache miss per level on each pop).
///
/// Invariants: `now` and `ins` hold events of buckets [cursor, now_b], the
/// ring those of buckets (now_b, cursor + NB); far bucket j holds events of
/// ring buckets [j << FAR_REL, (j + 1) << FAR_REL), for far_next <= j <
/// far_next + NF, and far_next = (cursor >> FAR_REL) + 2 (so an event of a
/// far bucket before far_next belongs in the ring); the heap holds the
/// rest. Every event is in exactly one place, and a pop takes the
/// earliest of all, so the order is that of one heap on (time, seq).
#[derive(Debug)]
pub struct EventQueue {
    /// log2 of a ring bucket's width in ns (one of [`SHIFTS`]).
    shift: u32,
    /// The ring's storage: bucket i's first `1 << slot_bits` events lie
    /// at `slots[i << slot_bits..]`, the rest (rare) in `over[i]`. One
    /// contiguous array indexed by the bucket number: pushing an event
    /// reads only `lens` (16 KB), not a per-bucket vector's header and
    /// pointer (96 KB of headers, then the events' own allocation).
    slots: Vec<Entry>,
    slot_bits: u32,
    /// Events in each ring bucket (inline and overflow).
    lens: Vec<u32>,
    over: Vec<Vec<Entry>>,
    bits: Vec<u64>,
    ring_len: usize,
    /// Bucket number (time >> shift) of the last popped event; every event
    /// in the ring lies in [cursor, cursor + NB).
    cursor: u64,
    /// The events of the buckets up to `now_b` (the bucket being consumed),
    /// sorted on (time, seq), latest first.
    now: Vec<Entry>,
    /// Events scheduled into buckets up to `now_b` after it was sorted.
    ins: BinaryHeap<Entry>,
    now_b: u64,
    /// The far buckets, and the events they hold.
    far: Vec<Vec<Entry>>,
    far_len: usize,
    /// Empty far-bucket storage for reuse.
    far_pool: Vec<Vec<Entry>>,
    /// The first far bucket not yet moved into the ring.
    far_next: u64,
    heap: BinaryHeap<Entry>,
    /// Scratch space of [`EventQueue::sort_now`].
    keys: Vec<u64>,
    keys_tmp: Vec<u64>,
    spare: Vec<Entry>,
    /// Every event of the far buckets and of the heap is at or after this
    /// time (a lower bound): an event of `now` before it, with `ins`
    /// empty, is the earliest of all (the fast path of a pop).
    gate: u64,
    seq: u64,
    popped: u64,
    /// A bucket was moved into `now` since [`EventQueue::take_fresh`] last
    /// looked.
    fresh: bool,
}

impl Default for EventQueue {
    fn default() -> EventQueue {
        EventQueue::with_capacity(0)
    }
}

impl EventQueue {
    /// A queue for `n` pending events or so (the far heap is preallocated
    /// for at most 1024: nearly every event fits the two rings).
    pub fn with_capacity(n: usize) -> EventQueue {
        EventQueue::with_width(n, SHIFT)
    }

    /// [`EventQueue::with_capacity`] with buckets of 2^`shift` ns (one of
    /// [`SHIFTS`]; the queue's order does not depend on it, its speed does).
    pub fn with_width(n: usize, shift: u32) -> EventQueue {
        EventQueue::with_layout(n, shift, 2)
    }

    /// [`EventQueue::with_width`] with room for 2^`slot_bits` events in
    /// each ring bucket's own storage (more go to a slower overflow; see
    /// [`slot_bits_for`]).
    pub fn with_layout(n: usize, shift: u32, slot_bits: u32) -> EventQueue {
        assert!(SHIFTS.contains(&shift), "bucket width 2^{shift} ns");
        assert!(slot_bits <= MAX_SLOT_BITS, "2^{slot_bits} slots a bucket");
        EventQueue {
            shift,
            slots: vec![
                Entry {
                    time: 0,
                    seq: 0,
                    ev: Event::Sample,
                };
                NB << slot_bits
            ],
            slot_bits,
            lens: vec![0; NB],
            over: (0..NB).map(|_| Vec::new()).collect(),
            bits: vec![0; NB / 64],
            ring_len: 0,
            cursor: 0,
            now: Vec::new(),
            ins: BinaryHeap::new(),
            now_b: 0,
            far: (0..NF).map(|_| Vec::new()).collect(),
            far_len: 0,
            far_pool: Vec::new(),
            far_next: 2,
            heap: BinaryHeap::with_capacity(n.min(1024)),
            keys: Vec::new(),
            keys_tmp: Vec::new(),
            spare: Vec::new(),
            gate: u64::MAX,
            seq: 0,
            popped: 0,
            fresh: false,
        }
    }

    /// Schedule `ev` at `at`, which must not be before the last popped event.
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        let e = Entry {
            time: at.0,
            seq: self.seq,
            ev,
        };
        self.seq += 1;
        debug_assert!(
            at.0 >> self.shift >= self.cursor,
            "event scheduled in the past"
        );
        self.place(e);
    }

    /// Put `e` where its time belongs.
    #[inline(always)]
    fn place(&mut self, e: Entry) {
        let b = e.time >> self.shift;
        if b <= self.now_b {
            self.insert_now(e);
        } else if b < self.cursor + NB as u64 {
            let i = b as usize & (NB - 1);
            let k = self.lens[i];
            if k < 1 << self.slot_bits {
                self.slots[(i << self.slot_bits) + k as usize] = e;
            } else {
                self.over[i].push(e);
            }
            self.lens[i] = k + 1;
            self.bits[i / 64] |= 1 << (i % 64);
            self.ring_len += 1;
        } else if (b >> FAR_REL) < self.far_next + NF as u64 {
            // Not before far_next: b >= cursor + NB reaches past far
            // bucket (cursor >> FAR_REL) + 1.
            let v = &mut self.far[(b >> FAR_REL) as usize & (NF - 1)];
            if v.capacity() == 0 {
                if let Some(spare) = self.far_pool.pop() {
                    *v = spare;
                }
            }
            v.push(e);
            self.far_len += 1;
            self.gate = self.gate.min(self.far_from_time());
        } else {
            self.gate = self.gate.min(e.time);
            self.heap.push(e);
        }
    }

    /// An event of the bucket being consumed: into `now` at its place when
    /// at most `INSERT_SCAN` events of `now` come before it (a packet's
    /// TxDone a transmission time ahead, on a fast link), else into `ins`
    /// (so that 10^5 events at one instant cost O(log) each, not O(n)).
    #[inline(never)]
    fn insert_now(&mut self, e: Entry) {
        let n = self.now.len();
        // `now` is latest first: e goes after the events later than it.
        if n > 0 && self.now[0].before(&e) {
            // The latest of all: in front if `now` is short.
            if n <= INSERT_SCAN * 4 {
                self.now.insert(0, e);
            } else {
                self.ins.push(e);
            }
            return;
        }
        let mut i = n;
        while i > 0 && self.now[i - 1].before(&e) {
            if n - i == INSERT_SCAN {
                self.ins.push(e);
                return;
            }
            i -= 1;
        }
        self.now.insert(i, e);
    }

    /// The earliest time an event of the far buckets can have.
    #[inline]
    fn far_from_time(&self) -> u64 {
        (self.far_next << FAR_REL) << self.shift
    }

    /// Recompute `gate` (after the far buckets or the heap lost events).
    fn regate(&mut self) {
        let far = if self.far_len > 0 {
            self.far_from_time()
        } else {
            u64::MAX
        };
        self.gate = far.min(self.heap.peek().map_or(u64::MAX, |e| e.time));
    }

    /// Move the far buckets before `(cursor >> FAR_REL) + 2` into the ring
    /// (each event of one lies within the ring's span then).
    #[inline(never)]
    fn cascade(&mut self) {
        while self.far_next < (self.cursor >> FAR_REL) + 2 {
            let i = self.far_next as usize & (NF - 1);
            self.far_next += 1;
            if self.far[i].is_empty() {
                continue;
            }
            // The bucket's storage goes to a small pool, for the next far
            // bucket to be filled (this one is filled again only 68.7 s
            // later, and 2048 buckets each keeping the capacity of its
            // largest load would hold megabytes).
            let mut v = std::mem::take(&mut self.far[i]);
            self.far_len -= v.len();
            for e in v.drain(..) {
                self.place(e);
            }
            if self.far_pool.len() < FAR_POOL && v.capacity() <= FAR_POOL_CAP {
                self.far_pool.push(v);
            }
        }
        self.regate();
    }

    /// The first non-empty bucket at or after the cursor (circularly).
    #[inline]
    fn first_bucket(&self) -> usize {
        let start = self.cursor as usize & (NB - 1);
        let (w0, b0) = (start / 64, start % 64);
        let words = NB / 64;
        let masked = self.bits[w0] & (!0u64 << b0);
        if masked != 0 {
            return w0 * 64 + masked.trailing_zeros() as usize;
        }
        for k in 1..=words {
            let w = (w0 + k) % words;
            let mut x = self.bits[w];
            if k == words {
                x &= !(!0u64 << b0); // the first word's low bits, last
            }
            if x != 0 {
                return w * 64 + x.trailing_zeros() as usize;
            }
        }
        unreachable!("ring_len > 0 but no bucket is marked")
    }

    /// Prefetch the first event of the next non-empty bucket after `i`,
    /// if the same word of the bitmap shows one: a sparse ring (a 10
    /// Mbit/s dumbbell has an event in one bucket of seven) spreads its
    /// events over more memory than the L2 cache keeps between two passes
    /// of the cursor, and a pop waited for that line.
    #[inline(always)]
    fn prefetch_next(&self, i: usize) {
        let above = self.bits[i / 64] & (!1u64 << (i % 64));
        if above != 0 {
            let j = (i & !63) + above.trailing_zeros() as usize;
            crate::mem::prefetch(&self.slots[j << self.slot_bits]);
        }
    }

    /// Move the ring's first non-empty bucket into `now` (which is empty,
    /// as is `ins`).
    ///
    /// With `take`, a bucket of one event that is the earliest of all and
    /// due by `take` is returned instead (then `now` stays empty).
    #[inline(never)]
    fn advance(&mut self, take: Option<SimTime>) -> Option<Entry> {
        let i = self.first_bucket();
        let start = self.cursor as usize & (NB - 1);
        self.now_b = self.cursor + ((i + NB - start) & (NB - 1)) as u64;
        let k = std::mem::take(&mut self.lens[i]) as usize;
        self.ring_len -= k;
        self.bits[i / 64] &= !(1 << (i % 64));
        let first = i << self.slot_bits;
        let inline = k.min(1 << self.slot_bits);
        self.now.clear();
        self.fresh = true;
        self.prefetch_next(i);
        if k == 1 {
            let e = self.slots[first];
            if take.is_some_and(|u| e.time < self.gate && e.time <= u.0) {
                return Some(e);
            }
            self.now.push(e);
            return None;
        }
        self.now
            .extend_from_slice(&self.slots[first..first + inline]);
        if k > inline {
            self.now.append(&mut self.over[i]);
        }
        // `Entry`'s order is reversed, so this sorts latest first; keys
        // (time, seq) are unique, so an unstable sort is deterministic.
        // Events are often scheduled in time order: then a reversal does.
        match self.now.len() {
            0 | 1 => {}
            2 => {
                if self.now[0].before(&self.now[1]) {
                    self.now.swap(0, 1);
                }
            }
            _ => {
                if self.now.is_sorted_by(|x, y| x.before(y)) {
                    self.now.reverse();
                } else if self.now.len() <= 8 {
                    self.now.sort_unstable();
                } else {
                    self.sort_now();
                }
            }
        }
        None
    }

    /// Sort `now` (one ring bucket's events) latest first. Its events were
    /// pushed in the order they were scheduled, so in `seq` order, unless
    /// a far bucket moved some in later: then (time, seq) is (time within
    /// the bucket, position), and sorting those 64-bit keys is much
    /// cheaper than sorting the entries.
    #[inline(never)]
    fn sort_now(&mut self) {
        let base = self.now_b << self.shift;
        let width = 1u64 << self.shift;
        let digit_bits = self.shift / 2;
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        let mut in_seq = self.now.len() <= u32::MAX as usize;
        let mut prev = self.now[0].seq;
        for (k, e) in self.now.iter().enumerate() {
            let rel = e.time.wrapping_sub(base);
            in_seq &= (k == 0 || prev < e.seq) & (rel < width);
            prev = e.seq;
            keys.push((rel << 32) | k as u64);
        }
        if in_seq {
            if keys.len() >= RADIX_FROM {
                // Two stable counting passes on the time within the bucket
                // (7 bits each) keep equal times in position order.
                let mut tmp = std::mem::take(&mut self.keys_tmp);
                for pass in 0..2 {
                    let shift = 32 + pass * digit_bits;
                    let digit = |k: u64| ((k >> shift) as usize) & ((1 << digit_bits) - 1);
                    let mut start = [0usize; 1 << MAX_DIGIT];
                    for &k in &keys {
                        start[digit(k)] += 1;
                    }
                    let mut sum = 0;
                    for c in start.iter_mut() {
                        (*c, sum) = (sum, sum + *c);
                    }
                    tmp.clear();
                    tmp.resize(keys.len(), 0);
                    for &k in &keys {
                        let d = digit(k);
                        tmp[start[d]] = k;
                        start[d] += 1;
                    }
                    std::mem::swap(&mut keys, &mut tmp);
                }
                self.keys_tmp = tmp;
            } else {
                keys.sort_unstable_by(|a, b| {
                    counted();
                    a.cmp(b)
                });
            }
            let mut sorted = std::mem::take(&mut self.spare);
            sorted.clear();
            sorted.extend(keys.iter().rev().map(|&k| self.now[k as u32 as usize]));
            self.spare = std::mem::replace(&mut self.now, sorted);
        } else {
            self.now.sort_unstable();
        }
        self.keys = keys;
    }

    /// Whether a new bucket of events was taken up since the last call (the
    /// engine then warms the caches for its events, see
    /// [`EventQueue::upcoming`]).
    #[inline]
    pub fn take_fresh(&mut self) -> bool {
        std::mem::take(&mut self.fresh)
    }

    /// The events of the bucket being consumed that are still to come
    /// (those scheduled into it since it was taken up excepted), in no
    /// particular order.
    pub fn upcoming(&self) -> impl Iterator<Item = Event> + '_ {
        self.now.iter().map(|e| e.ev)
    }

    /// The earliest event, if any is due at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        if self.now.is_empty() && self.ins.is_empty() && self.ring_len > 0 {
            // A bucket of one event (most, on a 10 Mbit/s dumbbell) is
            // popped without passing through `now`.
            if let Some(e) = self.advance(Some(until)) {
                return Some(self.consume(e));
            }
        }
        // The common case: the next event of the bucket being consumed,
        // with nothing scheduled into that bucket since it was sorted and
        // nothing in the far buckets or the heap as early.
        if let Some(&e) = self.now.last() {
            if e.time < self.gate && e.time <= until.0 && self.ins.is_empty() {
                self.now.pop();
                return Some(self.consume(e));
            }
        }
        self.pop_slow(until)
    }

    /// After popping `e`: move the cursor and count it.
    #[inline(always)]
    fn consume(&mut self, e: Entry) -> (SimTime, Event) {
        self.cursor = e.time >> self.shift;
        if self.far_next < (self.cursor >> FAR_REL) + 2 {
            self.cascade();
        }
        self.popped += 1;
        (SimTime(e.time), e.ev)
    }

    /// [`EventQueue::pop_until`] in general: the earliest of `now`, `ins`
    /// and the heap, bringing far buckets in as they come due.
    #[inline(never)]
    fn pop_slow(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        let (e, src) = loop {
            if self.now.is_empty() && self.ins.is_empty() && self.ring_len > 0 {
                self.advance(None);
            }
            // The earliest of the three: 0 `now`, 1 `ins`, 2 the heap.
            let mut best: Option<(Entry, u8)> = self.now.last().map(|&e| (e, 0));
            for (c, src) in [(self.ins.peek(), 1u8), (self.heap.peek(), 2u8)] {
                if let Some(&c) = c {
                    if best.is_none_or(|(b, _)| c.before(&b)) {
                        best = Some((c, src));
                    }
                }
            }
            // The far buckets from far_next on hold events from ring bucket
            // far_next << FAR_REL on: if nothing else comes before, bring
            // the next far bucket in (unless it starts after `until`).
            let far_from = self.far_next << FAR_REL;
            if self.far_len > 0
                && best.is_none_or(|(b, _)| b.time >> self.shift >= far_from)
                && far_from <= until.0 >> self.shift
            {
                // Nothing is pending before far_from: the cursor may move
                // up to the far bucket before far_next, which lets
                // `cascade` bring far_next in.
                self.cursor = self.cursor.max((self.far_next - 1) << FAR_REL);
                self.cascade();
                continue;
            }
            break best?;
        };
        if e.time > until.0 {
            return None;
        }
        match src {
            0 => {
                self.now.pop();
            }
            1 => {
                self.ins.pop();
            }
            _ => {
                self.heap.pop();
                self.regate();
            }
        }
        Some(self.consume(e))
    }

    /// Width of a ring bucket, ns.
    pub fn bucket_ns(&self) -> u64 {
        1 << self.shift
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.ring_len + self.now.len() + self.ins.len() + self.far_len + self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bucket widths and bucket storage (log2 events) the order is checked
    /// at: one event a bucket (nearly all overflow), 4, and the most.
    const LAYOUTS: [(u32, u32); 4] = [(14, 0), (14, 2), (16, 2), (16, MAX_SLOT_BITS)];

    #[test]
    fn bucket_storage_suits_the_rate() {
        // 10 Mbit/s: 0.04 packet times a 16.4 us bucket; the floor of 4.
        assert_eq!(slot_bits_for(10_000_000, 14), 2);
        // 100 Mbit/s: 0.41, 6.6 events -> 8.
        assert_eq!(slot_bits_for(100_000_000, 14), 3);
        // 1 Gbit/s at 65.5 us: 16.4 packet times, 262 events -> the cap.
        assert_eq!(slot_bits_for(1_000_000_000, 16), MAX_SLOT_BITS);
        // 200 Mbit/s: 0.82, 13 events -> 16.
        assert_eq!(slot_bits_for(200_000_000, 14), 4);
        // 10 Gbit/s and beyond: the cap.
        assert_eq!(slot_bits_for(10_000_000_000, 14), MAX_SLOT_BITS);
        assert_eq!(slot_bits_for(u64::MAX, 16), MAX_SLOT_BITS);
        assert_eq!(slot_bits_for(0, 14), 2);
    }

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

    /// Random schedules (near, far, equal times, across the ring's wrap)
    /// pop in exactly the (time, seq) order of a sort.
    #[test]
    fn calendar_matches_a_sort() {
        for (shift, slots) in LAYOUTS {
            calendar_matches_a_sort_with(shift, slots);
        }
    }

    fn calendar_matches_a_sort_with(shift: u32, slots: u32) {
        use crate::rng::{Rng, Stream};
        let mut rng = Rng::new(5, Stream::Topology);
        let mut q = EventQueue::with_layout(0, shift, slots);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut popped = Vec::new();
        let mut now = 0u64;
        let mut seq = 0u64;
        for round in 0..20_000u64 {
            // Schedule 0-3 events at now + a delay of up to 10 ns .. 1 s.
            for _ in 0..rng.uniform_u64(0, 3) {
                let scale = [10u64, 20_000, 1_000_000, 70_000_000, 1_000_000_000]
                    [rng.uniform_u64(0, 4) as usize];
                let at = now + rng.uniform_u64(0, scale);
                q.schedule(SimTime(at), Event::TxDone(seq as u32));
                reference.push((at, seq));
                seq += 1;
            }
            if round % 2 == 0 {
                if let Some((t, Event::TxDone(s))) = q.pop_until(SimTime::MAX) {
                    assert!(t.0 >= now);
                    now = t.0;
                    popped.push((t.0, s as u64));
                }
            }
        }
        while let Some((t, Event::TxDone(s))) = q.pop_until(SimTime::MAX) {
            popped.push((t.0, s as u64));
        }
        // Popping interleaved with scheduling: each pop is the minimum of
        // what was pending, so the sequence is sorted and complete.
        assert!(popped.windows(2).all(|w| w[0] <= w[1]));
        reference.sort();
        assert_eq!(popped, reference);
        assert!(q.is_empty());
    }

    /// Dense buckets (hundreds of events each, as on a 10 Gbit/s link) and
    /// pops that stop at a horizon, after which events are scheduled before
    /// the bucket the queue had already started: still the order of a sort.
    #[test]
    fn dense_buckets_and_horizons_match_a_sort() {
        for (shift, slots) in LAYOUTS {
            dense_buckets_and_horizons_match_a_sort_with(shift, slots);
        }
    }

    fn dense_buckets_and_horizons_match_a_sort_with(shift: u32, slots: u32) {
        use crate::rng::{Rng, Stream};
        let mut rng = Rng::new(9, Stream::Topology);
        let mut q = EventQueue::with_layout(0, shift, slots);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut popped = Vec::new();
        let mut now = 0u64;
        let mut seq = 0u64;
        for _ in 0..2_000 {
            for _ in 0..rng.uniform_u64(0, 40) {
                let scale = [50u64, 400, 30_000, 200_000_000][rng.uniform_u64(0, 3) as usize];
                let at = now + rng.uniform_u64(0, scale);
                q.schedule(SimTime(at), Event::TxDone(seq as u32));
                reference.push((at, seq));
                seq += 1;
            }
            // Run to a horizon a little ahead, then time stands there.
            let horizon = now + rng.uniform_u64(0, 40_000);
            while let Some((t, Event::TxDone(s))) = q.pop_until(SimTime(horizon)) {
                assert!(t.0 >= now && t.0 <= horizon);
                now = t.0;
                popped.push((t.0, s as u64));
            }
            now = horizon;
        }
        while let Some((t, Event::TxDone(s))) = q.pop_until(SimTime::MAX) {
            popped.push((t.0, s as u64));
        }
        assert!(popped.windows(2).all(|w| w[0] <= w[1]));
        reference.sort();
        assert_eq!(popped, reference);
        assert!(q.is_empty());
    }

    /// Buckets of hundreds of events in random order (sorted by radix),
    /// some of them joined by events of a far bucket scheduled earlier
    /// (then out of `seq` order), and events scheduled into the bucket
    /// being consumed: still the order of a sort.
    #[test]
    fn large_buckets_match_a_sort() {
        for (shift, slots) in LAYOUTS {
            large_buckets_match_a_sort_with(shift, slots);
        }
    }

    fn large_buckets_match_a_sort_with(shift: u32, slots: u32) {
        use crate::rng::{Rng, Stream};
        let mut rng = Rng::new(13, Stream::Topology);
        let mut q = EventQueue::with_layout(0, shift, slots);
        // Times scale with the bucket width (those below are for 16.4 us).
        let k = 1u64 << (shift - SHIFT);
        let bucket = BUCKET_NS * k;
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut popped = Vec::new();
        let mut seq = 0u64;
        let mut push = |q: &mut EventQueue, at: u64, reference: &mut Vec<(u64, u64)>| {
            q.schedule(SimTime(at), Event::TxDone(seq as u32));
            reference.push((at, seq));
            seq += 1;
        };
        // Far ahead first (into far buckets).
        for _ in 0..400 {
            let at = 100_000_000 * k + rng.uniform_u64(0, 3 * bucket);
            push(&mut q, at, &mut reference);
        }
        let mut now = 0u64;
        for round in 0..60u64 {
            // A few hundred events into the next buckets, in random order,
            // a quarter of them at one of a few instants.
            let base = (now >> shift << shift) + bucket * (1 + round % 3);
            for _ in 0..rng.uniform_u64(100, 500) {
                let at = if rng.uniform_u64(0, 3) == 0 {
                    base + 64 * rng.uniform_u64(0, 3)
                } else {
                    base + rng.uniform_u64(0, bucket - 1)
                };
                push(&mut q, at, &mut reference);
            }
            // Pop half a bucket's worth, scheduling into the current one.
            for _ in 0..rng.uniform_u64(50, 400) {
                let Some((t, Event::TxDone(s))) = q.pop_until(SimTime(30_000_000 * k)) else {
                    break;
                };
                assert!(t.0 >= now);
                now = t.0;
                popped.push((t.0, s as u64));
                if rng.uniform_u64(0, 3) == 0 {
                    push(&mut q, now + rng.uniform_u64(0, 2_000), &mut reference);
                }
            }
        }
        // Up to 33.2 ms: the events at 100 ms scheduled now go into the
        // ring (within 67 ms), while those scheduled first still wait in
        // their far bucket; at 34 ms that bucket moves into the ring, after
        // the later-scheduled ones.
        let drain = |q: &mut EventQueue, until: u64, popped: &mut Vec<(u64, u64)>| {
            while let Some((t, Event::TxDone(s))) = q.pop_until(SimTime(until)) {
                popped.push((t.0, s as u64));
            }
        };
        drain(&mut q, 33_000_000 * k, &mut popped);
        push(&mut q, 33_200_000 * k, &mut reference);
        drain(&mut q, 33_200_000 * k, &mut popped);
        for _ in 0..300 {
            let at = 100_000_000 * k + rng.uniform_u64(0, 3 * bucket);
            push(&mut q, at, &mut reference);
        }
        assert!(q.far_len > 0 && q.ring_len >= 300);
        push(&mut q, 34_000_000 * k, &mut reference);
        drain(&mut q, 34_000_000 * k, &mut popped);
        assert_eq!(q.far_len, 0);
        while let Some((t, Event::TxDone(s))) = q.pop_until(SimTime::MAX) {
            popped.push((t.0, s as u64));
        }
        reference.sort();
        assert_eq!(popped, reference);
        assert!(q.is_empty());
    }

    /// Timers far ahead (the far buckets, and beyond their 68.7 s the
    /// heap), long silences and horizons that stop before or inside a far
    /// bucket: still the order of a sort.
    #[test]
    fn far_timers_and_gaps_match_a_sort() {
        for (shift, slots) in LAYOUTS {
            far_timers_and_gaps_match_a_sort_with(shift, slots);
        }
    }

    fn far_timers_and_gaps_match_a_sort_with(shift: u32, slots: u32) {
        use crate::rng::{Rng, Stream};
        let mut rng = Rng::new(11, Stream::Topology);
        let mut q = EventQueue::with_layout(0, shift, slots);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut popped = Vec::new();
        let mut now = 0u64;
        let mut seq = 0u64;
        for _ in 0..3_000 {
            for _ in 0..rng.uniform_u64(0, 6) {
                let scale = [
                    1_000u64,
                    100_000,
                    40_000_000,
                    300_000_000,
                    5_000_000_000,
                    100_000_000_000,
                ][rng.uniform_u64(0, 5) as usize];
                let at = now + rng.uniform_u64(0, scale);
                q.schedule(SimTime(at), Event::TxDone(seq as u32));
                reference.push((at, seq));
                seq += 1;
            }
            // Horizons from a microsecond to seconds ahead.
            let reach = [1_000u64, 50_000_000, 3_000_000_000][rng.uniform_u64(0, 2) as usize];
            let horizon = now + rng.uniform_u64(0, reach);
            while let Some((t, Event::TxDone(s))) = q.pop_until(SimTime(horizon)) {
                assert!(t.0 >= now && t.0 <= horizon);
                now = t.0;
                popped.push((t.0, s as u64));
            }
            now = horizon;
        }
        while let Some((t, Event::TxDone(s))) = q.pop_until(SimTime::MAX) {
            popped.push((t.0, s as u64));
        }
        reference.sort();
        assert_eq!(popped, reference);
        assert!(q.is_empty());
        assert!(q.far_len == 0 && q.heap.is_empty());
    }
}
