//! Everything a run produces ([`RunResult`]), gathered at its end: the
//! summary, the series and tables, the completed web responses, the
//! delay histograms and the event trace; and the accounting identities
//! checked on the way.

use super::ping::PingTable;
use super::sample::QueueSeries;
use super::summary::{secs, FlowTable, Summary};
use super::World;
use crate::metrics::{DelayTable, EventTrace, FlowSeries, GroupDelayTable, ParamSeries};
use crate::packet::flags;
use crate::scenario::Scenario;
use crate::units::SimTime;
use serde::Serialize;

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The resolved scenario (defaults filled in, seed as run).
    pub scenario: Scenario,
    pub summary: Summary,
    pub queue: QueueSeries,
    /// The monitored link's AQM parameters over time.
    pub params: ParamSeries,
    pub flows: FlowTable,
    /// Completed web transfers (empty without web traffic).
    pub responses: ResponseTable,
    /// The probes of `ping` groups, one row each (empty without them).
    pub pings: PingTable,
    /// Largest number of packets alive at once (arena slots used).
    pub peak_packets: usize,
    /// Queueing delay histogram of each monitored link (measurement interval).
    pub delay: DelayTable,
    /// The same per traffic group (`metrics.group_delays`; else empty).
    pub group_delay: GroupDelayTable,
    /// Chosen flows' TCP state over time (`metrics.flow_series`; else empty).
    pub flow_series: FlowSeries,
    /// Drops and marks on the monitored links (`metrics.trace`; else empty).
    pub events: EventTrace,
    /// The capture file `packets.pcap` (`metrics.pcap`; else empty).
    pub pcap: Vec<u8>,
}

/// Completed transfers (web sessions): one row each.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ResponseTable {
    /// The flow (with lanes, the lane) that fetched it.
    pub flow: Vec<u32>,
    /// The session: its first flow (the owner of its lanes; the flow
    /// itself without lanes).
    pub session: Vec<u32>,
    pub group: Vec<u32>,
    /// Page of the session (`web`: pages counted from 0, by the session
    /// whatever lane fetched it; `web-simple`: the transfer's number).
    /// With the same seed, (`session`, `page`, `object`) names the same
    /// object in every run of a scenario.
    pub page: Vec<u64>,
    /// Index of the object in its page (0 for `web-simple`).
    pub object: Vec<u32>,
    /// Payload bytes of the response.
    pub size_bytes: Vec<u64>,
    /// When the transfer began: its first SYN (a new connection), the
    /// request (a persistent connection), or its first data packet
    /// without a handshake.
    pub start_s: Vec<f64>,
    /// When the last byte reached the client.
    pub end_s: Vec<f64>,
    pub response_time_s: Vec<f64>,
}

impl World {
    /// Gather the results at the current time (normally the end of the run).
    pub fn finish(mut self) -> RunResult {
        self.settle_all(self.now + SimTime(1));
        let accounting = self.check_accounting();
        debug_assert!(accounting.is_ok(), "{accounting:?}");
        let end = self.now;
        let (main, table) = self.interval_summary(0, end);
        let params = self.links[self.monitored[0].0]
            .monitor
            .as_mut()
            .map(|m| std::mem::take(&mut m.params))
            .unwrap_or_default();
        let mut phases = std::mem::take(&mut self.phase_results);
        phases.remove(0);
        let flow_series = self.take_flow_series();
        let (delay, group_delay, events) = self.delay_and_trace();
        let pcap = self.capture_file(end);
        let summary = Summary {
            duration_s: secs(self.sc.duration),
            seed: self.sc.seed,
            measure_start_s: secs(self.sc.metrics.start),
            wall_time_s: 0.0,
            events: self.events.processed(),
            bottleneck: main.bottleneck,
            links: main.links,
            flows: main.flows,
            udp: main.udp,
            ping: self.pings.summary(
                self.tag.iter().filter(|t| t.ping).count() as u64,
                secs(self.sc.metrics.start),
                secs(end),
            ),
            web: main.web,
            video: main.video,
            phases,
            warnings: std::mem::take(&mut self.warnings),
        };
        RunResult {
            peak_packets: self.arena.peak(),
            scenario: self.sc,
            summary,
            queue: self.series,
            params,
            flows: table,
            responses: self.responses,
            pings: std::mem::take(&mut self.pings),
            delay,
            group_delay,
            flow_series,
            events,
            pcap,
        }
    }

    /// The capture file of `metrics.pcap` (empty when off): the packets of
    /// the captured links' directions merged in time order, those that
    /// had not left their queue by `end` left out.
    fn capture_file(&mut self, end: SimTime) -> Vec<u8> {
        use crate::metrics::pcap;
        if self.sc.metrics.pcap == 0 {
            return Vec::new();
        }
        let first = self.monitored[0].0;
        let mut take = |l: usize| {
            self.links
                .get_mut(l)
                .and_then(|k| k.monitor.as_mut())
                .and_then(|m| m.capture.take())
                .map(|c| c.packets)
                .unwrap_or_default()
        };
        let (a, b) = (take(first), take(first ^ 1));
        let packets = pcap::merge(a, b, end, self.sc.metrics.pcap);
        let wire: Vec<pcap::FlowWire> = (0..self.flows.len())
            .map(|f| pcap::FlowWire {
                mss: self.flows[f].mss(),
                udp: self.tag[f].udp,
                web: self.tag[f].web,
            })
            .collect();
        pcap::file(&packets, &wire)
    }

    /// Check the accounting identities: at every link, arrivals = departures
    /// + drops + waiting; for every flow, data sent = arrived + dropped + in flight.
    pub fn check_accounting(&self) -> Result<(), String> {
        for (i, l) in self.links.iter().enumerate() {
            let s = &l.stats;
            let waiting = l.qlen().pkts as u64;
            if s.arrivals != s.departures + s.drops() + waiting {
                return Err(format!(
                    "link {i}: arrivals {} != departures {} + drops {} + waiting {waiting}",
                    s.arrivals,
                    s.departures,
                    s.drops()
                ));
            }
        }
        let mut in_flight = vec![0u64; self.flows.len()];
        for p in self.arena.iter_live() {
            if p.has(flags::DATA) {
                in_flight[p.flow as usize] += 1;
            }
        }
        for (f, fl) in self.flows.iter().enumerate() {
            let s = &fl.stats;
            if s.data_sent != s.data_arrived + s.data_dropped + in_flight[f] {
                return Err(format!(
                    "flow {f}: sent {} != arrived {} + dropped {} + in flight {}",
                    s.data_sent, s.data_arrived, s.data_dropped, in_flight[f]
                ));
            }
            // The SACK scoreboard's counters against a recount.
            fl.check_recovery().map_err(|e| format!("flow {f}: {e}"))?;
        }
        Ok(())
    }

    /// The monitored links' delay histograms of the measurement interval,
    /// and their drop/mark traces merged in time order (a warning notes
    /// events past `metrics.trace_limit`).
    pub(super) fn delay_and_trace(&mut self) -> (DelayTable, GroupDelayTable, EventTrace) {
        let mut delay = DelayTable::default();
        let mut groups = GroupDelayTable::default();
        let mut merged: Vec<(SimTime, usize, u32, &'static str, &'static str)> = Vec::new();
        for (k, (l, name)) in self.monitored.iter().enumerate() {
            let Some(m) = self.links[*l].monitor.as_mut() else {
                continue;
            };
            for (lo, hi, c) in m.delays(0).bins() {
                delay.link.push(name.clone());
                delay.lower_s.push(lo as f64 / 1e9);
                delay.upper_s.push(hi as f64 / 1e9);
                delay.count.push(c);
            }
            for (g, h) in m.group_delays(0) {
                for (lo, hi, c) in h.bins() {
                    groups.link.push(name.clone());
                    groups.group.push(g);
                    groups.lower_s.push(lo as f64 / 1e9);
                    groups.upper_s.push(hi as f64 / 1e9);
                    groups.count.push(c);
                }
            }
            if let Some(t) = m.trace.take() {
                if t.missed > 0 {
                    self.warnings.push(format!(
                        "metrics.trace: {name}: {} drops and marks past trace_limit = {} \
                         were counted, not traced",
                        t.missed, t.limit
                    ));
                }
                merged.extend(t.events.into_iter().map(|(at, f, w, p)| (at, k, f, w, p)));
            }
        }
        merged.sort_by_key(|e| (e.0, e.1));
        let mut events = EventTrace::default();
        for (at, k, f, w, p) in merged {
            events.time_s.push(at.as_secs_f64());
            events.link.push(self.monitored[k].1.clone());
            events.flow.push(f);
            events.event.push(w);
            events.packet.push(p);
        }
        (delay, groups, events)
    }
}
