//! A one-way TCP connection, packet-level like ns-2's agents: segments are
//! numbered, not bytes; every full data packet is `packet_size` bytes on the
//! wire and carries `packet_size - 40` bytes of payload.
//!
//! Modelled:
//! - Reno and NewReno congestion control (RFC 5681, RFC 6582): slow start
//!   (+1 segment per new ACK), congestion avoidance (+1/cwnd per new ACK),
//!   fast retransmit on the third duplicate ACK, fast recovery with window
//!   inflation; NewReno's partial ACKs and `recover`.
//! - The retransmission timer of RFC 6298: SRTT/RTTVAR, RTO bounds,
//!   exponential backoff; go-back-N after a timeout as ns-2's Reno does. RTT
//!   is timed on one segment per round trip (as BSD and ns-2 do; sampling
//!   every ACK would shrink RTTVAR to nothing and make RTO = SRTT), under
//!   Karn's rule: a timing is abandoned when its segment is retransmitted,
//!   and a backed-off RTO is kept until the next valid sample.
//! - ECN (RFC 3168): ECT(0) data, ECE echoed until CWR, one reduction per
//!   window, CWR on the next new segment; pure ACKs are never ECT.
//! - Optional SYN / SYN-ACK set-up with the SYN retransmitted on its own
//!   timer (initial RTO, doubling); ECN-capable SYN/ACK as a switch (ECN+).
//! - Passive open for request/response traffic (web): the receiver end
//!   (the client) sends the SYN, the data sender (the server) answers with
//!   a SYN/ACK, the client's handshake ACK carries the request, and the
//!   server then sends the response; further requests on the same
//!   connection (HTTP/1.1). The client's SYN and request are retransmitted
//!   on the client's own timer. A response's last segment may be shorter
//!   than a full packet. `docs/tcp.md` lists what is modelled.
//! - Receiver: cumulative ACKs, out-of-order segments kept, an immediate ACK
//!   for out-of-order data or a filled hole, optional delayed ACKs.
//!
//! Not modelled: SACK, timestamps on the wire (the echoed send time stands
//! in for RTT measurement), Nagle, window scaling, the close handshake's
//! state (the engine sends the teardown's FIN/ACK packets, see `docs/tcp.md`).

use crate::packet::{flags, Ecn};
use crate::scenario::{
    LimitedTransmitSends, LossSsthresh, PartialAckTimer, RecoveryExit, TcpSpec, TcpVariant,
    HEADER_BYTES,
};
use crate::units::SimTime;
use std::collections::VecDeque;

/// A segment a flow wants sent; the engine turns it into a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub seq: u64,
    pub ts: SimTime,
    pub size: u32,
    pub flags: u8,
    pub ecn: Ecn,
    /// Sent by the data sender (data route) rather than the receiver (ACK route).
    pub from_sender: bool,
}

/// Per-flow configuration: the scenario's `[tcp]` with the traffic group's
/// `ecn` override applied, and whether the flow opens with a handshake.
#[derive(Clone, Copy, Debug)]
pub struct TcpConfig {
    pub tcp: TcpSpec,
    pub handshake: bool,
    /// The data sender is a server that opens passively: the receiver end
    /// (the client) connects and requests (see [`TcpFlow::client_connect`]).
    pub passive: bool,
    /// Payload bytes of a client's request (passive flows).
    pub request_bytes: u32,
    /// A passive connection that carries the request only: the server
    /// answers it with a pure ACK, and the response comes over a
    /// connection the server opens ([`TcpFlow::server_open`]; ns-2's
    /// WebTraf pattern, `http = "webtraf"`).
    pub request_only: bool,
}

impl TcpConfig {
    pub fn from_spec(s: &TcpSpec, handshake: bool, ecn: bool) -> TcpConfig {
        TcpConfig {
            tcp: TcpSpec { ecn, ..*s },
            handshake,
            passive: false,
            request_bytes: 0,
            request_only: false,
        }
    }

    /// A request/response flow: the client opens, the server answers.
    pub fn passive(s: &TcpSpec, ecn: bool, request_bytes: u32) -> TcpConfig {
        TcpConfig {
            tcp: TcpSpec { ecn, ..*s },
            handshake: true,
            passive: true,
            request_bytes,
            request_only: false,
        }
    }
}

/// Per-flow counters. `repr(C)`: those of every packet first, so that
/// they share a cache line (see [`TcpFlow`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct FlowStats {
    /// Data packets sent (first transmissions and retransmissions).
    pub data_sent: u64,
    /// Data packets that reached the receiver (duplicates included).
    pub data_arrived: u64,
    /// Segments delivered in order to the receiving application.
    pub segments_delivered: u64,
    /// Sum and count of RTT samples, seconds.
    pub rtt_sum_s: f64,
    pub rtt_samples: u64,
    /// Data packets dropped in the network (queues and link losses).
    pub data_dropped: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// CE-marked data packets received.
    pub marks_seen: u64,
    /// Window reductions in response to ECE.
    pub ecn_reductions: u64,
    pub syn_retransmits: u64,
    /// SYNs dropped in the network (counted by the engine).
    pub syn_drops: u64,
    /// SYN/ACKs sent (first ones and answers to repeated SYNs).
    pub synacks_sent: u64,
    /// SYN/ACKs dropped in the network (counted by the engine).
    pub synack_drops: u64,
    /// SYN/ACKs that arrived CE-marked.
    pub synack_marks: u64,
    /// Requests sent again by the client (passive flows).
    pub request_retransmits: u64,
    /// Connections closed: the client's FIN sent, and the server's FIN/ACK
    /// sent in answer (counted by the engine).
    pub fins_sent: u64,
    pub fin_acks_sent: u64,
    /// Web sessions with open pages: pages that came while every lane of
    /// the session was busy and waited for one (counted on the session's
    /// first lane, by the engine).
    pub pages_waited: u64,
}

/// The sender's last window reduction (ns-2's `last_cwnd_action_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    None,
    /// In answer to an ECN-Echo (RFC 3168 section 6.1.2).
    Ecn,
    /// A fast retransmission (RFC 5681 section 3.2).
    Loss,
    /// A retransmission timeout (RFC 6298 (5.4)-(5.6)).
    Timeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    SynSent,
    /// A passive server answered a SYN and waits for the request.
    SynRcvd,
    Established,
}

/// The client end of a passive flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Client {
    /// No connection asked for.
    Idle,
    /// SYN sent, waiting for the SYN/ACK.
    SynSent,
    /// Request sent, not yet received by the server.
    Requested,
    /// The server has the request.
    Open,
}

/// Sender and receiver of one flow.
///
/// `repr(C)` keeps the fields in the order written and the alignment puts
/// the first at the start of a cache line: what an ACK touches (the
/// timers the engine re-arms after each packet among it), then what a
/// data packet touches, then the configuration and the per-packet
/// counters, which both ends read, and last what only connection set-up
/// reads; each packet reads a few adjacent cache lines of the flow (at
/// 10^5 flows the flows do not fit in the caches).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct TcpFlow {
    // --- sender, read on every ACK (all sequence numbers in segments) ---
    /// Congestion window, segments.
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Oldest unacknowledged segment.
    snd_una: u64,
    /// Next segment to send.
    snd_nxt: u64,
    /// One past the highest segment ever sent.
    snd_max: u64,
    /// Segments the application has handed over (u64::MAX: unlimited).
    app_limit: u64,
    /// RFC 6582 `recover`, as one past the highest segment sent at the
    /// event; an ECN reduction sets it too, so that a loss in the same
    /// window is not answered by a second halving (RFC 3168 section 6.1.2).
    recover: u64,
    /// The window fast recovery returns to (`ssthresh` after a halving; the
    /// window at the loss without one).
    exit_cwnd: f64,
    /// `snd_una` before the last advance of the cumulative ACK (RFC 6582
    /// section 4.2's `prev_highest_ack`).
    prev_una: u64,
    /// Segments sent by limited transmit since the last new ACK (RFC 3042:
    /// left out of the FlightSize that sets ssthresh).
    lt_sent: u64,
    /// No new ECN reduction until `snd_una` reaches this.
    ecn_recover: u64,
    srtt_ns: f64,
    rttvar_ns: f64,
    /// With a `clock_tick`: srtt in eighths and rttvar in quarters of a tick.
    srtt8: i64,
    rttvar4: i64,
    /// The segment being timed for an RTT sample, and when it was sent.
    rtt_seq: Option<u64>,
    rtt_start: SimTime,
    pub rto: SimTime,
    /// When the retransmission (or SYN) timer expires.
    pub rto_deadline: Option<SimTime>,
    /// Time of the earliest pending timer event the engine holds for this flow.
    pub rto_event: Option<SimTime>,
    /// When the client's SYN or request timer expires.
    pub client_deadline: Option<SimTime>,
    /// Segments shorter than a full packet (a response's last), ascending:
    /// (segment, wire bytes). Empty for bulk flows.
    short: Vec<(u64, u32)>,
    dupacks: u32,
    state: State,
    in_recovery: bool,
    /// A partial ACK arrived in the current recovery.
    partial_seen: bool,
    /// The last window reduction and its cause.
    last_cut: Cut,
    /// ns-2's `ecn_backoff_`: the last ECN-Echo found a one-segment window.
    ecn_backoff_on: bool,
    cwr_pending: bool,
    /// An ECE arrived while cwnd was one segment: no new data until the
    /// retransmission timer expires (RFC 3168 section 6.1.2).
    ecn_hold: bool,
    has_rtt: bool,
    // --- receiver, read on every data packet ---
    rcv_nxt: u64,
    /// `ooo[i]`: segment `rcv_nxt + i` received.
    ooo: VecDeque<bool>,
    pub delack_deadline: Option<SimTime>,
    pub delack_event: Option<SimTime>,
    last_ts: SimTime,
    /// Saw a SYN (handshake) or data.
    delack_count: u32,
    ece_pending: bool,
    last_retx: bool,
    // --- both ends ---
    pub cfg: TcpConfig,
    pub stats: FlowStats,
    // --- connection set-up and the passive (web) ends: rarely read ---
    syn_sent_at: SimTime,
    /// When the last SYN/ACK was sent, and whether more than one was.
    synack_sent_at: SimTime,
    /// The client's current timeout (backed off) and its value after the
    /// handshake.
    c_rto: SimTime,
    c_rto_base: SimTime,
    c_sent_at: SimTime,
    /// The object the pending request asks for: segments and the payload
    /// of the last one.
    req: (u64, u32),
    syn_retx: bool,
    synack_retx: bool,
    client: Client,
    c_retx: bool,
    /// The SYN/ACK arrived CE-marked: echo ECE on the request (RFC 5562).
    c_ece: bool,
}

impl TcpFlow {
    /// Prefetch the cache lines an ACK reads (the sender's fields, the
    /// configuration and the counters; see `World::warm`).
    #[inline]
    pub fn prefetch_sender(&self) {
        use crate::mem::prefetch;
        prefetch(&self.cwnd);
        prefetch(&self.prev_una);
        prefetch(&self.rto);
        prefetch(&self.dupacks);
        prefetch(&self.cfg);
        prefetch(&self.stats.data_sent);
    }

    /// Prefetch the cache lines a data packet reads (the receiver's
    /// fields, the configuration and the counters).
    #[inline]
    pub fn prefetch_receiver(&self) {
        use crate::mem::prefetch;
        prefetch(&self.rcv_nxt);
        prefetch(&self.delack_deadline);
        prefetch(&self.last_retx);
        prefetch(&self.cfg);
        prefetch(&self.stats.segments_delivered);
    }

    pub fn new(cfg: TcpConfig) -> TcpFlow {
        TcpFlow {
            cfg,
            state: State::Idle,
            cwnd: cfg.tcp.initial_cwnd as f64,
            ssthresh: f64::INFINITY,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_limit: if cfg.passive { 0 } else { u64::MAX },
            dupacks: 0,
            in_recovery: false,
            partial_seen: false,
            recover: 0,
            exit_cwnd: 0.0,
            last_cut: Cut::None,
            prev_una: 0,
            lt_sent: 0,
            ecn_backoff_on: false,
            ecn_recover: 0,
            cwr_pending: false,
            ecn_hold: false,
            srtt_ns: 0.0,
            rttvar_ns: 0.0,
            srtt8: 0,
            rttvar4: 0,
            has_rtt: false,
            rtt_seq: None,
            rtt_start: SimTime::ZERO,
            rto: cfg.tcp.initial_rto,
            rto_deadline: None,
            rto_event: None,
            syn_sent_at: SimTime::ZERO,
            syn_retx: false,
            synack_sent_at: SimTime::ZERO,
            synack_retx: false,
            short: Vec::new(),
            client: Client::Idle,
            client_deadline: None,
            c_rto: cfg.tcp.initial_rto,
            c_rto_base: cfg.tcp.initial_rto,
            c_sent_at: SimTime::ZERO,
            c_retx: false,
            c_ece: false,
            req: (0, 0),
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            ece_pending: false,
            delack_count: 0,
            delack_deadline: None,
            delack_event: None,
            last_ts: SimTime::ZERO,
            last_retx: false,
            stats: FlowStats::default(),
        }
    }

    pub fn started(&self) -> bool {
        self.state != State::Idle
    }
    pub fn established(&self) -> bool {
        self.state == State::Established
    }
    /// Smoothed RTT, seconds (0 before the first sample).
    pub fn srtt_s(&self) -> f64 {
        self.srtt_ns * 1e-9
    }
    /// Segments sent and not yet acknowledged.
    pub fn outstanding(&self) -> u64 {
        self.snd_max - self.snd_una
    }
    pub fn mss(&self) -> u32 {
        self.cfg.tcp.packet_size - HEADER_BYTES
    }

    /// The application stops: no new data after what was sent; what is
    /// outstanding is still delivered (retransmitted as needed).
    pub fn stop(&mut self) {
        self.app_limit = self.snd_max;
    }

    /// Begin a new connection of the same flow that will carry `segments`
    /// segments: every sender and receiver variable starts afresh (initial
    /// window, RTO and RTT estimate, as a new TCP connection does); the
    /// statistics accumulate. The engine's pending-timer marks carry over
    /// because the events they describe are still queued.
    pub fn new_connection(&mut self, segments: u64) {
        let (stats, rto_event, delack_event) = (self.stats, self.rto_event, self.delack_event);
        *self = TcpFlow::new(self.cfg);
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
        *self = TcpFlow::new(self.cfg);
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
        if wire < self.cfg.tcp.packet_size {
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
            ecn: Ecn::NotEct, // RFC 3168 section 6.1.1
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
        if self.c_ece || self.ece_pending {
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
    fn client_synack(&mut self, now: SimTime, ecn: Ecn, out: &mut Vec<Seg>) {
        match self.client {
            Client::SynSent => {
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
        self.c_rto = (self.c_rto + self.c_rto).min(self.cfg.tcp.max_rto); // RFC 6298 (5.5)
        match self.client {
            Client::SynSent => {
                self.c_retx = true;
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
    fn server_control(&mut self, now: SimTime, ack: u64, f: u8, ecn: Ecn, out: &mut Vec<Seg>) {
        if f & flags::SYN != 0 {
            match self.state {
                State::Idle => {
                    self.state = State::SynRcvd;
                    self.synack_retx = false;
                    self.send_synack(now, out);
                }
                State::SynRcvd => {
                    // The client sent its SYN again: the SYN/ACK (or the
                    // request) was lost or is late. Answer again.
                    self.synack_retx = true;
                    self.send_synack(now, out);
                }
                State::SynSent | State::Established => {}
            }
            return;
        }
        match self.state {
            State::SynRcvd => {
                self.state = State::Established;
                if !self.synack_retx {
                    self.rtt_sample(now, self.synack_sent_at);
                } else if self.cfg.tcp.syn_loss_cut {
                    // RFC 5681 section 3.1: the SYN/ACK was sent again, so
                    // the initial window is one segment.
                    self.cwnd = 1.0;
                }
                if f & flags::ECE != 0 && self.cfg.tcp.ecn {
                    // RFC 5562 section 3.2: a CE-marked SYN/ACK leaves an
                    // initial window of one segment.
                    self.cwnd = 1.0;
                    self.stats.ecn_reductions += 1;
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
                self.accept_request(now, out);
            }
            State::Idle | State::SynSent => {}
        }
    }

    /// The SYN/ACK: ECT(0) with ECN+ (`000_0675317d310dd341.txt`), else
    /// not-ECT as RFC 3168 section 6.1.1 has it.
    fn send_synack(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        self.synack_sent_at = now;
        self.stats.synacks_sent += 1;
        let plus = self.cfg.tcp.ecn && self.cfg.tcp.ecn_plus;
        out.push(Seg {
            seq: 0,
            ts: now,
            size: HEADER_BYTES,
            flags: flags::SYN | flags::ACK,
            ecn: if plus { Ecn::Ect0 } else { Ecn::NotEct },
            from_sender: true,
        });
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
        let (n, last) = self.req;
        self.app_limit += n;
        let una = self.snd_una;
        self.short.retain(|&(s, _)| s >= una);
        let wire = HEADER_BYTES + last;
        if wire < self.cfg.tcp.packet_size {
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

    /// Wire bytes of data segment `seq`.
    fn seg_size(&self, seq: u64) -> u32 {
        self.short
            .iter()
            .find(|&&(s, _)| s == seq)
            .map_or(self.cfg.tcp.packet_size, |&(_, w)| w)
    }

    /// Segments the receiver has delivered in order.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// Whether the application stopped and everything it sent is acknowledged.
    pub fn finished(&self) -> bool {
        self.app_limit != u64::MAX && self.snd_una >= self.app_limit
    }

    /// Open the flow: send a SYN, or start sending data at once.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.cfg.handshake {
            self.state = State::SynSent;
            self.send_syn(now, out);
        } else {
            self.state = State::Established;
            self.send_available(now, out);
        }
    }

    fn send_syn(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        self.syn_sent_at = now;
        out.push(Seg {
            seq: 0,
            ts: now,
            size: HEADER_BYTES,
            flags: flags::SYN,
            ecn: Ecn::NotEct, // RFC 3168 section 6.1.1: a SYN is never ECT.
            from_sender: true,
        });
        self.rto_deadline = Some(now + self.rto);
    }

    /// RFC 6298 section 2: update SRTT, RTTVAR and RTO from a sample.
    /// One RTT sample: a segment sent at `sent` acknowledged at `now`.
    fn rtt_sample(&mut self, now: SimTime, sent: SimTime) {
        let r = now - sent;
        self.stats.rtt_sum_s += r.0 as f64 * 1e-9;
        self.stats.rtt_samples += 1;
        let rto = if let Some(tick) = std::num::NonZeroU64::new(self.cfg.tcp.clock_tick.0) {
            // A clock that ticks every `tick`: the sample is the number of
            // ticks that passed while the segment was out (at least one),
            // and Jacobson's estimator runs in scaled integers.
            let ticks = (((sent.0 % tick) + r.0) / tick).max(1) as i64;
            let tick = tick.get();
            if self.has_rtt {
                let err = ticks - (self.srtt8 >> 3);
                self.srtt8 = (self.srtt8 + err).max(1);
                self.rttvar4 = (self.rttvar4 + err.abs() - (self.rttvar4 >> 2)).max(1);
            } else {
                self.srtt8 = ticks << 3;
                self.rttvar4 = ticks << 1;
                self.has_rtt = true;
            }
            self.srtt_ns = self.srtt8 as f64 / 8.0 * tick as f64;
            self.rttvar_ns = self.rttvar4 as f64 / 4.0 * tick as f64;
            // srtt + 4 rttvar, in whole ticks.
            let rto_ticks = ((self.rttvar4 << 3) + self.srtt8) >> 3;
            SimTime::from_nanos((rto_ticks as u64).saturating_mul(tick))
        } else {
            let r = r.0 as f64;
            if self.has_rtt {
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (self.srtt_ns - r).abs();
                self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * r;
            } else {
                self.srtt_ns = r;
                self.rttvar_ns = r / 2.0;
                self.has_rtt = true;
            }
            SimTime::from_nanos((self.srtt_ns + 4.0 * self.rttvar_ns).round() as u64)
        };
        self.rto = rto.clamp(self.cfg.tcp.min_rto, self.cfg.tcp.max_rto);
    }

    fn window(&self) -> u64 {
        // `as` rounds toward zero and saturates (NaN and negatives to 0), which
        // for cwnd >= 0 is the floor, without a call into libm per packet.
        (self.cwnd as u64).clamp(1, self.cfg.tcp.rwnd as u64)
    }

    fn data_seg(&mut self, seq: u64, now: SimTime) -> Seg {
        let mut f = flags::DATA;
        let retx = seq < self.snd_max;
        if retx {
            f |= flags::RETX;
            self.stats.retransmits += 1;
            if self.rtt_seq == Some(seq) {
                self.rtt_seq = None; // Karn: its ACK would be ambiguous
            }
        } else if self.rtt_seq.is_none() && !self.in_recovery {
            // Segments sent during recovery are acknowledged only once the
            // holes are filled: their delay is not the path's.
            self.rtt_seq = Some(seq);
            self.rtt_start = now;
        }
        if self.cwr_pending && !retx {
            f |= flags::CWR;
            self.cwr_pending = false;
        }
        self.stats.data_sent += 1;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto); // RFC 6298 (5.1)
        }
        Seg {
            seq,
            ts: now,
            size: if self.short.is_empty() {
                self.cfg.tcp.packet_size
            } else {
                self.seg_size(seq)
            },
            flags: f,
            // RFC 3168 section 6.1.5: a retransmission is not ECT (ns-2
            // sends it ECT: `tcp.ect_retransmits`).
            ecn: if self.cfg.tcp.ecn && (!retx || self.cfg.tcp.ect_retransmits) {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            },
            from_sender: true,
        }
    }

    /// Send what the window allows.
    fn send_available(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.ecn_hold {
            return;
        }
        let limit = (self.snd_una + self.window()).min(self.app_limit);
        while self.snd_nxt < limit {
            let s = self.data_seg(self.snd_nxt, now);
            out.push(s);
            self.snd_nxt += 1;
            if self.snd_nxt > self.snd_max {
                self.snd_max = self.snd_nxt;
            }
        }
    }

    fn retransmit_una(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        let s = self.data_seg(self.snd_una, now);
        out.push(s);
    }

    fn halve(&mut self) -> f64 {
        // RFC 5681 eq. (4); segments sent by limited transmit are not part
        // of FlightSize here (RFC 5681 section 3.2 step 2, RFC 3042).
        let flight = self.outstanding().saturating_sub(self.lt_sent) as f64;
        match self.cfg.tcp.loss_ssthresh {
            LossSsthresh::Flight => (flight / 2.0).max(2.0),
            // The window before recovery's inflation: a timeout that ends a
            // fast recovery would otherwise count the segments the inflated
            // window let out as part of the flight, and set ssthresh above
            // the value the recovery had already halved to.
            LossSsthresh::Window => (flight.min(self.uninflated().floor()) / 2.0).max(2.0),
            // ns-2's `ssthresh_` is an integer: (int) (windowd() / 2), at least 2.
            LossSsthresh::Ns2 => (self.ns2_window() / 2.0).floor().max(2.0),
        }
    }

    /// The window without fast recovery's inflation.
    fn uninflated(&self) -> f64 {
        if self.in_recovery {
            self.exit_cwnd
        } else {
            self.cwnd
        }
    }

    /// ns-2's `windowd()`: its `cwnd_` (never inflated) bounded by the
    /// receiver's window.
    fn ns2_window(&self) -> f64 {
        self.uninflated().min(f64::from(self.cfg.tcp.rwnd))
    }

    /// RFC 3042 limited transmit: on the first and second duplicate ACK,
    /// one new segment if the receiver's window and the data allow and the
    /// flight stays within cwnd + 2 segments.
    fn limited_transmit(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        // RFC 3042 sends new data only; ns-2 (`"next"`) the next segment in
        // sequence, which after a timeout's go-back-N was sent before.
        let old_too = self.cfg.tcp.limited_transmit_sends == LimitedTransmitSends::Next;
        if !self.cfg.tcp.limited_transmit
            || self.ecn_hold
            || (self.snd_nxt != self.snd_max && !old_too)
        {
            return;
        }
        let cap = (self.snd_una + self.window() + u64::from(self.dupacks))
            .min(self.snd_una + u64::from(self.cfg.tcp.rwnd))
            .min(self.app_limit);
        if self.snd_nxt < cap {
            let s = self.data_seg(self.snd_nxt, now);
            out.push(s);
            self.snd_nxt += 1;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            self.lt_sent += 1;
        }
    }

    /// An ACK (or SYN/ACK) reaches the sender.
    pub fn on_ack(&mut self, now: SimTime, ack: u64, f: u8, ecn: Ecn, out: &mut Vec<Seg>) {
        if self.cfg.passive && f & (flags::SYN | flags::REQ) != 0 {
            self.server_control(now, ack, f, ecn, out);
            return;
        }
        match self.state {
            State::Idle | State::SynRcvd => return,
            State::SynSent => {
                if f & flags::SYN != 0 {
                    if ecn == Ecn::Ce {
                        self.stats.synack_marks += 1;
                    }
                    self.state = State::Established;
                    if !self.syn_retx {
                        self.rtt_sample(now, self.syn_sent_at);
                    }
                    self.rto = if self.has_rtt {
                        self.rto
                    } else {
                        self.cfg.tcp.initial_rto
                    };
                    self.rto_deadline = None;
                    if self.syn_retx && self.cfg.tcp.syn_loss_cut {
                        // RFC 5681 section 3.1: after a lost SYN (or
                        // SYN/ACK) the initial window is one segment, and
                        // the SYN's timeout set ssthresh by eq. (4): with no
                        // data in flight, two segments (ns-2's `timeout()`).
                        self.cwnd = 1.0;
                        self.ssthresh = 2.0;
                    }
                    if ecn == Ecn::Ce && self.cfg.tcp.ecn {
                        // RFC 5562 section 3.2: a congestion-marked SYN/ACK
                        // leaves an initial window of one segment.
                        self.cwnd = 1.0;
                        self.stats.ecn_reductions += 1;
                    }
                    self.send_available(now, out);
                }
                return;
            }
            State::Established => {
                if f & flags::SYN != 0 {
                    return; // a duplicate SYN/ACK
                }
            }
        }
        let ece = f & flags::ECE != 0 && self.cfg.tcp.ecn;
        if ece && !self.in_recovery && self.snd_una >= self.ecn_recover {
            // RFC 3168 section 6.1.2: halve at most once per window of data,
            // like a loss but down to one segment. An ECE that finds a
            // one-segment window (cwnd in [1, 2)) resets the retransmission
            // timer, and new data waits for it to expire; with
            // `ecn_backoff` (ns-2's `ecn_backoff_`) a second such ECE in a
            // row doubles the timer first.
            if self.cwnd < 2.0 {
                if self.cfg.tcp.ecn_backoff && self.ecn_backoff_on {
                    self.rto = (self.rto + self.rto).min(self.cfg.tcp.max_rto);
                }
                self.ecn_backoff_on = true;
                self.ecn_hold = true;
                self.rto_deadline = Some(now + self.rto);
            } else {
                self.ecn_backoff_on = false;
            }
            self.ssthresh = (self.outstanding() as f64 / 2.0).max(1.0);
            self.cwnd = self.ssthresh;
            self.ecn_recover = self.snd_max;
            self.recover = self.snd_max;
            self.last_cut = Cut::Ecn;
            self.cwr_pending = true;
            self.stats.ecn_reductions += 1;
        } else if !ece {
            self.ecn_backoff_on = false;
        }
        if ack > self.snd_una {
            let newly = ack - self.snd_una;
            if self.rtt_seq.is_some_and(|s| ack > s) {
                self.rtt_seq = None;
                let backed_off = self.rto;
                self.rtt_sample(now, self.rtt_start);
                if ece && self.ecn_backoff_on && self.cfg.tcp.ecn_backoff {
                    // ns-2 keeps the backoff while ECN-Echo goes on at one
                    // segment.
                    self.rto = self.rto.max(backed_off);
                }
            }
            self.prev_una = self.snd_una;
            self.lt_sent = 0;
            self.snd_una = ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if self.in_recovery {
                match self.cfg.tcp.variant {
                    TcpVariant::Reno => {
                        self.cwnd = self.exit_cwnd;
                        self.in_recovery = false;
                        self.dupacks = 0;
                    }
                    TcpVariant::NewReno => {
                        if ack >= self.recover {
                            // RFC 6582 3.2 step 3, option (1) or (2).
                            let flight = self.outstanding() as f64;
                            self.cwnd = match self.cfg.tcp.recovery_exit {
                                RecoveryExit::Flight => self.exit_cwnd.min(flight.max(1.0) + 1.0),
                                RecoveryExit::Ssthresh => self.exit_cwnd,
                            };
                            self.in_recovery = false;
                            self.dupacks = 0;
                        } else {
                            // Partial ACK: retransmit the next hole, deflate
                            // (RFC 6582 section 3.2 step 5). By default only
                            // the first partial ACK re-arms the timer (the
                            // "Impatient" variant of RFC 3782 section 4, as
                            // RFC 6582 step 5 and ns-2 have it), so a window
                            // with many losses ends in a timeout instead of
                            // one hole repaired per round trip for minutes;
                            // `partial_ack_timer = "every"` re-arms it on
                            // each ("Slow-but-Steady").
                            self.retransmit_una(now, out);
                            self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                            if !self.partial_seen
                                || self.cfg.tcp.partial_ack_timer == PartialAckTimer::Every
                            {
                                self.partial_seen = true;
                                self.rto_deadline = Some(now + self.rto);
                            }
                            self.send_available(now, out);
                            return;
                        }
                    }
                }
            } else {
                self.dupacks = 0;
                // RFC 3168 section 6.1.2: an ACK carrying ECN-Echo does not
                // open the window (ns-2 and Linux refuse too).
                if !ece {
                    if self.cwnd < self.ssthresh {
                        self.cwnd += 1.0; // slow start
                    } else {
                        self.cwnd += 1.0 / self.cwnd; // congestion avoidance
                    }
                }
            }
            // RFC 6298 (5.2), (5.3); an ECN hold keeps its timer.
            self.rto_deadline = if self.snd_una >= self.snd_max && !self.ecn_hold {
                None
            } else if self.ecn_hold && self.snd_una >= self.snd_max {
                self.rto_deadline
            } else {
                Some(now + self.rto)
            };
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += 1.0; // inflate
            } else if self.dupacks == 3 {
                // A loss in the window an ECN reduction already answered
                // is repaired without halving again (RFC 3168 section
                // 6.1.2: one reduction per window for marks and losses).
                let after_ecn = self.last_cut == Cut::Ecn && ack < self.recover;
                let may_enter = match self.cfg.tcp.variant {
                    TcpVariant::Reno => true,
                    // RFC 6582 section 3.2 step 2: the ACK must cover more
                    // than the highest segment sent at the last loss or
                    // timeout (`recover` - 1), so `ack > recover`; an ACK
                    // for just that segment, as the duplicates go-back-N's
                    // resent segments draw after a timeout, is not enough
                    // (ns-2: `highest_ack_ > recover_`). After an ECN
                    // reduction, an ACK for all the data outstanding then
                    // (`ack >= recover`) starts a new window (RFC 3168
                    // section 6.1.2). Before any event (`recover` = 0, RFC
                    // 6582's initial send sequence) a loss of the first
                    // segment is retransmitted too, as ns-2's `bugfix_ss_`
                    // does. Section 4.2's ACK heuristic as a switch.
                    TcpVariant::NewReno => {
                        ack > self.recover
                            || (self.last_cut == Cut::Ecn && ack == self.recover)
                            || self.recover == 0
                            || after_ecn
                            || (self.cfg.tcp.ack_heuristic
                                && self.cwnd > 1.0
                                && ack - self.prev_una <= 4)
                    }
                };
                if may_enter {
                    let halve = self.cfg.tcp.dupack_halving && !after_ecn;
                    if halve {
                        // ns-2 sets `cwnd_` to half its window, unrounded,
                        // when it retransmits; recovery leaves with that.
                        let half = self.ns2_window() / 2.0;
                        self.ssthresh = self.halve();
                        self.exit_cwnd = match self.cfg.tcp.loss_ssthresh {
                            LossSsthresh::Ns2 => half.max(1.0),
                            _ => self.ssthresh,
                        };
                        // RFC 3168 section 6.1.2: CWR after any reduction.
                        self.cwr_pending = self.cfg.tcp.ecn;
                    } else {
                        self.exit_cwnd = self.cwnd;
                    }
                    self.recover = self.snd_max;
                    self.ecn_recover = self.snd_max;
                    self.last_cut = Cut::Loss;
                    self.in_recovery = true;
                    self.ecn_hold = false;
                    self.partial_seen = false;
                    self.rtt_seq = None;
                    self.stats.fast_retransmits += 1;
                    self.retransmit_una(now, out);
                    // The timer restarts with the fast retransmission (as
                    // 4.4BSD, ns-2 and Linux do): its ACK needs a round
                    // trip, and a timer armed for an earlier segment would
                    // fire before it could come back.
                    self.rto_deadline = Some(now + self.rto);
                    self.cwnd = self.exit_cwnd + 3.0;
                }
            } else if self.dupacks < 3 {
                self.limited_transmit(now, out);
            }
        }
        self.send_available(now, out);
    }

    /// The retransmission timer expired (the engine checked the deadline).
    pub fn on_rto(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        self.rto_deadline = None;
        if self.ecn_hold {
            self.ecn_hold = false;
            if self.snd_una >= self.snd_max {
                // The hold of RFC 3168 section 6.1.2 ends: one new segment.
                self.send_available(now, out);
                return;
            }
        }
        self.rto = (self.rto + self.rto).min(self.cfg.tcp.max_rto); // RFC 6298 (5.5)
        match self.state {
            State::Idle | State::SynRcvd => {}
            State::SynSent => {
                self.syn_retx = true;
                self.stats.syn_retransmits += 1;
                self.send_syn(now, out);
            }
            State::Established => {
                if self.snd_una >= self.snd_max {
                    return;
                }
                self.stats.timeouts += 1;
                self.rtt_seq = None; // everything outstanding is sent again
                self.lt_sent = 0;
                if !(self.last_cut == Cut::Ecn && self.snd_una < self.recover) {
                    // After an ECN reduction in this window ssthresh was
                    // already halved for it (RFC 3168 section 6.1.2).
                    self.ssthresh = self.halve();
                }
                self.last_cut = Cut::Timeout;
                self.cwr_pending = self.cfg.tcp.ecn;
                self.cwnd = 1.0;
                self.recover = self.snd_max;
                self.ecn_recover = self.snd_max;
                self.in_recovery = false;
                self.dupacks = 0;
                self.snd_nxt = self.snd_una; // go back N
                self.send_available(now, out);
                self.rto_deadline = Some(now + self.rto);
            }
        }
    }

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
        if f & flags::REQ != 0 {
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
            let plus = self.cfg.tcp.ecn && self.cfg.tcp.ecn_plus;
            self.stats.synacks_sent += 1;
            out.push(Seg {
                seq: 0,
                ts,
                size: HEADER_BYTES,
                flags: flags::SYN | flags::ACK,
                ecn: if plus { Ecn::Ect0 } else { Ecn::NotEct },
                from_sender: false,
            });
            return;
        }
        self.stats.data_arrived += 1;
        if f & flags::CWR != 0 {
            self.ece_pending = false;
        }
        if ecn == Ecn::Ce {
            self.stats.marks_seen += 1;
            if self.cfg.tcp.ecn {
                self.ece_pending = true;
            }
        }
        let retx = f & flags::RETX != 0;
        let mut immediate = !self.cfg.tcp.delayed_ack;
        if seq == self.rcv_nxt {
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
                immediate = true; // filled (part of) a hole: RFC 5681 section 4.2
            }
        } else {
            immediate = true; // out of order or duplicate
            if seq > self.rcv_nxt {
                let idx = (seq - self.rcv_nxt) as usize;
                if self.ooo.len() <= idx {
                    self.ooo.resize(idx + 1, false);
                }
                self.ooo[idx] = true;
            }
        }
        self.last_ts = ts;
        self.last_retx = retx;
        if !immediate {
            self.delack_count += 1;
            if self.delack_count >= 2 {
                immediate = true;
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.cfg.tcp.delack_timeout);
            }
        }
        if immediate {
            self.send_ack(out);
        }
    }

    fn send_ack(&mut self, out: &mut Vec<Seg>) {
        self.delack_count = 0;
        self.delack_deadline = None;
        let mut f = flags::ACK;
        if self.ece_pending {
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
            ecn: Ecn::NotEct, // RFC 3168 section 6.1.4: pure ACKs are not ECT
            from_sender: false,
        });
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, _now: SimTime, out: &mut Vec<Seg>) {
        if self.delack_count > 0 {
            self.send_ack(out);
        }
        self.delack_deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(variant: TcpVariant) -> TcpConfig {
        TcpConfig::from_spec(
            &TcpSpec {
                variant,
                initial_cwnd: 1,
                ..TcpSpec::default()
            },
            false,
            true,
        )
    }

    /// Deliver every data segment in `out` to `rx` and return the ACKs.
    fn deliver(rx: &mut TcpFlow, out: &[Seg], skip: &[u64]) -> Vec<Seg> {
        let mut acks = Vec::new();
        for s in out
            .iter()
            .filter(|s| s.from_sender && !skip.contains(&s.seq))
        {
            rx.on_data(SimTime(0), s.seq, s.flags, s.ecn, s.ts, &mut acks);
        }
        acks
    }

    #[test]
    fn slow_start_doubles_per_round() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut rx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        assert_eq!(out.len(), 1);
        for round in 1..5 {
            let acks = deliver(&mut rx, &out, &[]);
            out.clear();
            for a in &acks {
                tx.on_ack(SimTime(round * 100), a.seq, a.flags, a.ecn, &mut out);
            }
            assert_eq!(tx.cwnd, (1u64 << round) as f64);
            assert_eq!(out.len(), 1 << round);
        }
    }

    #[test]
    fn newreno_recovers_two_losses_without_timeout() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::NewReno));
        tx.cwnd = 10.0;
        tx.ssthresh = 10.0;
        let mut rx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        assert_eq!(out.len(), 10);
        // Segments 2 and 5 are lost.
        let acks = deliver(&mut rx, &out, &[2, 5]);
        out.clear();
        for a in &acks {
            tx.on_ack(SimTime(1), a.seq, a.flags, a.ecn, &mut out);
        }
        assert!(tx.in_recovery);
        assert_eq!(tx.ssthresh, 5.0);
        assert_eq!(tx.stats.fast_retransmits, 1);
        assert!(out.iter().any(|s| s.seq == 2 && s.flags & flags::RETX != 0));
        // The retransmission of 2 yields a partial ACK (for 5), which retransmits 5.
        let acks = deliver(&mut rx, &out, &[]);
        out.clear();
        for a in &acks {
            tx.on_ack(SimTime(2), a.seq, a.flags, a.ecn, &mut out);
        }
        assert!(out.iter().any(|s| s.seq == 5 && s.flags & flags::RETX != 0));
        let acks = deliver(&mut rx, &out, &[]);
        out.clear();
        for a in &acks {
            tx.on_ack(SimTime(3), a.seq, a.flags, a.ecn, &mut out);
        }
        assert!(!tx.in_recovery);
        assert_eq!(tx.stats.timeouts, 0);
        // Out of recovery at ssthresh = 5, grown since by at most one ACK round.
        assert!(tx.cwnd < 7.0, "{}", tx.cwnd);
    }

    #[test]
    fn ecn_echo_until_cwr_and_one_reduction_per_window() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::NewReno));
        tx.cwnd = 8.0;
        tx.ssthresh = 8.0;
        let mut rx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        assert!(out.iter().all(|s| s.ecn == Ecn::Ect0));
        // Two packets of the window carry CE.
        for s in out.iter_mut().filter(|s| s.seq == 1 || s.seq == 3) {
            s.ecn = Ecn::Ce;
        }
        let acks = deliver(&mut rx, &out, &[]);
        assert!(acks[0].flags & flags::ECE == 0);
        assert!(acks[1..].iter().all(|a| a.flags & flags::ECE != 0));
        assert!(acks.iter().all(|a| a.ecn == Ecn::NotEct));
        out.clear();
        for a in &acks {
            tx.on_ack(SimTime(1), a.seq, a.flags, a.ecn, &mut out);
        }
        assert_eq!(tx.stats.ecn_reductions, 1);
        assert_eq!(rx.stats.marks_seen, 2);
        // The first new segment carries CWR, after which the receiver stops echoing.
        let cwr: Vec<&Seg> = out.iter().filter(|s| s.flags & flags::CWR != 0).collect();
        assert_eq!(cwr.len(), 1);
        let acks = deliver(&mut rx, &out, &[]);
        let first_cwr = out.iter().position(|s| s.flags & flags::CWR != 0).unwrap();
        assert!(acks[first_cwr..].iter().all(|a| a.flags & flags::ECE == 0));
    }

    /// Passive open: the client's SYN goes on the ACK route, the SYN/ACK
    /// is ECT(0) only with ECN+, a CE-marked SYN/ACK is echoed and leaves
    /// the server a window of 1 (RFC 5562), the request starts the
    /// response (last segment short), a copy of it is ignored, and a lost
    /// SYN is sent again after `initial_rto`.
    /// A web flow's TCP: 1000-byte segments, ECN and ECN+.
    fn ecn_plus_spec(initial_cwnd: u32) -> TcpSpec {
        TcpSpec {
            packet_size: 1040,
            initial_cwnd,
            ecn: true,
            ecn_plus: true,
            ..TcpSpec::default()
        }
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
                syn_loss_cut: cut,
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
        for (cut, want) in [(true, 1.0), (false, 4.0)] {
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
            let synack = out[0];
            out.clear();
            fl.on_data(t(3100), 0, synack.flags, Ecn::NotEct, synack.ts, &mut out);
            let req = out[0];
            out.clear();
            fl.on_ack(t(3150), req.seq, req.flags, req.ecn, &mut out);
            assert_eq!(fl.cwnd, want, "cut {cut}");
            assert_eq!(out.len(), want as usize);
        }
    }

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

    /// RFC 3168 section 6.1.2: an ECE halves the window down to one segment
    /// (not two as after a loss); an ECE at one segment resets the timer and
    /// new data waits for it to expire, without a timeout being counted.
    #[test]
    fn ecn_window_reaches_one_segment_then_waits_for_the_timer() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out); // one segment (initial window 1)
        assert_eq!(out.len(), 1);
        out.clear();
        // Its ACK echoes congestion: flight 1 -> cwnd max(1/2, 1) = 1, and
        // cwnd was already 1, so the sender holds.
        tx.on_ack(
            SimTime(100),
            1,
            flags::ACK | flags::ECE,
            Ecn::NotEct,
            &mut out,
        );
        assert_eq!(tx.cwnd, 1.0);
        assert!(out.is_empty(), "no new data during the hold");
        let deadline = tx.rto_deadline.expect("timer reset for the hold");
        tx.on_rto(deadline, &mut out);
        assert_eq!(out.len(), 1, "one new segment when the timer expires");
        assert_eq!(out[0].seq, 1);
        assert_eq!(tx.stats.timeouts, 0);
        assert_eq!(tx.stats.ecn_reductions, 1);
    }

    #[test]
    fn rto_per_rfc6298_and_backoff() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::Reno));
        assert_eq!(tx.rto, SimTime::from_secs(3));
        tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        // RTO = 100 + 4 * 50 = 300 ms.
        assert_eq!(tx.rto, SimTime::from_millis(300));
        tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        // RTTVAR = 0.75 * 50 = 37.5; RTO = 100 + 150 = 250 ms.
        assert_eq!(tx.rto, SimTime::from_millis(250));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        tx.on_rto(SimTime::from_millis(250), &mut out);
        assert_eq!(tx.rto, SimTime::from_millis(500));
        assert_eq!(tx.stats.timeouts, 1);
        assert_eq!(tx.cwnd, 1.0);
    }

    /// `tcp.clock_tick`: the RTT counts whole ticks of the sender's clock
    /// (the tick boundaries crossed while the segment was out) and
    /// Jacobson's estimator runs in eighths / quarters of a tick.
    #[test]
    fn clock_tick_times_in_whole_ticks() {
        let tcp = TcpSpec {
            clock_tick: SimTime::from_millis(10),
            ..TcpSpec::default()
        };
        let mut tx = TcpFlow::new(TcpConfig::from_spec(&tcp, false, false));
        // 100 ms from a tick boundary: 10 ticks; srtt 10, rttvar 5 ticks,
        // RTO 10 + 4 x 5 = 30 ticks.
        tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        assert_eq!(tx.rto, SimTime::from_millis(300));
        // 99 ms sent 5 ms after a tick: 10 boundaries crossed, no error;
        // rttvar4 = 20 - 20 / 4 = 15, RTO = (15 x 8 + 80) / 8 = 25 ticks.
        tx.rtt_sample(SimTime::from_millis(104), SimTime::from_millis(5));
        assert_eq!(tx.rto, SimTime::from_millis(250));
        // 9 ms sent just before a boundary crosses one tick: never zero.
        tx.rtt_sample(SimTime::from_millis(118), SimTime::from_millis(109));
        assert!(tx.srtt_ns > 0.0);
        // The same samples on the exact clock give RFC 6298's values.
        let mut exact = TcpFlow::new(TcpConfig::from_spec(&TcpSpec::default(), false, false));
        exact.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        exact.rtt_sample(SimTime::from_millis(104), SimTime::from_millis(5));
        // RTTVAR = 0.75 x 50 + 0.25 x 1 = 37.75, SRTT = 99.875: 250.875 ms.
        assert_eq!(exact.rto, SimTime::from_nanos(250_875_000));
    }

    /// `tcp.loss_ssthresh`: a timeout that ends a fast recovery halves the
    /// flight (which the inflated window let grow) with `"flight"`, and the
    /// window the recovery started from with `"window"` (ns-2's `cwnd_`).
    #[test]
    fn loss_ssthresh_flight_or_window_after_a_timeout_in_recovery() {
        let mut got = Vec::new();
        for how in [LossSsthresh::Flight, LossSsthresh::Window] {
            let tcp = TcpSpec {
                loss_ssthresh: how,
                limited_transmit: false,
                ..TcpSpec::default()
            };
            let (mut tx, _) = sender(20.0, tcp);
            // Segment 0 lost: three duplicate ACKs, then 17 more inflate
            // the window and let new segments out.
            for _ in 0..20 {
                ack(&mut tx, 100, 0, false);
            }
            assert!(tx.in_recovery);
            assert_eq!(tx.ssthresh, 10.0);
            assert!(tx.outstanding() > 20, "the inflation sent new data");
            let flight = tx.outstanding() as f64;
            let mut out = Vec::new();
            let deadline = tx.rto_deadline.unwrap();
            tx.on_rto(deadline, &mut out);
            assert_eq!(tx.stats.timeouts, 1);
            got.push((tx.ssthresh, flight));
        }
        let ((ss_flight, flight), (ss_window, _)) = (got[0], got[1]);
        assert_eq!(ss_flight, flight / 2.0);
        assert_eq!(ss_window, 5.0, "half the window of 10 the recovery left");
    }

    /// `tcp.loss_ssthresh = "ns2"`: ns-2.35's cut of a window of 21.5
    /// segments (its `cwnd_` trace shows 20.649 -> 10.325, ssthresh 10):
    /// ssthresh floor(21.5 / 2) = 10, recovery left at 10.75 unrounded,
    /// where `"window"` halves the whole segments (10.5 for both); a timeout
    /// in the recovery halves 10.75 again, to 5.
    #[test]
    fn loss_ssthresh_ns2_cuts_as_ns2() {
        let run = |how: LossSsthresh, timeout: bool| {
            let tcp = TcpSpec {
                loss_ssthresh: how,
                recovery_exit: RecoveryExit::Ssthresh,
                limited_transmit: false,
                ..TcpSpec::default()
            };
            let mut tx = TcpFlow::new(TcpConfig::from_spec(&tcp, false, false));
            tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
            tx.cwnd = 21.5;
            tx.ssthresh = 21.5;
            tx.start(SimTime(0), &mut Vec::new());
            for _ in 0..3 {
                ack(&mut tx, 100, 0, false);
            }
            assert!(tx.in_recovery);
            let ssthresh = tx.ssthresh;
            if timeout {
                let deadline = tx.rto_deadline.unwrap();
                tx.on_rto(deadline, &mut Vec::new());
                return (ssthresh, tx.ssthresh);
            }
            // The retransmission fills the only hole: all 21 acknowledged.
            ack(&mut tx, 200, 21, false);
            assert!(!tx.in_recovery);
            (ssthresh, tx.cwnd)
        };
        assert_eq!(run(LossSsthresh::Ns2, false), (10.0, 10.75));
        assert_eq!(run(LossSsthresh::Window, false), (10.5, 10.5));
        assert_eq!(run(LossSsthresh::Ns2, true), (10.0, 5.0));
        assert_eq!(run(LossSsthresh::Window, true), (10.5, 5.0));
    }

    /// `tcp.recovery_exit`: a full ACK ends NewReno's recovery with
    /// min(ssthresh, max(FlightSize, 1) + 1) = 2 here (RFC 6582 option 1) or ssthresh
    /// (option 2, ns-2).
    #[test]
    fn recovery_exit_flight_or_ssthresh() {
        for (how, want) in [(RecoveryExit::Flight, 2.0), (RecoveryExit::Ssthresh, 5.0)] {
            let tcp = TcpSpec {
                recovery_exit: how,
                limited_transmit: false,
                ..TcpSpec::default()
            };
            let (mut tx, _) = sender(10.0, tcp);
            for _ in 0..3 {
                ack(&mut tx, 100, 0, false);
            }
            assert!(tx.in_recovery);
            // The retransmission fills the only hole: everything is acknowledged.
            ack(&mut tx, 200, 10, false);
            assert!(!tx.in_recovery);
            assert_eq!(tx.cwnd, want, "{how:?}");
        }
    }

    const MS: u64 = 1_000_000;

    /// A NewReno sender with `cwnd = ssthresh = w`, an RTT estimate of
    /// 100 ms (RTO 300 ms) and `w` segments (0..w) sent at time 0.
    fn sender(w: f64, tcp: TcpSpec) -> (TcpFlow, Vec<Seg>) {
        let mut tx = TcpFlow::new(TcpConfig::from_spec(&tcp, false, tcp.ecn));
        tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        tx.cwnd = w;
        tx.ssthresh = w;
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        assert_eq!(out.len(), w as usize);
        (tx, out)
    }

    fn spec() -> TcpSpec {
        TcpSpec {
            ecn: true,
            ..TcpSpec::default()
        }
    }

    fn ack(tx: &mut TcpFlow, t_ms: u64, a: u64, ece: bool) -> Vec<Seg> {
        let mut out = Vec::new();
        let f = if ece {
            flags::ACK | flags::ECE
        } else {
            flags::ACK
        };
        tx.on_ack(SimTime(t_ms * MS), a, f, Ecn::NotEct, &mut out);
        out
    }

    /// Issue 10 A1: the fast retransmission restarts the retransmission
    /// timer (4.4BSD, ns-2, Linux), so the timer armed for segment 0 at
    /// time 0 cannot fire before the retransmission's ACK can return.
    #[test]
    fn fast_retransmit_restarts_the_timer() {
        let (mut tx, _) = sender(10.0, spec());
        assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(300)));
        // Segment 0 is lost; three duplicate ACKs (for 0) at 250 ms.
        for _ in 0..2 {
            ack(&mut tx, 250, 0, false);
        }
        let out = ack(&mut tx, 250, 0, false);
        assert!(out.iter().any(|s| s.seq == 0 && s.flags & flags::RETX != 0));
        assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(550)));
    }

    /// RFC 3042: the first and second duplicate ACK each send one new
    /// segment, cwnd unchanged; those segments are left out of the
    /// FlightSize that sets ssthresh (RFC 5681 section 3.2 step 2). Off
    /// with `limited_transmit = false`.
    #[test]
    fn limited_transmit_sends_one_new_segment_per_early_dupack() {
        let (mut tx, _) = sender(10.0, spec());
        let o1 = ack(&mut tx, 100, 0, false);
        assert_eq!(o1.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![10]);
        let o2 = ack(&mut tx, 101, 0, false);
        assert_eq!(o2.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![11]);
        assert_eq!(tx.cwnd, 10.0);
        let o3 = ack(&mut tx, 102, 0, false);
        assert_eq!(o3[0].seq, 0, "fast retransmission");
        assert_eq!(tx.ssthresh, 5.0, "FlightSize 10, not 12");
        let off = TcpSpec {
            limited_transmit: false,
            ..spec()
        };
        let (mut tx, _) = sender(10.0, off);
        assert!(ack(&mut tx, 100, 0, false).is_empty());
        assert!(ack(&mut tx, 101, 0, false).is_empty());
    }

    /// `limited_transmit_sends`: after a timeout's go-back-N, the early
    /// duplicate ACKs of segments still in flight send nothing under RFC
    /// 3042 (no new data may go while old data is resent); ns-2 (`"next"`)
    /// sends the next segment in sequence, one the receiver may hold
    /// already (seen in ns-2.35's traces: the cause of its retransmissions
    /// exceeding its drops by about one per timeout).
    #[test]
    fn limited_transmit_after_a_timeout_new_or_next() {
        for (how, expect) in [
            (LimitedTransmitSends::New, vec![vec![], vec![]]),
            (LimitedTransmitSends::Next, vec![vec![1], vec![2]]),
        ] {
            let tcp = TcpSpec {
                limited_transmit_sends: how,
                ..spec()
            };
            let (mut tx, _) = sender(4.0, tcp); // 0..3 in flight
            let mut out = Vec::new();
            tx.on_rto(SimTime::from_millis(300), &mut out);
            assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![0]);
            // Segment 0 was lost; 1..3 arrive and are answered with ACK 0.
            let got: Vec<Vec<u64>> = (0..2)
                .map(|t| {
                    ack(&mut tx, 310 + t, 0, false)
                        .iter()
                        .map(|s| s.seq)
                        .collect()
                })
                .collect();
            assert_eq!(got, expect, "{how:?}");
            assert_eq!(tx.snd_max, 4, "{how:?}: nothing new was sent");
            if how == LimitedTransmitSends::Next {
                assert_eq!(tx.stats.retransmits, 3, "0 by the timer, 1 and 2 again");
            }
        }
    }

    /// RFC 3168 section 6.1.2: CWR on the first new segment after any
    /// window reduction, a fast retransmission or a timeout too.
    #[test]
    fn cwr_follows_every_window_reduction() {
        let (mut tx, _) = sender(10.0, spec());
        for t in 0..3 {
            ack(&mut tx, 100 + t, 0, false);
        }
        // Dupacks inflate the window until new data may go; the first new
        // segment carries CWR, the retransmission does not.
        let mut sent = Vec::new();
        for t in 0..8 {
            sent.extend(ack(&mut tx, 110 + t, 0, false));
        }
        let first_new = sent.iter().find(|s| s.flags & flags::RETX == 0).unwrap();
        assert!(first_new.flags & flags::CWR != 0);
        // A timeout, then the go-back-N retransmission and the first new
        // segment after it.
        let (mut tx, _) = sender(4.0, spec());
        let mut out = Vec::new();
        tx.on_rto(SimTime::from_millis(300), &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].flags & flags::CWR == 0, "a retransmission");
        let mut out = Vec::new();
        tx.on_ack(
            SimTime::from_millis(400),
            4,
            flags::ACK,
            Ecn::NotEct,
            &mut out,
        );
        assert!(out[0].flags & flags::CWR != 0, "{:?}", out);
    }

    /// RFC 3168 section 6.1.2: one reduction per window for marks and
    /// losses together. After an ECN halving, a loss in the same window is
    /// retransmitted on three duplicate ACKs without halving again.
    #[test]
    fn loss_in_an_ecn_reduced_window_does_not_halve_again() {
        let (mut tx, _) = sender(16.0, spec());
        // Segment 0 is lost; segment 1 was CE-marked: the first duplicate
        // ACK echoes ECE and halves the window (flight 16 -> 8).
        ack(&mut tx, 100, 0, true);
        assert_eq!((tx.cwnd, tx.ssthresh), (8.0, 8.0));
        ack(&mut tx, 101, 0, true);
        let out = ack(&mut tx, 102, 0, true);
        assert_eq!(out[0].seq, 0);
        assert_eq!(out[0].flags & flags::RETX, flags::RETX);
        assert_eq!(tx.stats.fast_retransmits, 1);
        assert_eq!(tx.ssthresh, 8.0, "no second halving");
        assert_eq!(tx.stats.ecn_reductions, 1);
    }

    /// RFC 3168 section 6.1.2: an ACK carrying ECE does not open the
    /// window, whether or not it is the one that triggered the reduction.
    #[test]
    fn ece_acks_do_not_open_the_window() {
        let (mut tx, _) = sender(8.0, spec());
        ack(&mut tx, 100, 1, true); // the reduction: 8 -> 7 outstanding / 2
        let after_cut = tx.cwnd;
        for a in 2..6 {
            ack(&mut tx, 100 + a, a, true);
        }
        assert_eq!(tx.cwnd, after_cut);
        ack(&mut tx, 110, 6, false);
        assert!(tx.cwnd > after_cut);
    }

    /// The hold of RFC 3168 section 6.1.2 starts at a one-segment window,
    /// cwnd in [1, 2), not only at cwnd <= 1.
    #[test]
    fn ecn_hold_starts_below_two_segments() {
        let (mut tx, _) = sender(1.5, spec());
        let out = ack(&mut tx, 100, 1, true);
        assert!(out.is_empty(), "no new data during the hold");
        assert_eq!(tx.cwnd, 1.0);
        assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(100 + 300)));
    }

    /// ns-2's `ecn_backoff_` (`tcp.ecn_backoff`, on by default): a second
    /// ECE in a row at one segment doubles the timer of the hold; off, the
    /// hold lasts one RTO each time (250 ms after the new RTT sample).
    #[test]
    fn ecn_backoff_doubles_the_hold() {
        for (backoff, second_hold) in [(true, 600), (false, 250)] {
            let tcp = TcpSpec {
                ecn_backoff: backoff,
                ..spec()
            };
            let (mut tx, _) = sender(1.0, tcp);
            ack(&mut tx, 100, 1, true);
            assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(400)));
            let mut out = Vec::new();
            tx.on_rto(SimTime::from_millis(400), &mut out);
            assert_eq!(out.len(), 1, "one new segment after the hold");
            assert_eq!(tx.stats.timeouts, 0);
            // Its ACK echoes ECE again: hold again.
            let out = ack(&mut tx, 500, 2, true);
            assert!(out.is_empty());
            assert_eq!(
                tx.rto_deadline,
                Some(SimTime::from_millis(500 + second_hold)),
                "ecn_backoff = {backoff}"
            );
        }
    }

    /// RFC 3168 section 6.1.5: retransmitted data is not ECT (ns-2 sends
    /// it ECT: `tcp.ect_retransmits = true`).
    #[test]
    fn retransmissions_are_not_ect_unless_asked() {
        for (ect, want) in [(false, Ecn::NotEct), (true, Ecn::Ect0)] {
            let tcp = TcpSpec {
                ect_retransmits: ect,
                ..spec()
            };
            let (mut tx, first) = sender(4.0, tcp);
            assert!(first.iter().all(|s| s.ecn == Ecn::Ect0));
            let mut out = Vec::new();
            tx.on_rto(SimTime::from_millis(300), &mut out);
            assert_eq!(out[0].seq, 0);
            assert_eq!(out[0].ecn, want);
        }
    }

    /// `002_80945567bf68047d.txt` section 5: with `dupack_halving = false`
    /// a loss found by duplicate ACKs is retransmitted without halving;
    /// a mark and a timeout still halve.
    #[test]
    fn wireless_tcp_keeps_its_window_on_duplicate_acks() {
        let tcp = TcpSpec {
            dupack_halving: false,
            limited_transmit: false,
            ..spec()
        };
        let (mut tx, _) = sender(10.0, tcp);
        for t in 0..3 {
            ack(&mut tx, 100 + t, 0, false);
        }
        assert_eq!(tx.stats.fast_retransmits, 1);
        assert_eq!(tx.ssthresh, 10.0);
        // The retransmission is acknowledged with everything: back to 10.
        let mut out = Vec::new();
        tx.on_ack(
            SimTime::from_millis(200),
            10,
            flags::ACK,
            Ecn::NotEct,
            &mut out,
        );
        assert!(!tx.in_recovery);
        assert_eq!(tx.ssthresh, 10.0, "slow start back to the old window");
        // A mark halves.
        let (mut tx, _) = sender(10.0, tcp);
        ack(&mut tx, 100, 1, true);
        assert_eq!(tx.cwnd, 5.0);
        // A timeout halves ssthresh and restarts from one segment.
        let (mut tx, _) = sender(10.0, tcp);
        tx.on_rto(SimTime::from_millis(300), &mut Vec::new());
        assert_eq!((tx.cwnd, tx.ssthresh), (1.0, 5.0));
    }

    /// RFC 3782 section 4's variants: "first" (Impatient, the default)
    /// re-arms the timer on the first partial ACK only; "every"
    /// (Slow-but-Steady) on each.
    #[test]
    fn partial_ack_timer_first_or_every() {
        for (mode, rearmed) in [
            (PartialAckTimer::First, false),
            (PartialAckTimer::Every, true),
        ] {
            let tcp = TcpSpec {
                partial_ack_timer: mode,
                limited_transmit: false,
                ..spec()
            };
            // Segments 0, 3 and 6 lost.
            let (mut tx, _) = sender(10.0, tcp);
            for t in 0..3 {
                ack(&mut tx, 100 + t, 0, false);
            }
            ack(&mut tx, 200, 3, false); // first partial ACK
            assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(500)));
            ack(&mut tx, 300, 6, false); // second partial ACK
            let want = if rearmed { 600 } else { 500 };
            assert_eq!(
                tx.rto_deadline,
                Some(SimTime::from_millis(want)),
                "{mode:?}"
            );
        }
    }

    /// RFC 6582 section 3.2 step 2 after a timeout: duplicate ACKs whose
    /// cumulative ACK only reaches the highest segment sent before the
    /// timeout (`recover` - 1), as the segments go-back-N resends without
    /// need draw them, start no fast retransmission; duplicate ACKs for a
    /// segment sent after the timeout beyond it do.
    #[test]
    fn no_fast_retransmit_until_the_ack_covers_more_than_recover() {
        let tcp = TcpSpec {
            limited_transmit: false,
            ..spec()
        };
        for (hole, fr) in [(8, 0), (9, 1)] {
            let (mut tx, _) = sender(8.0, tcp);
            let mut out = Vec::new();
            tx.on_rto(SimTime::from_millis(300), &mut out); // recover = 8
            assert_eq!(tx.recover, 8);
            // Everything before the timeout arrives: cumulative ACK 8, and
            // slow start sends new segments from 8 on.
            ack(&mut tx, 400, 8, false);
            ack(&mut tx, 401, hole, false);
            // Three duplicates of that ACK.
            for t in 0..3 {
                ack(&mut tx, 500 + t, hole, false);
            }
            assert_eq!(tx.stats.fast_retransmits, fr, "duplicate ACKs for {hole}");
        }
    }

    /// RFC 6582 section 4.1's ACK heuristic (`ack_heuristic`): after a
    /// timeout, three duplicate ACKs below `recover` start a fast
    /// retransmission when the cumulative ACK last advanced by at most four
    /// segments; without it they do not ("careful" rule).
    #[test]
    fn ack_heuristic_after_a_timeout() {
        for (heur, fr) in [(false, 0), (true, 1)] {
            let tcp = TcpSpec {
                ack_heuristic: heur,
                limited_transmit: false,
                ..spec()
            };
            let (mut tx, _) = sender(8.0, tcp);
            tx.on_rto(SimTime::from_millis(300), &mut Vec::new()); // recover = 8
            ack(&mut tx, 400, 1, false); // the retransmission of 0 arrives
            ack(&mut tx, 500, 2, false);
            ack(&mut tx, 501, 3, false); // cwnd grows to 3.x
            for t in 0..3 {
                ack(&mut tx, 600 + t, 3, false); // segment 3 lost again
            }
            assert_eq!(tx.stats.fast_retransmits, fr, "ack_heuristic = {heur}");
        }
    }
}

#[cfg(test)]
mod layout {
    use super::*;
    use std::mem::offset_of;

    /// What every packet reads lies in the first seven cache lines of
    /// its flow: the sender's state with the engine's timers, the
    /// receiver's, the configuration and the per-packet counters (an ACK
    /// reads lines 0-6, a data packet 2-6).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn what_a_packet_reads_is_adjacent() {
        assert_eq!(std::mem::align_of::<TcpFlow>(), 64);
        assert!(offset_of!(TcpFlow, rto_deadline) >= 128);
        assert!(offset_of!(TcpFlow, client_deadline) < 192);
        assert!(offset_of!(TcpFlow, short) < 256);
        assert!(offset_of!(TcpFlow, rcv_nxt) < 256);
        assert!(offset_of!(FlowStats, rtt_samples) < 40);
        assert!(offset_of!(TcpFlow, stats) + 40 <= 7 * 64);
    }
}
