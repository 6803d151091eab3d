//! Opening connections: the active open (SYN, SYN/ACK, the SYN's own
//! timer), new connections of the same flow, and the passive ends of
//! request/response (web) traffic: the server that answers a SYN and a
//! request, and its client's SYN, request and timer (RFC 6298 (5.5)
//! backoff; RFC 5562 for a CE-marked SYN/ACK), with ns-2's WebTraf pattern
//! of a request connection and a response connection the server opens.

use super::{Client, Echo, Growth, Seg, State, TcpFlow};
use crate::packet::{flags, Ecn};
use crate::scenario::HEADER_BYTES;
use crate::scenario::{SynLossCut, TcpVariant};
use crate::units::SimTime;

impl TcpFlow {
    /// Open the flow: send a SYN, or start sending data at once.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.cfg.handshake {
            self.state = State::SynSent;
            self.send_syn(now, out);
        } else {
            self.state = State::Established;
            if self.cfg.tcp.pacing {
                self.paced_init(now, false);
            }
            self.send_available(now, out);
        }
    }

    pub(super) fn send_syn(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.syn_retx == 0 {
            // The first SYN's send time: its round trip, and what an echo
            // of it shows (the SYN arrived: Linux's spurious SYN timeout).
            self.syn_sent_at = now;
        }
        out.push(Seg {
            seq: 0,
            ts: now,
            size: HEADER_BYTES,
            flags: flags::SYN,
            ecn: self.syn_ecn(),
            from_sender: true,
        });
        self.rto_deadline = Some(now + self.rto);
    }

    /// The active opener's SYN/ACK arrives, echoing the send time of the
    /// SYN it answers (`tsecr`): the connection is established and the
    /// first window goes out.
    pub(super) fn on_synack(&mut self, now: SimTime, ecn: Ecn, tsecr: SimTime, out: &mut Vec<Seg>) {
        let retx = self.syn_retx > 0;
        if retx {
            self.ecn_fallback();
        }
        if ecn == Ecn::Ce {
            self.stats.synack_marks += 1;
        }
        self.state = State::Established;
        if !retx {
            self.rtt_sample(now, self.syn_sent_at);
        } else if self.cfg.tcp.timestamps() {
            self.echo_sample(now, tsecr);
        }
        self.rto = if self.has_rtt {
            self.rto
        } else {
            self.handshake_rto()
        };
        self.rto_deadline = None;
        match self.cfg.tcp.syn_loss_cut {
            SynLossCut::Cut if retx => {
                // RFC 5681 section 3.1: after a lost SYN (or
                // SYN/ACK) the initial window is one segment, and
                // the SYN's timeout set ssthresh by eq. (4): with no
                // data in flight, two segments (ns-2's `timeout()`).
                self.cwnd = 1.0;
                self.ssthresh = 2.0;
            }
            // Linux (`tcp_init_transfer`): one segment after more than
            // one retransmission, unless the echo is the first SYN's
            // (`tcp_try_undo_spurious_syn`); ssthresh stays infinite
            // (`tcp_init_metrics` restores it).
            SynLossCut::Linux
                if self.syn_retx > 1
                    && !(self.cfg.tcp.timestamps() && tsecr == self.syn_sent_at) =>
            {
                self.cwnd = 1.0;
            }
            _ => {}
        }
        if ecn == Ecn::Ce && self.cfg.tcp.ecn {
            // RFC 5562 section 3.2: a congestion-marked SYN/ACK
            // leaves an initial window of one segment.
            self.cwnd = 1.0;
            self.stats.ecn_reductions += 1;
        }
        if self.cfg.tcp.pacing {
            self.paced_init(now, true);
        }
        self.send_available(now, out);
    }

    /// Begin a new connection of the same flow that will carry `segments`
    /// segments: every sender and receiver variable starts afresh (initial
    /// window, RTO and RTT estimate, as a new TCP connection does); the
    /// statistics accumulate. The engine's pending-timer marks carry over
    /// because the events they describe are still queued.
    pub fn new_connection(&mut self, segments: u64) {
        let (stats, rto_event, delack_event) = (self.stats, self.rto_event, self.delack_event);
        *self = TcpFlow::fresh(self.fresh_cfg(), self.pace.take());
        self.stats = stats;
        self.rto_event = rto_event;
        self.delack_event = delack_event;
        self.app_limit = segments.max(1);
    }

    /// Begin a new connection of a passive flow: both ends start afresh
    /// (as [`TcpFlow::new_connection`]) with nothing to send until a
    /// request arrives; the client then opens it with
    /// [`TcpFlow::client_connect`].
    pub fn new_passive_connection(&mut self) {
        let (stats, rto_event, delack_event) = (self.stats, self.rto_event, self.delack_event);
        let short = std::mem::take(&mut self.short);
        *self = TcpFlow::fresh(self.fresh_cfg(), self.pace.take());
        self.stats = stats;
        self.rto_event = rto_event;
        self.delack_event = delack_event;
        // Keep the allocation.
        self.short = short;
        self.short.clear();
    }

    /// ns-2's WebTraf pattern (`http = "webtraf"`), first half: a new
    /// passive connection that carries only the request. The client opens
    /// it with [`TcpFlow::client_connect`]; the server answers the request
    /// with a pure ACK (not ECT, on the data route), which ends it
    /// ([`TcpFlow::request_acked`]).
    pub fn new_request_connection(&mut self) {
        self.cfg.passive = true;
        self.cfg.request_only = true;
        self.new_passive_connection();
    }

    /// Whether the server's ACK of a request-only connection's request
    /// has reached the client.
    pub fn request_acked(&self) -> bool {
        self.cfg.request_only && self.client == Client::Open
    }

    /// ns-2's WebTraf pattern, second half: the server opens a new
    /// connection to the client (its SYN, not ECT, on the data route; the
    /// client's SYN/ACK on the ACK route) and sends the response of
    /// `segments` segments, the last carrying `last_payload` bytes.
    pub fn server_open(
        &mut self,
        now: SimTime,
        segments: u64,
        last_payload: u32,
        out: &mut Vec<Seg>,
    ) {
        self.cfg.passive = false;
        self.cfg.request_only = false;
        self.cfg.handshake = true;
        let short = std::mem::take(&mut self.short);
        self.new_connection(segments);
        self.short = short;
        self.short.clear();
        let wire = HEADER_BYTES + last_payload;
        if wire < u32::from(self.cfg.tcp.packet_size) {
            self.short.push((self.app_limit - 1, wire));
        }
        self.start(now, out);
    }

    /// Client: open the connection with a SYN (on the ACK route), to ask
    /// for an object of `segments` segments whose last carries
    /// `last_payload` bytes. The SYN is retransmitted on the client's
    /// timer from `initial_rto`, doubling (RFC 6298 (5.5)).
    pub fn client_connect(
        &mut self,
        now: SimTime,
        segments: u64,
        last_payload: u32,
        out: &mut Vec<Seg>,
    ) {
        self.req = (segments.max(1), last_payload);
        self.client = Client::SynSent;
        self.c_retx = false;
        self.c_syn_retx = 0;
        self.c_rto = self.cfg.tcp.initial_rto;
        self.client_syn(now, out);
    }

    fn client_syn(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        self.c_sent_at = now;
        out.push(Seg {
            seq: 0,
            ts: now,
            size: HEADER_BYTES,
            flags: flags::SYN,
            ecn: self.syn_ecn(),
            from_sender: false,
        });
        self.client_deadline = Some(now + self.c_rto);
    }

    /// Client, on an open persistent connection whose previous response
    /// has fully arrived: ask for the next object.
    pub fn client_request(
        &mut self,
        now: SimTime,
        segments: u64,
        last_payload: u32,
        out: &mut Vec<Seg>,
    ) {
        self.req = (segments.max(1), last_payload);
        self.client = Client::Requested;
        self.c_retx = false;
        self.c_rto = self.c_rto_base;
        self.send_request(now, out);
    }

    /// The request: the client's ACK carrying `request_bytes` of payload
    /// (not ECT: the client's congestion response to its one-segment
    /// requests is not modelled).
    fn send_request(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        let mut f = flags::ACK | flags::REQ;
        if self.c_ece || self.ece_pending != Echo::None {
            f |= flags::ECE;
        }
        out.push(Seg {
            seq: self.rcv_nxt,
            ts: now,
            size: HEADER_BYTES + self.cfg.request_bytes,
            flags: f,
            ecn: Ecn::NotEct,
            from_sender: false,
        });
        self.client_deadline = Some(now + self.c_rto);
    }

    /// Client: a SYN/ACK arrives.
    pub(super) fn client_synack(&mut self, now: SimTime, ecn: Ecn, out: &mut Vec<Seg>) {
        match self.client {
            Client::SynSent => {
                if self.c_retx {
                    self.ecn_fallback();
                }
                if ecn == Ecn::Ce {
                    self.stats.synack_marks += 1;
                    // RFC 5562 section 3.2: echo the mark so that the
                    // server starts with a window of one segment.
                    self.c_ece = self.cfg.tcp.ecn;
                }
                // RFC 6298 (2.2) from the SYN's round trip (Karn: not after
                // a retransmitted SYN, when (5.7) restores the initial RTO).
                self.c_rto_base = if self.c_retx {
                    self.cfg.tcp.initial_rto
                } else {
                    let r = now - self.c_sent_at;
                    SimTime(3 * r.0).clamp(self.cfg.tcp.min_rto, self.cfg.tcp.max_rto)
                };
                self.c_rto = self.c_rto_base;
                self.c_retx = false;
                self.client = Client::Requested;
                self.send_request(now, out);
            }
            Client::Requested => {
                // A duplicate SYN/ACK: the server has not seen the request.
                self.stats.request_retransmits += 1;
                self.send_request(now, out);
            }
            Client::Idle | Client::Open => {}
        }
    }

    /// The client's SYN or request timer expired (the engine checked the
    /// deadline).
    pub fn on_client_timer(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        self.client_deadline = None;
        // RFC 6298 (5.5), but for the SYN's first `syn_linear_timeouts`.
        if self.client != Client::SynSent || self.c_syn_retx >= self.cfg.tcp.syn_linear_count() {
            self.c_rto = (self.c_rto + self.c_rto).min(self.cfg.tcp.max_rto);
        }
        match self.client {
            Client::SynSent => {
                self.c_retx = true;
                self.c_syn_retx = self.c_syn_retx.saturating_add(1);
                self.stats.syn_retransmits += 1;
                self.client_syn(now, out);
            }
            Client::Requested => {
                self.c_retx = true;
                self.stats.request_retransmits += 1;
                self.send_request(now, out);
            }
            Client::Idle | Client::Open => {}
        }
    }

    /// Server: a SYN or a request reaches a passive flow's data sender.
    pub(super) fn server_control(
        &mut self,
        now: SimTime,
        ack: u64,
        f: u8,
        ecn: Ecn,
        out: &mut Vec<Seg>,
    ) {
        if f & flags::SYN != 0 {
            match self.state {
                State::Idle => {
                    self.state = State::SynRcvd;
                    self.synack_retx = 0;
                    self.send_synack(now, out);
                }
                State::SynRcvd => {
                    if self.rto_deadline.is_some_and(|d| d <= now) {
                        // The server's own SYN/ACK timer falls due at this
                        // instant too (`syn_loss_cut = "linux"`: each 1 s
                        // after the packet before it): it fires first, the
                        // kernel's more frequent order (docs/tcp.md).
                        self.on_rto(now, out);
                    }
                    // The client sent its SYN again: the SYN/ACK (or the
                    // request) was lost or is late. Answer again.
                    self.synack_retx = self.synack_retx.saturating_add(1);
                    self.send_synack(now, out);
                }
                State::SynSent | State::Established => {}
            }
            return;
        }
        match self.state {
            State::SynRcvd => {
                self.state = State::Established;
                self.rto_deadline = None; // the SYN/ACK's timer
                if self.synack_retx == 0 {
                    self.rtt_sample(now, self.synack_sent_at);
                } else if self.cfg.tcp.timestamps() {
                    // The request echoes the SYN/ACK the client answered:
                    // the last one sent.
                    self.echo_sample(now, self.synack_sent_at);
                }
                if !self.has_rtt {
                    self.rto = self.handshake_rto();
                }
                let cut = match self.cfg.tcp.syn_loss_cut {
                    // RFC 5681 section 3.1: the SYN/ACK was sent again, so
                    // the initial window is one segment.
                    SynLossCut::Cut => self.synack_retx > 0,
                    // Linux (`tcp_init_transfer`): after more than one.
                    SynLossCut::Linux => self.synack_retx > 1,
                    SynLossCut::Keep => false,
                };
                if cut {
                    self.cwnd = 1.0;
                }
                if f & flags::ECE != 0 && self.cfg.tcp.ecn {
                    // RFC 5562 section 3.2: a CE-marked SYN/ACK leaves an
                    // initial window of one segment.
                    self.cwnd = 1.0;
                    self.stats.ecn_reductions += 1;
                }
                if self.cfg.tcp.pacing {
                    self.paced_init(now, true);
                }
                self.accept_request(now, out);
            }
            State::Established if self.cfg.request_only => {
                // The client sent its request again: the ACK was lost.
                self.ack_request(now, out);
            }
            State::Established => {
                if ack < self.app_limit {
                    return; // a copy of a request already served
                }
                // The request also acknowledges (and may echo ECE).
                self.on_ack(now, ack, f & !flags::REQ, ecn, out);
                if self.snd_max == self.snd_una {
                    // The server was application limited: it sends again.
                    if self.cfg.tcp.slow_start_after_idle() {
                        self.restart_after_idle(now);
                    }
                    self.cubic_after_idle(now, now.saturating_sub(self.last_sent));
                }
                self.accept_request(now, out);
            }
            State::Idle | State::SynSent => {}
        }
    }

    /// Linux's restart after idle (`tcp_slow_start_after_idle_check`,
    /// `tcp_cwnd_restart`), as the server is given a response: with
    /// nothing in flight and more than an RTO since it last sent, ssthresh
    /// becomes at least 3/4 of the window (`tcp_current_ssthresh`) and the
    /// window halves for every further RTO of the idle time while above
    /// the restart window, min(initial window, window), which bounds it
    /// from below. An algorithm that owns its window (BBR, Prague: their
    /// `cong_control`) is exempt.
    fn restart_after_idle(&mut self, now: SimTime) {
        if self.snd_max > self.snd_una || self.cc_owns_window() {
            return;
        }
        let rto = self.rto.0 as i64;
        let mut idle = now.0.saturating_sub(self.last_sent.0) as i64;
        if idle <= rto {
            return;
        }
        // Linux's window is whole segments.
        let mut cwnd = self.cwnd.max(1.0) as u64;
        if !self.in_recovery {
            self.ssthresh = self.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) as f64);
        }
        let restart = u64::from(self.cfg.tcp.initial_cwnd).min(cwnd);
        loop {
            idle -= rto;
            if idle <= 0 || cwnd <= restart {
                break;
            }
            cwnd >>= 1;
        }
        self.cwnd = cwnd.max(restart) as f64;
    }

    /// RFC 7323 on the handshake (Linux's `tcp_ack_update_rtt`): a SYN or
    /// SYN/ACK sent again gives no sample of its own (Karn), but the echo
    /// of the one answered, sent at `tsecr`, does.
    fn echo_sample(&mut self, now: SimTime, tsecr: SimTime) {
        if self.cfg.tcp.rtt_estimator == crate::scenario::RttEstimator::Linux {
            if let Some(mut lr) = self.lr.take() {
                self.linux_rtt_of(&mut lr, now, super::timestamps::linux_ts_rtt(now, tsecr));
                self.lr = Some(lr);
            }
        } else {
            self.rtt_sample(now, tsecr);
        }
    }

    /// The RTO of a connection whose handshake gave no RTT sample: Linux's
    /// `TCP_TIMEOUT_FALLBACK` (3 s, RFC 6298 (5.7)) with
    /// `syn_loss_cut = "linux"`, else `initial_rto`.
    fn handshake_rto(&self) -> SimTime {
        if self.cfg.tcp.syn_loss_cut == SynLossCut::Linux {
            SimTime::from_secs(3).min(self.cfg.tcp.max_rto)
        } else {
            self.cfg.tcp.initial_rto
        }
    }

    /// The server's SYN/ACK. With `syn_loss_cut = "linux"` the server
    /// also sends it again on a timer of its own (Linux's
    /// `reqsk_timer_handler`): `rto` from `initial_rto`, doubled at each
    /// of its timeouts ([`TcpFlow::on_rto`]) and restarted, not doubled,
    /// by a SYN/ACK that answers a repeated SYN (`tcp_check_req`).
    pub(super) fn send_synack(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.cfg.tcp.syn_loss_cut == SynLossCut::Linux {
            self.rto_deadline = Some(now + self.rto);
        }
        self.synack_sent_at = now;
        self.stats.synacks_sent += 1;
        out.push(Seg {
            seq: 0,
            ts: now,
            size: HEADER_BYTES,
            flags: flags::SYN | flags::ACK,
            ecn: self.synack_ecn(),
            from_sender: true,
        });
    }

    /// The ECN field of a SYN: not-ECT, as RFC 3168 section 6.1.1 has it,
    /// but for a congestion control that needs ECN (DCTCP, Prague), whose
    /// every packet carries its codepoint: Linux sets ECT on the socket of
    /// such an algorithm before the SYN leaves (`tcp_ecn_send_syn`), as on
    /// its pure ACKs (`ack_ecn`).
    /// RFC 3168 section 6.1.1.1's fallback as Linux takes it
    /// (`tcp.ecn_fallback`; `net.ipv4.tcp_ecn_fallback = 1`,
    /// `tcp_ecn_clear_syn`): a SYN sent again leaves without ECN's set-up
    /// flags, so the connection whose SYN/ACK answers it runs without ECN
    /// at both ends, every packet not-ECT. Called on that SYN/ACK. DCTCP,
    /// which needs ECN, then runs as Reno (Linux's `dctcp_init` turns to
    /// `dctcp_reno`: Reno's halving and growth); Prague keeps ECN (its
    /// reference negotiates AccECN, not modelled).
    fn ecn_fallback(&mut self) {
        let variant = self.cfg.tcp.variant;
        if !self.cfg.tcp.ecn || !self.cfg.tcp.ecn_fallback() || variant == TcpVariant::Prague {
            return;
        }
        self.cfg.tcp.ecn = false;
        if variant == TcpVariant::Dctcp {
            self.cfg.tcp.variant = TcpVariant::Reno;
            self.cfg.growth = Growth::of(&self.cfg.tcp);
            self.cc = None;
        }
        self.ack_ecn = Ecn::NotEct;
        self.fell_back = Some(variant);
        self.stats.ecn_fallbacks += 1;
    }

    /// The configuration a new connection of this flow starts with: its
    /// own again after a fallback (ECN asked for, the variant it had).
    fn fresh_cfg(&self) -> super::TcpConfig {
        let mut cfg = self.cfg;
        if let Some(variant) = self.fell_back {
            cfg.tcp.ecn = true;
            cfg.tcp.variant = variant;
            cfg.growth = Growth::of(&cfg.tcp);
        }
        cfg
    }

    pub(super) fn syn_ecn(&self) -> Ecn {
        self.ack_ecn
    }

    /// The ECN field of a SYN/ACK: the codepoint of a congestion control
    /// that needs ECN (Linux: the listener's socket carries it), else
    /// ECT(0) with ECN+ (`000_0675317d310dd341.txt`), else not-ECT as RFC
    /// 3168 section 6.1.1 has it.
    pub(super) fn synack_ecn(&self) -> Ecn {
        if self.ack_ecn != Ecn::NotEct {
            self.ack_ecn
        } else if self.cfg.tcp.ecn && self.cfg.tcp.ecn_plus {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    /// Server: the request arrived; queue its response and send what the
    /// window allows. The client's timer stops here (the server's ACK of
    /// the request rides on the response and is not modelled apart).
    fn accept_request(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.cfg.request_only {
            self.ack_request(now, out);
            return;
        }
        self.client = Client::Open;
        self.client_deadline = None;
        self.c_ece = false;
        if self.cfg.tcp.pacing {
            self.paced_app_write();
        }
        let (n, last) = self.req;
        self.app_limit += n;
        let una = self.snd_una;
        self.short.retain(|&(s, _)| s >= una);
        let wire = HEADER_BYTES + last;
        if wire < u32::from(self.cfg.tcp.packet_size) {
            self.short.push((self.app_limit - 1, wire));
        }
        self.send_available(now, out);
    }

    /// Server of a request-only connection: acknowledge the request with a
    /// pure ACK (flagged `REQ` so that the client can tell it from data;
    /// not ECT, RFC 3168 section 6.1.4).
    fn ack_request(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        out.push(Seg {
            seq: 0,
            ts: now,
            size: HEADER_BYTES,
            flags: flags::ACK | flags::REQ,
            ecn: Ecn::NotEct,
            from_sender: true,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{deliver, ecn_plus_spec};
    use super::super::TcpConfig;
    use super::*;
    use crate::scenario::TcpSpec;

    /// A passive flow's handshake ends: its client takes the server's
    /// `synack` at `at` and sends its request, which the server takes at
    /// `back` (and answers into `out`).
    fn request_after(
        fl: &mut TcpFlow,
        synack: Seg,
        at: SimTime,
        back: SimTime,
        out: &mut Vec<Seg>,
    ) {
        out.clear();
        fl.on_data(at, 0, synack.flags, Ecn::NotEct, synack.ts, out);
        let req = out[0];
        out.clear();
        fl.on_ack(back, req.seq, req.flags, req.ecn, out);
    }

    /// RFC 5681 section 3.1: a lost SYN leaves the active opener a first
    /// window of one segment and ssthresh at two (eq. 4 with nothing in
    /// flight, as ns-2's timeout); a SYN/ACK sent again leaves the passive
    /// server one segment. `syn_loss_cut = false` keeps the initial window.
    #[test]
    fn a_lost_syn_starts_the_connection_at_one_segment() {
        let t = |ms: u64| SimTime::from_millis(ms);
        for (cut, lost, want) in [(true, false, 4), (true, true, 1), (false, true, 4)] {
            let spec = TcpSpec {
                initial_cwnd: 4,
                syn_loss_cut: if cut {
                    SynLossCut::Cut
                } else {
                    SynLossCut::Keep
                },
                ..TcpSpec::default()
            };
            let mut tx = TcpFlow::new(TcpConfig::from_spec(&spec, true, false));
            let mut out = Vec::new();
            tx.start(t(0), &mut out);
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].flags, flags::SYN);
            let mut at = 100;
            if lost {
                out.clear();
                tx.on_rto(t(3000), &mut out);
                assert_eq!(out[0].flags, flags::SYN);
                at = 3100;
            }
            out.clear();
            tx.on_ack(t(at), 0, flags::SYN | flags::ACK, Ecn::NotEct, &mut out);
            assert_eq!(out.len(), want, "cut {cut}, lost {lost}");
            assert_eq!(tx.cwnd, want as f64);
            let ssthresh = if cut && lost { 2.0 } else { f64::INFINITY };
            assert_eq!(tx.ssthresh, ssthresh);
        }
        // The passive server: the client's SYN comes twice (its SYN/ACK was
        // lost), so the response starts with one segment.
        for (cut, want) in [(SynLossCut::Cut, 1.0), (SynLossCut::Keep, 4.0)] {
            let spec = TcpSpec {
                syn_loss_cut: cut,
                ..ecn_plus_spec(4)
            };
            let mut fl = TcpFlow::new(TcpConfig::passive(&spec, false, 300));
            let mut out = Vec::new();
            fl.client_connect(t(0), 8, 1000, &mut out);
            fl.on_ack(t(50), 0, flags::SYN, Ecn::NotEct, &mut out);
            fl.on_client_timer(t(3000), &mut out);
            out.clear();
            fl.on_ack(t(3050), 0, flags::SYN, Ecn::NotEct, &mut out);
            request_after(&mut fl, out[0], t(3100), t(3150), &mut out);
            assert_eq!(fl.cwnd, want, "cut {cut:?}");
            assert_eq!(out.len(), want as usize);
        }
    }

    /// `syn_loss_cut = "linux"` (Linux's `tcp_init_transfer`), the linux
    /// profile with an initial window of 10, by hand. The first SYN at 0,
    /// sent again at 1 s and 3 s (the RTO doubling from 1 s); the SYN/ACK
    /// arrives 100 ms after the SYN it answers and echoes its send time:
    /// - no SYN lost: 10 segments, the sample 100 ms;
    /// - the first lost: 10 segments (one retransmission is not enough),
    ///   ssthresh infinite, the sample the echo's, 100 ms;
    /// - the first two lost: one segment, ssthresh infinite;
    /// - two sent again but the first arrived (its SYN/ACK late, at 3.3 s,
    ///   echoing 0): spurious, 10 segments, the sample 3300 ms;
    /// - the first two lost without timestamps: one segment, no sample,
    ///   and Linux's fallback RTO of 3 s.
    #[test]
    fn a_lost_syn_starts_the_connection_as_linux_does() {
        use crate::scenario::TcpProfile;
        let t = |ms: u64| SimTime::from_millis(ms);
        let cases = [
            // SYNs sent, the echoed SYN, timestamps, window, RTT sample.
            (1, 0, true, 10, Some(100)),
            (2, 1000, true, 10, Some(100)),
            (3, 3000, true, 1, Some(100)),
            (3, 0, true, 10, Some(3300)),
            (3, 3000, false, 1, None),
        ];
        for (syns, echoed, ts, want, sample) in cases {
            let mut spec = TcpProfile::Linux.defaults();
            spec.set_timestamps(ts);
            let mut tx = TcpFlow::new(TcpConfig::from_spec(&spec, true, false));
            let mut out = Vec::new();
            tx.start(t(0), &mut out);
            for at in [1000, 3000].into_iter().take(syns - 1) {
                tx.on_rto(t(at), &mut out);
            }
            assert_eq!(tx.stats.syn_retransmits, syns as u64 - 1);
            let at = if echoed == 0 && syns > 1 {
                3300
            } else {
                echoed + 100
            };
            out.clear();
            tx.on_ack_echo(
                t(at),
                0,
                flags::SYN | flags::ACK,
                Ecn::NotEct,
                t(echoed),
                &mut out,
            );
            let case = format!("{syns} SYNs, echo {echoed} ms, timestamps {ts}");
            assert_eq!(tx.cwnd, want as f64, "{case}");
            assert_eq!(out.len(), want, "{case}");
            assert_eq!(tx.ssthresh, f64::INFINITY, "{case}");
            assert_eq!(tx.has_rtt, sample.is_some(), "{case}");
            match sample {
                Some(ms) => assert_eq!(tx.srtt_ns, ms as f64 * 1e6, "{case}"),
                None => assert_eq!(tx.rto, t(3000), "{case}"),
            }
        }
        // The passive server, its SYN/ACK sent once, twice and three times
        // (the client sends its SYN again while no SYN/ACK reaches it, each
        // time before the server's own timer): one segment only after the
        // third, a sample from the echo of the last.
        for (synacks, want) in [(1, 10.0), (2, 10.0), (3, 1.0)] {
            let spec = TcpProfile::Linux.defaults();
            let mut fl = TcpFlow::new(TcpConfig::passive(&spec, false, 300));
            let mut out = Vec::new();
            fl.client_connect(t(0), 20, 1000, &mut out);
            let mut at = 50;
            for _ in 0..synacks {
                out.clear();
                fl.on_ack(t(at), 0, flags::SYN, Ecn::NotEct, &mut out);
                // Each repeated SYN before the server's own timer (1 s
                // after its last SYN/ACK) falls due.
                at += 990;
            }
            let last = at - 990;
            request_after(&mut fl, out[0], t(last + 25), t(last + 50), &mut out);
            assert_eq!(fl.cwnd, want, "{synacks} SYN/ACKs");
            assert_eq!(fl.ssthresh, f64::INFINITY, "{synacks} SYN/ACKs");
            assert_eq!(fl.srtt_ns, 50e6, "{synacks} SYN/ACKs");
        }
    }

    /// The linux profile's server sends its SYN/ACK again on its own timer
    /// (1 s, then 2 s) as well as on a repeated SYN, and counts both: one
    /// SYN/ACK lost (sent at 50 ms), the timer at 1050 ms and the client's
    /// repeated SYN arriving at the same instant give two retransmissions
    /// (the timer first, whichever event the engine takes first), so the
    /// response starts with one segment (Linux's most frequent outcome,
    /// `tests/test_testbed.py`); a repeated SYN at 1040 ms restarts the
    /// timer (to 2040 ms) and the request at 1100 ms finds one
    /// retransmission: the initial window, 10. Without the linux rule no
    /// timer is armed.
    #[test]
    fn the_linux_server_sends_its_synack_again_on_its_own_timer() {
        use crate::scenario::TcpProfile;
        let t = |ms: u64| SimTime::from_millis(ms);
        for (timer_first, want, deadline) in [(true, 1.0, 3050), (false, 10.0, 2040)] {
            let spec = TcpProfile::Linux.defaults();
            let mut fl = TcpFlow::new(TcpConfig::passive(&spec, false, 300));
            let mut out = Vec::new();
            fl.client_connect(t(0), 20, 1000, &mut out);
            fl.on_ack(t(50), 0, flags::SYN, Ecn::NotEct, &mut out);
            assert_eq!(fl.rto_deadline, Some(t(1050)), "the SYN/ACK's timer");
            out.clear();
            // The repeated SYN at the instant the timer falls due (the
            // engine may take either event first: the timer goes first),
            // or 10 ms before it.
            let syn_at = if timer_first { 1050 } else { 1040 };
            fl.on_ack(t(syn_at), 0, flags::SYN, Ecn::NotEct, &mut out);
            if timer_first {
                assert_eq!(out.len(), 2, "the timer's SYN/ACK, then the SYN's");
            }
            assert_eq!(
                fl.rto_deadline,
                Some(t(deadline)),
                "timer first {timer_first}"
            );
            let synack = *out.last().unwrap();
            assert!(synack.flags & flags::SYN != 0 && synack.from_sender);
            request_after(&mut fl, synack, t(1075), t(1100), &mut out);
            assert_eq!(fl.cwnd, want, "timer first {timer_first}");
            assert_ne!(fl.rto_deadline, Some(t(deadline)), "the data's timer now");
        }
        let mut fl = TcpFlow::new(TcpConfig::passive(&TcpSpec::default(), false, 300));
        let mut out = Vec::new();
        fl.client_connect(t(0), 20, 1000, &mut out);
        fl.on_ack(t(50), 0, flags::SYN, Ecn::NotEct, &mut out);
        assert_eq!(fl.rto_deadline, None);
    }

    /// `syn_linear_timeouts` (Linux's `tcp_syn_linear_timeouts = 4`, on in
    /// the linux profile): a SYN that is never answered is sent at 0, 1, 2, 3,
    /// 4 and 5 s, then 7 and 11 s; without (aqmlab's default, initial RTO 3
    /// s) at 0, 3, 9 and 21 s. The web client's SYN keeps the same times.
    #[test]
    fn the_first_syn_timeouts_are_linear_as_linux_has_them() {
        use crate::scenario::TcpProfile;
        let t = |ms: u64| SimTime::from_millis(ms);
        for (spec, want) in [
            (
                TcpProfile::Linux.defaults(),
                &[0, 1000, 2000, 3000, 4000, 5000, 7000, 11000][..],
            ),
            (TcpSpec::default(), &[0, 3000, 9000, 21000][..]),
        ] {
            // The SYN's send times, ms, as a flow's timer fires (`fire`
            // returns when it did).
            let times = |fire: &mut dyn FnMut() -> SimTime| -> Vec<u64> {
                std::iter::once(0)
                    .chain((1..want.len()).map(|_| fire().0 / 1_000_000))
                    .collect()
            };
            let mut out = Vec::new();
            let mut tx = TcpFlow::new(TcpConfig::from_spec(&spec, true, false));
            tx.start(t(0), &mut out);
            let active = times(&mut || {
                let at = tx.rto_deadline.expect("the SYN's timer");
                tx.on_rto(at, &mut out);
                at
            });
            assert_eq!(active, want, "{}", spec.syn_linear_timeouts());
            let mut fl = TcpFlow::new(TcpConfig::passive(&spec, false, 300));
            fl.client_connect(t(0), 8, 1000, &mut out);
            let client = times(&mut || {
                let at = fl.client_deadline.expect("the client's SYN timer");
                fl.on_client_timer(at, &mut out);
                at
            });
            assert_eq!(client, want, "client, {}", spec.syn_linear_timeouts());
        }
    }

    /// `tcp.slow_start_after_idle`, by hand: RTO 300 ms, a window of 80
    /// and ssthresh 40, nothing in flight. Idle 1 s: ssthresh max(40, 40 +
    /// 20) = 60; the window halves while a further RTO remains (700, 400,
    /// 100 ms left: 40, 20, 10) and stops at the initial window, 10. Idle
    /// 500 ms: one halving, 40. Idle 250 ms (not above the RTO), data in
    /// flight, BBR or Prague: unchanged. A window of 6, below the initial
    /// window: kept at 6.
    #[test]
    fn a_window_restarts_after_an_idle_period() {
        use crate::scenario::TcpVariant;
        let t = |ms: u64| SimTime::from_millis(ms);
        let fresh = |variant: TcpVariant, cwnd: f64| {
            let spec = TcpSpec {
                initial_cwnd: 10,
                variant,
                ..TcpSpec::default()
            };
            let mut fl = TcpFlow::new(TcpConfig::passive(&spec, false, 300));
            fl.cwnd = cwnd;
            fl.ssthresh = 40.0;
            fl.rto = t(300);
            fl.last_sent = t(1000);
            fl
        };
        let after = |mut fl: TcpFlow, idle_ms: u64| {
            fl.restart_after_idle(t(1000 + idle_ms));
            (fl.cwnd, fl.ssthresh)
        };
        let cubic = TcpVariant::Cubic;
        assert_eq!(after(fresh(cubic, 80.0), 1000), (10.0, 60.0));
        assert_eq!(after(fresh(cubic, 80.0), 500), (40.0, 60.0));
        assert_eq!(after(fresh(cubic, 80.5), 500), (40.0, 60.0));
        assert_eq!(after(fresh(cubic, 80.0), 300), (80.0, 40.0));
        assert_eq!(after(fresh(cubic, 6.0), 1000), (6.0, 40.0));
        for v in [TcpVariant::Bbr, TcpVariant::Prague] {
            assert_eq!(after(fresh(v, 80.0), 1000), (80.0, 40.0));
        }
        let mut busy = fresh(cubic, 80.0);
        busy.snd_max = 5;
        assert_eq!(after(busy, 1000), (80.0, 40.0));
    }

    /// `tcp.ecn_fallback` (Linux's `tcp_ecn_fallback = 1`): a connection
    /// whose SYN was sent again runs without ECN, its data not-ECT, a
    /// DCTCP one as Reno, and the flow's next connection starts as
    /// configured; a connection whose first SYN was answered keeps ECN, as
    /// does every connection without the switch and a Prague one.
    #[test]
    fn a_syn_sent_again_opens_without_ecn() {
        let t = |ms: u64| SimTime::from_millis(ms);
        let cases = [
            (TcpVariant::NewReno, true, true, false),
            (TcpVariant::NewReno, true, false, true),
            (TcpVariant::NewReno, false, true, true),
            (TcpVariant::Dctcp, true, true, false),
            (TcpVariant::Dctcp, true, false, true),
            (TcpVariant::Prague, true, true, true),
        ];
        for (variant, fallback, lost, ecn_after) in cases {
            let mut spec = TcpSpec {
                variant,
                ecn: true,
                initial_cwnd: 2,
                ..TcpSpec::default()
            };
            spec.set_ecn_fallback(fallback);
            let mut tx = TcpFlow::new(TcpConfig::from_spec(&spec, true, true));
            let mut out = Vec::new();
            tx.start(t(0), &mut out);
            let mut at = 100;
            if lost {
                tx.on_rto(t(3000), &mut out);
                at = 3100;
            }
            out.clear();
            tx.on_ack(t(at), 0, flags::SYN | flags::ACK, Ecn::NotEct, &mut out);
            let case = format!("{variant:?} fallback {fallback} lost {lost}");
            assert_eq!(tx.cfg.tcp.ecn, ecn_after, "{case}");
            assert_eq!(tx.stats.ecn_fallbacks, u64::from(!ecn_after), "{case}");
            assert!(!out.is_empty());
            for seg in &out {
                assert_eq!(seg.ecn != Ecn::NotEct, ecn_after, "{case}");
            }
            let runs_as = if variant == TcpVariant::Dctcp && !ecn_after {
                TcpVariant::Reno
            } else {
                variant
            };
            assert_eq!(tx.cfg.tcp.variant, runs_as, "{case}");
            assert_eq!(tx.dctcp_alpha().is_some(), runs_as.scalable(), "{case}");
            tx.new_connection(10);
            assert!(tx.cfg.tcp.ecn, "{case}: the next connection asks again");
            assert_eq!(tx.cfg.tcp.variant, variant, "{case}");
            assert_eq!(tx.dctcp_alpha().is_some(), variant.scalable(), "{case}");
        }
    }

    /// A congestion control that needs ECN sends its SYN and SYN/ACK with
    /// its codepoint, as Linux does (DCTCP ECT(0), Prague ECT(1)); any
    /// other sends them not-ECT (RFC 3168 section 6.1.1), but a SYN/ACK
    /// with ECN+, ECT(0); without ECN every one is not-ECT.
    #[test]
    fn the_handshake_carries_the_codepoint_of_a_congestion_control_that_needs_ecn() {
        use crate::scenario::TcpVariant;
        let t = |ms: u64| SimTime::from_millis(ms);
        for (variant, ecn, plus, syn, synack) in [
            (TcpVariant::Dctcp, true, false, Ecn::Ect0, Ecn::Ect0),
            (TcpVariant::Prague, true, false, Ecn::Ect1, Ecn::Ect1),
            (TcpVariant::Dctcp, false, false, Ecn::NotEct, Ecn::NotEct),
            (TcpVariant::NewReno, true, false, Ecn::NotEct, Ecn::NotEct),
            (TcpVariant::NewReno, true, true, Ecn::NotEct, Ecn::Ect0),
        ] {
            let mut spec = TcpSpec {
                variant,
                ecn,
                ecn_plus: plus,
                ..TcpSpec::default()
            };
            if variant == TcpVariant::Prague {
                spec.ecn_codepoint = crate::scenario::EcnCodepoint::Ect1;
            }
            let case = format!("{variant:?}, ecn {ecn}, ecn+ {plus}");
            // Active open: the data sender's SYN; the receiver's SYN/ACK.
            let mut tx = TcpFlow::new(TcpConfig::from_spec(&spec, true, ecn));
            let mut out = Vec::new();
            tx.start(t(0), &mut out);
            assert_eq!((out[0].flags, out[0].ecn), (flags::SYN, syn), "{case}");
            out.clear();
            tx.on_data(t(50), 0, flags::SYN, syn, t(0), &mut out);
            assert_eq!(out[0].flags, flags::SYN | flags::ACK, "{case}");
            assert_eq!(out[0].ecn, synack, "{case}");
            // Passive open: the client's SYN; the server's SYN/ACK.
            let mut fl = TcpFlow::new(TcpConfig::passive(&spec, ecn, 300));
            out.clear();
            fl.client_connect(t(0), 3, 500, &mut out);
            assert_eq!((out[0].flags, out[0].ecn), (flags::SYN, syn), "{case}");
            out.clear();
            fl.on_ack(t(50), 0, flags::SYN, syn, &mut out);
            assert_eq!(out[0].flags, flags::SYN | flags::ACK, "{case}");
            assert_eq!(out[0].ecn, synack, "{case}");
        }
    }

    /// Passive open: the client's SYN goes on the ACK route, the SYN/ACK
    /// is ECT(0) only with ECN+, a CE-marked SYN/ACK is echoed and leaves
    /// the server a window of 1 (RFC 5562), the request starts the
    /// response (last segment short), a copy of it is ignored, and a lost
    /// SYN is sent again after `initial_rto`.
    #[test]
    fn passive_open_request_response() {
        let spec = ecn_plus_spec(4);
        let mut fl = TcpFlow::new(TcpConfig::passive(&spec, true, 300));
        let mut out = Vec::new();
        let t = |ms: u64| SimTime::from_millis(ms);
        // A 2500-byte object: segments of 1000, 1000 and 500 bytes.
        fl.client_connect(t(0), 3, 500, &mut out);
        assert_eq!(out.len(), 1);
        assert!(!out[0].from_sender && out[0].flags == flags::SYN);
        assert_eq!(fl.client_deadline, Some(t(3000)));
        // The SYN is lost: the client's timer sends it again, doubling.
        out.clear();
        fl.on_client_timer(t(3000), &mut out);
        assert_eq!(out[0].flags, flags::SYN);
        assert_eq!(fl.client_deadline, Some(t(9000)));
        assert_eq!(fl.stats.syn_retransmits, 1);
        // The server answers with an ECN-capable SYN/ACK on the data route.
        out.clear();
        fl.on_ack(t(3050), 0, flags::SYN, Ecn::NotEct, &mut out);
        assert_eq!(out.len(), 1);
        let synack = out[0];
        assert!(synack.from_sender && synack.flags == flags::SYN | flags::ACK);
        assert_eq!(synack.ecn, Ecn::Ect0);
        // It arrives CE-marked: the request echoes ECE.
        out.clear();
        fl.on_data(t(3100), 0, synack.flags, Ecn::Ce, synack.ts, &mut out);
        assert_eq!(fl.stats.synack_marks, 1);
        let req = out[0];
        assert_eq!(req.flags, flags::ACK | flags::REQ | flags::ECE);
        assert_eq!(req.size, 340);
        assert!(!req.from_sender);
        // After a retransmitted SYN the request timer is the initial RTO.
        assert_eq!(fl.client_deadline, Some(t(6100)));
        // The server gets the request: a window of one segment, full size.
        out.clear();
        fl.on_ack(t(3150), req.seq, req.flags, req.ecn, &mut out);
        assert_eq!(fl.client_deadline, None);
        assert_eq!(fl.cwnd, 1.0);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].seq, out[0].size), (0, 1040));
        // A copy of the request changes nothing.
        out.clear();
        fl.on_ack(t(3160), req.seq, req.flags, req.ecn, &mut out);
        assert!(out.is_empty());
        // The rest of the response: the last segment is 540 bytes.
        let mut acks = Vec::new();
        fl.on_data(t(3200), 0, flags::DATA, Ecn::Ect0, t(3150), &mut acks);
        fl.on_ack(t(3250), acks[0].seq, acks[0].flags, acks[0].ecn, &mut out);
        let sizes: Vec<(u64, u32)> = out.iter().map(|s| (s.seq, s.size)).collect();
        assert_eq!(sizes, vec![(1, 1040), (2, 540)]);
        // Plain ECN: the SYN/ACK is not ECN-capable.
        let plain = TcpSpec {
            ecn_plus: false,
            ..spec
        };
        let mut fl = TcpFlow::new(TcpConfig::passive(&plain, true, 300));
        out.clear();
        fl.on_ack(t(0), 0, flags::SYN, Ecn::NotEct, &mut out);
        assert_eq!(out[0].ecn, Ecn::NotEct);
    }

    /// ns-2's WebTraf pattern (`http = "webtraf"`): a request-only
    /// connection ends with the server's pure ACK (not ECT, lost and sent
    /// again on the client's timer), then the server opens the response
    /// connection with a SYN that is not ECT, even with ECN+.
    #[test]
    fn webtraf_request_connection_then_server_open() {
        let mut fl = TcpFlow::new(TcpConfig::passive(&ecn_plus_spec(1), true, 300));
        let mut out = Vec::new();
        let t = |ms: u64| SimTime::from_millis(ms);
        fl.new_request_connection();
        fl.client_connect(t(0), 3, 500, &mut out);
        assert_eq!(out[0].flags, flags::SYN);
        out.clear();
        fl.on_ack(t(50), 0, flags::SYN, Ecn::NotEct, &mut out);
        let synack = out[0];
        assert_eq!(synack.ecn, Ecn::Ect0); // ECN+
        out.clear();
        fl.on_data(t(100), 0, synack.flags, synack.ecn, synack.ts, &mut out);
        let req = out[0];
        assert_eq!(req.flags, flags::ACK | flags::REQ);
        // The server answers the request with a pure ACK, not with data.
        out.clear();
        fl.on_ack(t(150), req.seq, req.flags, req.ecn, &mut out);
        assert_eq!(out.len(), 1);
        let ack = out[0];
        assert!(ack.from_sender);
        assert_eq!(
            (ack.flags, ack.size, ack.ecn),
            (flags::ACK | flags::REQ, 40, Ecn::NotEct)
        );
        assert_eq!(fl.stats.data_sent, 0);
        // The ACK is lost: the client's request timer sends the request
        // again, and the server acknowledges it again.
        assert!(!fl.request_acked());
        let deadline = fl.client_deadline.expect("request timer");
        out.clear();
        fl.on_client_timer(deadline, &mut out);
        assert_eq!(out[0].flags, flags::ACK | flags::REQ);
        assert_eq!(fl.stats.request_retransmits, 1);
        let again = out[0];
        out.clear();
        fl.on_ack(
            deadline + t(50),
            again.seq,
            again.flags,
            again.ecn,
            &mut out,
        );
        assert_eq!(out[0].flags, flags::ACK | flags::REQ);
        let ack = out[0];
        out.clear();
        fl.on_data(deadline + t(100), 0, ack.flags, ack.ecn, ack.ts, &mut out);
        assert!(out.is_empty());
        assert!(fl.request_acked());
        assert_eq!(fl.client_deadline, None);
        // The server opens the response connection: a SYN on the data
        // route, not ECN-capable.
        let t0 = deadline + t(100);
        fl.server_open(t0, 3, 500, &mut out);
        assert_eq!(out.len(), 1);
        let syn = out[0];
        assert!(syn.from_sender);
        assert_eq!((syn.flags, syn.ecn), (flags::SYN, Ecn::NotEct));
        assert!(!fl.request_acked());
        // The client answers with a SYN/ACK on the ACK route; the server
        // then sends the response, whose last segment is short.
        out.clear();
        fl.on_data(t0 + t(50), 0, syn.flags, syn.ecn, syn.ts, &mut out);
        let synack = out[0];
        assert!(!synack.from_sender);
        assert_eq!(synack.flags, flags::SYN | flags::ACK);
        out.clear();
        fl.on_ack(t0 + t(100), 0, synack.flags, synack.ecn, &mut out);
        assert_eq!((out[0].seq, out[0].size, out[0].ecn), (0, 1040, Ecn::Ect0));
        let mut sent: Vec<Seg> = out.clone();
        for k in 0..4 {
            let acks = deliver(&mut fl, &sent, &[]);
            if acks.is_empty() {
                break;
            }
            out.clear();
            for a in &acks {
                fl.on_ack(t0 + t(200 + 100 * k), a.seq, a.flags, a.ecn, &mut out);
            }
            sent = out.clone();
            if fl.delivered() >= 3 {
                break;
            }
        }
        assert_eq!(fl.delivered(), 3);
        assert_eq!(fl.seg_size(2), 540);
    }
}
