//! `[tcp]`: the TCP every flow runs (variant, segment size, ECN, timers,
//! the ns-2 compatibility switches) and the keys a traffic group may set
//! for its own flows.

use super::decode::{as_u64, join, SpecError, SpecResult, Table};
use super::spec::HEADER_BYTES;
use super::value::Value;
use crate::units::SimTime;
use serde::Serialize;

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
    /// BBR version 1 as Linux's `tcp_bbr.c` runs it: a model of the path
    /// (the windowed maximum of the delivery rate, the windowed minimum of
    /// the RTT) sets the pacing rate and the window; NewReno's loss
    /// recovery decides what is retransmitted. Always paces.
    Bbr,
}

impl TcpVariant {
    /// The names `variant` takes, in the order the errors list them.
    pub const NAMES: &'static [&'static str] = &["newreno", "reno", "cubic", "bbr"];

    fn from_name(name: &str) -> TcpVariant {
        match name {
            "reno" => TcpVariant::Reno,
            "cubic" => TcpVariant::Cubic,
            "bbr" => TcpVariant::Bbr,
            _ => TcpVariant::NewReno,
        }
    }

    /// Fast recovery ends at the first new ACK (Reno) rather than when all
    /// data outstanding at its start is acknowledged (RFC 6582).
    pub fn reno_recovery(self) -> bool {
        self == TcpVariant::Reno
    }
}

/// `[tcp]`: the TCP of every flow.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TcpSpec {
    pub variant: TcpVariant,
    /// Bytes on the wire of a full data packet (payload MSS = packet_size - 40).
    pub packet_size: u32,
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
    pub initial_cwnd: u32,
    /// Receiver window, segments.
    pub rwnd: u32,
    /// RFC 3042 limited transmit: a new segment on each of the first two
    /// duplicate ACKs (on by default, as in ns-2 and Linux).
    pub limited_transmit: bool,
    /// RFC 6582 section 4.2's ACK heuristic: after a timeout, three
    /// duplicate ACKs below `recover` still start a fast retransmit when
    /// cwnd > 1 and the last advance of the cumulative ACK was at most four
    /// segments (ns-2's `bugfix_ack_`). Off: the "careful" rule alone.
    pub ack_heuristic: bool,
    /// ns-2's `ecn_backoff_`: an ECN-Echo that finds the window at one
    /// segment a second time in a row doubles the retransmission timer
    /// that governs the RFC 3168 section 6.1.2 hold.
    pub ecn_backoff: bool,
    /// Send retransmitted data ECT(0) as ns-2 does. Off (the default):
    /// retransmissions are not ECT, as RFC 3168 section 6.1.5 requires.
    pub ect_retransmits: bool,
    /// Halve the window on a loss found by duplicate ACKs (RFC 5681). Off:
    /// the modified TCP of `002_80945567bf68047d.txt` section 5 (wireless),
    /// which retransmits without halving and halves only on a mark or a
    /// timeout.
    pub dupack_halving: bool,
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
    /// A lost SYN or SYN/ACK cuts the connection's window (the default):
    /// the data sender after a retransmitted SYN or SYN/ACK starts with one
    /// segment (RFC 5681 section 3.1), and the SYN's timeout sets ssthresh
    /// by eq. (4) with nothing in flight, two segments, as ns-2's
    /// `timeout()` does. Off: `initial_cwnd` and ssthresh as if nothing
    /// was lost.
    pub syn_loss_cut: bool,
    /// Pace data segments at a rate (`tcp.pacing`): Linux's rates for
    /// window-based algorithms (`tcp_update_pacing_rate`: 2 or 1.2 x cwnd
    /// x MSS / SRTT), BBR's own for `variant = "bbr"`, which always paces.
    /// Off (the default): segments leave as soon as the window allows.
    /// Left out of the resolved scenario when off, so that a file written
    /// before the key existed resolves as it did.
    #[serde(skip_serializing_if = "is_false")]
    pub pacing: bool,
    /// `pacing = false` was written in the file: refused with BBR (also
    /// with a traffic group's `variant = "bbr"`).
    #[serde(skip)]
    pub pacing_off_given: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

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
            ack_heuristic: false,
            ecn_backoff: true,
            ect_retransmits: false,
            dupack_halving: true,
            partial_ack_timer: PartialAckTimer::First,
            clock_tick: SimTime::ZERO,
            loss_ssthresh: LossSsthresh::Flight,
            recovery_exit: RecoveryExit::Flight,
            limited_transmit_sends: LimitedTransmitSends::New,
            syn_loss_cut: true,
            pacing: false,
            pacing_off_given: false,
        }
    }
}

impl TcpSpec {
    pub(super) fn decode(v: Option<Value>, path: &str) -> SpecResult<TcpSpec> {
        let d = TcpSpec::default();
        let Some(v) = v else { return Ok(d) };
        let mut t = Table::new(v, path)?;
        let pacing_given = t.has("pacing");
        let mut s = TcpSpec {
            variant: TcpVariant::from_name(t.choice(
                "variant",
                TcpVariant::NAMES,
                Some("newreno"),
            )?),
            packet_size: t.u32("packet_size", d.packet_size)?,
            ecn: t.bool("ecn", d.ecn)?,
            ecn_plus: t.bool("ecn_plus", d.ecn_plus)?,
            delayed_ack: t.bool("delayed_ack", d.delayed_ack)?,
            delack_timeout: t.time("delack_timeout", d.delack_timeout)?,
            min_rto: t.time("min_rto", d.min_rto)?,
            max_rto: t.time("max_rto", d.max_rto)?,
            initial_rto: t.time("initial_rto", d.initial_rto)?,
            initial_cwnd: t.u32("initial_cwnd", d.initial_cwnd)?,
            rwnd: t.u32("rwnd", d.rwnd)?,
            limited_transmit: t.bool("limited_transmit", d.limited_transmit)?,
            ack_heuristic: t.bool("ack_heuristic", d.ack_heuristic)?,
            ecn_backoff: t.bool("ecn_backoff", d.ecn_backoff)?,
            ect_retransmits: t.bool("ect_retransmits", d.ect_retransmits)?,
            dupack_halving: t.bool("dupack_halving", d.dupack_halving)?,
            partial_ack_timer: match t.choice(
                "partial_ack_timer",
                &["first", "every"],
                Some("first"),
            )? {
                "every" => PartialAckTimer::Every,
                _ => PartialAckTimer::First,
            },
            clock_tick: t.time("clock_tick", d.clock_tick)?,
            loss_ssthresh: match t.choice(
                "loss_ssthresh",
                &["flight", "window", "ns2"],
                Some("flight"),
            )? {
                "window" => LossSsthresh::Window,
                "ns2" => LossSsthresh::Ns2,
                _ => LossSsthresh::Flight,
            },
            recovery_exit: match t.choice(
                "recovery_exit",
                &["flight", "ssthresh"],
                Some("flight"),
            )? {
                "ssthresh" => RecoveryExit::Ssthresh,
                _ => RecoveryExit::Flight,
            },
            limited_transmit_sends: match t.choice(
                "limited_transmit_sends",
                &["new", "next"],
                Some("new"),
            )? {
                "next" => LimitedTransmitSends::Next,
                _ => LimitedTransmitSends::New,
            },
            syn_loss_cut: t.bool("syn_loss_cut", d.syn_loss_cut)?,
            pacing: t.bool("pacing", d.pacing)?,
            pacing_off_given: false,
        };
        t.finish()?;
        s.pacing_off_given = pacing_given && !s.pacing;
        if s.variant == TcpVariant::Bbr {
            if s.pacing_off_given {
                return Err(SpecError::new(
                    join(path, "pacing"),
                    "false is not allowed with variant = \"bbr\": BBR sends at its pacing \
                     rate; give true or leave the key out",
                ));
            }
            s.pacing = true;
        }
        if !(HEADER_BYTES + 1..=65_535).contains(&s.packet_size) {
            return Err(SpecError::new(
                join(path, "packet_size"),
                format!(
                    "{} is outside the allowed range [41, 65535] bytes",
                    s.packet_size
                ),
            ));
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
        if s.initial_cwnd == 0 || s.initial_cwnd > 1000 {
            return Err(SpecError::new(
                join(path, "initial_cwnd"),
                format!(
                    "{} is outside the allowed range [1, 1000] segments",
                    s.initial_cwnd
                ),
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
        self.packet_size - HEADER_BYTES
    }
}

/// The `[tcp]` keys a TCP traffic group (bulk, web-simple, web) may set
/// for its own flows, overriding `[tcp]` (`ecn` is the group's own key).
/// These are the ones that differ between the hosts and applications of
/// the seeds' set-ups: the segment size (the thesis' web-simple "1 KB
/// packets" beside 500-byte FTP), the congestion control, delayed ACKs and
/// the initial window. The timers (`min_rto`, ...) stay run-wide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TcpOverrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<TcpVariant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<u32>,
}

/// The keys of [`TcpOverrides`].
pub const GROUP_TCP_KEYS: &[&str] = &["variant", "packet_size", "delayed_ack", "initial_cwnd"];

impl TcpOverrides {
    /// The group's keys from `t`; `tcp` is the run's `[tcp]` (a group's
    /// BBR needs the pacing `[tcp]` may have turned off).
    pub(super) fn decode(t: &mut Table, tcp: &TcpSpec) -> SpecResult<TcpOverrides> {
        let variant = if t.has("variant") {
            Some(TcpVariant::from_name(t.choice(
                "variant",
                TcpVariant::NAMES,
                None,
            )?))
        } else {
            t.allow("variant");
            None
        };
        if variant == Some(TcpVariant::Bbr) && tcp.pacing_off_given {
            return Err(SpecError::new(
                t.field_path("variant"),
                "\"bbr\" is not allowed with tcp.pacing = false: BBR sends at its pacing \
                 rate; remove tcp.pacing = false or choose another variant",
            ));
        }
        let packet_size = match t.take("packet_size") {
            Some(v) => {
                let p = t.field_path("packet_size");
                let n = as_u64(&v, &p)?;
                if !(HEADER_BYTES as u64 + 1..=65_535).contains(&n) {
                    return Err(SpecError::new(
                        p,
                        format!("{n} is outside the allowed range [41, 65535] bytes"),
                    ));
                }
                Some(n as u32)
            }
            None => None,
        };
        let delayed_ack = if t.has("delayed_ack") {
            Some(t.bool("delayed_ack", false)?)
        } else {
            t.allow("delayed_ack");
            None
        };
        let initial_cwnd = match t.take("initial_cwnd") {
            Some(v) => {
                let p = t.field_path("initial_cwnd");
                let n = as_u64(&v, &p)?;
                if !(1..=1000).contains(&n) {
                    return Err(SpecError::new(
                        p,
                        format!("{n} is outside the allowed range [1, 1000] segments"),
                    ));
                }
                Some(n as u32)
            }
            None => None,
        };
        Ok(TcpOverrides {
            variant,
            packet_size,
            delayed_ack,
            initial_cwnd,
        })
    }

    /// `tcp` with these overrides applied.
    pub fn apply(&self, tcp: &TcpSpec) -> TcpSpec {
        let mut s = *tcp;
        if let Some(v) = self.variant {
            s.variant = v;
            // BBR always paces.
            s.pacing |= v == TcpVariant::Bbr;
        }
        if let Some(v) = self.packet_size {
            s.packet_size = v;
        }
        if let Some(v) = self.delayed_ack {
            s.delayed_ack = v;
        }
        if let Some(v) = self.initial_cwnd {
            s.initial_cwnd = v;
        }
        s
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

    /// `pacing` is off by default and left out of the resolved scenario
    /// (files written before it resolve as they did); BBR turns it on, in
    /// `[tcp]` or for a group's flows; `pacing = false` written beside BBR
    /// is refused, naming the key that asks for BBR.
    #[test]
    fn bbr_paces_and_refuses_pacing_off() {
        let sc = parse(&doc("", "")).unwrap();
        assert!(!sc.tcp.pacing);
        let json = serde_json::to_string(&sc.tcp).unwrap();
        assert!(!json.contains("pacing"), "{json}");
        let sc = parse(&doc("variant = \"bbr\"", "")).unwrap();
        assert!(sc.tcp.pacing);
        assert!(serde_json::to_string(&sc.tcp)
            .unwrap()
            .contains("\"pacing\":true"));
        let sc = parse(&doc("pacing = true", "")).unwrap();
        assert_eq!((sc.tcp.variant, sc.tcp.pacing), (TcpVariant::NewReno, true));
        let sc = parse(&doc("", "variant = \"bbr\"")).unwrap();
        assert!(!sc.tcp.pacing);
        assert!(sc.traffic[0].tcp(&sc.tcp).pacing);
        let e = parse(&doc("variant = \"bbr\"\npacing = false", "")).unwrap_err();
        assert_eq!(e.path, "tcp.pacing");
        let e = parse(&doc("pacing = false", "variant = \"bbr\"")).unwrap_err();
        assert_eq!(e.path, "traffic[0].variant");
        // Written true, or left out, beside a group's BBR: accepted.
        assert!(parse(&doc("pacing = true", "variant = \"bbr\"")).is_ok());
    }
}
