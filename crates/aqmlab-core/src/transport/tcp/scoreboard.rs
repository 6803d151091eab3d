//! The SACK sender's scoreboard (RFC 6675 section 3; the bits and
//! counters as Linux keeps them in `tcp_input.c`).
//!
//! One slot per segment sent and not yet cumulatively acknowledged, from
//! `una` to `end` (one past the highest segment sent), with three bits:
//! - `SACKED`: a SACK block covered it (RFC 6675's "SACKed");
//! - `LOST`: it is deemed lost (by RFC 6675's IsLost, by RACK or by a
//!   retransmission timeout);
//! - `RETRANS`: a retransmission of it is in flight (Linux's
//!   `TCPCB_SACKED_RETRANS`); `EVER` stays once it has been retransmitted
//!   (for RACK's ambiguity test and Karn's rule);
//!
//! and the time of its last transmission (RACK, RFC 8985 section 6.1).
//! `SACKED` excludes the two others: a SACK block clears them.
//!
//! The counters are kept as each bit changes, as Linux keeps `sacked_out`,
//! `lost_out` and `retrans_out`, so that RFC 6675's `pipe` (section 4,
//! SetPipe) is O(1):
//!
//! ```text
//! pipe = (end - una) - sacked_out - lost_out + retrans_out
//! ```
//!
//! (Linux's `tcp_packets_in_flight`: a lost segment not yet sent again is
//! not in the network; one sent again is, once.)
//!
//! Per-ACK work is O(1) amortised:
//! - a SACK block marks only the segments it newly covers: a SACKed slot
//!   holds the length of a run of SACKed segments from it (a hint, shortened
//!   on the way as in a union-find with path compression), so a block that
//!   repeats what earlier ACKs reported is skipped in a few steps;
//! - IsLost (RFC 6675 section 4: DupThresh = 3 SACKed segments above) needs
//!   the third highest SACKed segment, kept among the three highest as
//!   segments are SACKed; every un-SACKed segment below it is lost, and a
//!   mark moves forward only;
//! - NextSeg (RFC 6675 section 4, rule 1: the lowest lost segment not yet
//!   sent again) walks a cursor that moves forward only, up to the highest
//!   segment marked lost; a segment marked lost behind the cursor (a
//!   retransmission lost again) waits in a small heap, lowest first.

use crate::units::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A SACK block covered the segment.
pub(super) const SACKED: u8 = 1;
/// The segment is deemed lost.
pub(super) const LOST: u8 = 2;
/// A retransmission of the segment is in flight.
pub(super) const RETRANS: u8 = 4;
/// The segment has been retransmitted at least once.
pub(super) const EVER: u8 = 8;

/// RFC 6675's DupThresh: a segment with this many SACKed segments above it
/// is lost (section 4, IsLost).
pub(super) const DUP_THRESH: usize = 3;

/// One segment of the scoreboard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Slot {
    /// When it was last sent (first transmission or retransmission).
    pub xmit: SimTime,
    /// The bits above.
    pub bits: u8,
    /// SACKed slots: the segments `[seq, seq + run)` are all SACKed (a
    /// hint, at least 1). 0 otherwise.
    run: u32,
}

/// How marking a segment lost changed it ([`Scoreboard::mark_lost`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Marked {
    /// SACKed, or lost already and not sent again: unchanged.
    No,
    /// Newly lost.
    Lost,
    /// Its retransmission is deemed lost too.
    Again,
}

/// The scoreboard of one flow (see the module's head).
#[derive(Clone, Debug, Default)]
pub(super) struct Scoreboard {
    /// The oldest segment not cumulatively acknowledged (`slots[0]`).
    una: u64,
    slots: VecDeque<Slot>,
    /// Segments SACKed, deemed lost, and retransmitted with the copy in
    /// flight (Linux's `sacked_out`, `lost_out`, `retrans_out`).
    pub sacked_out: u64,
    pub lost_out: u64,
    pub retrans_out: u64,
    /// NextSeg's cursor: no segment in [una, cursor) is lost and not yet
    /// sent again, except those in `relost`.
    cursor: u64,
    /// One past the highest segment marked lost: the cursor stops there.
    lost_hi: u64,
    /// Segments marked lost behind the cursor, lowest first.
    relost: BinaryHeap<Reverse<u64>>,
    /// The highest SACKed segments still on the scoreboard, descending.
    top: [u64; DUP_THRESH],
    ntop: usize,
    /// IsLost has marked every un-SACKed segment below this.
    marked_to: u64,
}

impl Scoreboard {
    /// The oldest segment not cumulatively acknowledged.
    pub fn una(&self) -> u64 {
        self.una
    }

    /// One past the highest segment sent.
    pub fn end(&self) -> u64 {
        self.una + self.slots.len() as u64
    }

    /// Segments sent and not cumulatively acknowledged.
    pub fn outstanding(&self) -> u64 {
        self.slots.len() as u64
    }

    /// One past the highest segment SACKed, or `una` if none is (Linux's
    /// `tcp_highest_sack_seq`: the forward-most segment acknowledged).
    #[inline]
    pub fn fack(&self) -> u64 {
        if self.sacked_out > 0 && self.ntop > 0 {
            self.top[0] + 1
        } else {
            self.una
        }
    }

    /// RFC 6675 section 4 (SetPipe), as Linux's `tcp_packets_in_flight`.
    #[inline]
    pub fn pipe(&self) -> u64 {
        self.outstanding() + self.retrans_out - self.sacked_out - self.lost_out
    }

    /// Segment `seq` (una <= seq < end).
    pub fn slot(&self, seq: u64) -> Slot {
        self.slots[(seq - self.una) as usize]
    }

    fn at(&mut self, seq: u64) -> &mut Slot {
        let i = (seq - self.una) as usize;
        &mut self.slots[i]
    }

    /// Segment `seq` = `end` is sent for the first time at `now`.
    pub fn sent_new(&mut self, seq: u64, now: SimTime) {
        debug_assert_eq!(seq, self.end(), "new data in sequence");
        self.slots.push_back(Slot {
            xmit: now,
            bits: 0,
            run: 0,
        });
    }

    /// Segment `seq` (not SACKed) is sent again at `now`.
    pub fn sent_again(&mut self, seq: u64, now: SimTime) {
        let s = self.at(seq);
        debug_assert_eq!(s.bits & SACKED, 0, "a SACKed segment sent again");
        let was = s.bits;
        s.bits |= RETRANS | EVER;
        s.xmit = now;
        if was & RETRANS == 0 {
            self.retrans_out += 1;
        }
        if self.relost.peek() == Some(&Reverse(seq)) {
            self.relost.pop();
        }
    }

    /// A cumulative ACK for everything below `ack`: those segments leave
    /// the scoreboard. `f(seq, slot)` sees each that had not been SACKed,
    /// in ascending order (delivered now); returns their number.
    pub fn ack(&mut self, ack: u64, mut f: impl FnMut(u64, Slot)) -> u64 {
        debug_assert!(ack <= self.end(), "ACK {ack} beyond {}", self.end());
        let mut n = 0;
        while self.una < ack {
            let Some(s) = self.slots.pop_front() else {
                break;
            };
            if s.bits & SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                n += 1;
                f(self.una, s);
            }
            if s.bits & LOST != 0 {
                self.lost_out -= 1;
            }
            if s.bits & RETRANS != 0 {
                self.retrans_out -= 1;
            }
            self.una += 1;
        }
        while self.ntop > 0 && self.top[self.ntop - 1] < self.una {
            self.ntop -= 1;
        }
        n
    }

    /// A SACK block `[start, end)` (RFC 2018): the segments it newly covers
    /// become SACKed (no longer lost or retransmitted, RFC 6675 section 3).
    /// `f(seq, slot before)` sees each, ascending; returns their number.
    pub fn sack(&mut self, start: u64, end: u64, mut f: impl FnMut(u64, Slot)) -> u64 {
        let hi = end.min(self.end());
        let mut s = start.max(self.una);
        let mut n = 0;
        while s < hi {
            s = self.next_unsacked(s);
            if s >= hi {
                break;
            }
            let slot = *self.at(s);
            if slot.bits & LOST != 0 {
                self.lost_out -= 1;
            }
            if slot.bits & RETRANS != 0 {
                self.retrans_out -= 1;
            }
            *self.at(s) = Slot {
                xmit: slot.xmit,
                bits: (slot.bits & EVER) | SACKED,
                run: 1,
            };
            self.sacked_out += 1;
            self.note_sacked(s);
            f(s, slot);
            n += 1;
            s += 1;
        }
        n
    }

    /// The first segment at or after `seq` that is not SACKed (or `end`),
    /// shortening the runs walked on the way.
    fn next_unsacked(&mut self, seq: u64) -> u64 {
        let end = self.end();
        let mut s = seq;
        while s < end {
            let slot = self.slots[(s - self.una) as usize];
            if slot.bits & SACKED == 0 {
                break;
            }
            s += u64::from(slot.run.max(1));
        }
        let s = s.min(end);
        let mut x = seq;
        while x < s {
            let slot = self.at(x);
            let r = u64::from(slot.run.max(1));
            slot.run = (s - x) as u32;
            x += r;
        }
        s
    }

    /// Keeps the DupThresh highest SACKed segments.
    fn note_sacked(&mut self, seq: u64) {
        if self.ntop == DUP_THRESH && seq < self.top[DUP_THRESH - 1] {
            return;
        }
        let mut i = self.ntop.min(DUP_THRESH - 1);
        if self.ntop < DUP_THRESH {
            self.ntop += 1;
        }
        while i > 0 && self.top[i - 1] < seq {
            self.top[i] = self.top[i - 1];
            i -= 1;
        }
        self.top[i] = seq;
    }

    /// Mark segment `seq` lost (Linux's `tcp_mark_skb_lost`): a SACKed
    /// segment is not; one lost already whose retransmission is in flight
    /// is lost again (its retransmission no longer counts in the pipe).
    pub fn mark_lost(&mut self, seq: u64) -> Marked {
        let s = self.at(seq);
        let b = s.bits;
        if b & SACKED != 0 {
            return Marked::No;
        }
        let m = if b & LOST != 0 {
            if b & RETRANS == 0 {
                return Marked::No;
            }
            s.bits &= !RETRANS;
            self.retrans_out -= 1;
            Marked::Again
        } else {
            s.bits |= LOST;
            self.lost_out += 1;
            Marked::Lost
        };
        if seq < self.cursor {
            self.relost.push(Reverse(seq));
        }
        self.lost_hi = self.lost_hi.max(seq + 1);
        m
    }

    /// RFC 6675 section 4, IsLost with DupThresh = 3: every un-SACKed
    /// segment with at least three SACKed segments above it is lost (as
    /// Linux's `tcp_mark_head_lost` marks them, once: a segment lost and
    /// sent again is not marked again). Returns how many became lost.
    pub fn mark_is_lost(&mut self) -> u64 {
        if self.ntop < DUP_THRESH {
            return 0;
        }
        let third = self.top[DUP_THRESH - 1];
        let mut s = self.marked_to.max(self.una);
        let mut n = 0;
        while s < third {
            s = self.next_unsacked(s);
            if s >= third {
                break;
            }
            if self.slot(s).bits & LOST == 0 {
                self.mark_lost(s);
                n += 1;
            }
            s += 1;
        }
        self.marked_to = self.marked_to.max(third);
        n
    }

    /// A retransmission timeout (Linux's `tcp_timeout_mark_lost`): every
    /// segment not SACKed is lost, except those `keep(seq, slot)` spares
    /// (never the oldest); SACKs are kept. NextSeg starts again from
    /// `una`. Returns how many changed.
    pub fn mark_all_lost(&mut self, mut keep: impl FnMut(u64, Slot) -> bool) -> u64 {
        self.cursor = self.una;
        self.relost.clear();
        let end = self.end();
        let mut n = 0;
        let mut s = self.una;
        while s < end {
            s = self.next_unsacked(s);
            if s >= end {
                break;
            }
            if (s == self.una || !keep(s, self.slot(s))) && self.mark_lost(s) != Marked::No {
                n += 1;
            }
            s += 1;
        }
        self.lost_hi = end;
        self.marked_to = end;
        n
    }

    /// An undone timeout (Linux's `tcp_undo_cwnd_reduction` with
    /// `unmark_loss`): no segment is lost any more; retransmissions in
    /// flight stay (a segment sent again counts twice in the pipe, as it
    /// is, until either copy is acknowledged). IsLost may mark again from
    /// `una`. O(outstanding), once per undo.
    pub fn unmark_lost(&mut self) {
        for s in self.slots.iter_mut() {
            s.bits &= !LOST;
        }
        self.lost_out = 0;
        self.relost.clear();
        self.cursor = self.una;
        self.lost_hi = self.una;
        self.marked_to = self.una;
    }

    /// RFC 6675 section 4, NextSeg rule (1) as Linux's
    /// `tcp_xmit_retransmit_queue` walks it: the lowest segment deemed lost
    /// and not sent again since, if any.
    pub fn next_lost(&mut self) -> Option<u64> {
        if self.lost_out == 0 {
            // Nothing deemed lost: the cursor and `relost` wait as they
            // are (a cursor behind keeps its rule; a stale entry is
            // dropped when next met).
            return None;
        }
        while let Some(&Reverse(s)) = self.relost.peek() {
            if s >= self.una && self.slot(s).bits & (SACKED | LOST | RETRANS) == LOST {
                return Some(s);
            }
            self.relost.pop();
        }
        self.cursor = self.cursor.max(self.una);
        let hi = self.lost_hi.min(self.end());
        while self.cursor < hi {
            let b = self.slot(self.cursor).bits;
            if b & SACKED != 0 {
                self.cursor = self.next_unsacked(self.cursor);
                continue;
            }
            if b & (LOST | RETRANS) == LOST {
                return Some(self.cursor);
            }
            self.cursor += 1;
        }
        None
    }

    /// Recount every counter and check the bits (for tests and
    /// `World::check_accounting`).
    pub fn check(&self) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0, 0, 0);
        let mut sacked_seqs = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            let seq = self.una + i as u64;
            if s.bits & SACKED != 0 {
                sacked += 1;
                sacked_seqs.push(seq);
                if s.bits & (LOST | RETRANS) != 0 {
                    return Err(format!("segment {seq}: SACKed and lost or in flight again"));
                }
                let run_end = (seq + u64::from(s.run)).min(self.end());
                if s.run == 0
                    || (seq..run_end)
                        .any(|x| self.slots[(x - self.una) as usize].bits & SACKED == 0)
                {
                    return Err(format!("segment {seq}: a SACKed run of {} is wrong", s.run));
                }
            }
            if s.bits & LOST != 0 {
                lost += 1;
            }
            if s.bits & RETRANS != 0 {
                retrans += 1;
                if s.bits & EVER == 0 {
                    return Err(format!(
                        "segment {seq}: in flight again but never sent again"
                    ));
                }
            }
        }
        if (sacked, lost, retrans) != (self.sacked_out, self.lost_out, self.retrans_out) {
            return Err(format!(
                "counters sacked/lost/retrans {}/{}/{} != recount {sacked}/{lost}/{retrans}",
                self.sacked_out, self.lost_out, self.retrans_out
            ));
        }
        let top: Vec<u64> = sacked_seqs.iter().rev().take(DUP_THRESH).copied().collect();
        if top[..] != self.top[..self.ntop] {
            return Err(format!(
                "highest SACKed {:?} != recount {top:?}",
                &self.top[..self.ntop]
            ));
        }
        // No lost segment not sent again is left behind NextSeg's cursor
        // (outside the heap).
        let cursor = self.cursor.max(self.una).min(self.end());
        for seq in self.una..cursor {
            let b = self.slots[(seq - self.una) as usize].bits;
            if b & (SACKED | LOST | RETRANS) == LOST
                && !self.relost.iter().any(|&Reverse(s)| s == seq)
            {
                return Err(format!(
                    "lost segment {seq} behind NextSeg's cursor {cursor}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// Segments 0..n sent at 0 ms.
    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::default();
        for s in 0..n {
            sb.sent_new(s, t(0));
        }
        sb
    }

    fn seqs(sb: &mut Scoreboard, start: u64, end: u64) -> Vec<u64> {
        let mut v = Vec::new();
        sb.sack(start, end, |s, _| v.push(s));
        v
    }

    /// Ten segments out, 2 and 5 lost. The receiver's SACKs arrive one
    /// segment at a time (3, 4, then 6..9, each ACK repeating the blocks
    /// before it); each segment is counted once, and the counters follow by
    /// hand: pipe = 10 - sacked - lost + retrans.
    #[test]
    fn counters_after_sacks_and_losses() {
        let mut sb = board(10);
        // ACK 2: 0 and 1 delivered.
        assert_eq!(sb.ack(2, |_, _| {}), 2);
        assert_eq!((sb.outstanding(), sb.pipe()), (8, 8));
        // [3, 4), then [3, 5): 4 is the only new one.
        assert_eq!(seqs(&mut sb, 3, 4), vec![3]);
        assert_eq!(seqs(&mut sb, 3, 5), vec![4]);
        assert_eq!(seqs(&mut sb, 3, 5), Vec::<u64>::new());
        // [6, 7) .. [6, 10) with [3, 5) repeated.
        for e in 7..=10 {
            seqs(&mut sb, 3, 5);
            assert_eq!(seqs(&mut sb, 6, e), vec![e - 1]);
        }
        assert_eq!(sb.sacked_out, 6);
        // IsLost: the three highest SACKed are 9, 8, 7; below 7, 2 and 5
        // are not SACKed: both lost.
        assert_eq!(sb.mark_is_lost(), 2);
        assert_eq!((sb.lost_out, sb.pipe()), (2, 0));
        // NextSeg: 2, then 5.
        assert_eq!(sb.next_lost(), Some(2));
        sb.sent_again(2, t(100));
        assert_eq!((sb.retrans_out, sb.pipe()), (1, 1));
        assert_eq!(sb.next_lost(), Some(5));
        sb.sent_again(5, t(100));
        assert_eq!(sb.next_lost(), None);
        assert_eq!(sb.pipe(), 2);
        // The retransmission of 2 arrives: ACK 5 (3 and 4 were SACKed).
        let mut delivered = Vec::new();
        sb.ack(5, |s, slot| delivered.push((s, slot.bits)));
        assert_eq!(delivered, vec![(2, LOST | RETRANS | EVER)]);
        assert_eq!(
            (sb.sacked_out, sb.lost_out, sb.retrans_out, sb.pipe()),
            (4, 1, 1, 1)
        );
        sb.check().unwrap();
        // ... and of 5: ACK 10, empty.
        sb.ack(10, |_, _| {});
        assert_eq!((sb.outstanding(), sb.sacked_out, sb.lost_out), (0, 0, 0));
        sb.check().unwrap();
    }

    /// A retransmission timeout marks every segment not SACKed lost and keeps
    /// the SACKs (as Linux); NextSeg walks them from the oldest; a segment
    /// SACKed later is no longer lost.
    #[test]
    fn timeout_keeps_sacks_and_marks_the_rest() {
        let mut sb = board(8);
        seqs(&mut sb, 2, 4);
        seqs(&mut sb, 6, 7);
        // 0, 1, 4, 5, 7 lost.
        assert_eq!(sb.mark_all_lost(|_, _| false), 5);
        assert_eq!((sb.sacked_out, sb.lost_out, sb.pipe()), (3, 5, 0));
        let mut order = Vec::new();
        while let Some(s) = sb.next_lost() {
            sb.sent_again(s, t(300));
            order.push(s);
        }
        assert_eq!(order, vec![0, 1, 4, 5, 7]);
        assert_eq!((sb.retrans_out, sb.pipe()), (5, 5));
        // 4's retransmission is SACKed: no longer lost nor in flight.
        seqs(&mut sb, 4, 5);
        assert_eq!((sb.sacked_out, sb.lost_out, sb.retrans_out), (4, 4, 4));
        sb.check().unwrap();
        // A second timeout: the retransmissions are lost again.
        assert_eq!(sb.mark_all_lost(|_, _| false), 4);
        assert_eq!((sb.lost_out, sb.retrans_out, sb.pipe()), (4, 0, 0));
        assert_eq!(sb.next_lost(), Some(0));
        sb.check().unwrap();
    }

    /// A retransmission lost again behind NextSeg's cursor comes back
    /// before the cursor's next segment; the cursor never moves back.
    #[test]
    fn a_lost_retransmission_is_sent_again_first() {
        let mut sb = board(10);
        for s in [1, 4] {
            sb.mark_lost(s);
        }
        assert_eq!(sb.next_lost(), Some(1));
        sb.sent_again(1, t(10));
        assert_eq!(sb.next_lost(), Some(4));
        sb.sent_again(4, t(10));
        sb.mark_lost(8);
        // 1's retransmission is lost too (RACK): it goes before 8.
        assert_eq!(sb.mark_lost(1), Marked::Again);
        assert_eq!(sb.mark_lost(1), Marked::No);
        sb.check().unwrap();
        assert_eq!(sb.next_lost(), Some(1));
        sb.sent_again(1, t(20));
        assert_eq!(sb.next_lost(), Some(8));
        sb.check().unwrap();
    }

    /// SACK blocks that repeat what earlier ACKs reported cost a few steps:
    /// 1000 ACKs each reporting one more segment of one growing block: the
    /// block's first slot keeps the length of the run SACKed before, so
    /// each ACK walks two slots, not the whole block.
    #[test]
    fn repeated_blocks_are_skipped() {
        let mut sb = board(1002);
        for e in 2..1002 {
            assert_eq!(seqs(&mut sb, 1, e), vec![e - 1]);
        }
        assert_eq!(sb.sacked_out, 1000);
        // Slot 1's run spans [1, 1000): one hop to 1000, SACKed last.
        assert_eq!(sb.slot(1).run, 999);
        sb.check().unwrap();
    }
}
