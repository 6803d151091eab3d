//! The data receiver: in-order delivery with out-of-order segments kept,
//! cumulative ACKs (immediate for out-of-order data or a filled hole,
//! with Linux's SACK compression held, `sack_compress.rs`; else delayed
//! if asked; with SACK, the blocks of `sack.rs`), the
//! ECN-Echo until CWR (RFC 3168) or, for DCTCP, per CE state with an
//! immediate ACK when it changes (RFC 8257 section 3.2), and the client's
//! side of a SYN/ACK or of a request's acknowledgement.

use super::rcvbuf::Arrival;
use super::{Client, Echo, Seg, TcpFlow};
use crate::packet::{flags, Ecn};
use crate::scenario::HEADER_BYTES;
use crate::units::SimTime;

impl TcpFlow {
    /// A data packet (or SYN) reaches the receiver.
    pub fn on_data(
        &mut self,
        now: SimTime,
        seq: u64,
        f: u8,
        ecn: Ecn,
        ts: SimTime,
        out: &mut Vec<Seg>,
    ) {
        if f & (flags::REQ | flags::DATA) == flags::REQ {
            // The server's ACK of a request-only connection's request.
            if self.client == Client::Requested {
                self.client = Client::Open;
                self.client_deadline = None;
            }
            return;
        }
        if f & flags::SYN != 0 {
            if self.cfg.passive {
                self.client_synack(now, ecn, out);
                return;
            }
            self.stats.synacks_sent += 1;
            out.push(Seg {
                seq: 0,
                ts,
                size: HEADER_BYTES,
                flags: flags::SYN | flags::ACK,
                ecn: self.synack_ecn(),
                from_sender: false,
            });
            return;
        }
        self.stats.data_arrived += 1;
        if self.cfg.tcp.dsack() {
            self.dsack_sent();
        }
        let linux_delack = self.cfg.tcp.delack_linux() && self.cfg.tcp.delayed_ack;
        // Linux's receiver of a classic-ECN flow (`tcp_ecn_accept_cwr`,
        // `__tcp_ecn_check_ce`): CWR on a data segment is acknowledged at
        // once, as the sender's window may be one segment.
        let linux_ecn = linux_delack && self.cfg.tcp.ecn && !self.cfg.tcp.variant.scalable();
        let mut immediate = !self.cfg.tcp.delayed_ack;
        if f & flags::CWR != 0 {
            self.cwr_arrives();
            immediate |= linux_ecn;
        }
        let mut starts_echo = false;
        if ecn == Ecn::Ce {
            self.stats.marks_seen += 1;
            if self.cfg.tcp.ecn && self.ece_pending == Echo::None {
                starts_echo = true;
                immediate |= self.ce_state_changes(true, out);
            }
        } else if self.ece_pending == Echo::Ce {
            immediate |= self.ce_state_changes(false, out);
        }
        let retx = f & flags::RETX != 0;
        // RFC 7323's Last.ACK.sent: every in-order segment not yet
        // acknowledged (at most one, delayed) advanced `rcv_nxt` by one.
        let last_ack_sent = self.rcv_nxt - u64::from(self.delack_count);
        // An ACK due at once only because data is held out of order, which
        // SACK compression may hold (`sack_compress.rs`).
        let mut out_of_order = false;
        let arrival;
        if seq == self.rcv_nxt {
            arrival = Arrival::InOrder;
            if linux_delack {
                self.ato_in_order(now);
            }
            // Linux's pushed ACK (`push.rs`).
            immediate |= self.pushed(f);
            self.ooo.pop_front();
            self.rcv_nxt += 1;
            let mut n = 1;
            while self.ooo.front() == Some(&true) {
                self.ooo.pop_front();
                self.rcv_nxt += 1;
                n += 1;
            }
            self.stats.segments_delivered += n;
            if n > 1 || !self.ooo.is_empty() {
                // Filled (part of) a hole: RFC 5681 section 4.2. With a hole
                // left and one segment newly in order, the ACK is due only
                // for the data held.
                if n == 1 && self.delack_count == 0 {
                    out_of_order = true;
                } else {
                    immediate = true;
                }
                if self.cfg.tcp.sack {
                    self.sack_rx(seq, false);
                }
            }
        } else {
            if seq < self.rcv_nxt {
                immediate = true; // a duplicate
                if linux_delack {
                    self.ato_duplicate();
                }
            } else {
                out_of_order = true;
            }
            // Received before: below the cumulative ACK, or held above it.
            let mut dup = seq < self.rcv_nxt;
            if seq > self.rcv_nxt {
                let idx = (seq - self.rcv_nxt) as usize;
                if self.ooo.len() <= idx {
                    self.ooo.resize(idx + 1, false);
                }
                dup = self.ooo[idx];
                self.ooo[idx] = true;
                // Its ACK carries the D-SACK: at once (`sack_compress.rs`).
                immediate |= dup && self.cfg.tcp.dsack();
                arrival = Arrival::Above { new: !dup };
            } else {
                arrival = Arrival::Below;
            }
            if self.cfg.tcp.sack {
                self.sack_rx(seq, dup);
            }
        }
        if self.cfg.tcp.moderate_rcvbuf() && self.rcv_window(now, ts, arrival) {
            // Linux acknowledges a segment that raised the window's ceiling
            // at once (`rcvbuf.rs`).
            if linux_delack {
                self.ato_window_grew();
            } else {
                immediate = true;
            }
        }
        if self.cfg.tcp.timestamps() {
            self.ts_recent(seq, ts, last_ack_sent);
        } else {
            self.last_ts = ts;
        }
        self.last_retx = retx;
        if linux_ecn {
            self.ato_ecn(ecn, starts_echo);
        }
        if linux_delack && !immediate && self.ato_quick() {
            immediate = true;
        }
        if out_of_order && !immediate {
            if self.cfg.tcp.sack_compression() && self.sack_compress(now) {
                return;
            }
            immediate = true;
        }
        if !immediate {
            self.delack_count += 1;
            if self.delack_count >= 2 {
                immediate = true;
            } else if self.delack_deadline.is_none() {
                let wait = if linux_delack {
                    self.ato_timeout()
                } else {
                    self.cfg.tcp.delack_timeout
                };
                self.delack_deadline = Some(now + wait);
            }
        }
        if immediate {
            self.send_ack(out);
        }
    }

    /// RFC 3168 section 6.1.3: CWR ends the echo (DCTCP's follows the CE
    /// state instead). Out of line: CWR comes once per window reduction.
    #[inline(never)]
    fn cwr_arrives(&mut self) {
        if self.ece_pending == Echo::UntilCwr {
            self.ece_pending = Echo::None;
        }
    }

    /// A data packet's CE mark (`ce`) starts an echo, or ends DCTCP's;
    /// returns whether the packet must be acknowledged at once. RFC 3168
    /// section 6.1.3: a mark starts the echo, which lasts until CWR. DCTCP
    /// (RFC 8257 section 3.2): the echo follows the CE state of each
    /// packet; when it changes, an ACK held back goes out first with the
    /// old state (Linux's `dctcp_ece_ack_update`), then this packet's at
    /// once.
    #[cold]
    #[inline(never)]
    fn ce_state_changes(&mut self, ce: bool, out: &mut Vec<Seg>) -> bool {
        if !self.cfg.tcp.variant.scalable() {
            self.ece_pending = Echo::UntilCwr;
            return false;
        }
        if self.delack_count > 0 {
            self.send_ack(out);
        }
        self.ece_pending = if ce { Echo::Ce } else { Echo::None };
        true
    }

    fn send_ack(&mut self, out: &mut Vec<Seg>) {
        self.delack_count = 0;
        self.delack_deadline = None;
        if self.cfg.tcp.delack_linux() {
            self.ato_ack_sent();
        }
        if self.cfg.tcp.sack_compression() {
            self.sack_compress_sent();
        }
        let mut f = flags::ACK;
        if self.ece_pending != Echo::None {
            f |= flags::ECE;
        }
        if self.last_retx {
            f |= flags::RETX;
        }
        out.push(Seg {
            seq: self.rcv_nxt,
            ts: self.last_ts,
            size: HEADER_BYTES,
            flags: f,
            // RFC 3168 section 6.1.4: pure ACKs are not ECT (DCTCP's are,
            // as a Linux DCTCP socket sends every packet ECT).
            ecn: self.ack_ecn,
            from_sender: false,
        });
    }

    /// The delayed-ACK timer expired (or SACK compression's, which shares
    /// its deadline: `sack_compress.rs`).
    pub fn on_delack(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.cfg.tcp.sack_compression() && self.sack_compress_due(now) {
            self.send_ack(out);
            return;
        }
        if self.delack_count > 0 {
            if self.cfg.tcp.delack_linux() {
                self.ato_missed();
            }
            self.send_ack(out);
        }
        self.delack_deadline = None;
    }
}
