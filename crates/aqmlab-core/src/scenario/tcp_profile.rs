//! `tcp.profile`: the named sets of `[tcp]` defaults (aqmlab's own,
//! Linux 6.x's, and the seeds' ns-2 agents), each row with the setting it
//! stands for; `docs/tcp.md` has the table.

use super::tcp::{
    LimitedTransmitSends, LossSsthresh, PartialAckTimer, RecoveryExit, RttEstimator, SynLossCut,
    TcpSpec, TcpVariant, TimeoutInRecovery,
};
use super::tcp_switches::TcpSwitches;
use crate::units::SimTime;
use serde::Serialize;

/// `tcp.profile`: a named set of defaults for the `[tcp]` keys, which
/// the keys a scenario gives then refine. `docs/tcp.md` lists each. The
/// resolved scenario lists every key's value, not the profile (which a
/// flow does not carry: its `TcpSpec` stays within its cache lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TcpProfile {
    /// aqmlab's own defaults (the RFCs' rules, NewReno, one segment at the start).
    #[serde(rename = "aqmlab")]
    Aqmlab,
    /// What a Linux 6.x host does by default.
    #[serde(rename = "linux")]
    Linux,
    /// ns-2's one-way TCP agents as the REM paper's simulations (2001) ran them.
    #[serde(rename = "ns2-2001")]
    Ns2001,
    /// ns-2.35's one-way TCP agents as the thesis' simulations (2009) ran them.
    #[serde(rename = "ns2-2009")]
    Ns2009,
}

impl TcpProfile {
    /// The names `profile` takes.
    pub const NAMES: &'static [&'static str] = &["aqmlab", "linux", "ns2-2001", "ns2-2009"];

    pub(super) fn from_name(name: &str) -> TcpProfile {
        match name {
            "linux" => TcpProfile::Linux,
            "ns2-2001" => TcpProfile::Ns2001,
            "ns2-2009" => TcpProfile::Ns2009,
            _ => TcpProfile::Aqmlab,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TcpProfile::Aqmlab => "aqmlab",
            TcpProfile::Linux => "linux",
            TcpProfile::Ns2001 => "ns2-2001",
            TcpProfile::Ns2009 => "ns2-2009",
        }
    }

    /// The `[tcp]` defaults of this profile.
    pub fn defaults(self) -> TcpSpec {
        let d = TcpSpec::default();
        match self {
            TcpProfile::Aqmlab => d,
            // Linux 6.x (net/ipv4): CUBIC (`tcp_congestion_control`), an
            // initial window of 10 (`TCP_INIT_CWND`, RFC 6928), delayed
            // ACKs with the 40 ms minimum timer (`TCP_DELACK_MIN`), an
            // initial RTO of 1 s (`TCP_TIMEOUT_INIT`, RFC 6298), a maximum
            // of 120 s (`TCP_RTO_MAX`), ssthresh at least two segments
            // under ECN, 1500-byte packets (an Ethernet MTU), byte counting
            // (`tcp_slow_start`, `tcp_cong_avoid_ai`).
            TcpProfile::Linux => TcpSpec {
                variant: TcpVariant::Cubic,
                packet_size: 1500,
                delayed_ack: true,
                delack_timeout: SimTime::from_millis(40),
                initial_rto: SimTime::from_secs(1),
                max_rto: SimTime::from_secs(120),
                initial_cwnd: 10,
                loss_ssthresh: LossSsthresh::Window,
                recovery_exit: RecoveryExit::Ssthresh,
                ecn_hold: false,
                byte_counting: true,
                // The start after a lost SYN (`tcp_init_transfer`).
                syn_loss_cut: SynLossCut::Linux,
                // SACK (`net.ipv4.tcp_sack = 1`), RACK-TLP as its loss
                // detection (`net.ipv4.tcp_recovery = 1`), PRR in recovery.
                sack: true,
                rack: true,
                prr: true,
                // Every ACK an RTT sample (`tcp_clean_rtx_queue`), RTO =
                // SRTT + max(deviation, `tcp_rto_min`) (`tcp_set_rto`).
                rtt_estimator: RttEstimator::Linux,
                // RFC 7323 timestamps (`net.ipv4.tcp_timestamps = 1`),
                // HyStart++ in CUBIC's slow start (RFC 9406; Linux's
                // `tcp_cubic` runs classic HyStart, `hystart = 1`, which
                // `cubic = "linux"` gives), and a paced flow's segments in
                // TSO/GSO bursts (`tcp_tso_autosize`; GSO is always on).
                // A timeout's cut undone when the echoed timestamp shows it
                // spurious (`tcp_try_undo_loss`; no sysctl turns it off).
                // CUBIC's window as `tcp_cubic` grows it (`bictcp_update`),
                // and the receiver's delayed-ACK timer and quick ACKs as
                // `tcp_event_data_recv` and `tcp_delack_timer_handler` set
                // them. A new flow hash at every timeout
                // (`net.core.txrehash = 1`). DCTCP in `tcp_dctcp`'s
                // integers. A connection whose SYN was sent again runs
                // without ECN (`net.ipv4.tcp_ecn_fallback = 1`). A
                // server idle for more than an RTO restarts its window
                // (`net.ipv4.tcp_slow_start_after_idle = 1`). A SYN's
                // first four timeouts linear (`tcp_syn_linear_timeouts`).
                // F-RTO (`net.ipv4.tcp_frto = 2`). The receiver's window
                // autotuned (`net.ipv4.tcp_moderate_rcvbuf = 1`). PSH on
                // every TSO/GSO packet of two segments or more, and the
                // receiver's ACK at once for it (`__tcp_transmit_skb`,
                // `tcp_measure_rcv_mss`); a packet below its goal held for
                // the next ACK (`tcp_tso_should_defer`). D-SACK
                // (`net.ipv4.tcp_dsack = 1`). The window grown only while
                // it limits the sender (`tcp_is_cwnd_limited`). The
                // receiver's ACKs for data out of order compressed
                // (`net.ipv4.tcp_comp_sack_nr = 44`).
                switches: TcpSwitches(
                    TcpSwitches::TIMESTAMPS
                        | TcpSwitches::HYSTART
                        | TcpSwitches::TSO
                        | TcpSwitches::UNDO
                        | TcpSwitches::CUBIC_LINUX
                        | TcpSwitches::DELACK_LINUX
                        | TcpSwitches::TXREHASH
                        | TcpSwitches::DCTCP_LINUX
                        | TcpSwitches::ECN_FALLBACK
                        | TcpSwitches::IDLE_RESTART
                        | TcpSwitches::SYN_LINEAR
                        | TcpSwitches::FRTO
                        | TcpSwitches::ECN_BACKOFF
                        | TcpSwitches::DUPACK_HALVING
                        | TcpSwitches::MODERATE_RCVBUF
                        | TcpSwitches::ECN_PRR
                        | TcpSwitches::PSH
                        | TcpSwitches::TSO_DEFER
                        | TcpSwitches::DSACK
                        | TcpSwitches::CWND_VALIDATION
                        | TcpSwitches::SACK_COMPRESSION,
                ),
                ..d
            },
            // ns-2 before its 2003 changes: no limited transmit
            // (`singledup_` off), NewReno's timer re-armed on every partial
            // ACK (`newreno_changes1_ = 0`), retransmissions ECN-capable.
            TcpProfile::Ns2001 => TcpSpec {
                limited_transmit: false,
                partial_ack_timer: PartialAckTimer::Every,
                ect_retransmits: true,
                timeout_in_recovery: TimeoutInRecovery::Cut,
                ..d
            },
            // ns-2.35: a 10 ms TCP clock (`tcpTick_`), its own window cut
            // (`slowdown()`), recovery left at ssthresh
            // (`exit_recovery_fix_ = 0`), limited transmit sending the
            // next segment (`singledup_`), retransmissions ECN-capable and
            // CWR on a retransmission too (`SetCWRonRetransmit_`, on since
            // June 2008).
            TcpProfile::Ns2009 => TcpSpec {
                ect_retransmits: true,
                switches: TcpSwitches(d.switches.0 | TcpSwitches::CWR_ON_RETRANSMIT),
                clock_tick: SimTime::from_millis(10),
                loss_ssthresh: LossSsthresh::Ns2,
                recovery_exit: RecoveryExit::Ssthresh,
                limited_transmit_sends: LimitedTransmitSends::Next,
                timeout_in_recovery: TimeoutInRecovery::Cut,
                ..d
            },
        }
    }
}
