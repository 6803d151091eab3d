//! Helpers of the TCP unit tests: configurations, a sender with a window
//! in flight, ACKs and deliveries by hand.

use super::{Seg, TcpConfig, TcpFlow};
use crate::packet::{flags, Ecn};
use crate::scenario::{TcpSpec, TcpVariant};
use crate::units::SimTime;

/// A sender of `variant` with an initial window of one segment, ECN on.
pub(super) fn cfg(variant: TcpVariant) -> TcpConfig {
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
pub(super) fn deliver(rx: &mut TcpFlow, out: &[Seg], skip: &[u64]) -> Vec<Seg> {
    let mut acks = Vec::new();
    for s in out
        .iter()
        .filter(|s| s.from_sender && !skip.contains(&s.seq))
    {
        rx.on_data(SimTime(0), s.seq, s.flags, s.ecn, s.ts, &mut acks);
    }
    acks
}

/// A web flow's TCP: 1000-byte segments, ECN and ECN+.
pub(super) fn ecn_plus_spec(initial_cwnd: u32) -> TcpSpec {
    TcpSpec {
        packet_size: 1040,
        initial_cwnd,
        ecn: true,
        ecn_plus: true,
        ..TcpSpec::default()
    }
}

/// One millisecond, ns.
const MS: u64 = 1_000_000;

/// A NewReno sender with `cwnd = ssthresh = w`, an RTT estimate of
/// 100 ms (RTO 300 ms) and `w` segments (0..w) sent at time 0.
pub(super) fn sender(w: f64, tcp: TcpSpec) -> (TcpFlow, Vec<Seg>) {
    let mut tx = TcpFlow::new(TcpConfig::from_spec(&tcp, false, tcp.ecn));
    tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
    tx.cwnd = w;
    tx.ssthresh = w;
    let mut out = Vec::new();
    tx.start(SimTime(0), &mut out);
    assert_eq!(out.len(), w as usize);
    (tx, out)
}

/// `[tcp]`'s defaults with ECN.
pub(super) fn spec() -> TcpSpec {
    TcpSpec {
        ecn: true,
        ..TcpSpec::default()
    }
}

/// An ACK for `a` (with ECN-Echo if `ece`) reaching `tx` at `t_ms`
/// milliseconds; returns what `tx` sends.
pub(super) fn ack(tx: &mut TcpFlow, t_ms: u64, a: u64, ece: bool) -> Vec<Seg> {
    let mut out = Vec::new();
    let f = if ece {
        flags::ACK | flags::ECE
    } else {
        flags::ACK
    };
    tx.on_ack(SimTime(t_ms * MS), a, f, Ecn::NotEct, &mut out);
    out
}
