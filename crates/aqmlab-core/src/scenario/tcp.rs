//! `[tcp]`: the TCP every flow runs (variant, segment size, ECN, timers,
//! the ns-2 compatibility switches); the keys a traffic group may set for
//! its own flows are in `tcp_group.rs`.

use super::decode::{join, SpecError, SpecResult, Table};
use super::spec::HEADER_BYTES;
use super::tcp_switches::TcpSwitches;
use super::value::Value;
use crate::packet::Ecn;
use crate::units::SimTime;
use serde::Serialize;

pub use super::tcp_group::{TcpOverrides, GROUP_TCP_KEYS};
pub use super::tcp_profile::TcpProfile;

/// TCP congestion control variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpVariant {
    /// RFC 5681: fast recovery ends at the first new ACK.
    Reno,
    /// RFC 6582: fast recovery ends when all data outstanding at its start is acknowledged.
    NewReno,
    /// RFC 9438's window (cubic in the time since the last congestion
    /// event, beta 0.7, fast convergence, the Reno-friendly region) with
    /// NewReno's loss recovery.
    Cubic,
    /// RFC 8257 DCTCP: the window cut by alpha / 2 on ECN-Echo, alpha the
    /// moving average of the fraction of segments whose ACKs echoed CE;
    /// Reno's growth and NewReno's recovery. Needs `ecn`.
    Dctcp,
    /// TCP Prague as the L4S team's reference (`tcp_prague.c`) runs it:
    /// DCTCP's alpha and cut at most once per round, a fractional window
    /// with RTT-independent additive increase, pacing at 100 % of cwnd /
    /// SRTT, Reno's halving on a loss; sends ECT(1). Needs `ecn`; always
    /// paces (`transport/tcp/cc/prague.rs`).
    Prague,
    /// BBR version 1 as Linux's `tcp_bbr.c` runs it: a model of the path
    /// (the windowed maximum of the delivery rate, the windowed minimum of
    /// the RTT) sets the pacing rate and the window; NewReno's loss
    /// recovery (SACK's with `sack`) decides what is retransmitted. Always
    /// paces.
    Bbr,
    /// LEDBAT (RFC 6817), a less-than-best-effort sender (`cc/ledbat.rs`).
    Ledbat,
}

impl TcpVariant {
    /// The names `variant` takes, in the order the errors list them.
    pub const NAMES: &'static [&'static str] = &[
        "newreno", "reno", "cubic", "dctcp", "bbr", "prague", "ledbat",
    ];

    pub fn name(self) -> &'static str {
        match self {
            TcpVariant::Reno => "reno",
            TcpVariant::NewReno => "newreno",
            TcpVariant::Cubic => "cubic",
            TcpVariant::Dctcp => "dctcp",
            TcpVariant::Bbr => "bbr",
            TcpVariant::Prague => "prague",
            TcpVariant::Ledbat => "ledbat",
        }
    }

    pub(super) fn from_name(name: &str) -> TcpVariant {
        match name {
            "reno" => TcpVariant::Reno,
            "cubic" => TcpVariant::Cubic,
            "dctcp" => TcpVariant::Dctcp,
            "bbr" => TcpVariant::Bbr,
            "prague" => TcpVariant::Prague,
            "ledbat" => TcpVariant::Ledbat,
            _ => TcpVariant::NewReno,
        }
    }

    /// Fast recovery ends at the first new ACK (Reno) rather than when all
    /// data outstanding at its start is acknowledged (RFC 6582).
    pub fn reno_recovery(self) -> bool {
        self == TcpVariant::Reno
    }

    /// The algorithm paces whatever `pacing` says (BBR, Prague).
    pub fn always_paces(self) -> bool {
        matches!(self, TcpVariant::Bbr | TcpVariant::Prague)
    }

    /// The algorithm reacts to the extent of congestion and needs ECN and
    /// an exact echo of each CE mark (RFC 8257 section 3.2's receiver):
    /// DCTCP and Prague.
    pub fn scalable(self) -> bool {
        matches!(self, TcpVariant::Dctcp | TcpVariant::Prague)
    }
}

/// `[tcp]`: the TCP of every flow.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TcpSpec {
    pub variant: TcpVariant,
    /// Bytes on the wire of a full data packet (payload MSS = packet_size - 40).
    pub packet_size: u16,
    /// ECN-capable transport (RFC 3168).
    pub ecn: bool,
    /// ECN-capable SYN/ACK ("ECN+", `000_0675317d310dd341.txt`).
    pub ecn_plus: bool,
    /// Delayed ACKs: one ACK every second full segment, or after `delack_timeout`.
    pub delayed_ack: bool,
    pub delack_timeout: SimTime,
    /// RFC 6298 lower bound of the retransmission timeout.
    pub min_rto: SimTime,
    /// RFC 6298 upper bound of the retransmission timeout.
    pub max_rto: SimTime,
    /// Retransmission timeout before the first RTT sample (also the SYN timer's first value).
    pub initial_rto: SimTime,
    /// Initial congestion window, segments.
    pub initial_cwnd: u16,
    /// Receiver window, segments.
    pub rwnd: u32,
    /// RFC 3042 limited transmit: a new segment on each of the first two
    /// duplicate ACKs (on by default, as in ns-2 and Linux).
    pub limited_transmit: bool,
    /// Send retransmitted data ECT(0) as ns-2 does. Off (the default):
    /// retransmissions are not ECT, as RFC 3168 section 6.1.5 requires.
    pub ect_retransmits: bool,
    /// Whether NewReno re-arms the retransmission timer on every partial
    /// ACK ("Slow-but-Steady", `"every"`) or on the first only
    /// ("Impatient", `"first"`, the default: RFC 6582 section 3.2 step 5,
    /// ns-2's `newreno_changes1_ = 1`).
    pub partial_ack_timer: PartialAckTimer,
    /// Granularity of the sender's RTT clock. `0s` (the default): the
    /// round trip is timed to the nanosecond and RFC 6298's estimator runs
    /// in floating point. A positive tick times it as a BSD stack (and
    /// ns-2, `tcpTick_`) does: in whole ticks of this clock, with the
    /// integer estimator of Jacobson (1988) (srtt in eighths, rttvar in
    /// quarters of a tick) and RTO = srtt + 4 rttvar in ticks.
    pub clock_tick: SimTime,
    /// What ssthresh halves on a loss: `"flight"` (the default) RFC 5681
    /// eq. (4)'s FlightSize; `"window"` the congestion window before fast
    /// recovery's inflation, in whole segments and bounded by FlightSize;
    /// `"ns2"` ns-2.35's cut exactly: ssthresh = floor(w / 2) with w the
    /// window before inflation (`cwnd_`, which ns-2's recovery does not
    /// inflate, bounded by the receiver's window), and fast recovery's
    /// window w / 2 unrounded (ns-2 sets `cwnd_` to it when it retransmits).
    pub loss_ssthresh: LossSsthresh,
    /// The window NewReno leaves a fast recovery with on a full ACK (RFC
    /// 6582 section 3.2 step 3): `"flight"` (the default) option (1),
    /// min(ssthresh, FlightSize + 1); `"ssthresh"` option (2), ssthresh,
    /// as ns-2 does (`exit_recovery_fix_ = 0`).
    pub recovery_exit: RecoveryExit,
    /// Which segment limited transmit sends on the first two duplicate
    /// ACKs: `"new"` (the default, RFC 3042) one never sent before, and
    /// none while a timeout's go-back-N resends; `"next"` the next segment
    /// in sequence, as ns-2's `singledup_` does (it sends `t_seqno_`): after
    /// a timeout that is a segment already sent, often one the receiver
    /// holds.
    pub limited_transmit_sends: LimitedTransmitSends,
    /// How a connection whose SYN or SYN/ACK was sent again starts its data
    /// (`tcp.syn_loss_cut`, see [`SynLossCut`]).
    pub syn_loss_cut: SynLossCut,
    /// RFC 3168 section 6.1.2's floor under ECN (the default): an ECN-Echo
    /// halves the window down to one segment, and one that finds a
    /// one-segment window holds new data until the retransmission timer
    /// expires. Off: as Linux (`tcp_init_cwnd_reduction` with Reno's
    /// ssthresh), ssthresh and the window at least two segments, no hold.
    pub ecn_hold: bool,
    /// What a retransmission timeout during fast recovery does to ssthresh:
    /// `"keep"` (the default) keeps the value the recovery set, as Linux's
    /// `tcp_enter_loss` does; `"cut"` cuts again by `loss_ssthresh`'s rule,
    /// as ns-2 does (with `"flight"` the FlightSize then counts what the
    /// inflated window let out: one NewReno flow through a 60-packet
    /// DropTail queue at 10 Mb/s collapses to 0.66 of the link).
    pub timeout_in_recovery: TimeoutInRecovery,
    /// RFC 3465 appropriate byte counting as Linux grows the window: slow
    /// start by the segments an ACK newly acknowledges (up to ssthresh, the
    /// rest carried into congestion avoidance), congestion avoidance by one
    /// segment per window of segments acknowledged (Linux's integer
    /// counter), so delayed ACKs no longer halve the growth. Off (the
    /// default): one segment per new ACK in slow start, 1/cwnd in
    /// congestion avoidance.
    pub byte_counting: bool,
    /// Selective acknowledgements (RFC 2018) and the loss recovery that
    /// uses them (RFC 6675, with Linux's choices where the RFC leaves
    /// them open). Off (the default): NewReno's recovery without SACK.
    /// The three switches below appear in the resolved scenario only when
    /// on, so that a scenario without them resolves (and a sweep's point is
    /// named) as before they existed.
    #[serde(skip_serializing_if = "is_false")]
    pub sack: bool,
    /// RACK-TLP (RFC 8985) as Linux runs it: a loss is found by the time
    /// its segment was sent, not by the duplicate-ACK threshold, and a
    /// tail loss probe. Needs `sack`.
    #[serde(skip_serializing_if = "is_false")]
    pub rack: bool,
    /// Proportional Rate Reduction (RFC 6937; PRR-SSRB as Linux computes
    /// it) during fast recovery, with or without SACK; recovery ends with
    /// cwnd = ssthresh.
    #[serde(skip_serializing_if = "is_false")]
    pub prr: bool,
    /// Pace data segments at a rate (`tcp.pacing`): Linux's rates for
    /// window-based algorithms (`tcp_update_pacing_rate`: 2 or 1.2 x cwnd
    /// x MSS / SRTT), BBR's own for `variant = "bbr"`, which always paces.
    /// Off (the default): segments leave as soon as the window allows.
    /// Left out of the resolved scenario when off, so that a file written
    /// before the key existed resolves as it did.
    #[serde(skip_serializing_if = "is_false")]
    pub pacing: bool,
    /// How RTT samples are taken and the RTO set: `"timed"` (the
    /// default), one timed segment per round trip and RFC 6298's
    /// estimator (BSD, ns-2); `"linux"`, a sample on every ACK that newly
    /// acknowledges or SACKs a segment never retransmitted, from its send
    /// time, and Linux's estimator (`tcp_rtt_estimator`, `tcp_set_rto`:
    /// RTO = SRTT + a deviation term of at least `min_rto`). Needs `sack`
    /// (the scoreboard keeps the send times). Left out of the resolved
    /// scenario when `"timed"`.
    #[serde(skip_serializing_if = "RttEstimator::is_timed")]
    pub rtt_estimator: RttEstimator,
    /// The ECT codepoint an ECN-capable flow's packets carry (RFC 3168
    /// section 5; RFC 9331 section 4.1): `"ect0"` (the default, classic
    /// ECN) or `"ect1"` (the L4S identifier, so that DCTCP can stand in
    /// for a scalable sender in DualPI2's L queue). Listed in the resolved
    /// scenario only when `"ect1"`.
    #[serde(skip_serializing_if = "EcnCodepoint::is_ect0")]
    pub ecn_codepoint: EcnCodepoint,
    /// `timestamps`, `hystart`, `prague_classic_ecn_detection`, `prague_rtt_scaling`,
    /// `moderate_rcvbuf`, `tso`, `cubic`, `undo`, `delack_timer`,
    /// `txrehash`, `dctcp`, `ecn_fallback`, `slow_start_after_idle`,
    /// `syn_linear_timeouts` and `ack_heuristic`, one bit each ([`TcpSpec::timestamps`], [`TcpSpec::hystart`],
    /// [`TcpSpec::prague_classic_ecn_detection`],
    /// [`TcpSpec::moderate_rcvbuf`], [`TcpSpec::tso`],
    /// [`TcpSpec::cubic_linux`], [`TcpSpec::undo`],
    /// [`TcpSpec::delack_linux`], [`TcpSpec::txrehash`],
    /// [`TcpSpec::dctcp_linux`], [`TcpSpec::ecn_fallback`],
    /// [`TcpSpec::ack_heuristic`]), so that a flow's
    /// configuration stays within its cache lines. Each key is listed in the
    /// resolved scenario when on (`ack_heuristic` always).
    #[serde(flatten)]
    pub switches: TcpSwitches,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How a flow takes RTT samples and sets its RTO (`tcp.rtt_estimator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RttEstimator {
    /// One timed segment per round trip, RFC 6298.
    Timed,
    /// Every ACK, from the segments' send times; Linux's estimator.
    Linux,
}

impl RttEstimator {
    fn is_timed(&self) -> bool {
        *self == RttEstimator::Timed
    }
}

/// The ECT codepoint of an ECN-capable flow (`tcp.ecn_codepoint`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnCodepoint {
    /// ECT(0): classic ECN (RFC 3168).
    #[default]
    Ect0,
    /// ECT(1): the L4S identifier (RFC 9331 section 4.1).
    Ect1,
}

impl EcnCodepoint {
    /// The names `ecn_codepoint` takes.
    pub const NAMES: &'static [&'static str] = &["ect0", "ect1"];

    pub fn from_name(s: &str) -> EcnCodepoint {
        if s == "ect1" {
            EcnCodepoint::Ect1
        } else {
            EcnCodepoint::Ect0
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EcnCodepoint::Ect0 => "ect0",
            EcnCodepoint::Ect1 => "ect1",
        }
    }

    /// The packet's ECN field.
    #[inline]
    pub fn ecn(self) -> Ecn {
        match self {
            EcnCodepoint::Ect0 => Ecn::Ect0,
            EcnCodepoint::Ect1 => Ecn::Ect1,
        }
    }

    fn is_ect0(&self) -> bool {
        *self == EcnCodepoint::Ect0
    }
}

/// The error for ECT(1) without ECN (`{where}` names the switch).
pub(super) const ECT1_NEEDS_ECN: &str = "\"ect1\" is not allowed while ECN is off: the codepoint is that of ECN-capable packets (RFC 9331 section 4.1); set {where} = true, or leave ecn_codepoint out";

/// How a connection whose SYN or SYN/ACK was sent again starts its data
/// (`tcp.syn_loss_cut`): `true`, `false` or `"linux"` in a scenario file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynLossCut {
    /// `true` (the default): one segment (RFC 5681 section 3.1), and the
    /// SYN's timeout sets ssthresh by eq. (4) with nothing in flight, two
    /// segments, as ns-2's `timeout()` does.
    Cut,
    /// `false`: `initial_cwnd` and ssthresh as if nothing was lost.
    Keep,
    /// `"linux"`: Linux's `tcp_init_transfer` and `tcp_init_metrics`: one
    /// segment only after two or more retransmissions of the SYN (or
    /// SYN/ACK), and not when the echoed timestamp shows the first SYN
    /// arrived (`tcp_try_undo_spurious_syn`), the server sending its
    /// SYN/ACK again on its own timer too (`reqsk_timer_handler`) and
    /// counting those; ssthresh as if nothing was lost; an RTO of 3 s
    /// when the handshake gave no RTT sample (`TCP_TIMEOUT_FALLBACK`, RFC
    /// 6298 (5.7)).
    Linux,
}

impl Serialize for SynLossCut {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SynLossCut::Cut => s.serialize_bool(true),
            SynLossCut::Keep => s.serialize_bool(false),
            SynLossCut::Linux => s.serialize_str("linux"),
        }
    }
}

/// ssthresh at a timeout during fast recovery (`tcp.timeout_in_recovery`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeoutInRecovery {
    /// Keep the recovery's ssthresh (Linux).
    Keep,
    /// Cut again by the loss rule (ns-2).
    Cut,
}

/// The error for DCTCP without ECN (`{where}` names the switch to turn on).
/// Linux falls back to Reno silently; aqmlab refuses instead.
pub(super) const PRAGUE_NEEDS_ECN: &str = "false is not allowed with variant = \"prague\": TCP Prague is a scalable congestion control that reacts to ECN marks (RFC 9331 section 4.3) and needs ECN-capable transport; set {where} = true";

/// The error for DCTCP without ECN (`{where}` names the switch to turn on).
pub(super) const DCTCP_NEEDS_ECN: &str = "false is not allowed with variant = \"dctcp\": DCTCP reacts to ECN marks and needs ECN-capable transport (RFC 8257 section 3); set {where} = true";

/// The segment limited transmit sends (`tcp.limited_transmit_sends`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitedTransmitSends {
    /// RFC 3042: only new data.
    New,
    /// ns-2: the next segment in sequence, new or not.
    Next,
}

/// NewReno's window on leaving fast recovery (`tcp.recovery_exit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryExit {
    /// RFC 6582 section 3.2 step 3 option (1): min(ssthresh, FlightSize + 1 segment).
    Flight,
    /// Option (2): ssthresh (ns-2).
    Ssthresh,
}

/// The base of ssthresh on a loss (`tcp.loss_ssthresh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LossSsthresh {
    /// min(FlightSize, floor(cwnd without recovery's inflation)) / 2 (RFC
    /// 5681 eq. (4) allows any value up to FlightSize / 2).
    Window,
    /// FlightSize / 2, RFC 5681 eq. (4) to the letter.
    Flight,
    /// ns-2.35 (`slowdown()` in `tcp.cc`): ssthresh = max(floor(w / 2), 2)
    /// with w = min(cwnd without recovery's inflation, rwnd); a fast
    /// retransmission sets the window recovery leaves with to w / 2.
    Ns2,
}

/// When NewReno re-arms the retransmission timer during fast recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartialAckTimer {
    /// On the first partial ACK only ("Impatient").
    First,
    /// On every partial ACK ("Slow-but-Steady").
    Every,
}

impl Default for TcpSpec {
    fn default() -> Self {
        TcpSpec {
            variant: TcpVariant::NewReno,
            packet_size: 1000,
            ecn: false,
            ecn_plus: false,
            delayed_ack: false,
            delack_timeout: SimTime::from_millis(100),
            min_rto: SimTime::from_millis(200),
            max_rto: SimTime::from_secs(60),
            initial_rto: SimTime::from_secs(3),
            initial_cwnd: 1,
            rwnd: 100_000,
            limited_transmit: true,
            ect_retransmits: false,
            partial_ack_timer: PartialAckTimer::First,
            clock_tick: SimTime::ZERO,
            loss_ssthresh: LossSsthresh::Flight,
            recovery_exit: RecoveryExit::Flight,
            limited_transmit_sends: LimitedTransmitSends::New,
            syn_loss_cut: SynLossCut::Cut,
            ecn_hold: true,
            timeout_in_recovery: TimeoutInRecovery::Keep,
            byte_counting: false,
            sack: false,
            rack: false,
            prr: false,
            pacing: false,
            rtt_estimator: RttEstimator::Timed,
            ecn_codepoint: EcnCodepoint::Ect0,
            switches: TcpSwitches(TcpSwitches::ECN_BACKOFF | TcpSwitches::DUPACK_HALVING),
        }
    }
}

impl TcpSpec {
    pub(super) fn decode(v: Option<Value>, path: &str) -> SpecResult<TcpSpec> {
        let Some(v) = v else {
            return Ok(TcpSpec::default());
        };
        let mut t = Table::new(v, path)?;
        let pacing_given = t.has("pacing");
        let codepoint_given = t.has("ecn_codepoint");
        let hystart_given = t.has("hystart");
        let timestamps_given = t.has("timestamps");
        let undo_given = t.has("undo");
        let frto_given = t.has("frto");
        let dsack_given = t.has("dsack");
        let sack_compression_given = t.has("sack_compression");
        let tso_defer_given = t.has("tso_defer");
        let cwnd_validation_given = t.has("cwnd_validation");
        let rcvbuf_given = t.has("moderate_rcvbuf");
        let cubic_given = t.has("cubic");
        let delack_timer_given = t.has("delack_timer");
        let ecn_reduction_given = t.has("ecn_reduction");
        let sack_given = t.has("sack");
        let rtt_estimator_given = t.has("rtt_estimator");
        let rack_given = t.has("rack");
        let profile =
            TcpProfile::from_name(t.choice("profile", TcpProfile::NAMES, Some("aqmlab"))?);
        let d = profile.defaults();
        let packet_size = t.u32("packet_size", u32::from(d.packet_size))?;
        if !(HEADER_BYTES + 1..=65_535).contains(&packet_size) {
            return Err(SpecError::new(
                join(path, "packet_size"),
                format!(
                    "{} is outside the allowed range [41, 65535] bytes",
                    packet_size
                ),
            ));
        }
        let initial_cwnd = t.u32("initial_cwnd", u32::from(d.initial_cwnd))?;
        if initial_cwnd == 0 || initial_cwnd > 1000 {
            return Err(SpecError::new(
                join(path, "initial_cwnd"),
                format!(
                    "{} is outside the allowed range [1, 1000] segments",
                    initial_cwnd
                ),
            ));
        }
        let mut s = TcpSpec {
            variant: TcpVariant::from_name(t.choice(
                "variant",
                TcpVariant::NAMES,
                Some(d.variant.name()),
            )?),
            packet_size: packet_size as u16,
            ecn: t.bool("ecn", d.ecn)?,
            ecn_plus: t.bool("ecn_plus", d.ecn_plus)?,
            delayed_ack: t.bool("delayed_ack", d.delayed_ack)?,
            delack_timeout: t.time("delack_timeout", d.delack_timeout)?,
            min_rto: t.time("min_rto", d.min_rto)?,
            max_rto: t.time("max_rto", d.max_rto)?,
            initial_rto: t.time("initial_rto", d.initial_rto)?,
            initial_cwnd: initial_cwnd as u16,
            rwnd: t.u32("rwnd", d.rwnd)?,
            limited_transmit: t.bool("limited_transmit", d.limited_transmit)?,
            ect_retransmits: t.bool("ect_retransmits", d.ect_retransmits)?,
            partial_ack_timer: match t.choice(
                "partial_ack_timer",
                &["first", "every"],
                Some(match d.partial_ack_timer {
                    PartialAckTimer::First => "first",
                    PartialAckTimer::Every => "every",
                }),
            )? {
                "every" => PartialAckTimer::Every,
                _ => PartialAckTimer::First,
            },
            clock_tick: t.time("clock_tick", d.clock_tick)?,
            loss_ssthresh: match t.choice(
                "loss_ssthresh",
                &["flight", "window", "ns2"],
                Some(match d.loss_ssthresh {
                    LossSsthresh::Flight => "flight",
                    LossSsthresh::Window => "window",
                    LossSsthresh::Ns2 => "ns2",
                }),
            )? {
                "window" => LossSsthresh::Window,
                "ns2" => LossSsthresh::Ns2,
                _ => LossSsthresh::Flight,
            },
            recovery_exit: match t.choice(
                "recovery_exit",
                &["flight", "ssthresh"],
                Some(match d.recovery_exit {
                    RecoveryExit::Flight => "flight",
                    RecoveryExit::Ssthresh => "ssthresh",
                }),
            )? {
                "ssthresh" => RecoveryExit::Ssthresh,
                _ => RecoveryExit::Flight,
            },
            limited_transmit_sends: match t.choice(
                "limited_transmit_sends",
                &["new", "next"],
                Some(match d.limited_transmit_sends {
                    LimitedTransmitSends::New => "new",
                    LimitedTransmitSends::Next => "next",
                }),
            )? {
                "next" => LimitedTransmitSends::Next,
                _ => LimitedTransmitSends::New,
            },
            syn_loss_cut: match t.take("syn_loss_cut") {
                None => d.syn_loss_cut,
                Some(Value::Bool(true)) => SynLossCut::Cut,
                Some(Value::Bool(false)) => SynLossCut::Keep,
                Some(Value::Str(s)) if s == "linux" => SynLossCut::Linux,
                Some(v) => {
                    return Err(SpecError::new(
                        t.field_path("syn_loss_cut"),
                        format!(
                            "expected true, false or \"linux\", found {} {v}",
                            v.type_name()
                        ),
                    ))
                }
            },
            ecn_hold: t.bool("ecn_hold", d.ecn_hold)?,
            timeout_in_recovery: match t.choice(
                "timeout_in_recovery",
                &["keep", "cut"],
                Some(match d.timeout_in_recovery {
                    TimeoutInRecovery::Keep => "keep",
                    TimeoutInRecovery::Cut => "cut",
                }),
            )? {
                "cut" => TimeoutInRecovery::Cut,
                _ => TimeoutInRecovery::Keep,
            },
            byte_counting: t.bool("byte_counting", d.byte_counting)?,
            sack: t.bool("sack", d.sack)?,
            rack: t.bool("rack", d.rack)?,
            prr: t.bool("prr", d.prr)?,
            pacing: t.bool("pacing", d.pacing)?,
            rtt_estimator: match t.choice(
                "rtt_estimator",
                &["timed", "linux"],
                Some(match d.rtt_estimator {
                    RttEstimator::Timed => "timed",
                    RttEstimator::Linux => "linux",
                }),
            )? {
                "linux" => RttEstimator::Linux,
                _ => RttEstimator::Timed,
            },
            ecn_codepoint: EcnCodepoint::from_name(t.choice(
                "ecn_codepoint",
                EcnCodepoint::NAMES,
                Some(d.ecn_codepoint.name()),
            )?),
            switches: TcpSwitches::default(),
        };
        s.set_timestamps(t.bool("timestamps", d.timestamps())?);
        s.set_syn_linear_timeouts(t.bool("syn_linear_timeouts", d.syn_linear_timeouts())?);
        s.set_hystart(t.bool("hystart", d.hystart())?);
        s.set_prague_classic_ecn_detection(t.bool(
            "prague_classic_ecn_detection",
            d.prague_classic_ecn_detection(),
        )?);
        s.set_ledbat_rfc7928(t.either("ledbat", ["rfc6817", "rfc7928"], d.ledbat_rfc7928())?);
        s.set_prague_cwr_udp(t.either(
            "prague_cwr",
            ["linux", "udp-prague"],
            d.prague_cwr_udp(),
        )?);
        s.set_prague_rtt_scaling(!t.either(
            "prague_rtt_scaling",
            ["rate", "none"],
            !d.prague_rtt_scaling(),
        )?);
        s.set_moderate_rcvbuf(t.bool("moderate_rcvbuf", d.moderate_rcvbuf())?);
        s.set_tso(t.bool("tso", d.tso())?);
        s.set_psh(t.bool("psh", d.psh())?);
        s.set_tso_defer(t.bool("tso_defer", d.tso_defer())?);
        match t.take("cwnd_validation") {
            None if d.cwnd_validation_2020() => s.set_cwnd_validation_2020(),
            None => s.set_cwnd_validation(d.cwnd_validation()),
            Some(Value::Bool(on)) => s.set_cwnd_validation(on),
            Some(Value::Str(v)) if v == "linux-2020" => s.set_cwnd_validation_2020(),
            Some(v) => {
                return Err(SpecError::new(
                    t.field_path("cwnd_validation"),
                    format!(
                        "expected true, false or \"linux-2020\", found {} {v}",
                        v.type_name()
                    ),
                ))
            }
        }
        s.set_cubic_linux(t.either("cubic", ["rfc9438", "linux"], d.cubic_linux())?);
        s.set_ack_heuristic(t.bool("ack_heuristic", d.ack_heuristic())?);
        s.set_cwr_on_retransmit(t.bool("cwr_on_retransmit", d.cwr_on_retransmit())?);
        s.set_undo(t.bool("undo", d.undo())?);
        s.set_frto(t.bool("frto", d.frto())?);
        s.set_dsack(t.bool("dsack", d.dsack())?);
        s.set_sack_compression(t.bool("sack_compression", d.sack_compression())?);
        s.set_ecn_backoff(t.bool("ecn_backoff", d.ecn_backoff())?);
        s.set_dupack_halving(t.bool("dupack_halving", d.dupack_halving())?);
        s.set_txrehash(t.bool("txrehash", d.txrehash())?);
        s.set_ecn_fallback(t.bool("ecn_fallback", d.ecn_fallback())?);
        s.set_slow_start_after_idle(t.bool("slow_start_after_idle", d.slow_start_after_idle())?);
        s.set_dctcp_linux(t.either("dctcp", ["rfc8257", "linux"], d.dctcp_linux())?);
        s.set_delack_linux(t.either("delack_timer", ["fixed", "linux"], d.delack_linux())?);
        s.set_ecn_prr(t.either("ecn_reduction", ["at-once", "prr"], d.ecn_prr())?);
        t.finish()?;
        let pacing_off_given = pacing_given && !s.pacing;
        if matches!(profile, TcpProfile::Ns2001 | TcpProfile::Ns2009)
            && !matches!(s.variant, TcpVariant::Reno | TcpVariant::NewReno)
        {
            return Err(SpecError::new(
                join(path, "variant"),
                format!(
                    "\"{}\" contradicts profile = \"{}\" (ns-2's one-way agents of the seeds: \"reno\" or \"newreno\"); choose one of those, or profile \"aqmlab\" or \"linux\"",
                    s.variant.name(),
                    profile.name()
                ),
            ));
        }
        if s.variant == TcpVariant::Bbr {
            if pacing_off_given {
                return Err(SpecError::new(
                    join(path, "pacing"),
                    "false is not allowed with variant = \"bbr\": BBR sends at its pacing \
                     rate; give true or leave the key out",
                ));
            }
            s.pacing = true;
        }
        if s.variant == TcpVariant::Prague {
            if pacing_off_given {
                return Err(SpecError::new(
                    join(path, "pacing"),
                    "false is not allowed with variant = \"prague\": Prague always paces \
                     (the reference sets SK_PACING_NEEDED); give true or leave the key out",
                ));
            }
            s.pacing = true;
            // Prague sends the L4S identifier (RFC 9331 section 4.1)
            // unless the file says otherwise.
            if !codepoint_given && s.ecn {
                s.ecn_codepoint = EcnCodepoint::Ect1;
            }
        }
        for (k, v) in [
            ("delack_timeout", s.delack_timeout),
            ("min_rto", s.min_rto),
            ("initial_rto", s.initial_rto),
        ] {
            if v == SimTime::ZERO {
                return Err(SpecError::new(
                    join(path, k),
                    "0s is not allowed; give a positive time",
                ));
            }
        }
        if s.clock_tick > SimTime::from_secs(1) {
            return Err(SpecError::new(
                join(path, "clock_tick"),
                format!(
                    "{} is above the allowed 1s; give 0s (an exact clock) or a tick up to 1s",
                    s.clock_tick
                ),
            ));
        }
        if s.max_rto < s.min_rto {
            return Err(SpecError::new(
                join(path, "max_rto"),
                format!("{} is below min_rto ({})", s.max_rto, s.min_rto),
            ));
        }
        if s.variant == TcpVariant::Dctcp && !s.ecn {
            return Err(SpecError::new(
                join(path, "ecn"),
                DCTCP_NEEDS_ECN.replace("{where}", "tcp.ecn"),
            ));
        }
        if s.variant == TcpVariant::Prague && !s.ecn {
            return Err(SpecError::new(
                join(path, "ecn"),
                PRAGUE_NEEDS_ECN.replace("{where}", "tcp.ecn"),
            ));
        }
        if sack_given && !s.sack {
            // `sack = false` written beside a profile whose rows need SACK:
            // one error that names the key written and every row to change.
            let rows: Vec<(&str, String)> = [
                (
                    s.rtt_estimator == RttEstimator::Linux && !rtt_estimator_given,
                    "RTT estimator",
                    "rtt_estimator = \"timed\"",
                ),
                (s.rack && !rack_given, "RACK-TLP", "rack = false"),
            ]
            .into_iter()
            .filter(|(needed, _, _)| *needed)
            .map(|(_, what, row)| (what, join(path, row)))
            .collect();
            if !rows.is_empty() {
                let whats: Vec<&str> = rows.iter().map(|(w, _)| *w).collect();
                let sets: Vec<&str> = rows.iter().map(|(_, r)| r.as_str()).collect();
                return Err(SpecError::new(
                    join(path, "sack"),
                    format!(
                        "false contradicts profile = \"{}\", whose {} {} the SACK \
                         scoreboard; set {} as well (a flow without SACK takes the timed \
                         estimator and finds losses by duplicate ACKs), or leave {} out",
                        profile.name(),
                        whats.join(" and "),
                        if whats.len() > 1 { "read" } else { "reads" },
                        sets.join(" and "),
                        join(path, "sack")
                    ),
                ));
            }
        }
        if s.rtt_estimator == RttEstimator::Linux && !s.sack {
            return Err(SpecError::new(
                join(path, "rtt_estimator"),
                "\"linux\" is not allowed with sack = false: its samples come from the send \
                 times the SACK scoreboard keeps; set tcp.sack = true as well",
            ));
        }
        if s.ecn_codepoint == EcnCodepoint::Ect1 && !s.ecn {
            return Err(SpecError::new(
                join(path, "ecn_codepoint"),
                ECT1_NEEDS_ECN.replace("{where}", "tcp.ecn"),
            ));
        }
        if s.rack && !s.sack {
            return Err(SpecError::new(
                join(path, "rack"),
                "true is not allowed with sack = false: RACK-TLP finds losses from SACK \
                 blocks; set tcp.sack = true as well",
            ));
        }
        if s.pacing && s.prr && !s.sack {
            let (key, value) = if s.variant == TcpVariant::Bbr {
                ("variant", "\"bbr\"")
            } else if s.variant == TcpVariant::Prague {
                ("variant", "\"prague\"")
            } else {
                ("pacing", "true")
            };
            return Err(SpecError::new(
                join(path, key),
                format!(
                    "{value} is not allowed with prr = true and sack = false: a pacing flow \
                     runs PRR only with SACK's recovery; set tcp.sack = true or tcp.prr = false"
                ),
            ));
        }
        if s.timestamps() && s.clock_tick != SimTime::ZERO && s.rtt_estimator == RttEstimator::Timed
        {
            if !timestamps_given {
                // The linux profile's default, which a ticking clock turns off.
                s.set_timestamps(false);
            } else {
                return Err(SpecError::new(
                    join(path, "timestamps"),
                    format!(
                        "true is not allowed with clock_tick = {}: a sample on every ACK is \
                     weighted by RFC 7323 appendix G on the exact clock only; set \
                     tcp.clock_tick = \"0s\" or tcp.timestamps = false",
                        s.clock_tick
                    ),
                ));
            }
        }
        if s.hystart() && !hystart_given {
            // The linux profile's default, for every CUBIC flow (`[tcp]`'s
            // or a group's) with Linux's estimator, as `tcp_cubic`'s
            // `hystart` module parameter is on for every CUBIC socket.
            s.set_hystart(s.rtt_estimator == RttEstimator::Linux);
        }
        // Written in the file, `hystart = true` also needs a CUBIC flow:
        // checked with the traffic groups (`Scenario`), which may choose it.
        if s.hystart() && s.rtt_estimator != RttEstimator::Linux {
            return Err(SpecError::new(
                join(path, "hystart"),
                "true is not allowed with rtt_estimator = \"timed\": HyStart++ takes an \
                 RTT sample from every ACK (RFC 9406 section 4.2); set \
                 tcp.rtt_estimator = \"linux\" (with tcp.sack = true)",
            ));
        }
        if s.cubic_linux() && !cubic_given && s.rtt_estimator != RttEstimator::Linux {
            // The linux profile's default, which the timed estimator turns off.
            s.set_cubic_linux(false);
        }
        if s.ecn_prr() && !ecn_reduction_given && !(s.sack && s.prr) {
            // The linux profile's default, which a flow without SACK or
            // without PRR turns off.
            s.set_ecn_prr(false);
        }
        if s.delack_linux() && !delack_timer_given && !(s.sack && s.delayed_ack) {
            // The linux profile's default, which a flow without SACK or
            // without delayed ACKs turns off.
            s.set_delack_linux(false);
        }
        if s.cubic_linux() && s.rtt_estimator != RttEstimator::Linux {
            return Err(SpecError::new(
                join(path, "cubic"),
                "\"linux\" is not allowed with rtt_estimator = \"timed\": Linux's CUBIC takes \
                 its minimum RTT from a sample on every ACK; set tcp.rtt_estimator = \"linux\" \
                 (with tcp.sack = true) or tcp.cubic = \"rfc9438\"",
            ));
        }
        // The profile that sets these keys, suggested where it is not the
        // file's already.
        let or_linux = if profile == TcpProfile::Linux {
            ""
        } else {
            " (or tcp.profile = \"linux\")"
        };
        if s.moderate_rcvbuf() && !rcvbuf_given && !s.sack {
            // The linux profile's default, which a flow without SACK turns
            // off.
            s.set_moderate_rcvbuf(false);
        }
        if s.moderate_rcvbuf() && !s.sack {
            return Err(SpecError::new(
                join(path, "moderate_rcvbuf"),
                format!(
                    "true is not allowed without SACK: the autotuned window travels beside \
                     the SACK blocks; set tcp.sack = true{or_linux}"
                ),
            ));
        }
        // The linux profile's undo and F-RTO, which a flow without SACK
        // turns off, and the undo a flow with neither timestamps nor F-RTO
        // (its two tests of a spurious timeout) turns off, so that the
        // resolved scenario lists neither where it cannot act.
        if s.frto() && !frto_given && !s.sack {
            s.set_frto(false);
        }
        // The linux profile's D-SACK, which a flow without SACK turns off.
        if s.dsack() && !dsack_given && !s.sack {
            s.set_dsack(false);
        }
        // The linux profile's SACK compression, which a flow without SACK
        // turns off.
        if s.sack_compression() && !sack_compression_given && !s.sack {
            s.set_sack_compression(false);
        }
        // The linux profile's TSO deferral, which a flow without SACK
        // turns off.
        if s.tso_defer() && !tso_defer_given && !s.sack {
            s.set_tso_defer(false);
        }
        // The linux profile's window validation, which a flow without SACK
        // turns off.
        if s.cwnd_validation() && !cwnd_validation_given && !s.sack {
            s.set_cwnd_validation(false);
        }
        if s.undo() && !undo_given && !(s.sack && (s.timestamps() || s.frto())) {
            s.set_undo(false);
        }
        if s.undo() && undo_given && !(s.sack && (s.timestamps() || s.frto())) {
            return Err(SpecError::new(
                join(path, "undo"),
                format!(
                    "true is not allowed without SACK and timestamps or F-RTO: the undo is a \
                     SACK flow's and its tests are the echoed timestamp and F-RTO; set \
                     tcp.sack = true and tcp.timestamps = true or tcp.frto = true{or_linux}"
                ),
            ));
        }
        if s.dsack() && dsack_given && !s.sack {
            return Err(SpecError::new(
                join(path, "dsack"),
                format!(
                    "true is not allowed without SACK: a D-SACK is a SACK block (RFC 2883); \
                     set tcp.sack = true{or_linux}"
                ),
            ));
        }
        if s.sack_compression() && !s.sack {
            return Err(SpecError::new(
                join(path, "sack_compression"),
                format!(
                    "true is not allowed without SACK: the ACKs it holds are a SACK \
                     receiver's (Linux compresses none without SACK); set tcp.sack = \
                     true{or_linux}"
                ),
            ));
        }
        if s.frto() && frto_given && !s.sack {
            return Err(SpecError::new(
                join(path, "frto"),
                format!(
                    "true is not allowed without SACK: F-RTO is modelled in its SACK-enhanced \
                     version (RFC 5682 section 3), as Linux runs it; set tcp.sack = true{or_linux}"
                ),
            ));
        }
        if s.tso_defer() && !s.sack {
            return Err(SpecError::new(
                join(path, "tso_defer"),
                format!(
                    "true is not allowed without SACK: the deferral reads the oldest \
                     segment's send time on the SACK scoreboard; set tcp.sack = true{or_linux}"
                ),
            ));
        }
        if s.cwnd_validation() && !s.sack {
            let v = if s.cwnd_validation_2020() {
                "\"linux-2020\""
            } else {
                "true"
            };
            return Err(SpecError::new(
                join(path, "cwnd_validation"),
                format!(
                    "{v} is not allowed without SACK: the record of the window's use reads \
                     the SACK scoreboard's pipe; set tcp.sack = true{or_linux}"
                ),
            ));
        }
        if s.delack_linux() && !s.sack {
            return Err(SpecError::new(
                join(path, "delack_timer"),
                format!(
                    "\"linux\" is not allowed without SACK: its state is kept beside the \
                     receiver's SACK blocks; set tcp.sack = true{or_linux}"
                ),
            ));
        }
        if s.ecn_prr() && !(s.sack && s.prr) {
            return Err(SpecError::new(
                join(path, "ecn_reduction"),
                "\"prr\" is not allowed without SACK and PRR: the reduction is PRR's over the \
                 SACK scoreboard's pipe; set tcp.sack = true and tcp.prr = true, or \
                 tcp.ecn_reduction = \"at-once\"",
            ));
        }
        if s.delack_linux() && !s.delayed_ack {
            return Err(SpecError::new(
                join(path, "delack_timer"),
                "\"linux\" is not allowed with delayed_ack = false: the timer times the ACKs \
                 a receiver holds back, and this one holds none; set tcp.delayed_ack = true or \
                 tcp.delack_timer = \"fixed\"",
            ));
        }
        if s.rwnd == 0 {
            return Err(SpecError::new(
                join(path, "rwnd"),
                "0 is not allowed; give at least 1 segment",
            ));
        }
        Ok(s)
    }

    /// Payload bytes of a full segment.
    pub fn mss(&self) -> u32 {
        u32::from(self.packet_size) - HEADER_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn doc(tcp: &str, group: &str) -> String {
        format!(
            "duration = \"10s\"\n[topology]\nbottleneck_rate = \"10Mbps\"\n\
             [tcp]\n{tcp}\n[[traffic]]\nkind = \"bulk\"\nflows = 1\n{group}\n"
        )
    }

    fn parse(text: &str) -> Result<Scenario, SpecError> {
        Scenario::from_value(toml::from_str(text).expect("TOML"))
    }

    /// The scenario of `[tcp]` keys `tcp`, which must be accepted.
    fn accepted(tcp: &str) -> Scenario {
        parse(&doc(tcp, "")).unwrap()
    }

    /// The resolved scenario's `[tcp]` table, as JSON.
    fn listed(sc: &Scenario) -> String {
        serde_json::to_string(&sc.tcp).unwrap()
    }

    /// The error that `[tcp]` keys `tcp` must give.
    fn refused(tcp: &str) -> SpecError {
        parse(&doc(tcp, "")).unwrap_err()
    }

    /// `pacing` is off by default and left out of the resolved scenario
    /// (files written before it resolve as they did); BBR turns it on, in
    /// `[tcp]` or for a group's flows; `pacing = false` written beside BBR
    /// is refused, naming the key that asks for BBR.
    #[test]
    fn bbr_paces_and_refuses_pacing_off() {
        let sc = accepted("");
        assert!(!sc.tcp.pacing);
        let json = listed(&sc);
        assert!(!json.contains("pacing"), "{json}");
        let sc = accepted("variant = \"bbr\"");
        assert!(sc.tcp.pacing);
        assert!(listed(&sc).contains("\"pacing\":true"));
        let sc = accepted("pacing = true");
        assert_eq!((sc.tcp.variant, sc.tcp.pacing), (TcpVariant::NewReno, true));
        let sc = parse(&doc("", "variant = \"bbr\"")).unwrap();
        assert!(!sc.tcp.pacing);
        assert!(sc.traffic[0].tcp(&sc.tcp).pacing);
        let e = refused("variant = \"bbr\"\npacing = false");
        assert_eq!(e.path, "tcp.pacing");
        let e = parse(&doc("pacing = false", "variant = \"bbr\"")).unwrap_err();
        assert_eq!(e.path, "traffic[0].variant");
        // Written true, or left out, beside a group's BBR: accepted.
        assert!(parse(&doc("pacing = true", "variant = \"bbr\"")).is_ok());
    }

    /// `tso_defer` is off by default and on in the linux profile; listed
    /// in the resolved scenario only when on; refused without SACK, naming
    /// the key, where written, and turned off where the profile set it.
    #[test]
    fn tso_defer_needs_sack() {
        assert!(!accepted("").tcp.tso_defer());
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.tso_defer() && sc.tcp.psh());
        assert!(listed(&sc).contains("\"tso_defer\":true"));
        assert!(!accepted("profile = \"linux\"\ntso_defer = false")
            .tcp
            .tso_defer());
        let no_sack = "profile = \"linux\"\nsack = false\nrack = false\nrtt_estimator = \"timed\"";
        let sc = accepted(no_sack);
        assert!(!sc.tcp.tso_defer() && sc.tcp.psh());
        assert!(!listed(&sc).contains("tso_defer"));
        assert!(!listed(&accepted("sack = true")).contains("tso_defer"));
        let e = refused("tso_defer = true");
        assert_eq!(e.path, "tcp.tso_defer");
        assert!(e.msg.contains("without SACK"), "{}", e.msg);
    }

    /// `moderate_rcvbuf` is off by default, on in the linux profile (which a
    /// file may turn off, and which a flow without SACK turns off), and
    /// listed in the resolved scenario only when on; written without SACK
    /// it is refused naming the key.
    #[test]
    fn moderate_rcvbuf_needs_sack() {
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.moderate_rcvbuf());
        assert!(listed(&sc).contains("\"moderate_rcvbuf\":true"));
        let no_sack = "sack = false\nrack = false\nrtt_estimator = \"timed\"";
        for off in ["moderate_rcvbuf = false", no_sack] {
            let sc = accepted(&format!("profile = \"linux\"\n{off}"));
            assert!(!sc.tcp.moderate_rcvbuf(), "{off}");
            assert!(!listed(&sc).contains("moderate_rcvbuf"), "{off}");
        }
        let e = refused(&format!(
            "profile = \"linux\"\n{no_sack}\nmoderate_rcvbuf = true"
        ));
        assert_eq!(e.path, "tcp.moderate_rcvbuf");
        let sc = accepted("");
        assert!(!sc.tcp.moderate_rcvbuf());
        let json = listed(&sc);
        assert!(!json.contains("moderate_rcvbuf"), "{json}");
        let sc = accepted("sack = true\nmoderate_rcvbuf = true");
        assert!(sc.tcp.moderate_rcvbuf());
        assert!(listed(&sc).contains("\"moderate_rcvbuf\":true"));
        let e = refused("moderate_rcvbuf = true");
        assert_eq!(e.path, "tcp.moderate_rcvbuf");
        assert!(e.msg.contains("tcp.sack = true"), "{}", e.msg);
    }

    /// `tso` is off by default, on in the linux profile (which a file may
    /// turn off), and listed in the resolved scenario only when on.
    #[test]
    fn tso_in_the_linux_profile() {
        let sc = accepted("");
        assert!(!sc.tcp.tso());
        assert!(!listed(&sc).contains("tso"));
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.tso());
        assert!(listed(&sc).contains("\"tso\":true"));
        let sc = accepted("profile = \"linux\"\ntso = false");
        assert!(!sc.tcp.tso());
        let e = refused("tso = 1");
        assert_eq!(e.path, "tcp.tso");
    }

    /// `ecn_fallback` is off by default, on in the linux profile, listed
    /// in the resolved scenario only when on; not a boolean is refused.
    #[test]
    fn ecn_fallback_key() {
        let sc = accepted("ecn = true");
        assert!(!sc.tcp.ecn_fallback());
        assert!(!listed(&sc).contains("ecn_fallback"));
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.ecn_fallback());
        assert!(listed(&sc).contains("\"ecn_fallback\":true"));
        let sc = accepted("profile = \"linux\"\necn_fallback = false");
        assert!(!sc.tcp.ecn_fallback());
        let e = refused("ecn_fallback = \"yes\"");
        assert_eq!(e.path, "tcp.ecn_fallback");
    }

    /// `dctcp` is `"rfc8257"` by default, `"linux"` in the linux profile,
    /// listed in the resolved scenario only when `"linux"`; another value
    /// is refused naming the key and the allowed ones.
    #[test]
    fn dctcp_arithmetic_key() {
        let sc = accepted("variant = \"dctcp\"\necn = true");
        assert!(!sc.tcp.dctcp_linux());
        assert!(!listed(&sc).contains("dctcp\":"));
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.dctcp_linux());
        assert!(listed(&sc).contains("\"dctcp\":\"linux\""));
        let sc = accepted("profile = \"linux\"\ndctcp = \"rfc8257\"");
        assert!(!sc.tcp.dctcp_linux());
        let e = refused("dctcp = \"fixed\"");
        assert_eq!(e.path, "tcp.dctcp");
        assert!(
            e.msg.contains("rfc8257") && e.msg.contains("linux"),
            "{}",
            e.msg
        );
    }

    /// `ledbat` is `"rfc6817"` by default, listed in the resolved scenario
    /// only when `"rfc7928"`; another value is refused naming the key;
    /// `variant = "ledbat"` is a variant's name.
    #[test]
    fn ledbat_key() {
        let sc = accepted("variant = \"ledbat\"");
        assert_eq!(sc.tcp.variant, TcpVariant::Ledbat);
        assert!(!sc.tcp.ledbat_rfc7928());
        assert!(!listed(&sc).contains("\"ledbat\":"));
        let sc = accepted("variant = \"ledbat\"\nledbat = \"rfc7928\"");
        assert!(sc.tcp.ledbat_rfc7928());
        assert!(listed(&sc).contains("\"ledbat\":\"rfc7928\""));
        let e = refused("ledbat = \"rfc9999\"");
        assert_eq!(e.path, "tcp.ledbat");
        assert!(
            e.msg.contains("rfc6817") && e.msg.contains("rfc7928"),
            "{}",
            e.msg
        );
    }

    /// `prague_rtt_scaling` is `"rate"` by default, listed in the resolved
    /// scenario only when `"none"`; another value is refused naming the key.
    #[test]
    fn prague_rtt_scaling_key() {
        let sc = accepted("variant = \"prague\"\necn = true");
        assert!(sc.tcp.prague_rtt_scaling());
        assert!(!listed(&sc).contains("prague_rtt_scaling"));
        let sc = accepted("prague_rtt_scaling = \"none\"");
        assert!(!sc.tcp.prague_rtt_scaling());
        assert!(listed(&sc).contains("\"prague_rtt_scaling\":\"none\""));
        let e = refused("prague_rtt_scaling = \"additive\"");
        assert_eq!(e.path, "tcp.prague_rtt_scaling");
        assert!(
            e.msg.contains("rate") && e.msg.contains("none"),
            "{}",
            e.msg
        );
    }

    /// `prague_cwr` is `"linux"` by default, listed in the resolved
    /// scenario only when `"udp-prague"`; another value is refused naming
    /// the key and the two allowed.
    #[test]
    fn prague_cwr_key() {
        let sc = accepted("variant = \"prague\"\necn = true");
        assert!(!sc.tcp.prague_cwr_udp());
        let json = listed(&sc);
        assert!(!json.contains("prague_cwr"), "{json}");
        let sc = accepted("variant = \"prague\"\necn = true\nprague_cwr = \"udp-prague\"");
        assert!(sc.tcp.prague_cwr_udp());
        let json = listed(&sc);
        assert!(json.contains("\"prague_cwr\":\"udp-prague\""), "{json}");
        let e = refused("prague_cwr = \"tcp\"");
        assert_eq!(e.path, "tcp.prague_cwr");
        assert!(
            e.msg.contains("linux") && e.msg.contains("udp-prague") && e.msg.contains("tcp"),
            "{}",
            e.msg
        );
    }

    /// `cubic` is `"rfc9438"` by default, `"linux"` in the linux profile
    /// (inert there beside the timed estimator), listed in the resolved
    /// scenario only when `"linux"`; written beside the timed estimator it
    /// is refused naming the key.
    #[test]
    fn cubic_rules_key() {
        let sc = accepted("variant = \"cubic\"");
        assert!(!sc.tcp.cubic_linux());
        assert!(!listed(&sc).contains("cubic\":"));
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.cubic_linux());
        assert!(listed(&sc).contains("\"cubic\":\"linux\""));
        let sc = accepted("profile = \"linux\"\ncubic = \"rfc9438\"");
        assert!(!sc.tcp.cubic_linux());
        let sc = accepted("profile = \"linux\"\nrtt_estimator = \"timed\"");
        assert!(!sc.tcp.cubic_linux());
        let e = refused("profile = \"linux\"\nrtt_estimator = \"timed\"\ncubic = \"linux\"");
        assert_eq!(e.path, "tcp.cubic");
        let e = refused("cubic = \"linux\"");
        assert_eq!(e.path, "tcp.cubic");
        assert!(e.to_string().contains("rtt_estimator"), "{e}");
        let e = refused("cubic = \"bsd\"");
        assert_eq!(e.path, "tcp.cubic");
        assert!(e.to_string().contains("\"rfc9438\""), "{e}");
    }

    /// The linux profile's HyStart reaches a group's CUBIC flows under
    /// another `[tcp]` variant, as `tcp_cubic`'s module parameter does every
    /// CUBIC socket (and is left off without one); `hystart = true` written
    /// in the file needs some CUBIC flow, named at `tcp.hystart` otherwise.
    #[test]
    fn hystart_reaches_a_groups_cubic() {
        let newreno = "profile = \"linux\"\nvariant = \"newreno\"";
        let sc = parse(&doc(newreno, "variant = \"cubic\"")).unwrap();
        assert!(sc.traffic[0].tcp(&sc.tcp).hystart());
        assert_eq!(sc.traffic[0].tcp(&sc.tcp).variant, TcpVariant::Cubic);
        // No CUBIC flow: the profile's default is left off, and out of the
        // resolved scenario, which then parses again whatever its groups.
        let sc = parse(&doc(newreno, "")).unwrap();
        assert!(!sc.tcp.hystart());
        assert!(!listed(&sc).contains("hystart"));
        let written = format!("{newreno}\nhystart = true");
        assert!(parse(&doc(&written, "variant = \"cubic\"")).is_ok());
        let e = parse(&doc(&written, "")).unwrap_err();
        assert_eq!(e.path, "tcp.hystart");
        assert!(e.msg.contains("no traffic group choosing"), "{}", e.msg);
        let timed = "profile = \"linux\"\nrtt_estimator = \"timed\"";
        assert!(!parse(&doc(timed, "")).unwrap().tcp.hystart());
    }

    /// `dsack` is off by default and on in the linux profile (off there
    /// without SACK), listed only when on; written true without SACK it is
    /// refused naming the key.
    #[test]
    fn dsack_needs_sack() {
        let sc = accepted("");
        assert!(!sc.tcp.dsack());
        assert!(!listed(&sc).contains("dsack"));
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.dsack());
        assert!(listed(&sc).contains("\"dsack\":true"));
        assert!(accepted("sack = true\ndsack = true").tcp.dsack());
        assert!(!accepted("profile = \"linux\"\ndsack = false").tcp.dsack());
        let no_sack = "profile = \"linux\"\nsack = false\nrack = false\nrtt_estimator = \"timed\"";
        assert!(!parse(&doc(no_sack, "")).unwrap().tcp.dsack());
        let e = refused("dsack = true");
        assert_eq!(e.path, "tcp.dsack");
        assert!(e.msg.contains("tcp.sack = true"), "{}", e.msg);
    }

    /// `sack_compression` is off by default and on in the linux profile
    /// (off there without SACK), listed only when on; written true without
    /// SACK it is refused naming the key.
    #[test]
    fn sack_compression_needs_sack() {
        let sc = accepted("");
        assert!(!sc.tcp.sack_compression());
        assert!(!listed(&sc).contains("sack_compression"));
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.sack_compression());
        assert!(listed(&sc).contains("\"sack_compression\":true"));
        assert!(accepted("sack = true\nsack_compression = true")
            .tcp
            .sack_compression());
        assert!(!accepted("profile = \"linux\"\nsack_compression = false")
            .tcp
            .sack_compression());
        let no_sack = "profile = \"linux\"\nsack = false\nrack = false\nrtt_estimator = \"timed\"";
        assert!(!parse(&doc(no_sack, "")).unwrap().tcp.sack_compression());
        let e = refused("sack_compression = true");
        assert_eq!(e.path, "tcp.sack_compression");
        assert!(e.msg.contains("tcp.sack = true"), "{}", e.msg);
    }

    /// `frto` is off by default and on in the linux profile (off there
    /// without SACK), listed in the resolved scenario only when on; written
    /// true without SACK it is refused naming the key. `ecn_backoff` and `dupack_halving` (switch
    /// bits beside it) are listed on or off, as when each was a field.
    #[test]
    fn frto_needs_sack() {
        let sc = accepted("");
        assert!(!sc.tcp.frto());
        let json = listed(&sc);
        assert!(!json.contains("frto"), "{json}");
        assert!(json.contains("\"ecn_backoff\":true"), "{json}");
        assert!(json.contains("\"dupack_halving\":true"), "{json}");
        assert!(accepted("profile = \"linux\"").tcp.frto());
        let no_sack = "profile = \"linux\"\nsack = false\nrack = false\nrtt_estimator = \"timed\"";
        let sc = parse(&doc(no_sack, "")).unwrap();
        assert!(!sc.tcp.frto() && !sc.tcp.undo());
        // `sack = false` alone against the profile: one error on the key
        // written, naming both rows the profile sets that need SACK.
        let e = refused("profile = \"linux\"\nsack = false");
        assert_eq!(e.path, "tcp.sack");
        assert!(
            e.msg
                .contains("tcp.rtt_estimator = \"timed\" and tcp.rack = false"),
            "{}",
            e.msg
        );
        let e = refused("profile = \"linux\"\nsack = false\nrack = false");
        assert_eq!(e.path, "tcp.sack");
        assert!(!e.msg.contains("tcp.rack"), "{}", e.msg);
        // A row written beside it is the file's own contradiction, named there.
        let e = refused("profile = \"linux\"\nsack = false\nrack = true");
        assert_eq!(e.path, "tcp.sack");
        let e = refused("sack = false\nrack = true");
        assert_eq!(e.path, "tcp.rack");
        let sc = accepted("profile = \"linux\"\nfrto = true");
        assert!(sc.tcp.frto());
        assert!(listed(&sc).contains("\"frto\":true"));
        let e = refused("frto = true");
        assert_eq!(e.path, "tcp.frto");
        assert!(e.msg.contains("SACK"), "{}", e.msg);
        assert!(e.msg.contains("or tcp.profile = \"linux\""), "{}", e.msg);
        // Where the profile is the file's already, it is not suggested.
        let e = parse(&doc(&format!("{no_sack}\nfrto = true"), "")).unwrap_err();
        assert_eq!(e.path, "tcp.frto");
        assert!(!e.msg.contains("tcp.profile"), "{}", e.msg);
        let sc = accepted("ecn_backoff = false\ndupack_halving = false");
        assert!(!sc.tcp.ecn_backoff() && !sc.tcp.dupack_halving());
        let json = listed(&sc);
        assert!(json.contains("\"ecn_backoff\":false"), "{json}");
    }

    /// `undo` is off by default, on in the linux profile (and kept there
    /// when a file turns timestamps off), listed in the resolved scenario
    /// only when on; written true without SACK or timestamps it is refused
    /// naming the key.
    #[test]
    fn undo_in_the_linux_profile() {
        let sc = accepted("");
        assert!(!sc.tcp.undo());
        assert!(!listed(&sc).contains("undo"));
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.undo());
        assert!(listed(&sc).contains("\"undo\":true"));
        // Without timestamps F-RTO still tells a spurious timeout, and
        // undoes it with what the undo kept: the undo stays on; without
        // either it cannot act and the profile leaves it off. Either way
        // the resolved scenario reads again.
        let no_ts = "profile = \"linux\"\ntimestamps = false";
        assert!(parse(&doc(no_ts, "")).unwrap().tcp.undo());
        assert!(parse(&doc(&format!("{no_ts}\nundo = true"), "")).is_ok());
        let sc = parse(&doc(&format!("{no_ts}\nfrto = false"), "")).unwrap();
        assert!(!sc.tcp.undo());
        assert!(!listed(&sc).contains("undo"));
        let e = refused("undo = true");
        assert_eq!(e.path, "tcp.undo");
        assert!(e.msg.contains("tcp.timestamps = true"), "{}", e.msg);
        let e = refused("profile = \"linux\"\ntimestamps = false\nfrto = false\nundo = true");
        assert_eq!(e.path, "tcp.undo");
        assert!(parse(&doc("sack = true\ntimestamps = true\nundo = true", "")).is_ok());
    }

    /// `delack_timer` is `"fixed"` by default, `"linux"` in the linux
    /// profile (off there without SACK or without delayed ACKs), listed in
    /// the resolved scenario only when `"linux"`; written without SACK or
    /// without delayed ACKs, or an unknown rule, refused naming the key.
    #[test]
    fn delack_timer_key() {
        let sc = accepted("");
        assert!(!sc.tcp.delack_linux());
        assert!(!listed(&sc).contains("delack_timer"));
        let sc = accepted("profile = \"linux\"\ndelack_timer = \"fixed\"");
        assert!(!sc.tcp.delack_linux());
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.delack_linux());
        assert!(listed(&sc).contains("\"delack_timer\":\"linux\""));
        let without_sack =
            "profile = \"linux\"\nsack = false\nrack = false\nrtt_estimator = \"timed\"";
        let sc = parse(&doc(without_sack, "")).unwrap();
        assert!(!sc.tcp.delack_linux());
        let e = parse(&doc(
            &format!("{without_sack}\ndelack_timer = \"linux\""),
            "",
        ))
        .unwrap_err();
        assert_eq!(e.path, "tcp.delack_timer");
        let e = refused("delack_timer = \"linux\"");
        assert_eq!(e.path, "tcp.delack_timer");
        assert!(e.msg.contains("tcp.sack = true"), "{}", e.msg);
        // Without delayed ACKs the profile's timer is off; written, refused.
        let sc = accepted("profile = \"linux\"\ndelayed_ack = false");
        assert!(!sc.tcp.delack_linux());
        let e = refused("profile = \"linux\"\ndelayed_ack = false\ndelack_timer = \"linux\"");
        assert_eq!(e.path, "tcp.delack_timer");
        assert!(e.msg.contains("delayed_ack = false"), "{}", e.msg);
        let e = refused("delack_timer = \"bsd\"");
        assert_eq!(e.path, "tcp.delack_timer");
        assert!(e.to_string().contains("\"fixed\""), "{e}");
    }

    /// `ecn_reduction` is `"at-once"` by default, `"prr"` in the linux
    /// profile (off there without PRR), listed only when `"prr"`; written
    /// without SACK or PRR, or an unknown rule, refused naming the key.
    #[test]
    fn ecn_reduction_key() {
        assert!(!accepted("").tcp.ecn_prr());
        let sc = accepted("profile = \"linux\"");
        assert!(sc.tcp.ecn_prr());
        assert!(listed(&sc).contains("\"ecn_reduction\":\"prr\""));
        assert!(
            !accepted("profile = \"linux\"\necn_reduction = \"at-once\"")
                .tcp
                .ecn_prr()
        );
        assert!(!accepted("profile = \"linux\"\nprr = false").tcp.ecn_prr());
        assert!(accepted("sack = true\nprr = true\necn_reduction = \"prr\"")
            .tcp
            .ecn_prr());
        for bad in [
            "ecn_reduction = \"prr\"",
            "profile = \"linux\"\nprr = false\necn_reduction = \"prr\"",
        ] {
            let e = refused(bad);
            assert_eq!(e.path, "tcp.ecn_reduction");
            assert!(e.msg.contains("tcp.prr = true"), "{}", e.msg);
        }
        let e = refused("ecn_reduction = \"halve\"");
        assert_eq!(e.path, "tcp.ecn_reduction");
        assert!(e.to_string().contains("\"at-once\""), "{e}");
    }
}
