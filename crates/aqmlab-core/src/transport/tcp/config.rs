//! The configuration of one flow's TCP: the scenario's `[tcp]` with the
//! traffic group's keys applied, and how the flow opens (at once, with a
//! handshake, or passively as a web server).

use crate::scenario::TcpSpec;

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
