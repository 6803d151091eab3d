//! The `[tcp]` keys a traffic group may set for its own flows
//! (`[[traffic]]`'s `variant`, `packet_size`, `delayed_ack`, `initial_cwnd`,
//! `ecn_codepoint`), over the run's `[tcp]` (`tcp.rs`).

use super::decode::{as_u64, SpecError, SpecResult, Table};
use super::spec::HEADER_BYTES;
use super::tcp::{
    EcnCodepoint, TcpSpec, TcpVariant, DCTCP_NEEDS_ECN, ECT1_NEEDS_ECN, PRAGUE_NEEDS_ECN,
};
use serde::Serialize;

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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_codepoint: Option<EcnCodepoint>,
}

/// The keys of [`TcpOverrides`].
pub const GROUP_TCP_KEYS: &[&str] = &[
    "variant",
    "packet_size",
    "delayed_ack",
    "initial_cwnd",
    "ecn_codepoint",
];

impl TcpOverrides {
    /// The group's keys from `t`; `tcp` is the run's `[tcp]` (a group's
    /// BBR runs PRR only with SACK; whether `[tcp]` wrote `pacing = false`
    /// is checked with the whole scenario).
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
        if let Some(v) = variant.filter(|v| v.always_paces() && tcp.prr && !tcp.sack) {
            return Err(SpecError::new(
                t.field_path("variant"),
                format!(
                    "\"{}\" is not allowed with tcp.prr = true and tcp.sack = false: a pacing \
                     flow runs PRR only with SACK's recovery; set tcp.sack = true or tcp.prr = false",
                    v.name()
                ),
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
        let delayed_ack = t.opt_bool("delayed_ack")?;
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
        let ecn_codepoint = if t.has("ecn_codepoint") {
            Some(EcnCodepoint::from_name(t.choice(
                "ecn_codepoint",
                EcnCodepoint::NAMES,
                None,
            )?))
        } else {
            t.allow("ecn_codepoint");
            None
        };
        Ok(TcpOverrides {
            variant,
            packet_size,
            delayed_ack,
            initial_cwnd,
            ecn_codepoint,
        })
    }

    /// A TCP group runs DCTCP only with ECN (`ecn`: the group's own key;
    /// `tcp`: `[tcp]`, already checked on its own). The error names the
    /// group's `ecn` if it turned ECN off, else its `variant`.
    pub(super) fn check_ecn(&self, t: &Table, tcp: &TcpSpec, ecn: Option<bool>) -> SpecResult<()> {
        if self.ecn_codepoint == Some(EcnCodepoint::Ect1) && !ecn.unwrap_or(tcp.ecn) {
            let ecn_key = t.field_path("ecn");
            return Err(SpecError::new(
                t.field_path("ecn_codepoint"),
                ECT1_NEEDS_ECN.replace("{where}", &ecn_key),
            ));
        }
        let variant = self.variant.unwrap_or(tcp.variant);
        if !variant.scalable() || ecn.unwrap_or(tcp.ecn) {
            return Ok(());
        }
        let ecn_key = t.field_path("ecn");
        let (needs, why) = if variant == TcpVariant::Prague {
            (
                PRAGUE_NEEDS_ECN,
                "TCP Prague reacts to ECN marks (RFC 9331 section 4.3)",
            )
        } else {
            (
                DCTCP_NEEDS_ECN,
                "DCTCP reacts to ECN marks (RFC 8257 section 3)",
            )
        };
        if ecn == Some(false) {
            return Err(SpecError::new(
                ecn_key.clone(),
                needs.replace("{where}", &ecn_key),
            ));
        }
        Err(SpecError::new(
            t.field_path("variant"),
            format!(
                "\"{}\" is not allowed while tcp.ecn is false: {why} and needs ECN-capable transport; set {ecn_key} = true or tcp.ecn = true",
                variant.name()
            ),
        ))
    }

    /// `tcp` with these overrides applied.
    pub fn apply(&self, tcp: &TcpSpec) -> TcpSpec {
        let mut s = *tcp;
        if let Some(v) = self.variant {
            s.variant = v;
            // BBR and Prague always pace; Prague sends ECT(1) unless the
            // group names a codepoint.
            s.pacing |= v.always_paces();
            if self.ecn_codepoint.is_none() {
                if v == TcpVariant::Prague {
                    s.ecn_codepoint = EcnCodepoint::Ect1;
                } else if tcp.variant == TcpVariant::Prague {
                    // ECT(1) came with [tcp]'s Prague, not for this group.
                    s.ecn_codepoint = EcnCodepoint::Ect0;
                }
            }
        }
        if let Some(v) = self.packet_size {
            // At most 65 535 (checked when decoded).
            s.packet_size = v as u16;
        }
        if let Some(v) = self.delayed_ack {
            s.delayed_ack = v;
        }
        if let Some(v) = self.initial_cwnd {
            // At most 1000 (checked when decoded).
            s.initial_cwnd = v as u16;
        }
        if let Some(v) = self.ecn_codepoint {
            s.ecn_codepoint = v;
        }
        s
    }
}
