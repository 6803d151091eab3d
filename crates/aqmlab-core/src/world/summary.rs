//! The figures of a measurement interval (the main one and each
//! `[metrics] phases` interval): the counters taken at its start, then at
//! its end the monitored links' figures, the flows' goodput, fairness and
//! TCP events, UDP loss, web response times and connection set-up, and
//! (main interval) the per-flow table. A periodic phase's counters at its
//! start are moved on past each gap between its windows
//! ([`Snapshot::skip_gap`], `windows.rs`), so that the same differences
//! count its windows only.

use super::results::ResponseTable;
use super::World;
use crate::aqm::AqmImpl;
use crate::metrics::{jain, GroupDelay, LinkStats, QueueFigures};
use crate::packet::Ecn;
use crate::scenario::Direction;
use crate::transport::FlowStats;
use crate::units::SimTime;
use serde::Serialize;
use std::collections::BTreeMap;

/// Every scalar figure of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub duration_s: f64,
    pub seed: u64,
    pub measure_start_s: f64,
    pub wall_time_s: f64,
    pub events: u64,
    /// The first monitored link (the dumbbell's R1 -> R2).
    pub bottleneck: BottleneckSummary,
    /// Every monitored link.
    pub links: Vec<LinkSummary>,
    /// Forward flows active during the measurement interval.
    pub flows: FlowsSummary,
    /// UDP flows (cbr, udp-onoff), when the scenario has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpSummary>,
    /// Latency probes sent in the interval (`ping` groups), when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ping: Option<super::ping::PingSummary>,
    /// Web transfers completed in the interval, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<WebSummary>,
    /// Video sessions, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<super::video::VideoSummary>,
    /// One entry per `[metrics] phases` interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseSummary>,
    /// Scheduled changes that could not be applied as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The figures of one `[metrics] phases` interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhaseSummary {
    pub start_s: f64,
    pub end_s: f64,
    /// A periodic phase: its windows (`every`, `length`, `offset`), how
    /// many there were, and the time they measured together (the figures'
    /// rates are over this time), seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_s: Option<f64>,
    pub bottleneck: BottleneckSummary,
    pub links: Vec<LinkSummary>,
    pub flows: FlowsSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<WebSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<super::video::VideoSummary>,
}

/// Figures of the monitored link over the measurement interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BottleneckSummary {
    pub utilization: f64,
    pub throughput_bps: f64,
    pub loss_rate: f64,
    /// Dropped data segments / data segments offered: the loss of data,
    /// without the pure ACKs among the arrivals.
    pub data_loss_rate: f64,
    pub arrivals: u64,
    pub departures: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    pub drops_overflow: u64,
    pub marks: u64,
    pub marks_early: u64,
    pub marks_forced: u64,
    pub lost_on_link: u64,
    /// Marks (early and forced) by the codepoint the packet carried: ECT(0),
    /// ECT(1), or CE already (a mark that changes nothing on the wire).
    pub marks_ect0: u64,
    pub marks_ect1: u64,
    pub marks_ce: u64,
    /// Drops (early, forced and overflow) by the packet's codepoint.
    pub drops_not_ect: u64,
    pub drops_ect0: u64,
    pub drops_ect1: u64,
    pub drops_ce: u64,
    /// Time-weighted queue in packets: mean, standard deviation, and the
    /// mean over `metrics.window` windows of each window's deviation.
    pub queue_mean_pkts: f64,
    pub queue_std_pkts: f64,
    pub queue_window_std_mean_pkts: f64,
    /// The same in bytes (the unit of a byte-mode scheme's queue).
    pub queue_mean_bytes: f64,
    pub queue_std_bytes: f64,
    pub queue_window_std_mean_bytes: f64,
    /// Mean size of the packets that arrived in the interval, bytes (NaN
    /// without arrivals).
    pub arrival_mean_size_bytes: f64,
    /// The byte figures in packets of that mean size (bytes /
    /// `arrival_mean_size_bytes`): a byte-mode queue in packets of the
    /// traffic's own mean size (NaN without arrivals).
    pub queue_mean_meanpkts: f64,
    pub queue_std_meanpkts: f64,
    pub queue_window_std_mean_meanpkts: f64,
    pub queue_windows: u64,
    pub queuing_delay_mean_s: f64,
    /// Quantiles and maximum of the queueing delays of the packets that
    /// left the queue in the interval (log-binned: within 3.2 %; the
    /// maximum exact), seconds.
    pub queuing_delay_p50_s: f64,
    pub queuing_delay_p90_s: f64,
    pub queuing_delay_p99_s: f64,
    pub queuing_delay_max_s: f64,
    /// DualPI2 only: the mean and 99th percentile sojourn of the packets
    /// that left its L queue and its C queue in the interval (log-binned
    /// as above; 0 without packets), seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l_queue_delay_mean_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l_queue_delay_p99_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c_queue_delay_mean_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c_queue_delay_p99_s: Option<f64>,
    /// `metrics.group_delays`: the sojourn times of each traffic group's
    /// packets, keyed by the group's index in `[[traffic]]` (as a string,
    /// `groups.0.delay_p99_s`), for the groups with packets that left the
    /// queue in the interval.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, GroupDelay>,
}

/// A monitored link's figures with its name.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkSummary {
    pub name: String,
    #[serde(flatten)]
    pub figures: BottleneckSummary,
}

/// Figures of the flows whose data crosses the monitored link.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowsSummary {
    pub count: u64,
    pub goodput_bps_total: f64,
    pub jain_fairness: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Fast retransmissions (loss recoveries entered on three duplicate ACKs).
    pub fast_retransmits: u64,
    /// Window reductions in answer to ECN-Echo.
    pub ecn_reductions: u64,
    pub marks_seen: u64,
    /// Loss recoveries run with SACK (`tcp.sack`; also in
    /// `fast_retransmits`), segments RACK marked lost and tail loss probes
    /// sent (`tcp.rack`), retransmission timeouts undone as spurious
    /// (`tcp.undo`; also in `timeouts`), D-SACKs accepted and cuts they
    /// undid (`tcp.dsack`), reordering seen (`tcp.rack`).
    pub sack_recoveries: u64,
    pub rack_detections: u64,
    pub tlp_probes: u64,
    pub timeouts_undone: u64,
    pub dsacks: u64,
    pub dsack_undos: u64,
    pub reorderings: u64,
    /// Connections of the forward flows that ran without ECN because their
    /// SYN was sent again (`tcp.ecn_fallback`), since the run began: a flow
    /// falls back while it opens, mostly before the interval.
    pub ecn_fallbacks: u64,
    /// Mean of the flows' RTT samples (their measured round-trip times,
    /// queueing included), seconds; NaN without samples.
    pub rtt_mean_s: f64,
}

/// Figures of the UDP flows over an interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UdpSummary {
    pub count: u64,
    /// Bits per second sent by the sources (packets on the wire).
    pub sent_bps: f64,
    /// Bits per second that reached the receivers.
    pub delivered_bps: f64,
    /// Share of the packets sent that were lost.
    pub loss_rate: f64,
}

/// Response times of the transfers completed in an interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WebSummary {
    pub completed: u64,
    pub response_time_mean_s: f64,
    pub response_time_p50_s: f64,
    pub response_time_p90_s: f64,
    pub response_time_p99_s: f64,
    /// Connection set-up of every TCP flow in the interval: SYNs dropped
    /// in the network, SYN/ACKs sent, dropped and arrived CE-marked, SYNs
    /// and requests sent again.
    pub syn_drops: u64,
    pub synacks_sent: u64,
    pub synack_drops: u64,
    pub synack_marks: u64,
    pub syn_retransmits: u64,
    pub request_retransmits: u64,
    /// Connection teardown: client FINs and server FIN/ACKs sent.
    pub fins_sent: u64,
    pub fin_acks_sent: u64,
    /// Open pages (`pages = "open"`) that waited for a free lane.
    pub pages_waited: u64,
}

impl WebSummary {
    /// Over the responses whose end `within` keeps.
    fn of(r: &ResponseTable, within: impl Fn(f64) -> bool) -> Option<WebSummary> {
        let mut t: Vec<f64> = (0..r.end_s.len())
            .filter(|&i| within(r.end_s[i]))
            .map(|i| r.response_time_s[i])
            .collect();
        if t.is_empty() {
            return None;
        }
        t.sort_by(f64::total_cmp);
        let q = |p: f64| nearest_rank(&t, p);
        Some(WebSummary {
            completed: t.len() as u64,
            response_time_mean_s: t.iter().sum::<f64>() / t.len() as f64,
            response_time_p50_s: q(0.5),
            response_time_p90_s: q(0.9),
            response_time_p99_s: q(0.99),
            ..WebSummary::default()
        })
    }
}

/// The `p`-quantile of the non-empty `sorted` by the nearest-rank method:
/// its element of rank ceil(p n), at least the first.
pub(super) fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// One row per flow, over the measurement interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowTable {
    pub flow: Vec<u32>,
    pub group: Vec<u32>,
    /// The traffic kind of the flow's group.
    pub kind: Vec<&'static str>,
    pub direction: Vec<&'static str>,
    pub start_s: Vec<f64>,
    pub base_rtt_s: Vec<f64>,
    pub bytes_delivered: Vec<u64>,
    pub goodput_bps: Vec<f64>,
    pub data_sent: Vec<u64>,
    pub retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
    pub fast_retransmits: Vec<u64>,
    pub marks_seen: Vec<u64>,
    pub ecn_reductions: Vec<u64>,
    pub sack_recoveries: Vec<u64>,
    pub rack_detections: Vec<u64>,
    pub tlp_probes: Vec<u64>,
    pub timeouts_undone: Vec<u64>,
    pub dsacks: Vec<u64>,
    pub dsack_undos: Vec<u64>,
    pub reorderings: Vec<u64>,
    pub drops: Vec<u64>,
    pub rtt_mean_s: Vec<f64>,
    pub cwnd_final: Vec<f64>,
}

/// Counters at the start of a measurement interval.
#[derive(Clone, Debug, Default)]
pub(super) struct Snapshot {
    links: Vec<LinkStats>,
    /// Bits each monitored link could have sent by then.
    capacity_bits: Vec<f64>,
    /// Bits of the packet each monitored link was sending then, still to go.
    pending_bits: Vec<f64>,
    flows: Vec<FlowStats>,
    /// [`World::short_bytes`] then.
    short_bytes: Vec<u64>,
}

impl Snapshot {
    /// Move these counters (taken at a periodic phase's start) on by what
    /// was counted from `gap` (taken at the end of one of its windows) to
    /// `now` (the start of the next): the phase's differences then leave
    /// the gap out.
    pub(super) fn skip_gap(&mut self, now: &Snapshot, gap: &Snapshot) {
        for (k, s) in self.links.iter_mut().enumerate() {
            *s = s.plus_since(&now.links[k], &gap.links[k]);
            self.capacity_bits[k] += now.capacity_bits[k] - gap.capacity_bits[k];
            self.pending_bits[k] += now.pending_bits[k] - gap.pending_bits[k];
        }
        for (f, s) in self.flows.iter_mut().enumerate() {
            *s = s.plus_since(&now.flows[f], &gap.flows[f]);
            self.short_bytes[f] += now.short_bytes[f] - gap.short_bytes[f];
        }
    }
}

impl World {
    /// Measurement interval `i` begins: start its queue integrals and take
    /// the counters it will be measured against.
    pub(super) fn interval_start(&mut self, i: usize) {
        self.settle_all(self.now);
        let now = self.now;
        let window = self.sc.metrics.window;
        for (l, _) in &self.monitored {
            if let Some(m) = self.links[*l].monitor.as_mut() {
                m.begin(i, now, window);
            }
        }
        self.snaps[i] = self.snapshot();
    }

    /// The counters now (the links settled to now).
    pub(super) fn snapshot(&self) -> Snapshot {
        let now = self.now;
        let mut links = Vec::with_capacity(self.monitored.len());
        let mut capacity_bits = Vec::with_capacity(self.monitored.len());
        let mut pending_bits = Vec::with_capacity(self.monitored.len());
        for (l, _) in &self.monitored {
            let link = &self.links[*l];
            links.push(link.stats);
            capacity_bits.push(link.capacity_bits(now));
            pending_bits.push(link.pending_tx_bits(now));
        }
        Snapshot {
            links,
            capacity_bits,
            pending_bits,
            flows: self.flows.iter().map(|f| f.stats).collect(),
            short_bytes: self.short_bytes.clone(),
        }
    }

    /// The figures of interval `i` from its start to `end`, and (for the
    /// main interval) the per-flow table.
    pub(super) fn interval_summary(&mut self, i: usize, end: SimTime) -> (PhaseSummary, FlowTable) {
        let phase = self.intervals[i];
        let start = phase.from;
        // Rates are over the time measured: a periodic phase's windows.
        let interval = match phase.windows {
            None => (end - start).as_secs_f64(),
            Some(_) => phase.measured().as_secs_f64(),
        };
        let snap = std::mem::take(&mut self.snaps[i]);
        let mut links = Vec::with_capacity(self.monitored.len());
        for (k, (l, name)) in self.monitored.iter().enumerate() {
            let link = &mut self.links[*l];
            let q = link
                .monitor
                .as_mut()
                .map(|m| m.end(i, end))
                .unwrap_or_default();
            let base = snap.links.get(k).copied().unwrap_or_default();
            let capacity =
                link.capacity_bits(end) - snap.capacity_bits.get(k).copied().unwrap_or(0.0);
            // Bits on the wire within the interval: a packet counts from the
            // start of its transmission, so take off what the one in
            // transmission at the end still has to send, and add what the
            // one at the start still had.
            let sent_bits = link.stats.since(&base).departure_bytes as f64 * 8.0
                + snap.pending_bits.get(k).copied().unwrap_or(0.0)
                - link.pending_tx_bits(end);
            let mut figures =
                link_figures(&link.stats.since(&base), &q, capacity, interval, sent_bits);
            figures.groups = q.groups.iter().map(|(g, d)| (g.to_string(), *d)).collect();
            if matches!(*link.aqm, AqmImpl::DualPi2(_)) {
                let [l, c] = q.class_delay;
                figures.l_queue_delay_mean_s = Some(l.mean_s);
                figures.l_queue_delay_p99_s = Some(l.p99_s);
                figures.c_queue_delay_mean_s = Some(c.mean_s);
                figures.c_queue_delay_p99_s = Some(c.p99_s);
            }
            links.push(LinkSummary {
                name: name.clone(),
                figures,
            });
        }
        let mut table = FlowTable::default();
        let mut fwd_goodput = Vec::new();
        let mut fs = FlowsSummary::default();
        let zero = FlowStats::default();
        let (mut rtt_sum, mut rtt_n) = (0.0, 0u64);
        let mut udp = UdpSummary::default();
        let (mut udp_sent, mut udp_arrived) = (0u64, 0u64);
        let mut setup = WebSummary::default();
        for (f, (fl, m)) in self.flows.iter().zip(&self.meta).enumerate() {
            let s = &fl.stats;
            let b = snap.flows.get(f).unwrap_or(&zero);
            // Delivered payload: whole segments less the short last ones.
            let short = self.short_bytes[f] - snap.short_bytes.get(f).copied().unwrap_or(0);
            // In-order payload, but no more segments than reached the
            // receiver in the interval: data buffered out of order before
            // it and released by a retransmission counts no more than the
            // wire carried.
            let segs =
                (s.segments_delivered - b.segments_delivered).min(s.data_arrived - b.data_arrived);
            let bytes = (segs * fl.mss() as u64).saturating_sub(short);
            let goodput = bytes as f64 * 8.0 / interval;
            let tcp = self.udp[f].is_none();
            setup.syn_drops += s.syn_drops - b.syn_drops;
            setup.synacks_sent += s.synacks_sent - b.synacks_sent;
            setup.synack_drops += s.synack_drops - b.synack_drops;
            setup.synack_marks += s.synack_marks - b.synack_marks;
            setup.syn_retransmits += s.syn_retransmits - b.syn_retransmits;
            setup.request_retransmits += s.request_retransmits - b.request_retransmits;
            setup.fins_sent += u64::from(s.fins_sent - b.fins_sent);
            setup.fin_acks_sent += u64::from(s.fin_acks_sent - b.fin_acks_sent);
            setup.pages_waited += u64::from(s.pages_waited - b.pages_waited);
            if let Some(u) = &self.udp[f] {
                if m.active_in(start, end) && !self.tag[f].ping {
                    udp.count += 1;
                    let sent = s.data_sent - b.data_sent;
                    let arrived = s.data_arrived - b.data_arrived;
                    udp_sent += sent;
                    udp_arrived += arrived;
                    udp.sent_bps += (sent * u.size as u64) as f64 * 8.0 / interval;
                    udp.delivered_bps += (arrived * u.size as u64) as f64 * 8.0 / interval;
                }
            }
            if tcp && m.direction == Direction::Forward && m.active_in(start, end) {
                fwd_goodput.push(goodput);
                fs.count += 1;
                fs.goodput_bps_total += goodput;
                fs.retransmits += s.retransmits - b.retransmits;
                fs.timeouts += s.timeouts - b.timeouts;
                fs.fast_retransmits += s.fast_retransmits - b.fast_retransmits;
                fs.ecn_reductions += s.ecn_reductions - b.ecn_reductions;
                fs.marks_seen += s.marks_seen - b.marks_seen;
                fs.sack_recoveries += s.sack_recoveries - b.sack_recoveries;
                fs.rack_detections += s.rack_detections - b.rack_detections;
                fs.tlp_probes += s.tlp_probes - b.tlp_probes;
                fs.timeouts_undone += s.timeouts_undone - b.timeouts_undone;
                fs.dsacks += u64::from(s.dsacks - b.dsacks);
                fs.dsack_undos += u64::from(s.dsack_undos - b.dsack_undos);
                fs.reorderings += u64::from(s.reorderings - b.reorderings);
                fs.ecn_fallbacks += s.ecn_fallbacks;
                rtt_sum += s.rtt_sum_s - b.rtt_sum_s;
                rtt_n += s.rtt_samples - b.rtt_samples;
            }
            if i != 0 {
                continue;
            }
            table.flow.push(f as u32);
            table.group.push(m.group);
            table.kind.push(self.sc.traffic[m.group as usize].kind());
            table.direction.push(match m.direction {
                Direction::Forward => "forward",
                Direction::Reverse => "reverse",
            });
            table.start_s.push(if m.start == SimTime::MAX {
                f64::NAN
            } else {
                m.start.as_secs_f64()
            });
            table.base_rtt_s.push(m.base_rtt.as_secs_f64());
            table.bytes_delivered.push(bytes);
            table.goodput_bps.push(goodput);
            table.data_sent.push(s.data_sent - b.data_sent);
            table.retransmits.push(s.retransmits - b.retransmits);
            table.timeouts.push(s.timeouts - b.timeouts);
            table
                .fast_retransmits
                .push(s.fast_retransmits - b.fast_retransmits);
            table.marks_seen.push(s.marks_seen - b.marks_seen);
            table
                .ecn_reductions
                .push(s.ecn_reductions - b.ecn_reductions);
            table
                .sack_recoveries
                .push(s.sack_recoveries - b.sack_recoveries);
            table
                .rack_detections
                .push(s.rack_detections - b.rack_detections);
            table.tlp_probes.push(s.tlp_probes - b.tlp_probes);
            table
                .timeouts_undone
                .push(s.timeouts_undone - b.timeouts_undone);
            table.dsacks.push(u64::from(s.dsacks - b.dsacks));
            table
                .dsack_undos
                .push(u64::from(s.dsack_undos - b.dsack_undos));
            table
                .reorderings
                .push(u64::from(s.reorderings - b.reorderings));
            table.drops.push(s.data_dropped - b.data_dropped);
            let n = s.rtt_samples - b.rtt_samples;
            table.rtt_mean_s.push(if n == 0 {
                f64::NAN
            } else {
                (s.rtt_sum_s - b.rtt_sum_s) / n as f64
            });
            table.cwnd_final.push(fl.cwnd);
        }
        fs.jain_fairness = jain(&fwd_goodput);
        fs.rtt_mean_s = if rtt_n == 0 {
            f64::NAN
        } else {
            rtt_sum / rtt_n as f64
        };
        // Packets still in flight at the end count as neither.
        udp.loss_rate = if udp_sent == 0 {
            0.0
        } else {
            1.0 - (udp_arrived as f64 / udp_sent as f64).min(1.0)
        };
        let video = self.video_summary(&phase, end);
        let web = match phase.windows {
            None => WebSummary::of(&self.responses, |t| {
                t >= start.as_secs_f64() && t <= end.as_secs_f64()
            }),
            Some(_) => WebSummary::of(&self.responses, |t| {
                phase.contains(SimTime::from_nanos_f64(t * 1e9))
            }),
        };
        let w = phase.windows;
        let phase = PhaseSummary {
            video,
            start_s: secs(start),
            // A periodic phase's span, whose last window may end before it.
            end_s: secs(if w.is_some() { phase.to } else { end }),
            every_s: w.map(|w| secs(w.every)),
            length_s: w.map(|w| secs(w.length)),
            offset_s: w.map(|w| secs(w.offset)),
            windows: w.map(|_| phase.window_count()),
            measured_s: w.map(|_| secs(phase.measured())),
            bottleneck: links.first().map(|l| l.figures.clone()).unwrap_or_default(),
            links,
            flows: fs,
            udp: (udp.count > 0).then_some(udp),
            web: web.map(|w| WebSummary {
                syn_drops: setup.syn_drops,
                synacks_sent: setup.synacks_sent,
                synack_drops: setup.synack_drops,
                synack_marks: setup.synack_marks,
                syn_retransmits: setup.syn_retransmits,
                request_retransmits: setup.request_retransmits,
                fins_sent: setup.fins_sent,
                fin_acks_sent: setup.fin_acks_sent,
                pages_waited: setup.pages_waited,
                ..w
            }),
        };
        (phase, table)
    }
}

/// A link's figures over an interval of `interval` seconds from its
/// counter differences `d`, queue figures `q` and the bits it could have
/// sent in the interval (∫ rate dt, exact across scheduled rate changes).
fn link_figures(
    d: &LinkStats,
    q: &QueueFigures,
    capacity_bits: f64,
    interval: f64,
    sent_bits: f64,
) -> BottleneckSummary {
    let mean_size = if d.arrivals == 0 {
        f64::NAN
    } else {
        d.arrival_bytes as f64 / d.arrivals as f64
    };
    BottleneckSummary {
        utilization: sent_bits / capacity_bits,
        throughput_bps: sent_bits / interval,
        loss_rate: if d.arrivals == 0 {
            0.0
        } else {
            d.drops() as f64 / d.arrivals as f64
        },
        data_loss_rate: if d.data_arrivals == 0 {
            0.0
        } else {
            d.data_drops as f64 / d.data_arrivals as f64
        },
        arrivals: d.arrivals,
        departures: d.departures,
        drops_early: d.drops_early,
        drops_forced: d.drops_forced,
        drops_overflow: d.drops_overflow,
        marks: d.marks(),
        marks_early: d.marks_early,
        marks_forced: d.marks_forced,
        lost_on_link: d.lost,
        marks_ect0: d.marks_by_ecn[Ecn::Ect0.index()],
        marks_ect1: d.marks_by_ecn[Ecn::Ect1.index()],
        marks_ce: d.marks_by_ecn[Ecn::Ce.index()],
        drops_not_ect: d.drops_by_ecn[Ecn::NotEct.index()],
        drops_ect0: d.drops_by_ecn[Ecn::Ect0.index()],
        drops_ect1: d.drops_by_ecn[Ecn::Ect1.index()],
        drops_ce: d.drops_by_ecn[Ecn::Ce.index()],
        queue_mean_pkts: q.mean_pkts,
        queue_std_pkts: q.std_pkts,
        queue_window_std_mean_pkts: q.window_std_mean_pkts,
        queue_mean_bytes: q.mean_bytes,
        queue_std_bytes: q.std_bytes,
        queue_window_std_mean_bytes: q.window_std_mean_bytes,
        arrival_mean_size_bytes: mean_size,
        queue_mean_meanpkts: q.mean_bytes / mean_size,
        queue_std_meanpkts: q.std_bytes / mean_size,
        queue_window_std_mean_meanpkts: q.window_std_mean_bytes / mean_size,
        queue_windows: q.windows,
        queuing_delay_mean_s: if d.departures == 0 {
            0.0
        } else {
            d.sojourn_ns as f64 * 1e-9 / d.departures as f64
        },
        queuing_delay_p50_s: q.delay_p50_s,
        queuing_delay_p90_s: q.delay_p90_s,
        queuing_delay_p99_s: q.delay_p99_s,
        queuing_delay_max_s: q.delay_max_s,
        ..BottleneckSummary::default()
    }
}

/// A time in seconds as the nearest f64 (`60s` is 60.0, where `ns * 1e-9`
/// gives 60.00000000000001): for the figures a user reads.
pub(super) fn secs(t: SimTime) -> f64 {
    t.0 as f64 / 1e9
}
