//! The receiver's advertised window with Linux's receive-buffer
//! autotuning (`tcp.moderate_rcvbuf`; Linux's `net.ipv4.tcp_moderate_rcvbuf
//! = 1`, `net/ipv4/tcp_input.c` and `tcp_output.c`).
//!
//! Without it a flow's receiver offers the fixed `tcp.rwnd`. With it the
//! window a receiver offers starts small and grows as Linux's does:
//! - the connection starts with a receive buffer of `tcp_rmem[1]` =
//!   128 KiB; the SYN/ACK's window is not scaled, so the sender starts
//!   with at most 64 KiB (Linux's `tcp_select_initial_window`);
//! - bytes of buffer and bytes of window differ by the share of a
//!   received packet's memory that is payload (Linux's `scaling_ratio`,
//!   `tcp_win_from_space`): each segment is charged a 2 KiB page fragment
//!   plus 256 bytes of `sk_buff` ([`RcvBuf::truesize`]), as a driver
//!   receiving 1500-byte frames does (for a 1460-byte payload: 162 / 256);
//! - every data segment received in order, and every new one out of
//!   order, raises `rcv_ssthresh`, the window's ceiling, by two segments,
//!   up to the window clamp and the buffer's free space
//!   (`tcp_grow_window`, from `tcp_event_data_recv` and
//!   `tcp_data_queue_ofo`); a segment received before, below the
//!   in-order point or held above it, does not;
//! - once per receiver round trip, at a segment in order (the
//!   application here reads every in-order byte at once, and Linux steps
//!   only when it reads), if the application read more than in the round
//!   before, the buffer grows to twice what it read, plus twice that times
//!   the rate's growth, plus the span held out of order, up to
//!   `tcp_rmem[2]` = 32 MiB, and the window clamp follows
//!   (`tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`);
//! - at each segment queued out of order, new or held already, the buffer
//!   grows to hold twice the last round's reading plus the span held out
//!   of order (Linux 6.16 and later: `tcp_data_queue_ofo` calls
//!   `tcp_rcvbuf_grow` with the round's figure unchanged);
//! - segments held out of order take buffer space, so the window offered
//!   shrinks while a hole is open (`tcp_space`, `__tcp_select_window`);
//! - the right edge offered never moves back (RFC 9293 section 3.8.6,
//!   `tcp_select_window`).
//!
//! The window travels on each ACK beside its SACK blocks, and the sender
//! sends new data only up to the right edge it last heard of (Linux's
//! `tcp_snd_wnd_test`); retransmissions below it go regardless.
//!
//! A segment that raises `rcv_ssthresh` is acknowledged at once
//! (`tcp_grow_window` sets `icsk_ack.quick |= 1`), so while the window
//! grows the receiver acknowledges every segment.
//!
//! The receiver's RTT, which times the buffer's growth, is Linux's
//! `rcv_rtt_est`. With timestamps (`tcp.timestamps`) it comes from them
//! (`tcp_rcv_rtt_measure_ts`): a sample per segment, the time since the
//! receiver sent the ACK the segment answers, in whole milliseconds; a
//! lower sample replaces the estimate, a higher one moves it an eighth of
//! the way. The model takes that time as the segment's one-way time plus
//! the ACK's, the flow's least RTT less its data's least one-way time (the
//! sender's wait between an ACK and the data it releases is left out).
//! Before a sample it is the flow's smoothed RTT. Without timestamps it is
//! Linux's measure by the window (`tcp_rcv_rtt_measure`, `win_dep`): the
//! time the receiver takes to receive a window's worth beyond what it
//! had, the window it last offered, in microseconds; a measure starts at
//! the first segment and again at each sample, and only a lower sample
//! replaces the estimate. Before its first sample the buffer does not grow
//! (`tcp_rcv_space_adjust` waits for one): in slow start that sample comes
//! some two round trips in, once the first window's 44 segments beyond the
//! first have arrived, so the window, and the quick ACKs of its growth,
//! start a round trip later than with timestamps, as on Linux.
//!
//! The model's choices: memory pressure
//! across sockets (`tcp_mem`), pruning and collapsing of the out-of-order
//! queue, window scaling's rounding, and a window of zero with its probes
//! are not modelled (the window offered is at least one segment).

use crate::units::SimTime;

/// `tcp_rmem[1]`: the buffer a connection starts with, bytes.
pub const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`: the most autotuning grows the buffer to (Linux 6.18's
/// default), bytes.
pub const RMEM_MAX: u64 = 33_554_432;
/// The largest window an unscaled field carries (the SYN/ACK's), bytes.
const UNSCALED_MAX: u64 = 65_535;
/// Linux's `TCP_RMEM_TO_WIN_SCALE`: the scaling ratio is in 256ths.
const RATIO_SHIFT: u32 = 8;

/// Where a data segment fell against the in-order point, which decides
/// what the receive buffer does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arrival {
    /// At the in-order point: the application reads it (and whatever it
    /// joins), so the ceiling may rise and, once a round trip has passed,
    /// the buffer may grow with what was read (`tcp_event_data_recv`,
    /// `tcp_rcv_space_adjust`).
    InOrder,
    /// Above the in-order point (`tcp_data_queue_ofo`): a new segment may
    /// raise the ceiling (SACK flows), and any such segment, new or held
    /// already, may grow the buffer to hold twice the last round's reading
    /// plus the span held out of order (`tcp_rcvbuf_grow` with the round's
    /// figure unchanged). Nothing is read.
    Above { new: bool },
    /// Below it, received before (`tcp_data_queue`'s retransmission case):
    /// dropped, only acknowledged.
    Below,
}

/// The receive buffer of one flow's receiver (boxed with the SACK state,
/// `sack_recovery::Lr`).
#[derive(Clone, Debug)]
pub(super) struct RcvBuf {
    /// Payload bytes of a full segment (the advertised MSS).
    mss: u64,
    /// Bytes of buffer one received segment takes.
    truesize: u64,
    /// Payload per byte of buffer, in 256ths (`scaling_ratio`).
    ratio: u64,
    /// `sk_rcvbuf`, bytes.
    rcvbuf: u64,
    /// `window_clamp`, bytes.
    clamp: u64,
    /// `rcv_ssthresh`, bytes.
    rcv_ssthresh: u64,
    /// `rcvq_space.space`: bytes read in the last measured round trip.
    space: u64,
    /// `rcvq_space.seq` and `.time`: the in-order point and the time of the
    /// last measure.
    space_seq: u64,
    space_time: SimTime,
    /// The right edge offered so far (one past the highest segment the
    /// sender may send).
    edge: u64,
    /// The receiver's RTT estimate (`rcv_rtt_est`), zero before a sample;
    /// the least RTT the flow has measured and the least one-way time of
    /// its data, which give a segment's round trip from its arrival.
    rcv_rtt: SimTime,
    min_rtt: SimTime,
    min_owd: SimTime,
    /// Whether a full segment's buffer holds its payload's window
    /// (`tcp_grow_window`'s truesize test; true but for tiny segments).
    full_segment_grows: bool,
    /// Whether the flow has timestamps: which measure gives `rcv_rtt`.
    timestamps: bool,
    /// Without timestamps, the measure under way (`rcv_rtt_est.seq` and
    /// `.time`: it ends when the in-order point reaches `measure_seq`); the
    /// window last offered, segments (`rcv_wnd`, which that measure reads).
    measure_seq: u64,
    measure_time: Option<SimTime>,
    offered: u64,
}

impl RcvBuf {
    /// A receiver with payload `mss` per full segment, at the start of a
    /// connection (nothing received); `timestamps`: the flow has them.
    pub fn new(mss: u32, timestamps: bool) -> RcvBuf {
        let mss = u64::from(mss.max(1));
        let truesize = Self::truesize(mss);
        let ratio = ((mss << RATIO_SHIFT) / truesize).max(1);
        let mut r = RcvBuf {
            mss,
            truesize,
            ratio,
            rcvbuf: RMEM_DEFAULT,
            clamp: 0,
            rcv_ssthresh: 0,
            space: 0,
            space_seq: 0,
            space_time: SimTime::ZERO,
            edge: 0,
            rcv_rtt: SimTime::ZERO,
            min_rtt: SimTime::ZERO,
            min_owd: SimTime::MAX,
            full_segment_grows: false,
            timestamps,
            measure_seq: 0,
            measure_time: None,
            offered: 0,
        };
        r.full_segment_grows = r.win_from_space(truesize) <= mss;
        // `tcp_select_initial_window`, `tcp_create_openreq_child`,
        // `tcp_init_buffer_space`: the clamp is the whole buffer's window
        // less one segment (its "reservation of one segment", with
        // `tcp_app_win`'s default 31; at least two segments), until the
        // buffer first grows; the first window what an unscaled field holds
        // of it in whole segments, which the SYN/ACK offers and the ceiling
        // starts from, and what the application read is first taken as ten
        // segments (`TCP_INIT_CWND`).
        let maxwin = r.win_from_space(RMEM_DEFAULT);
        r.clamp = if maxwin > 2 * mss {
            (maxwin - mss).max(2 * mss)
        } else {
            maxwin
        };
        r.rcv_ssthresh = r.clamp.min(UNSCALED_MAX) / mss * mss;
        r.space = r.rcv_ssthresh.min(10 * mss);
        r.edge = r.rcv_ssthresh / mss;
        r.offered = r.edge;
        r
    }

    /// The buffer one received segment of payload `mss` takes: a 2 KiB
    /// page fragment (or the power of two that holds a larger segment)
    /// and 256 bytes of `sk_buff`.
    fn truesize(mss: u64) -> u64 {
        mss.next_power_of_two().max(2048) + 256
    }

    /// `tcp_win_from_space`: the window `space` bytes of buffer hold.
    fn win_from_space(&self, space: u64) -> u64 {
        (space * self.ratio) >> RATIO_SHIFT
    }

    /// `tcp_space_from_win`: the buffer a window of `win` bytes needs.
    fn space_from_win(&self, win: u64) -> u64 {
        (win << RATIO_SHIFT) / self.ratio
    }

    /// `tcp_space`: the window the buffer's free part holds while `held`
    /// segments wait out of order.
    fn free_window(&self, held: u64) -> u64 {
        self.win_from_space(self.rcvbuf.saturating_sub(held * self.truesize))
    }

    /// The receiver's RTT estimate (`rcv_rtt_est`), zero before a sample.
    pub fn rcv_rtt(&self) -> SimTime {
        self.rcv_rtt
    }

    /// The right edge offered so far (before any data: the SYN/ACK's).
    pub fn edge(&self) -> u64 {
        self.edge
    }

    /// An RTT the flow measured (its sender's sample).
    pub fn rtt_sample(&mut self, rtt: SimTime) {
        if self.min_rtt == SimTime::ZERO || rtt < self.min_rtt {
            self.min_rtt = rtt;
        }
    }

    /// The receiver's own RTT sample for a segment that took `owd` to
    /// arrive (Linux's `tcp_rcv_rtt_measure_ts`, `tcp_rcv_rtt_update`):
    /// the time since the receiver sent the ACK it answers, here its one-way
    /// time plus the ACK's (the flow's least RTT less the least one-way
    /// time of its data), in whole milliseconds as the timestamp clock
    /// counts; a sample below the estimate replaces it, one above moves it
    /// an eighth of the way.
    fn rcv_rtt_sample(&mut self, owd: SimTime) {
        self.min_owd = self.min_owd.min(owd);
        if self.min_rtt == SimTime::ZERO {
            return;
        }
        let ack_owd = self.min_rtt.saturating_sub(self.min_owd);
        let s = SimTime::from_millis((owd.0 + ack_owd.0) / 1_000_000);
        if s == SimTime::ZERO {
            return;
        }
        self.rcv_rtt = if self.rcv_rtt == SimTime::ZERO || s < self.rcv_rtt {
            s
        } else {
            SimTime(self.rcv_rtt.0 - self.rcv_rtt.0 / 8 + s.0 / 8)
        };
    }

    /// The receiver's RTT without timestamps (Linux's `tcp_rcv_rtt_measure`
    /// with `tcp_rcv_rtt_update`'s `win_dep`), at a data segment that left
    /// the in-order point at `rcv_nxt`: a measure under way ends once that
    /// point reaches the window it started with; its time, in whole
    /// microseconds (at least one), replaces a larger estimate; a new
    /// measure starts, to end a window (the last offered) beyond.
    fn window_rtt_sample(&mut self, now: SimTime, rcv_nxt: u64) {
        if let Some(t) = self.measure_time {
            if rcv_nxt < self.measure_seq {
                return;
            }
            let s = SimTime::from_micros(((now - t).0 / 1_000).max(1));
            if self.rcv_rtt == SimTime::ZERO || s < self.rcv_rtt {
                self.rcv_rtt = s;
            }
        }
        self.measure_seq = rcv_nxt + self.offered;
        self.measure_time = Some(now);
    }

    /// A data segment arrived where `arrival` says; the receiver now
    /// expects `rcv_nxt`, holds `held` segments out of order spanning
    /// `span` segments above it, and has read `rcv_nxt` in all; `srtt`
    /// gives its sender's smoothed round-trip time (0 before a sample),
    /// read only while the receiver has no RTT of its own. Returns whether the segment raised the
    /// window's ceiling, which Linux acknowledges at once
    /// (`tcp_grow_window` sets `icsk_ack.quick |= 1`): while the window
    /// grows, every segment.
    pub fn on_data(
        &mut self,
        now: SimTime,
        rcv_nxt: u64,
        (held, span): (u64, u64),
        arrival: Arrival,
        srtt: impl FnOnce() -> SimTime,
        owd: SimTime,
    ) -> bool {
        if self.timestamps {
            self.rcv_rtt_sample(owd);
        } else {
            self.window_rtt_sample(now, rcv_nxt);
        }
        let mut free = self.free_window(held);
        let grew = match arrival {
            Arrival::InOrder => {
                let grew = self.grow_window(free);
                // The round trip may have passed (a cheap test first: the
                // receiver's RTT, once it has one, is the one compared;
                // without one and without timestamps there is none, and no
                // growth).
                if now - self.space_time >= self.rcv_rtt {
                    let rtt = if self.rcv_rtt > SimTime::ZERO {
                        self.rcv_rtt
                    } else if self.timestamps {
                        srtt()
                    } else {
                        SimTime::ZERO
                    };
                    if self.space_adjust(now, rcv_nxt, span, rtt) {
                        free = self.free_window(held);
                    }
                }
                grew
            }
            Arrival::Above { new } => {
                let grew = new && self.grow_window(free);
                // Linux 6.16 and later, at each segment queued out of
                // order: room for twice the last round's reading and the
                // span held.
                if self.grow_to(2 * self.space + span * self.mss) {
                    free = self.free_window(held);
                }
                grew
            }
            Arrival::Below => false,
        };
        // `__tcp_select_window`: the free space, within rcv_ssthresh, in
        // whole segments (at least one here: see the module's head).
        let win = free.min(self.rcv_ssthresh).max(self.mss);
        self.edge = self.edge.max(rcv_nxt + win / self.mss);
        self.offered = self.edge - rcv_nxt;
        grew
    }

    /// `tcp_grow_window`: two segments more of ceiling per segment whose
    /// buffer holds a full window's worth (the truesize test), while the
    /// buffer's free part holds a window of `free`; whether it grew.
    fn grow_window(&mut self, free: u64) -> bool {
        let room = self.clamp.min(free).saturating_sub(self.rcv_ssthresh);
        let grows = room > 0 && self.full_segment_grows;
        if grows {
            self.rcv_ssthresh += room.min(2 * self.mss);
        }
        grows
    }

    /// `tcp_rcv_space_adjust` with `tcp_rcvbuf_grow`: once per round trip;
    /// whether the buffer grew.
    fn space_adjust(&mut self, now: SimTime, rcv_nxt: u64, span: u64, rtt: SimTime) -> bool {
        if rtt == SimTime::ZERO || now - self.space_time < rtt {
            return false;
        }
        let mut grew = false;
        let copied = (rcv_nxt - self.space_seq) * self.mss;
        if copied > self.space {
            let old = self.space;
            // DRS is a round trip late: twice what was read, plus twice
            // that times the rate's growth (the quotient taken before it is
            // doubled, as Linux's `do_div`), then what is held beyond a
            // hole.
            let mut rcvwin = 2 * copied;
            rcvwin += 2 * (rcvwin * (copied - old) / old.max(1));
            rcvwin += span * self.mss;
            self.space = copied;
            grew = self.grow_to(rcvwin);
        }
        self.space_seq = rcv_nxt;
        self.space_time = now;
        grew
    }

    /// `tcp_rcvbuf_grow`'s end: a buffer that holds a window of `rcvwin`
    /// bytes, up to `tcp_rmem[2]`, if that is more than it has, and the
    /// window clamp after it; whether it grew.
    fn grow_to(&mut self, rcvwin: u64) -> bool {
        let rcvbuf = self.space_from_win(rcvwin).min(RMEM_MAX);
        let grows = rcvbuf > self.rcvbuf;
        if grows {
            self.rcvbuf = rcvbuf;
            self.clamp = self.win_from_space(rcvbuf);
        }
        grows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    #[test]
    fn the_first_window_is_what_an_unscaled_field_holds() {
        // 1460-byte segments: 2304 bytes each, a ratio of 162 / 256; the
        // 128 KiB buffer holds 82 944 bytes of window, the clamp one
        // segment less, 81 484, of which the SYN/ACK offers 65 535, or 44
        // whole segments.
        let r = RcvBuf::new(1460, true);
        assert_eq!((r.truesize, r.ratio), (2304, 162));
        assert_eq!(r.clamp, 82_944 - 1460);
        assert_eq!(r.edge(), 44);
        assert_eq!(r.space, 14_600);
    }

    #[test]
    fn each_segment_raises_the_ceiling_by_two_up_to_the_clamp() {
        let mut r = RcvBuf::new(1460, true);
        // Before any RTT sample the buffer stays. The ceiling starts at the
        // first window, 44 segments (64 240 bytes, what an unscaled field
        // holds), and rises by two segments per segment received, each
        // such segment to be acknowledged at once, up to the clamp, the
        // buffer's 82 944 bytes of window less one segment, 81 484: five
        // segments take it to 78 840, the sixth the last 2 644.
        assert_eq!(r.rcv_ssthresh, 64_240);
        for k in 1..=5 {
            assert!(r.on_data(
                ms(k),
                k,
                (0, 0),
                Arrival::InOrder,
                || SimTime::ZERO,
                SimTime::ZERO
            ));
        }
        assert_eq!(r.rcv_ssthresh, 78_840);
        assert!(r.on_data(
            ms(6),
            6,
            (0, 0),
            Arrival::InOrder,
            || SimTime::ZERO,
            SimTime::ZERO
        ));
        assert_eq!(r.rcv_ssthresh, 81_484);
        // At the clamp nothing grows, and no ACK is due at once; the window
        // offered is 55 whole segments (56 without the reservation).
        assert!(!r.on_data(
            ms(7),
            7,
            (0, 0),
            Arrival::InOrder,
            || SimTime::ZERO,
            SimTime::ZERO
        ));
        assert_eq!(r.edge(), 7 + 55);
        // With a larger buffer the clamp is its whole window (no segment
        // reserved) and the ceiling climbs two segments at a time.
        r.rcvbuf = 4 * RMEM_DEFAULT;
        r.clamp = r.win_from_space(r.rcvbuf);
        assert!(r.on_data(
            ms(8),
            8,
            (0, 0),
            Arrival::InOrder,
            || SimTime::ZERO,
            SimTime::ZERO
        ));
        assert_eq!(r.rcv_ssthresh, 81_484 + 2920);
        assert_eq!(r.edge, 8 + 84_404 / 1460);
    }

    #[test]
    fn the_receivers_rtt_counts_whole_milliseconds_and_follows_the_least() {
        let mut r = RcvBuf::new(1460, true);
        // No RTT from the flow yet: no estimate.
        r.rcv_rtt_sample(ms(50));
        assert_eq!(r.rcv_rtt, SimTime::ZERO);
        // The flow's least RTT 100.3 ms, its data's least one-way time 50
        // ms: the ACK's way back is 50.3 ms. A segment 50.9 ms on its way
        // gives 101.2 ms, counted 101; one of 50.2 ms gives 100.5, counted
        // 100, which replaces the estimate; one of 58 ms, 108, moves it an
        // eighth of the way: 101.
        r.rtt_sample(SimTime::from_micros(100_300));
        r.rtt_sample(SimTime::from_micros(104_000));
        r.rcv_rtt_sample(SimTime::from_micros(50_900));
        assert_eq!(r.rcv_rtt, ms(101));
        r.rcv_rtt_sample(SimTime::from_micros(50_200));
        assert_eq!(r.rcv_rtt, ms(100));
        r.rcv_rtt_sample(ms(58));
        assert_eq!(r.rcv_rtt, ms(101));
    }

    #[test]
    fn without_timestamps_the_receiver_times_a_window_and_keeps_the_least() {
        // A segment a millisecond; the sender's SRTT, 10 ms, is not read.
        let srtt = || ms(10);
        let mut r = RcvBuf::new(1460, false);
        // The first segment starts a measure that ends a window beyond it,
        // the 44 segments the SYN/ACK offered: at segment 45. Until then
        // there is no estimate and the buffer does not grow.
        for k in 1..=44 {
            r.on_data(ms(k), k, (0, 0), Arrival::InOrder, srtt, SimTime::ZERO);
            assert_eq!(r.rcv_rtt, SimTime::ZERO);
        }
        assert_eq!(r.measure_seq, 45);
        assert_eq!(r.rcvbuf, RMEM_DEFAULT);
        // Segment 45, 44 ms after segment 1: the estimate, and the growth
        // it allows at once (45 segments read, more than the 10 first
        // taken); the next measure ends a window (as last offered) on.
        let offered = r.offered;
        r.on_data(ms(45), 45, (0, 0), Arrival::InOrder, srtt, SimTime::ZERO);
        assert_eq!(r.rcv_rtt, ms(44));
        assert!(r.rcvbuf > RMEM_DEFAULT);
        assert_eq!(r.measure_seq, 45 + offered);
        // The next window, at 2 ms a segment, takes longer: the estimate
        // stays. The one after, 40 ms for the window, lowers it.
        let end = r.measure_seq;
        let mut t = ms(45);
        for k in 46..=end {
            t += ms(2);
            r.on_data(t, k, (0, 0), Arrival::InOrder, srtt, SimTime::ZERO);
        }
        assert_eq!(r.rcv_rtt, ms(44));
        let (from, end) = (end, r.measure_seq);
        let dt = SimTime(ms(40).0 / (end - from));
        for k in from + 1..=end {
            t += dt;
            r.on_data(t, k, (0, 0), Arrival::InOrder, srtt, SimTime::ZERO);
        }
        assert_eq!(r.rcv_rtt, SimTime::from_micros((end - from) * dt.0 / 1_000));
        assert!(r.rcv_rtt < ms(44));
        // With timestamps (and no sample of its own yet) the receiver
        // takes the sender's SRTT: 20 segments in its first 10 ms, twice
        // the 10 first taken, grow the buffer at once. Without, not.
        for timestamps in [true, false] {
            let mut r = RcvBuf::new(1460, timestamps);
            for k in 1..=20 {
                r.on_data(
                    SimTime::from_micros(500 * k),
                    k,
                    (0, 0),
                    Arrival::InOrder,
                    srtt,
                    SimTime::ZERO,
                );
            }
            assert_eq!(r.rcvbuf > RMEM_DEFAULT, timestamps);
        }
    }

    #[test]
    fn the_buffer_grows_once_per_round_trip_with_what_was_read() {
        let mut r = RcvBuf::new(1460, true);
        let rtt = ms(100);
        // 20 segments read in the first 100 ms (29 200 bytes, twice the
        // 14 600 first taken): rcvwin = 58 400 + 2 x 58 400 x 1 = 175 200
        // bytes of window, 276 859 bytes of buffer.
        for k in 1..=20 {
            r.on_data(
                ms(5 * k),
                k,
                (0, 0),
                Arrival::InOrder,
                || rtt,
                SimTime::ZERO,
            );
        }
        assert_eq!(r.space, 29_200);
        assert_eq!(r.rcvbuf, (175_200u64 << 8) / 162);
        assert_eq!(r.clamp, (r.rcvbuf * 162) >> 8);
        // No second growth within the same round trip.
        let b = r.rcvbuf;
        r.on_data(ms(150), 21, (0, 0), Arrival::InOrder, || rtt, SimTime::ZERO);
        assert_eq!(r.rcvbuf, b);
    }

    #[test]
    fn the_span_held_out_of_order_joins_after_the_growth() {
        // 20 segments read in the round trip after the 14 600 bytes first
        // taken, 5 segments held beyond a hole: twice the 29 200 read,
        // plus twice that times the growth (58 400 x 14 600 / 14 600),
        // then the span, 7 300: 182 500 bytes of window, 288 395 of buffer
        // (the span joined first, 197 100 and 311 466).
        let mut r = RcvBuf::new(1460, true);
        assert!(r.space_adjust(ms(100), 20, 5, ms(100)));
        assert_eq!(r.space, 29_200);
        assert_eq!(r.rcvbuf, 288_395);
        assert_eq!(r.clamp, (288_395 * 162) >> 8);
    }

    #[test]
    fn each_segment_out_of_order_grows_the_buffer_to_hold_the_span() {
        // After that step: a segment 100 above the in-order point wants
        // twice the round's 29 200 and the 100 segments held, 204 400
        // bytes of window, 323 002 of buffer; one held already, 110 above,
        // 219 000 and 346 074. A duplicate below the in-order point and a
        // segment in order within the round trip leave the buffer alone.
        let mut r = RcvBuf::new(1460, true);
        r.space_adjust(ms(100), 20, 0, ms(100));
        // A segment at `t` ms, the in-order point then, what is held.
        let seg = |r: &mut RcvBuf, t, rcv_nxt, held, arrival| {
            r.on_data(ms(t), rcv_nxt, held, arrival, || ms(100), ms(50));
        };
        seg(&mut r, 110, 20, (1, 100), Arrival::Above { new: true });
        assert_eq!(r.rcvbuf, 323_002);
        seg(&mut r, 111, 20, (1, 110), Arrival::Above { new: false });
        assert_eq!(r.rcvbuf, 346_074);
        seg(&mut r, 112, 20, (1, 200), Arrival::Below);
        seg(&mut r, 113, 21, (1, 199), Arrival::InOrder);
        assert_eq!(r.rcvbuf, 346_074);
        // No step of the round's figure out of order: a round trip on, a
        // segment above the point reads nothing; the next in order does.
        seg(&mut r, 250, 21, (2, 199), Arrival::Above { new: true });
        assert_eq!((r.space, r.space_seq), (29_200, 20));
        seg(&mut r, 251, 22, (2, 198), Arrival::InOrder);
        assert_eq!(r.space_seq, 22);
    }

    #[test]
    fn a_hole_holds_the_right_edge_where_it_was() {
        let mut r = RcvBuf::new(1460, true);
        for k in 1..=20 {
            r.on_data(
                ms(k),
                k,
                (0, 0),
                Arrival::InOrder,
                || SimTime::ZERO,
                SimTime::ZERO,
            );
        }
        let edge = r.edge;
        // Segment 20 lost: 30 segments arrive above it and fill the buffer
        // (30 x 2304 = 69 120 of 131 072 bytes): the window offered from
        // the hole shrinks, and the right edge stays.
        for h in 1..=30 {
            r.on_data(
                ms(20 + h),
                20,
                (h, h),
                Arrival::Above { new: true },
                || SimTime::ZERO,
                SimTime::ZERO,
            );
            assert_eq!(r.edge(), edge);
        }
        assert_eq!(r.free_window(30), ((131_072 - 69_120) * 162) >> 8);
        // The hole filled, the buffer is free again and the edge moves on.
        r.on_data(
            ms(60),
            51,
            (0, 0),
            Arrival::InOrder,
            || SimTime::ZERO,
            SimTime::ZERO,
        );
        assert!(r.edge() > edge);
    }

    #[test]
    fn the_syn_acks_window_holds_the_first_flight() {
        use super::super::testing::Net;
        use crate::scenario::TcpSpec;
        // An initial window of 100 segments, 1460 bytes each: the receiver
        // offers 44 (64 240 bytes) on the SYN/ACK, so 44 go in the first
        // round trip; with the fixed rwnd all 100 do.
        let first_flight = |autotune: bool| {
            let mut tcp = TcpSpec {
                sack: true,
                packet_size: 1500,
                initial_cwnd: 100,
                ..TcpSpec::default()
            };
            tcp.set_moderate_rcvbuf(autotune);
            let mut n = Net::new(tcp, u64::MAX, 50, 100, &[]);
            n.run(300);
            // Sent before the first ACK is back (100 ms and a gap).
            n.sent
                .iter()
                .filter(|s| s.0 < SimTime::from_millis(100))
                .count()
        };
        assert_eq!(first_flight(false), 100);
        assert_eq!(first_flight(true), 44);
    }
}
