//! The time series: the monitored links' queues every
//! `metrics.sample_interval`, and the TCP state of the flows of
//! `metrics.flow_series`.
//!
//! A traced flow's sample at an instant `s` is its state after every event
//! of its own before `s` and before any at `s`. It is taken lazily, so that
//! tracing leaves the run as it is: an endpoint that takes packets ahead of
//! the clock ([`World::deliver`]) first takes its part of its flow's
//! samples due up to the time of what it takes ([`World::flow_event`]):
//! the sender its window, timers and congestion control's state, the
//! receiver what it has delivered (the two ends of a flow run ahead each on
//! its own); the sample event at `s` takes the parts of the ends that had
//! nothing to do since. A traced run is the untraced run to the last
//! digit.

use super::World;
use crate::aqm::Aqm;
use crate::metrics::FlowSeries;
use crate::sim::Event;
use crate::units::SimTime;
use serde::Serialize;

/// The queue time series of the monitored link.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueSeries {
    /// Name of the monitored link of the row.
    pub link: Vec<String>,
    pub time_s: Vec<f64>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    /// The AQM's average queue (NaN where the scheme has none).
    pub avg: Vec<f64>,
    pub drops: Vec<u64>,
    pub marks: Vec<u64>,
    /// Bytes that started transmission since the start of the run
    /// (cumulative; its differences give the link's throughput series).
    pub departed_bytes: Vec<u64>,
}

/// The optional flow series (`metrics.flow_series`), taken in parts.
#[derive(Default)]
pub(super) struct Extras {
    /// Per flow: its place in `metrics.flow_series`, or `NOT_TRACED`.
    place: Vec<u32>,
    /// Per traced flow (by place): its sender's and its receiver's next
    /// sample's instant, and the parts they took.
    next: Vec<[SimTime; 2]>,
    sender: Vec<Vec<SenderPart>>,
    /// Segments delivered in order, and data packets that reached the
    /// receiver, at each sample.
    receiver: Vec<Vec<(u64, u64)>>,
}

/// [`Extras::place`] of a flow not traced.
const NOT_TRACED: u32 = u32::MAX;

/// Which end of a flow takes an event ([`World::flow_event`]): one end, as
/// it runs ahead of the clock; or both, for an event at the clock's time,
/// which neither end has passed yet (each has taken every event of its own
/// before it), so that an event of one end that changes the other (a web
/// response that opens a request) finds both parts taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum End {
    Sender,
    Receiver,
    Both,
}

/// The sender's part of a sample.
struct SenderPart {
    cwnd: f64,
    ssthresh: f64,
    srtt_s: f64,
    rto_s: f64,
    alpha: f64,
    pacing_rate_bps: f64,
    rate_sample_bps: f64,
    bbr_state: &'static str,
    bbr_bw_bps: f64,
    ca_state: &'static str,
}

impl World {
    pub(super) fn sample(&mut self) {
        self.settle_all(self.now);
        self.links[self.monitored[0].0].sample_params(self.now);
        for (l, name) in &self.monitored[..self.series_links] {
            let link = &self.links[*l];
            let q = link.qlen();
            let s = &mut self.series;
            s.link.push(name.clone());
            s.time_s.push(self.now.as_secs_f64());
            s.queue_pkts.push(q.pkts);
            s.queue_bytes.push(q.bytes);
            s.avg.push(link.aqm.average().unwrap_or(f64::NAN));
            s.drops.push(link.stats.drops());
            s.marks.push(link.stats.marks());
            s.departed_bytes.push(link.stats.departure_bytes);
        }
        if self.flow_samples {
            for k in 0..self.sc.metrics.flow_series.len() {
                self.sample_due(k, End::Both, self.now);
            }
        }
        let next = self.now + self.sc.metrics.sample_interval;
        if next <= self.sc.duration {
            self.events.schedule(next, Event::Sample);
        }
    }

    /// The traced flows' places; their first samples are due at 0.
    pub(super) fn trace_flows(&mut self) {
        let ids = &self.sc.metrics.flow_series;
        let x = &mut self.extra;
        x.place = vec![NOT_TRACED; self.flows.len()];
        for (k, &f) in ids.iter().enumerate() {
            x.place[f as usize] = k as u32;
        }
        x.next = vec![[SimTime::ZERO; 2]; ids.len()];
        x.sender = (0..ids.len()).map(|_| Vec::new()).collect();
        x.receiver = (0..ids.len()).map(|_| Vec::new()).collect();
    }

    /// End `end` of flow `f` is about to take an event at `t` (a packet, a
    /// timer, its start, a schedule entry): its parts of the samples due
    /// up to `t` first.
    #[inline(always)]
    pub(super) fn flow_event(&mut self, f: usize, end: End, t: SimTime) {
        if self.flow_samples {
            self.flow_event_traced(f, end, t);
        }
    }

    #[cold]
    #[inline(never)]
    fn flow_event_traced(&mut self, f: usize, end: End, t: SimTime) {
        let k = self.extra.place[f];
        if k != NOT_TRACED {
            self.sample_due(k as usize, end, t);
        }
    }

    /// End `end`'s parts of the `k`th traced flow's samples due at or
    /// before `t`.
    fn sample_due(&mut self, k: usize, end: End, t: SimTime) {
        let every = self.sc.metrics.sample_interval;
        let t = t.min(self.sc.duration);
        let ends: &[usize] = match end {
            End::Sender => &[0],
            End::Receiver => &[1],
            End::Both => &[0, 1],
        };
        let fl = &self.flows[self.sc.metrics.flow_series[k] as usize];
        let x = &mut self.extra;
        for &e in ends {
            while x.next[k][e] <= t {
                if e == 0 {
                    let (bbr_state, bbr_bw_bps) = fl.bbr_status().unwrap_or(("", f64::NAN));
                    x.sender[k].push(SenderPart {
                        cwnd: fl.cwnd,
                        ssthresh: fl.ssthresh,
                        srtt_s: fl.srtt_s(),
                        rto_s: fl.rto.as_secs_f64(),
                        alpha: fl.dctcp_alpha().unwrap_or(f64::NAN),
                        pacing_rate_bps: fl.pacing_rate_bps().unwrap_or(f64::NAN),
                        rate_sample_bps: fl.rate_sample_bps().unwrap_or(f64::NAN),
                        bbr_state,
                        bbr_bw_bps,
                        ca_state: fl.ca_state_name(),
                    });
                } else {
                    x.receiver[k].push((fl.stats.segments_delivered, fl.stats.data_arrived));
                }
                x.next[k][e] += every;
            }
        }
    }

    /// The flow series: a row per sample and traced flow, in order of
    /// time, then of `metrics.flow_series`.
    pub(super) fn take_flow_series(&mut self) -> FlowSeries {
        let ids = &self.sc.metrics.flow_series;
        let x = &mut self.extra;
        let mut fs = FlowSeries::default();
        let n = (x.sender.iter().map(Vec::len))
            .chain(x.receiver.iter().map(Vec::len))
            .min()
            .unwrap_or(0);
        let every = self.sc.metrics.sample_interval;
        for i in 0..n {
            let at = SimTime(every.0 * i as u64);
            let dt = if i == 0 { 0.0 } else { every.as_secs_f64() };
            for (k, &f) in ids.iter().enumerate() {
                let s = &x.sender[k][i];
                fs.time_s.push(at.as_secs_f64());
                fs.flow.push(f);
                fs.cwnd.push(s.cwnd);
                fs.ssthresh.push(s.ssthresh);
                fs.srtt_s.push(s.srtt_s);
                fs.rto_s.push(s.rto_s);
                // As goodput: in-order segments, at most those that arrived.
                let (d1, a1) = x.receiver[k][i];
                let (d0, a0) = if i == 0 { (0, 0) } else { x.receiver[k][i - 1] };
                let bits =
                    (d1 - d0).min(a1 - a0) as f64 * self.flows[f as usize].mss() as f64 * 8.0;
                fs.delivery_rate_bps
                    .push(if dt > 0.0 { bits / dt } else { 0.0 });
                fs.alpha.push(s.alpha);
                fs.pacing_rate_bps.push(s.pacing_rate_bps);
                fs.rate_sample_bps.push(s.rate_sample_bps);
                fs.bbr_state.push(s.bbr_state);
                fs.bbr_bw_bps.push(s.bbr_bw_bps);
                fs.ca_state.push(s.ca_state);
            }
        }
        fs
    }
}
