//! The configuration of one flow's TCP: the scenario's `[tcp]` with the
//! traffic group's keys applied, and how the flow opens (at once, with a
//! handshake, or passively as a web server).

use crate::scenario::{TcpSpec, TcpVariant};

/// Per-flow configuration: the scenario's `[tcp]` with the traffic group's
/// `ecn` override applied, and whether the flow opens with a handshake.
#[derive(Clone, Copy, Debug)]
pub struct TcpConfig {
    pub tcp: TcpSpec,
    pub handshake: bool,
    /// The data sender is a server that opens passively: the receiver end
    /// (the client) connects and requests (see [`super::TcpFlow::client_connect`]).
    pub passive: bool,
    /// Payload bytes of a client's request (passive flows).
    pub request_bytes: u32,
    /// A passive connection that carries the request only: the server
    /// answers it with a pure ACK, and the response comes over a
    /// connection the server opens ([`super::TcpFlow::server_open`]; ns-2's
    /// WebTraf pattern, `http = "webtraf"`).
    pub request_only: bool,
    /// How new ACKs open the window (from `variant` and `byte_counting`):
    /// one branch per ACK picks the rule.
    pub growth: Growth,
}

/// The window's growth on a new ACK outside recovery (see
/// `cc/reno.rs`, `TcpFlow::grow_window`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// Reno and NewReno: +1 segment per new ACK in slow start, +1/cwnd in
    /// congestion avoidance (RFC 5681 section 3.1).
    Reno,
    /// CUBIC: Reno's slow start, RFC 9438's congestion avoidance.
    Cubic,
    /// Byte counting (RFC 3465, any variant), DCTCP (no growth in the
    /// window after an ECN cut, as Linux's CWR state) or Prague (its
    /// fractional window): the rules of `TcpFlow::counted_growth`.
    Counted,
}

impl Growth {
    pub(super) fn of(s: &TcpSpec) -> Growth {
        match s.variant {
            _ if s.byte_counting => Growth::Counted,
            // HyStart++'s slow start (`cc/hystart.rs`), out of line.
            TcpVariant::Cubic if s.hystart() => Growth::Counted,
            TcpVariant::Dctcp => Growth::Counted,
            // Prague grows its fractional window (`cc/prague.rs`).
            TcpVariant::Prague => Growth::Counted,
            TcpVariant::Cubic => Growth::Cubic,
            TcpVariant::Reno | TcpVariant::NewReno => Growth::Reno,
            // BBR sets the window itself after every ACK (`pacing.rs`).
            TcpVariant::Bbr => Growth::Reno,
            // LEDBAT grows by its own rule (`cc/ledbat.rs`).
            TcpVariant::Ledbat => Growth::Reno,
        }
    }
}

impl TcpConfig {
    pub fn from_spec(s: &TcpSpec, handshake: bool, ecn: bool) -> TcpConfig {
        let mut tcp = TcpSpec { ecn, ..*s };
        // HyStart is CUBIC's (`[tcp]`'s switch reaches a group's CUBIC
        // flows; the others never look at it).
        if tcp.variant != TcpVariant::Cubic {
            tcp.set_hystart(false);
        }
        TcpConfig {
            tcp,
            handshake,
            passive: false,
            request_bytes: 0,
            request_only: false,
            growth: Growth::of(&tcp),
        }
    }

    /// A request/response flow: the client opens, the server answers.
    pub fn passive(s: &TcpSpec, ecn: bool, request_bytes: u32) -> TcpConfig {
        TcpConfig {
            passive: true,
            handshake: true,
            request_bytes,
            ..TcpConfig::from_spec(s, true, ecn)
        }
    }
}
