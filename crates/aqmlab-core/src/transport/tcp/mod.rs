//! A one-way TCP connection, packet-level like ns-2's agents: segments are
//! numbered, not bytes; every full data packet is `packet_size` bytes on the
//! wire and carries `packet_size - 40` bytes of payload.
//!
//! Modelled:
//! - Reno and NewReno congestion control (RFC 5681, RFC 6582): slow start
//!   (+1 segment per new ACK), congestion avoidance (+1/cwnd per new ACK),
//!   fast retransmit on the third duplicate ACK, fast recovery with window
//!   inflation; NewReno's partial ACKs and `recover`. CUBIC's window (RFC
//!   9438) and DCTCP's (RFC 8257) with NewReno's recovery; RFC 3465 byte
//!   counting as a switch. TCP Prague (the L4S team's `tcp_prague.c`:
//!   DCTCP's alpha, a fractional window with RTT-independent growth,
//!   ECT(1), always paced). BBR v1 (Linux's `tcp_bbr.c`); pacing at the
//!   sender (Linux's internal pacing and its default rates) and
//!   delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation).
//! - The retransmission timer of RFC 6298: SRTT/RTTVAR, RTO bounds,
//!   exponential backoff; go-back-N after a timeout as ns-2's Reno does. RTT
//!   is timed on one segment per round trip (as BSD and ns-2 do; sampling
//!   every ACK would shrink RTTVAR to nothing and make RTO = SRTT), under
//!   Karn's rule: a timing is abandoned when its segment is retransmitted,
//!   and a backed-off RTO is kept until the next valid sample.
//! - ECN (RFC 3168): ECT(0) data, ECE echoed until CWR, one reduction per
//!   window, CWR on the next new segment; pure ACKs are never ECT. DCTCP
//!   (RFC 8257) and Prague: ECE echoed per CE state (an exact CE count per
//!   ACK), every packet ECT (ECT(0), Prague's ECT(1)) but the connection
//!   set-up.
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
//! - Switches, off by default: SACK (RFC 2018) with RFC 6675's loss
//!   recovery as Linux runs it (`tcp.sack`), RACK-TLP (RFC 8985,
//!   `tcp.rack`), PRR (RFC 6937, `tcp.prr`). Their state is boxed (a
//!   flow's `lr`) and read only when the configuration names them.
//!
//! - RFC 7323 timestamps for RTT measurement (`tcp.timestamps`,
//!   `timestamps.rs`): the packet's send time stands for TSval, the ACK's
//!   echo for TSecr.
//! - Linux's rows of the linux profile (`tcp.profile = "linux"`), each a
//!   switch: its RTT estimator, CUBIC and HyStart, delayed-ACK timer and
//!   quick ACKs, ECN reduction (the CWR state), F-RTO, the undo of a
//!   spurious timeout, D-SACK, the autotuned receive window, PSH and the
//!   TSO deferral. LEDBAT (RFC 6817) as a less-than-best-effort sender.
//!
//! Not modelled: reordering detection, PAWS, Nagle, window scaling, the close handshake's
//! state (the engine sends the teardown's FIN/ACK packets, see `docs/tcp.md`).
//!
//! The files follow the seams of the protocol, each adding the methods of
//! its concern to [`TcpFlow`], which holds both ends of a flow:
//! - `config.rs`: the per-flow configuration ([`TcpConfig`]);
//! - `connection.rs`: opening connections (the SYN exchange, new
//!   connections of a flow, the passive web server and its client);
//! - `sender.rs`: sending data, and the dispatch of an arriving ACK;
//! - `receiver.rs`: taking data and sending ACKs;
//! - `rto.rs`: RTT estimation and the retransmission timer;
//! - `rtt_linux.rs`: Linux's RTT estimator (`tcp.rtt_estimator`);
//! - `delack.rs`: Linux's delayed-ACK timer and quick ACKs
//!   (`tcp.delack_timer`);
//! - `rcvbuf.rs`: the receiver's window with Linux's buffer autotuning
//!   (`tcp.moderate_rcvbuf`);
//! - `timestamps.rs`: RFC 7323's echo rule and the samples its echo
//!   gives (`tcp.timestamps`);
//! - `recovery.rs`: fast retransmit, NewReno's fast recovery, limited
//!   transmit, and PRR in it without SACK;
//! - `sack.rs`: SACK blocks on the wire and at the receiver (RFC 2018);
//! - `scoreboard.rs`: the SACK sender's scoreboard (RFC 6675 section 3);
//! - `sack_recovery.rs`: loss recovery with SACK (RFC 6675, Linux's
//!   `tcp_fastretrans_alert`); `sack_timers.rs`: its flow's one timer,
//!   shared by RTO, probe and reordering timeouts;
//! - `rack.rs`: RACK-TLP (RFC 8985);
//! - `prr.rs`: Proportional Rate Reduction (RFC 6937);
//! - `cwr.rs`: an ECN reduction in Linux's CWR state
//!   (`tcp.ecn_reduction`); `cwnd_use.rs`: whether the window limits the
//!   sender, which Linux asks before it grows it (`tcp.cwnd_validation`);
//! - `frto.rs`: F-RTO (RFC 5682, `tcp.frto`); `undo.rs`: a spurious
//!   timeout undone (`tcp.undo`); `dsack.rs`: D-SACK at the sender (RFC
//!   2883, `tcp.dsack`);
//! - `cc/`: congestion control, the window's growth and cuts, one file per
//!   algorithm (`reno.rs`: Reno's rules, shared by Reno and NewReno, and
//!   byte counting; `cubic.rs` with `hystart.rs` (RFC 9406) and
//!   `hystart_linux.rs` (Linux's); `dctcp.rs`; `prague.rs`; `ledbat.rs`;
//!   `bbr.rs`: BBR v1's model, window and pacing rate);
//! - `pacing.rs`: the release clock of pacing flows (`tcp.pacing`, BBR,
//!   Prague)
//!   and their ACK path;
//! - `rate.rs`: delivery-rate estimation (per-segment send records, a rate
//!   sample per ACK), for pacing flows;
//! - `push.rs`: Linux's TSO/GSO packets of a sender that does not pace and
//!   their PSH (`tcp.psh`); `tso_defer.rs`: Linux's deferral of a packet
//!   the window cannot take whole (`tcp.tso_defer`);
//! - `testing.rs`: the unit tests' helpers.

mod cc;
mod config;
mod connection;
mod cwnd_use;
mod cwr;
mod delack;
mod dsack;
mod frto;
mod pacing;
mod prr;
mod push;
mod rack;
mod rate;
mod rcvbuf;
mod receiver;
mod recovery;
mod reorder;
mod rto;
mod rtt_linux;
mod sack;
mod sack_compress;
mod sack_recovery;
mod sack_timers;
mod scoreboard;
mod sender;
#[cfg(test)]
mod testing;
mod timestamps;
mod tso_defer;
mod undo;

pub use config::{Growth, TcpConfig};
pub use sack::SackBlocks;

use crate::packet::Ecn;
use crate::scenario::HEADER_BYTES;
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
    /// Connections that went without ECN because their SYN was sent again
    /// (`tcp.ecn_fallback`).
    pub ecn_fallbacks: u64,
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
    pub fins_sent: u32,
    pub fin_acks_sent: u32,
    /// Loss recoveries run with SACK (RFC 6675; also counted in
    /// `fast_retransmits`).
    pub sack_recoveries: u64,
    /// Segments RACK marked lost (RFC 8985; a retransmission lost again
    /// counts again).
    pub rack_detections: u64,
    /// Tail loss probes sent (RFC 8985 section 7).
    pub tlp_probes: u64,
    /// Retransmission timeouts undone as spurious (`tcp.undo`).
    pub timeouts_undone: u64,
    /// D-SACKs the sender accepted (`tcp.dsack`; Linux's `TCPDSACKRecv`
    /// and `TCPDSACKOfoRecv` less the dubious ones).
    pub dsacks: u32,
    /// Cuts undone because D-SACKs showed every retransmission since them
    /// needless (`tcp.dsack`; Linux's `TCPDSACKUndo`, `TCPFullUndo` and
    /// `TCPLossUndo` by D-SACK). These two, the next, the pages waited
    /// and the FIN counts are 32 bits, so that a flow's state keeps its
    /// eleven cache lines.
    pub dsack_undos: u32,
    /// Times the sender saw reordering (`tcp.rack`, `reorder.rs`; Linux's
    /// `reord_seen`, `TCPSACKReorder`).
    pub reorderings: u32,
    /// Web sessions with open pages: pages that came while every lane of
    /// the session was busy and waited for one (counted on the session's
    /// first lane, by the engine).
    pub pages_waited: u32,
}

impl FlowStats {
    /// `self + (later - earlier)` field by field (a periodic phase's
    /// counters moved on by a gap between two of its windows). Every field
    /// is named, so a new one is not forgotten.
    pub fn plus_since(&self, later: &FlowStats, earlier: &FlowStats) -> FlowStats {
        let FlowStats {
            data_sent,
            data_arrived,
            segments_delivered,
            rtt_sum_s,
            rtt_samples,
            data_dropped,
            retransmits,
            timeouts,
            fast_retransmits,
            marks_seen,
            ecn_reductions,
            syn_retransmits,
            ecn_fallbacks,
            syn_drops,
            synacks_sent,
            synack_drops,
            synack_marks,
            request_retransmits,
            fins_sent,
            fin_acks_sent,
            pages_waited,
            sack_recoveries,
            rack_detections,
            tlp_probes,
            timeouts_undone,
            dsacks,
            dsack_undos,
            reorderings,
        } = *later;
        FlowStats {
            data_sent: self.data_sent + (data_sent - earlier.data_sent),
            data_arrived: self.data_arrived + (data_arrived - earlier.data_arrived),
            segments_delivered: self.segments_delivered
                + (segments_delivered - earlier.segments_delivered),
            rtt_sum_s: self.rtt_sum_s + (rtt_sum_s - earlier.rtt_sum_s),
            rtt_samples: self.rtt_samples + (rtt_samples - earlier.rtt_samples),
            data_dropped: self.data_dropped + (data_dropped - earlier.data_dropped),
            retransmits: self.retransmits + (retransmits - earlier.retransmits),
            timeouts: self.timeouts + (timeouts - earlier.timeouts),
            fast_retransmits: self.fast_retransmits + (fast_retransmits - earlier.fast_retransmits),
            marks_seen: self.marks_seen + (marks_seen - earlier.marks_seen),
            ecn_reductions: self.ecn_reductions + (ecn_reductions - earlier.ecn_reductions),
            syn_retransmits: self.syn_retransmits + (syn_retransmits - earlier.syn_retransmits),
            ecn_fallbacks: self.ecn_fallbacks + (ecn_fallbacks - earlier.ecn_fallbacks),
            syn_drops: self.syn_drops + (syn_drops - earlier.syn_drops),
            synacks_sent: self.synacks_sent + (synacks_sent - earlier.synacks_sent),
            synack_drops: self.synack_drops + (synack_drops - earlier.synack_drops),
            synack_marks: self.synack_marks + (synack_marks - earlier.synack_marks),
            request_retransmits: self.request_retransmits
                + (request_retransmits - earlier.request_retransmits),
            fins_sent: self.fins_sent + (fins_sent - earlier.fins_sent),
            fin_acks_sent: self.fin_acks_sent + (fin_acks_sent - earlier.fin_acks_sent),
            pages_waited: self.pages_waited + (pages_waited - earlier.pages_waited),
            sack_recoveries: self.sack_recoveries + (sack_recoveries - earlier.sack_recoveries),
            rack_detections: self.rack_detections + (rack_detections - earlier.rack_detections),
            tlp_probes: self.tlp_probes + (tlp_probes - earlier.tlp_probes),
            timeouts_undone: self.timeouts_undone + (timeouts_undone - earlier.timeouts_undone),
            dsacks: self.dsacks + (dsacks - earlier.dsacks),
            dsack_undos: self.dsack_undos + (dsack_undos - earlier.dsack_undos),
            reorderings: self.reorderings + (reorderings - earlier.reorderings),
        }
    }
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

/// The receiver's ECN-Echo state: which rule set ECE, so that the data
/// path tells them apart without reading the variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Echo {
    /// No ECE.
    None,
    /// RFC 3168 section 6.1.3: a CE mark arrived; ECE until CWR.
    UntilCwr,
    /// DCTCP (RFC 8257 section 3.2): `DCTCP.CE` is true, the last data
    /// packet was CE-marked; ECE until an unmarked one.
    Ce,
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
    /// Byte counting's congestion-avoidance counter (Linux's
    /// `snd_cwnd_cnt`): segments acknowledged towards the next +1.
    cwnd_cnt: u32,
    // --- receiver, read on every data packet ---
    rcv_nxt: u64,
    /// `ooo[i]`: segment `rcv_nxt + i` received.
    ooo: VecDeque<bool>,
    pub delack_deadline: Option<SimTime>,
    pub delack_event: Option<SimTime>,
    /// The send time the next ACK echoes: that of the last data packet,
    /// or with `timestamps` RFC 7323's TS.Recent (section 4.3).
    last_ts: SimTime,
    /// Saw a SYN (handshake) or data.
    delack_count: u32,
    /// What the receiver's ACKs echo (ECE or not).
    ece_pending: Echo,
    last_retx: bool,
    /// The ECN field of pure ACKs: not ECT (RFC 3168 section 6.1.4), or
    /// ECT(0) for DCTCP, whose Linux sockets send every packet ECT.
    ack_ecn: Ecn,
    // --- both ends ---
    pub cfg: TcpConfig,
    pub stats: FlowStats,
    // --- connection set-up and the passive (web) ends: rarely read ---
    syn_sent_at: SimTime,
    /// When the last SYN/ACK was sent.
    synack_sent_at: SimTime,
    /// The client's current timeout (backed off) and its value after the
    /// handshake.
    c_rto: SimTime,
    c_rto_base: SimTime,
    c_sent_at: SimTime,
    /// Server of a passive flow: when a data segment was last sent
    /// (Linux's `lsndtime`), for the restart after idle.
    last_sent: SimTime,
    /// The object the pending request asks for: segments and the payload
    /// of the last one.
    req: (u64, u32),
    /// Retransmissions of this connection's SYN, and of its SYN/ACK.
    syn_retx: u8,
    synack_retx: u8,
    /// This connection fell back to not-ECN (`tcp.ecn_fallback`), and
    /// from which variant: the next connection of the flow starts as the
    /// flow was configured.
    fell_back: Option<crate::scenario::TcpVariant>,
    client: Client,
    c_retx: bool,
    /// The client's SYN retransmissions in this connection.
    c_syn_retx: u8,
    /// The SYN/ACK arrived CE-marked: echo ECE on the request (RFC 5562).
    c_ece: bool,
    /// CUBIC's or DCTCP's state (`tcp.variant = "cubic"` or `"dctcp"`;
    /// None otherwise). Read only when the configuration names one of
    /// them, so Reno's ACKs never touch it.
    cc: Option<Box<cc::State>>,
    /// Loss recovery with SACK, RACK-TLP and PRR (`tcp.sack`, `tcp.prr`;
    /// None otherwise). Read only when the configuration names them.
    lr: Option<Box<sack_recovery::Lr>>,
    /// A pacing flow's state (`tcp.pacing`, BBR; None otherwise): the
    /// release clock, the delivery-rate estimator, BBR. Read only when the
    /// configuration says the flow paces.
    pace: Option<Box<pacing::Paced>>,
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
        TcpFlow::fresh(cfg, None)
    }

    /// A flow's state at the start of a connection; a pacing flow reuses
    /// `pace`, the box of its previous connection, if given.
    fn fresh(cfg: TcpConfig, pace: Option<Box<pacing::Paced>>) -> TcpFlow {
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
            last_sent: SimTime::ZERO,
            rto: cfg.tcp.initial_rto,
            rto_deadline: None,
            rto_event: None,
            syn_sent_at: SimTime::ZERO,
            syn_retx: 0,
            fell_back: None,
            synack_sent_at: SimTime::ZERO,
            synack_retx: 0,
            short: Vec::new(),
            client: Client::Idle,
            client_deadline: None,
            c_rto: cfg.tcp.initial_rto,
            c_rto_base: cfg.tcp.initial_rto,
            c_sent_at: SimTime::ZERO,
            c_retx: false,
            c_syn_retx: 0,
            c_ece: false,
            req: (0, 0),
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            ece_pending: Echo::None,
            delack_count: 0,
            delack_deadline: None,
            delack_event: None,
            last_ts: SimTime::ZERO,
            last_retx: false,
            ack_ecn: if cfg.tcp.variant.scalable() && cfg.tcp.ecn {
                cfg.tcp.ecn_codepoint.ecn()
            } else {
                Ecn::NotEct
            },
            stats: FlowStats::default(),
            cwnd_cnt: 0,
            cc: cc::State::of(&cfg.tcp).map(Box::new),
            lr: (cfg.tcp.sack || cfg.tcp.prr).then(|| Box::new(sack_recovery::Lr::new(&cfg.tcp))),
            pace: cfg
                .tcp
                .pacing
                .then(|| TcpFlow::paced_state(cfg.tcp.variant, cfg.tcp.tso(), pace)),
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
        u32::from(self.cfg.tcp.packet_size) - HEADER_BYTES
    }

    /// Segments the receiver has delivered in order.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// Whether the sender is in fast recovery (NewReno's or SACK's).
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// Oldest unacknowledged segment, and one past the highest sent.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// Whether the application stopped and everything it sent is acknowledged.
    pub fn finished(&self) -> bool {
        self.app_limit != u64::MAX && self.snd_una >= self.app_limit
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
        // Eleven cache lines a flow (the last two read only at connection
        // set-up and by the counters SACK adds): an algorithm's own state,
        // and SACK's, are boxed.
        assert_eq!(std::mem::size_of::<TcpFlow>(), 11 * 64);
    }
}
