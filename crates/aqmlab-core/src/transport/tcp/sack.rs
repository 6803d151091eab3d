//! Selective acknowledgements on the wire and at the receiver (RFC 2018).
//!
//! Segments are numbered, so a SACK block is a range of segments
//! `[start, end)` the receiver holds above its cumulative ACK. An ACK
//! carries at most three blocks ([`SackBlocks`], as with the timestamp
//! option: RFC 2018 section 3), stored by the engine beside the packet
//! arena as offsets from the cumulative ACK, so that `Packet` stays 40
//! bytes.
//!
//! Which blocks go on an ACK (RFC 2018 section 4):
//! - the first block is the one that holds the segment whose arrival
//!   triggered the ACK, unless that segment advanced the cumulative ACK;
//! - then the most recently reported blocks (the first blocks of the
//!   previous ACKs, latest first) that are still held above the cumulative
//!   ACK and are not the same block as one already on the ACK;
//! - three blocks at most.
//!
//! With `tcp.dsack` (RFC 2883), a segment the receiver already holds, or
//! holds no more because its cumulative ACK passed it, is reported in the
//! first block of the ACK it draws (a D-SACK): the other blocks follow it,
//! three in all, and the D-SACK goes on that ACK only, as Linux's
//! `tcp_dsack_set` and `tcp_options_write` do. A duplicate of a segment
//! held above the cumulative ACK is followed by the block holding it
//! (section 4 of RFC 2883: the block containing the duplicate comes
//! second). The D-SACK does not count as a first block for the blocks
//! remembered.
//!
//! The receiver keeps the segments it holds out of order as maximal
//! ranges, ascending ([`SackRx::ranges`]); a segment arriving in order after
//! a hole extends the last range, so an arrival costs O(1) in the common
//! case and O(log n + moves) for n ranges otherwise.

/// At most this many SACK blocks on an ACK (RFC 2018 section 3, with the
/// timestamp option).
pub const MAX_BLOCKS: usize = 3;

/// The SACK blocks of one ACK: `n` ranges of segments `[start, end)` as
/// offsets from the ACK's cumulative acknowledgement (both > 0), the first
/// a D-SACK when `dup` says so (`dup` = 2: its offsets count back from
/// the cumulative acknowledgement), and, for
/// a receiver that autotunes its buffer (`tcp.moderate_rcvbuf`,
/// `rcvbuf.rs`), the window it offers: segments from the cumulative ACK
/// (unused otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub n: u8,
    pub dup: u8,
    pub b: [(u32, u32); MAX_BLOCKS],
    pub wnd: u32,
}

impl SackBlocks {
    /// No blocks.
    pub const NONE: SackBlocks = SackBlocks {
        n: 0,
        dup: DUP_NONE,
        b: [(0, 0); MAX_BLOCKS],
        wnd: 0,
    };

    /// The blocks as absolute segment ranges, for the cumulative ACK `ack`.
    pub fn ranges(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let below = self.dup == DUP_BELOW;
        self.b[..self.n as usize]
            .iter()
            .enumerate()
            .map(move |(k, &(s, e))| {
                if k == 0 && below {
                    (ack - u64::from(s), ack - u64::from(e))
                } else {
                    (ack + u64::from(s), ack + u64::from(e))
                }
            })
    }

    /// Put the D-SACK `[start, end)` first (for cumulative ACK `rcv_nxt`),
    /// keeping the blocks that still fit after it.
    fn with_dup(&self, start: u64, end: u64, rcv_nxt: u64) -> SackBlocks {
        let mut out = *self;
        let n = (self.n as usize).min(MAX_BLOCKS - 1);
        out.b.copy_within(..n, 1);
        out.n = n as u8 + 1;
        if start < rcv_nxt {
            out.dup = DUP_BELOW;
            out.b[0] = ((rcv_nxt - start) as u32, (rcv_nxt - end) as u32);
        } else {
            out.dup = DUP_ABOVE;
            out.b[0] = ((start - rcv_nxt) as u32, (end - rcv_nxt) as u32);
        }
        out
    }
}

/// [`SackBlocks::dup`]: no D-SACK.
pub const DUP_NONE: u8 = 0;
/// The first block is a D-SACK above the cumulative ACK.
pub const DUP_ABOVE: u8 = 1;
/// The first block is a D-SACK below the cumulative ACK, its offsets
/// counted back from it.
pub const DUP_BELOW: u8 = 2;

/// The receiver's view for SACK: the out-of-order segments it holds and
/// the blocks it reported last.
#[derive(Clone, Debug, Default)]
pub(super) struct SackRx {
    /// Segments held above the cumulative ACK, as maximal ranges
    /// `[start, end)`, ascending and disjoint (with a gap between two).
    ranges: Vec<(u64, u64)>,
    /// A segment of each of the first blocks of the last ACKs, latest
    /// first, one per range (RFC 2018 section 4: "the most recently
    /// reported SACK blocks (based on first SACK blocks in previous SACK
    /// options)"): the first `nrecent`.
    recent: [u64; RECENT],
    nrecent: usize,
    /// The blocks of the last ACK built.
    last: SackBlocks,
    /// The same without its D-SACK, if it has one: the blocks of the
    /// ACKs after the one that carried it.
    plain: Option<SackBlocks>,
    /// Segments held above the cumulative ACK.
    held: u64,
}

/// How many first blocks of earlier ACKs are remembered (two are reported
/// at most; one more stands in for a block the cumulative ACK covered).
const RECENT: usize = MAX_BLOCKS + 1;

impl SackRx {
    /// Segment `seq`, received before, arrived again, and the cumulative
    /// ACK is now `rcv_nxt`: the blocks of the ACK it triggers, with a
    /// D-SACK for it first.
    pub fn on_duplicate(&mut self, seq: u64, rcv_nxt: u64) {
        self.on_segment(seq, rcv_nxt);
        self.plain = Some(self.last);
        self.last = self.last.with_dup(seq, seq + 1, rcv_nxt);
    }

    /// The ACK that carried a D-SACK has gone: the next ACKs carry the
    /// other blocks (Linux's `tcp_options_write` clears `rx_opt.dsack`).
    #[inline]
    pub fn dup_sent(&mut self) {
        if let Some(p) = self.plain.take() {
            self.last = p;
        }
    }

    /// Segment `seq` arrived, and the cumulative ACK is now `rcv_nxt`
    /// (after it); builds the blocks of the ACK it triggers.
    pub fn on_segment(&mut self, seq: u64, rcv_nxt: u64) {
        self.plain = None;
        // Ranges the cumulative ACK reached have been delivered in order.
        let gone = self.ranges.partition_point(|&(s, _)| s < rcv_nxt);
        if gone > 0 {
            self.held -= self.ranges.drain(..gone).map(|(s, e)| e - s).sum::<u64>();
        }
        if seq >= rcv_nxt {
            self.insert(seq);
            self.build(Some(seq), rcv_nxt);
        } else {
            // It advanced the cumulative ACK (or was a duplicate): no first
            // block of its own (RFC 2018 section 4).
            self.build(None, rcv_nxt);
        }
    }

    /// The blocks of the last ACK built.
    pub fn last(&self) -> SackBlocks {
        self.last
    }

    /// How many segments are held above the cumulative ACK, and the span
    /// from `rcv_nxt` to one past the highest.
    pub fn held(&self, rcv_nxt: u64) -> (u64, u64) {
        let span = self
            .ranges
            .last()
            .map_or(0, |&(_, e)| e.saturating_sub(rcv_nxt));
        (self.held, span)
    }

    /// The ranges held (for tests and checks).
    #[cfg(test)]
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    fn insert(&mut self, seq: u64) {
        if self.insert_new(seq) {
            self.held += 1;
        }
    }

    /// Adds `seq` to the ranges; false if it was held already.
    fn insert_new(&mut self, seq: u64) -> bool {
        // The common case: the segment extends the last range.
        if let Some(last) = self.ranges.last_mut() {
            if last.1 == seq {
                last.1 += 1;
                return true;
            }
        }
        let i = self.ranges.partition_point(|&(_, e)| e < seq);
        // ranges[i] is the first that ends at or after seq.
        if let Some(&(s, e)) = self.ranges.get(i) {
            if s <= seq && seq < e {
                return false; // held already
            }
            if e == seq {
                // Extends ranges[i] to the right, maybe joining the next.
                self.ranges[i].1 += 1;
                if self.ranges.get(i + 1).is_some_and(|n| n.0 == seq + 1) {
                    self.ranges[i].1 = self.ranges[i + 1].1;
                    self.ranges.remove(i + 1);
                }
                return true;
            }
            if s == seq + 1 {
                self.ranges[i].0 = seq;
                return true;
            }
        }
        self.ranges.insert(i, (seq, seq + 1));
        true
    }

    /// The range holding `seq`, if any.
    fn range_of(&self, seq: u64) -> Option<usize> {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        (i < self.ranges.len() && self.ranges[i].0 <= seq).then_some(i)
    }

    fn build(&mut self, first: Option<u64>, rcv_nxt: u64) {
        let mut out = SackBlocks::NONE;
        let (recent, nrecent) = (self.recent, self.nrecent);
        self.nrecent = 0;
        if self.ranges.is_empty() {
            // Nothing held: no block, and no earlier one to remember.
            self.last = out;
            return;
        }
        // RFC 2018 section 4: the block holding the triggering segment
        // first, then the blocks reported most recently that are still
        // held, each range once, three at most. The same ranges, in the
        // same order, are this ACK's first block and the earlier ones to
        // remember (latest first, one entry per range): one pass finds
        // them both.
        let mut seen = [usize::MAX; RECENT];
        for seq in first.into_iter().chain(recent[..nrecent].iter().copied()) {
            let Some(i) = self.range_of(seq) else {
                continue;
            };
            if seen[..self.nrecent].contains(&i) {
                continue;
            }
            seen[self.nrecent] = i;
            self.recent[self.nrecent] = seq;
            self.nrecent += 1;
            if (out.n as usize) < MAX_BLOCKS {
                let (s, e) = self.ranges[i];
                out.b[out.n as usize] = ((s - rcv_nxt) as u32, (e - rcv_nxt) as u32);
                out.n += 1;
            }
            if self.nrecent == RECENT {
                break;
            }
        }
        self.last = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(rx: &SackRx) -> Vec<(u32, u32)> {
        let b = rx.last();
        b.b[..b.n as usize].to_vec()
    }

    /// RFC 2018 section 4 by hand: segments 0-1 arrive, 2 is lost, then 3,
    /// 4; 6 (5 lost); 8 (7 lost); 10 (9 lost). Each ACK's first block holds
    /// the segment that triggered it; then the blocks reported most
    /// recently; never more than three.
    #[test]
    fn first_block_is_the_latest_then_the_most_recent_others() {
        let mut rx = SackRx::default();
        // In order: no blocks.
        rx.on_segment(0, 1);
        rx.on_segment(1, 2);
        assert_eq!(blocks(&rx), vec![]);
        // ACK 2 with [3, 4): offsets (1, 2); then [3, 5): (1, 3).
        rx.on_segment(3, 2);
        assert_eq!(blocks(&rx), vec![(1, 2)]);
        rx.on_segment(4, 2);
        assert_eq!(blocks(&rx), vec![(1, 3)]);
        // 6: first [6, 7), then [3, 5).
        rx.on_segment(6, 2);
        assert_eq!(blocks(&rx), vec![(4, 5), (1, 3)]);
        // 8: [8, 9), [6, 7), [3, 5).
        rx.on_segment(8, 2);
        assert_eq!(blocks(&rx), vec![(6, 7), (4, 5), (1, 3)]);
        // 10: [10, 11), [8, 9), [6, 7): three at most, the oldest left out.
        rx.on_segment(10, 2);
        assert_eq!(blocks(&rx), vec![(8, 9), (6, 7), (4, 5)]);
        assert_eq!(rx.ranges(), &[(3, 5), (6, 7), (8, 9), (10, 11)]);
        // 7 fills the hole between 6 and 8: one block [6, 9) first, then
        // [10, 11) (reported last), and [3, 5) (still held, the third).
        rx.on_segment(7, 2);
        assert_eq!(blocks(&rx), vec![(4, 7), (8, 9), (1, 3)]);
        // 2 arrives: the cumulative ACK jumps to 5. No first block of its
        // own; the most recently reported blocks still held, relative to 5.
        rx.on_segment(2, 5);
        assert_eq!(blocks(&rx), vec![(1, 4), (5, 6)]);
        // 5 arrives: ACK 9, [10, 11) left.
        rx.on_segment(5, 9);
        assert_eq!(blocks(&rx), vec![(1, 2)]);
        // 9: everything in order, no blocks.
        rx.on_segment(9, 11);
        assert_eq!(blocks(&rx), vec![]);
        assert!(rx.ranges().is_empty());
    }

    /// A segment just below a range extends it to the left; a duplicate of
    /// a held segment repeats the blocks with that range first.
    #[test]
    fn ranges_merge_both_ways() {
        let mut rx = SackRx::default();
        rx.on_segment(5, 0);
        rx.on_segment(3, 0);
        assert_eq!(rx.ranges(), &[(3, 4), (5, 6)]);
        rx.on_segment(4, 0);
        assert_eq!(rx.ranges(), &[(3, 6)]);
        assert_eq!(blocks(&rx), vec![(3, 6)]);
        rx.on_segment(2, 0);
        assert_eq!(rx.ranges(), &[(2, 6)]);
        rx.on_segment(8, 0);
        rx.on_segment(4, 0); // a duplicate
        assert_eq!(blocks(&rx), vec![(2, 6), (8, 9)]);
    }

    /// RFC 2883 by hand. Segments 0-1 in order, then 1 again: the ACK (2)
    /// carries the D-SACK [1, 2), below it; the next ACK no block. 4 and 6
    /// held ([4, 5), [6, 7)), 8 held, then 4 again: the D-SACK [4, 5)
    /// first, the block holding it second, then the block reported last;
    /// three in all, so [8, 9)'s older neighbour is left out. A D-SACK is
    /// not remembered as a first block: the next ACK's blocks are those
    /// the duplicate's ACK reported after the D-SACK, in order.
    #[test]
    fn a_duplicate_is_reported_first_once() {
        let mut rx = SackRx::default();
        rx.on_segment(0, 1);
        rx.on_segment(1, 2);
        rx.on_duplicate(1, 2);
        let b = rx.last();
        assert_eq!(b.dup, DUP_BELOW);
        assert_eq!(b.ranges(2).collect::<Vec<_>>(), vec![(1, 2)]);
        rx.dup_sent();
        assert_eq!(rx.last(), SackBlocks::NONE);
        rx.on_segment(4, 2);
        rx.on_segment(6, 2);
        rx.on_segment(8, 2);
        assert_eq!(blocks(&rx), vec![(6, 7), (4, 5), (2, 3)]);
        rx.on_duplicate(4, 2);
        let b = rx.last();
        assert_eq!(b.dup, DUP_ABOVE);
        assert_eq!(
            b.ranges(2).collect::<Vec<_>>(),
            vec![(4, 5), (4, 5), (8, 9)]
        );
        rx.dup_sent();
        assert_eq!(rx.last().dup, DUP_NONE);
        assert_eq!(blocks(&rx), vec![(2, 3), (6, 7), (4, 5)]);
        // A segment that arrives next rebuilds the blocks as before.
        rx.on_segment(10, 2);
        assert_eq!(blocks(&rx), vec![(8, 9), (2, 3), (6, 7)]);
    }
}
