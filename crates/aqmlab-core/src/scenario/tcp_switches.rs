//! The on/off switches of `[tcp]`, packed in four bytes so that a flow's
//! configuration keeps its cache lines: the bits, their listing in the
//! resolved scenario, and the accessors of [`TcpSpec`] that read them.

use super::tcp::TcpSpec;
use serde::Serialize;

/// Switches of `[tcp]` packed in four bytes (see [`TcpSpec::switches`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSwitches(pub(super) u32);

impl TcpSwitches {
    pub(super) const TIMESTAMPS: u32 = 1;
    pub(super) const HYSTART: u32 = 2;
    pub(super) const PRAGUE_DETECTION: u32 = 4;
    pub(super) const MODERATE_RCVBUF: u32 = 8;
    pub(super) const TSO: u32 = 16;
    pub(super) const CUBIC_LINUX: u32 = 32;
    pub(super) const UNDO: u32 = 64;
    pub(super) const DELACK_LINUX: u32 = 128;
    pub(super) const TXREHASH: u32 = 256;
    pub(super) const ACK_HEURISTIC: u32 = 512;
    pub(super) const DCTCP_LINUX: u32 = 1024;
    pub(super) const ECN_FALLBACK: u32 = 2048;
    pub(super) const PRAGUE_RTT_NONE: u32 = 4096;
    pub(super) const LEDBAT_RFC7928: u32 = 8192;
    pub(super) const IDLE_RESTART: u32 = 16384;
    pub(super) const SYN_LINEAR: u32 = 32768;
    pub(super) const FRTO: u32 = 1 << 16;
    pub(super) const ECN_BACKOFF: u32 = 1 << 17;
    pub(super) const DUPACK_HALVING: u32 = 1 << 18;
    pub(super) const CWR_ON_RETRANSMIT: u32 = 1 << 19;
    pub(super) const PRAGUE_CWR_UDP: u32 = 1 << 20;
    pub(super) const ECN_PRR: u32 = 1 << 21;
    pub(super) const PSH: u32 = 1 << 22;
    pub(super) const TSO_DEFER: u32 = 1 << 23;
    pub(super) const DSACK: u32 = 1 << 24;
    pub(super) const CWND_VALIDATION: u32 = 1 << 25;
    pub(super) const CWND_VALIDATION_2020: u32 = 1 << 26;
    pub(super) const SACK_COMPRESSION: u32 = 1 << 27;

    /// The switches the resolved scenario lists on or off.
    const ALWAYS_LISTED: u32 =
        TcpSwitches::ACK_HEURISTIC | TcpSwitches::ECN_BACKOFF | TcpSwitches::DUPACK_HALVING;

    /// The switches the resolved scenario lists when on, in its order:
    /// the bit, the key and the choice it is listed with (`true` if none).
    const LISTED: [(u32, &'static str, Option<&'static str>); 25] = [
        (TcpSwitches::TIMESTAMPS, "timestamps", None),
        (TcpSwitches::HYSTART, "hystart", None),
        (
            TcpSwitches::PRAGUE_DETECTION,
            "prague_classic_ecn_detection",
            None,
        ),
        (TcpSwitches::MODERATE_RCVBUF, "moderate_rcvbuf", None),
        (TcpSwitches::TSO, "tso", None),
        (TcpSwitches::CUBIC_LINUX, "cubic", Some("linux")),
        (TcpSwitches::UNDO, "undo", None),
        (TcpSwitches::DELACK_LINUX, "delack_timer", Some("linux")),
        (TcpSwitches::TXREHASH, "txrehash", None),
        (TcpSwitches::DCTCP_LINUX, "dctcp", Some("linux")),
        (TcpSwitches::ECN_FALLBACK, "ecn_fallback", None),
        (
            TcpSwitches::PRAGUE_RTT_NONE,
            "prague_rtt_scaling",
            Some("none"),
        ),
        (TcpSwitches::LEDBAT_RFC7928, "ledbat", Some("rfc7928")),
        (TcpSwitches::IDLE_RESTART, "slow_start_after_idle", None),
        (TcpSwitches::SYN_LINEAR, "syn_linear_timeouts", None),
        (TcpSwitches::FRTO, "frto", None),
        (TcpSwitches::CWR_ON_RETRANSMIT, "cwr_on_retransmit", None),
        (
            TcpSwitches::PRAGUE_CWR_UDP,
            "prague_cwr",
            Some("udp-prague"),
        ),
        (TcpSwitches::ECN_PRR, "ecn_reduction", Some("prr")),
        (TcpSwitches::PSH, "psh", None),
        (TcpSwitches::TSO_DEFER, "tso_defer", None),
        (TcpSwitches::DSACK, "dsack", None),
        (TcpSwitches::CWND_VALIDATION, "cwnd_validation", None),
        (
            TcpSwitches::CWND_VALIDATION_2020,
            "cwnd_validation",
            Some("linux-2020"),
        ),
        (TcpSwitches::SACK_COMPRESSION, "sack_compression", None),
    ];

    pub(super) fn set(&mut self, bit: u32, on: bool) {
        if on {
            self.0 |= bit;
        } else {
            self.0 &= !bit;
        }
    }
}

impl Serialize for TcpSwitches {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // `ack_heuristic`, `ecn_backoff` and `dupack_halving` are listed
        // on or off (as when each was a field of its own); the others
        // when on.
        let on = (self.0 & !TcpSwitches::ALWAYS_LISTED).count_ones() as usize;
        let mut m = s.serialize_map(Some(on + 3))?;
        m.serialize_entry("ack_heuristic", &(self.0 & TcpSwitches::ACK_HEURISTIC != 0))?;
        m.serialize_entry("ecn_backoff", &(self.0 & TcpSwitches::ECN_BACKOFF != 0))?;
        m.serialize_entry(
            "dupack_halving",
            &(self.0 & TcpSwitches::DUPACK_HALVING != 0),
        )?;
        for (bit, key, choice) in TcpSwitches::LISTED {
            if self.0 & bit != 0 {
                match choice {
                    Some(c) => m.serialize_entry(key, c)?,
                    None => m.serialize_entry(key, &true)?,
                }
            }
        }
        m.end()
    }
}

impl TcpSpec {
    /// Linux's linear SYN timeouts (`tcp.syn_linear_timeouts`;
    /// `net.ipv4.tcp_syn_linear_timeouts = 4`, Linux 6.5 and later): a
    /// SYN's first four timeouts keep the initial RTO, so a SYN that is
    /// never answered goes at 0, 1, 2, 3, 4 and 5 s, then 7, 11, ... (with
    /// an initial RTO of 1 s). Off (the default): RFC 6298 (5.5) doubles
    /// from the first timeout.
    #[inline]
    pub fn syn_linear_timeouts(&self) -> bool {
        self.switches.0 & TcpSwitches::SYN_LINEAR != 0
    }

    pub fn set_syn_linear_timeouts(&mut self, on: bool) {
        self.switches.set(TcpSwitches::SYN_LINEAR, on);
    }

    /// How many of a SYN's first timeouts keep the initial RTO: Linux's 4
    /// with [`TcpSpec::syn_linear_timeouts`], else none.
    pub fn syn_linear_count(&self) -> u8 {
        if self.syn_linear_timeouts() {
            4
        } else {
            0
        }
    }

    /// RFC 7323 timestamps for RTT measurement (`tcp.timestamps`): the
    /// receiver echoes the send time of the segment section 4.3 names, and
    /// every ACK that advances the cumulative ACK gives the sender an RTT
    /// sample, also one that covers a retransmission (Karn's rule no longer
    /// blocks it). Off (the default): samples from the timed segment or
    /// the send times of segments never retransmitted.
    #[inline]
    pub fn timestamps(&self) -> bool {
        self.switches.0 & TcpSwitches::TIMESTAMPS != 0
    }

    pub fn set_timestamps(&mut self, on: bool) {
        self.switches.set(TcpSwitches::TIMESTAMPS, on);
    }

    /// HyStart++ (RFC 9406) in CUBIC's initial slow start (`tcp.hystart`):
    /// a rise of the round's minimum RTT over the last round's moves to
    /// Conservative Slow Start, which ends slow start after five rounds
    /// (Linux's classic HyStart with `cubic = "linux"`). Acts on CUBIC
    /// flows, `[tcp]`'s or a group's; needs `rtt_estimator = "linux"` (an
    /// RTT sample per ACK), and written in the file a flow that runs CUBIC.
    #[inline]
    pub fn hystart(&self) -> bool {
        self.switches.0 & TcpSwitches::HYSTART != 0
    }

    pub fn set_hystart(&mut self, on: bool) {
        self.switches.set(TcpSwitches::HYSTART, on);
    }

    /// Prague's classic-ECN-bottleneck detection and fallback
    /// (`tcp.prague_classic_ecn_detection`; the reference's
    /// `prague_ecn_fallback = 1`): a score from the RTT's variation and the
    /// queue's depth, and past a threshold the cut uses an alpha of at
    /// least 0.625 of the score's excess. Off (the default, as the
    /// reference's module parameter): pure L4S.
    #[inline]
    pub fn prague_classic_ecn_detection(&self) -> bool {
        self.switches.0 & TcpSwitches::PRAGUE_DETECTION != 0
    }

    pub fn set_prague_classic_ecn_detection(&mut self, on: bool) {
        self.switches.set(TcpSwitches::PRAGUE_DETECTION, on);
    }

    /// Prague's RTT independence (`tcp.prague_rtt_scaling`): `"rate"` (the
    /// default, the reference's `RTT_CONTROL_RATE`) makes a flow below
    /// 25 ms grow and cut as a 25 ms flow does after 500 rounds; `"none"`
    /// (`RTT_CONTROL_NONE`, as the L4S team's Prague ran before RTT
    /// independence) keeps one segment per round trip and a cut per round
    /// trip at any RTT. True for `"rate"`.
    #[inline]
    pub fn prague_rtt_scaling(&self) -> bool {
        self.switches.0 & TcpSwitches::PRAGUE_RTT_NONE == 0
    }

    pub fn set_prague_rtt_scaling(&mut self, rate: bool) {
        self.switches.set(TcpSwitches::PRAGUE_RTT_NONE, !rate);
    }

    /// When an RTT-independent Prague flow's ECE below 25 ms of its last
    /// cut starts a reduction (`tcp.prague_cwr`). `"linux"` (the default,
    /// the L4S team's kernel module): the TCP core enters its CWR state at
    /// any ECE outside one and the module's `prague_enter_cwr` then skips
    /// the cut, so that reduction spends a round trip without one.
    /// `"udp-prague"` (the L4S team's UDP Prague, `prague_cc.cpp`, which
    /// the team gives as TCP Prague's in rate and responsiveness): the
    /// reduction state lasts until a round trip and a virtual one
    /// (max(SRTT, 25 ms)) have passed since the cut, and the first ECE
    /// after that cuts. True for `"udp-prague"`.
    #[inline]
    pub fn prague_cwr_udp(&self) -> bool {
        self.switches.0 & TcpSwitches::PRAGUE_CWR_UDP != 0
    }

    pub fn set_prague_cwr_udp(&mut self, on: bool) {
        self.switches.set(TcpSwitches::PRAGUE_CWR_UDP, on);
    }

    /// LEDBAT's TARGET and GAIN (`tcp.ledbat`): `"rfc6817"` (the default:
    /// 100 ms, the RFC's largest, and 1) or `"rfc7928"` (5 ms and 10, RFC
    /// 7928 section 5.4's). True for `"rfc7928"`.
    #[inline]
    pub fn ledbat_rfc7928(&self) -> bool {
        self.switches.0 & TcpSwitches::LEDBAT_RFC7928 != 0
    }

    pub fn set_ledbat_rfc7928(&mut self, on: bool) {
        self.switches.set(TcpSwitches::LEDBAT_RFC7928, on);
    }

    /// Linux's receive-buffer autotuning (`tcp.moderate_rcvbuf`,
    /// `transport/tcp/rcvbuf.rs`): the receiver's window starts at 64 KiB
    /// and grows with what it reads each round trip; segments held out of
    /// order take its space. Needs `sack` (the window travels beside the
    /// SACK blocks). Off (the default): the fixed `rwnd`.
    #[inline]
    pub fn moderate_rcvbuf(&self) -> bool {
        self.switches.0 & TcpSwitches::MODERATE_RCVBUF != 0
    }

    pub fn set_moderate_rcvbuf(&mut self, on: bool) {
        self.switches.set(TcpSwitches::MODERATE_RCVBUF, on);
    }

    /// A paced flow's segments leave in the bursts of Linux's TSO/GSO
    /// autosizing (`tcp.tso`, `transport/tcp/pacing.rs`): about a
    /// millisecond of the pacing rate, two segments at least (BBR: one
    /// below 1.2 Mbit/s), at the release time of the burst. Flows that do
    /// not pace, and Prague, send as without it. Off (the default): one
    /// segment per release.
    #[inline]
    pub fn tso(&self) -> bool {
        self.switches.0 & TcpSwitches::TSO != 0
    }

    pub fn set_tso(&mut self, on: bool) {
        self.switches.set(TcpSwitches::TSO, on);
    }

    /// CUBIC flows grow their window as Linux's `tcp_cubic` does where it
    /// departs from RFC 9438 (`tcp.cubic = "linux"`, `cc/cubic.rs`): the
    /// target one minimum RTT ahead, at least 5 % per round trip before
    /// the first event, Reno's estimate at alpha 8 / 15 throughout. Needs
    /// `rtt_estimator = "linux"` (the linux profile's default stays inert
    /// beside the timed estimator). `"rfc9438"` (the default outside the
    /// linux profile): the RFC's rules. Other variants ignore it.
    #[inline]
    pub fn cubic_linux(&self) -> bool {
        self.switches.0 & TcpSwitches::CUBIC_LINUX != 0
    }

    pub fn set_cubic_linux(&mut self, on: bool) {
        self.switches.set(TcpSwitches::CUBIC_LINUX, on);
    }

    /// A retransmission timeout's cut undone when it proves spurious
    /// (`tcp.undo`, `transport/tcp/undo.rs`): the first ACK after the
    /// timeout that advances the cumulative ACK and echoes a timestamp from
    /// before the first retransmission (RFC 3522's detection, Linux's
    /// `tcp_try_undo_loss`) restores the window and ssthresh from before
    /// and forgets the timeout's loss marks. Acts on SACK flows with
    /// timestamps (an explicit `true` without them is refused; the linux
    /// profile's default stays inert when a file turns `timestamps` off).
    /// Off (the default): every timeout's cut stands.
    #[inline]
    pub fn undo(&self) -> bool {
        self.switches.0 & TcpSwitches::UNDO != 0
    }

    pub fn set_undo(&mut self, on: bool) {
        self.switches.set(TcpSwitches::UNDO, on);
    }

    /// ns-2's `ecn_backoff_` (`tcp.ecn_backoff`, on by default): an
    /// ECN-Echo that finds the window at one segment a second time in a
    /// row doubles the retransmission timer that governs the RFC 3168
    /// section 6.1.2 hold.
    #[inline]
    pub fn ecn_backoff(&self) -> bool {
        self.switches.0 & TcpSwitches::ECN_BACKOFF != 0
    }

    pub fn set_ecn_backoff(&mut self, on: bool) {
        self.switches.set(TcpSwitches::ECN_BACKOFF, on);
    }

    /// Halve the window on a loss found by duplicate ACKs (RFC 5681;
    /// `tcp.dupack_halving`, on by default). Off: the modified TCP of
    /// `002_80945567bf68047d.txt` section 5 (wireless), which retransmits
    /// without halving and halves only on a mark or a timeout.
    #[inline]
    pub fn dupack_halving(&self) -> bool {
        self.switches.0 & TcpSwitches::DUPACK_HALVING != 0
    }

    pub fn set_dupack_halving(&mut self, on: bool) {
        self.switches.set(TcpSwitches::DUPACK_HALVING, on);
    }

    /// F-RTO (`tcp.frto`, RFC 5682 section 3, the SACK-enhanced version,
    /// as Linux runs it with `net.ipv4.tcp_frto = 2`;
    /// `transport/tcp/frto.rs`): after a retransmission timeout, the first
    /// ACK that advances the cumulative ACK lets new data go before the
    /// other segments deemed lost; a timeout is spurious, and undone, when
    /// a later ACK delivers a segment from before it that was never sent
    /// again. Acts on SACK flows (an explicit `true` without SACK is
    /// refused). Off (the default): a timeout's retransmissions go first.
    #[inline]
    pub fn frto(&self) -> bool {
        self.switches.0 & TcpSwitches::FRTO != 0
    }

    pub fn set_frto(&mut self, on: bool) {
        self.switches.set(TcpSwitches::FRTO, on);
    }

    /// D-SACK (`tcp.dsack`, RFC 2883, as Linux runs it with
    /// `net.ipv4.tcp_dsack = 1`; `transport/tcp/dsack.rs`): the receiver
    /// reports a segment it received twice in the first block of the ACK
    /// it sends at once; the sender counts the reports, undoes a cut whose
    /// every retransmission they show needless, and ends a tail loss
    /// probe's episode without a cut when they show the probe's original
    /// arrived. Acts on SACK flows (an explicit `true` without SACK is
    /// refused). Off (the default): no D-SACK.
    #[inline]
    pub fn dsack(&self) -> bool {
        self.switches.0 & TcpSwitches::DSACK != 0
    }

    pub fn set_dsack(&mut self, on: bool) {
        self.switches.set(TcpSwitches::DSACK, on);
    }

    /// Linux's SACK compression at the receiver (`tcp.sack_compression`,
    /// `transport/tcp/sack_compress.rs`): while it holds data out of
    /// order, a receiver sends the first three ACKs for one cumulative ACK
    /// at once and holds the later ones up to min(1 ms, RTT / 20), at most
    /// 44 in a row (`__tcp_ack_snd_check`, `net.ipv4.tcp_comp_sack_*`).
    /// Acts on SACK flows (an explicit `true` without SACK is refused). On
    /// in the linux profile; off (the default): each such segment's ACK
    /// goes at once.
    #[inline]
    pub fn sack_compression(&self) -> bool {
        self.switches.0 & TcpSwitches::SACK_COMPRESSION != 0
    }

    pub fn set_sack_compression(&mut self, on: bool) {
        self.switches.set(TcpSwitches::SACK_COMPRESSION, on);
    }

    /// Linux's PSH (`tcp.psh`, `transport/tcp/push.rs`): a sender that does
    /// not pace cuts what it sends at once into TSO/GSO packets of
    /// `tcp_tso_autosize` segments and marks the last segment of each
    /// packet of two or more PSH; the receiver acknowledges an in-order
    /// PSH segment at once (Linux 6.7 and later, a reader that empties the
    /// socket at once). On in the linux profile; off (the default): no
    /// PSH.
    #[inline]
    pub fn psh(&self) -> bool {
        self.switches.0 & TcpSwitches::PSH != 0
    }

    pub fn set_psh(&mut self, on: bool) {
        self.switches.set(TcpSwitches::PSH, on);
    }

    /// Linux's TSO deferral (`tcp.tso_defer`, `transport/tcp/tso_defer.rs`):
    /// a SACK sender that does not pace, outside recovery, holds back new
    /// data the window cannot take as a whole TSO/GSO packet while the
    /// oldest segment's ACK is due within min(1 ms, SRTT / 2) and it last
    /// sent within 1 ms (`tcp_tso_should_defer`, Linux 6.18). On in the
    /// linux profile (with SACK); off (the default): what the window allows
    /// goes at once.
    #[inline]
    pub fn tso_defer(&self) -> bool {
        self.switches.0 & TcpSwitches::TSO_DEFER != 0
    }

    pub fn set_tso_defer(&mut self, on: bool) {
        self.switches.set(TcpSwitches::TSO_DEFER, on);
    }

    /// Linux's window validation (`tcp.cwnd_validation`,
    /// `transport/tcp/cwnd_use.rs`): the window of a SACK sender grows only
    /// while it limits what the sender sends (`tcp_is_cwnd_limited`: it
    /// did in the last window sent, or in slow start it is below twice the
    /// most segments outstanding then), not while the receiver's window,
    /// pacing or the application holds the sender back; BBR is not
    /// affected. On in the linux profile (with SACK); off (the default):
    /// every ACK that may grow the window grows it.
    /// `"linux-2020"`: the record as Linux kept it before the fixes of
    /// December 2020 and September 2022, which the L4S team's kernel of
    /// August 2020 runs ([`TcpSpec::cwnd_validation_2020`]).
    #[inline]
    pub fn cwnd_validation(&self) -> bool {
        self.switches.0 & (TcpSwitches::CWND_VALIDATION | TcpSwitches::CWND_VALIDATION_2020) != 0
    }

    /// On (Linux 6.x's record) or off; clears `"linux-2020"`.
    pub fn set_cwnd_validation(&mut self, on: bool) {
        self.switches.set(TcpSwitches::CWND_VALIDATION_2020, false);
        self.switches.set(TcpSwitches::CWND_VALIDATION, on);
    }

    /// `tcp.cwnd_validation = "linux-2020"`: Linux's record of the window's
    /// use before the fixes of December 2020 and September 2022
    /// (`transport/tcp/cwnd_use.rs`).
    #[inline]
    pub fn cwnd_validation_2020(&self) -> bool {
        self.switches.0 & TcpSwitches::CWND_VALIDATION_2020 != 0
    }

    /// Linux's record before its fixes of 2020 and 2022 in place of 6.x's.
    pub fn set_cwnd_validation_2020(&mut self) {
        self.switches.set(TcpSwitches::CWND_VALIDATION, false);
        self.switches.set(TcpSwitches::CWND_VALIDATION_2020, true);
    }

    /// CWR on whichever data segment goes first after a window reduction,
    /// a retransmission too (`tcp.cwr_on_retransmit`; ns-2's
    /// `SetCWRonRetransmit_`, added in 2005 off and on by default since
    /// June 2008, so ns-2.34 and ns-2.35 have it: `output()` sets CWR
    /// when `!is_retransmit || SetCWRonRetransmit_`). Off (the default):
    /// CWR on the first new segment, as RFC 3168 section 6.1.2 reads and
    /// as Linux's `tcp_ecn_send` does (a retransmission carries none).
    #[inline]
    pub fn cwr_on_retransmit(&self) -> bool {
        self.switches.0 & TcpSwitches::CWR_ON_RETRANSMIT != 0
    }

    pub fn set_cwr_on_retransmit(&mut self, on: bool) {
        self.switches.set(TcpSwitches::CWR_ON_RETRANSMIT, on);
    }

    /// RFC 6582 section 4.2's ACK heuristic (`tcp.ack_heuristic`): after a
    /// timeout, three duplicate ACKs below `recover` still start a fast
    /// retransmit when cwnd > 1 and the last advance of the cumulative ACK
    /// was at most four segments (ns-2's `bugfix_ack_`). Off (the default):
    /// the "careful" rule alone.
    #[inline]
    pub fn ack_heuristic(&self) -> bool {
        self.switches.0 & TcpSwitches::ACK_HEURISTIC != 0
    }

    pub fn set_ack_heuristic(&mut self, on: bool) {
        self.switches.set(TcpSwitches::ACK_HEURISTIC, on);
    }

    /// A new flow hash at every retransmission timeout (`tcp.txrehash`;
    /// Linux's `net.core.txrehash = 1`: `tcp_write_timeout` calls
    /// `sk_rethink_txhash`, which draws the socket's `sk_txhash` afresh, so
    /// that a flow stuck on a bad path may take another). A flow-hashing
    /// queue (FQ-CoDel, FQ-PIE, COBALT) then files the flow's data packets
    /// in another of its queues after each timeout. In the network that
    /// holds where the queue's hash reads the sender's: a queue on the
    /// sender's host or behind a veth pair in one kernel (`skb->hash`), a
    /// Linux queue hashing IPv6 packets (the flow label follows
    /// `sk_txhash`); not an IPv4 router, whose hash of the 5-tuple stays.
    /// On in the linux profile; off (the default) elsewhere. Left out of
    /// the resolved scenario when off.
    #[inline]
    pub fn txrehash(&self) -> bool {
        self.switches.0 & TcpSwitches::TXREHASH != 0
    }

    pub fn set_txrehash(&mut self, on: bool) {
        self.switches.set(TcpSwitches::TXREHASH, on);
    }

    /// DCTCP in Linux's integers (`tcp.dctcp = "linux"`, `cc/dctcp.rs`):
    /// alpha in 1/1024ths with `dctcp_update_alpha`'s rounding, the cuts
    /// on the window in whole segments, rounded as `dctcp_ssthresh` and
    /// `dctcp_react_to_loss` round them (a small window is not cut until
    /// alpha reaches about 2 / cwnd). `"rfc8257"` (the default outside the
    /// linux profile): RFC 8257's arithmetic, exact. Other variants ignore
    /// it.
    #[inline]
    pub fn dctcp_linux(&self) -> bool {
        self.switches.0 & TcpSwitches::DCTCP_LINUX != 0
    }

    pub fn set_dctcp_linux(&mut self, on: bool) {
        self.switches.set(TcpSwitches::DCTCP_LINUX, on);
    }

    /// RFC 3168 section 6.1.1.1's fallback (`tcp.ecn_fallback`; Linux's
    /// `net.ipv4.tcp_ecn_fallback = 1`): a connection whose SYN had to be
    /// sent again runs without ECN, as Linux's retransmitted SYN leaves
    /// without ECN's set-up flags (`tcp_ecn_clear_syn`). With a queue that
    /// drops a not-ECT SYN while it marks, those flows then see drops
    /// where the others see marks. A DCTCP connection runs as Reno then
    /// (Linux's `dctcp_reno`); Prague keeps ECN. On in the linux profile;
    /// off (the default) elsewhere. Left out of the resolved scenario when
    /// off.
    #[inline]
    pub fn ecn_fallback(&self) -> bool {
        self.switches.0 & TcpSwitches::ECN_FALLBACK != 0
    }

    pub fn set_ecn_fallback(&mut self, on: bool) {
        self.switches.set(TcpSwitches::ECN_FALLBACK, on);
    }

    /// Linux's restart after idle (`tcp.slow_start_after_idle`;
    /// `net.ipv4.tcp_slow_start_after_idle = 1`,
    /// `tcp_slow_start_after_idle_check`, `tcp_cwnd_restart`): when a
    /// server with nothing in flight is given data more than an RTO after
    /// it last sent (a request on a persistent connection: `web` with
    /// HTTP/1.1, `video`), ssthresh is kept at least 3/4 of the window and
    /// the window halves for every RTO of the idle time, down to the
    /// initial window at least. BBR and Prague keep their window (their
    /// `cong_control` exempts them in Linux). On in the linux profile; off
    /// (the default) elsewhere. Left out of the resolved scenario when
    /// off.
    #[inline]
    pub fn slow_start_after_idle(&self) -> bool {
        self.switches.0 & TcpSwitches::IDLE_RESTART != 0
    }

    pub fn set_slow_start_after_idle(&mut self, on: bool) {
        self.switches.set(TcpSwitches::IDLE_RESTART, on);
    }

    /// The receiver's delayed-ACK timer and quick-ACK mode as Linux's
    /// (`tcp.delack_timer = "linux"`, `transport/tcp/delack.rs`): the wait
    /// adapts to the gaps between segments (from `delack_timeout`, up to
    /// the receiver's RTT), and the first segments, those after a stall and
    /// those after a duplicate are acknowledged at once. Needs `sack` (the
    /// state is kept beside SACK's; the linux profile's default stays inert
    /// without it). `"fixed"` (the default outside the linux profile):
    /// every held segment waits `delack_timeout`.
    #[inline]
    pub fn delack_linux(&self) -> bool {
        self.switches.0 & TcpSwitches::DELACK_LINUX != 0
    }

    pub fn set_delack_linux(&mut self, on: bool) {
        self.switches.set(TcpSwitches::DELACK_LINUX, on);
    }

    /// An ECN reduction as Linux's CWR state makes it (`tcp.ecn_reduction
    /// = "prr"`, `transport/tcp/cwr.rs`): ssthresh is set at the echo and
    /// PRR takes the window down to it over the round trip that follows,
    /// with no growth, until the cumulative ACK passes the highest segment
    /// sent at the echo; a loss in that round continues the same
    /// reduction. Needs `sack` and `prr` (the linux profile's default stays
    /// inert without them). `"at-once"` (the default outside the linux
    /// profile): the window goes down to ssthresh at the echo. Congestion
    /// controls that set their window themselves (BBR, Prague) are not
    /// touched.
    #[inline]
    pub fn ecn_prr(&self) -> bool {
        self.switches.0 & TcpSwitches::ECN_PRR != 0
    }

    pub fn set_ecn_prr(&mut self, on: bool) {
        self.switches.set(TcpSwitches::ECN_PRR, on);
    }
}
