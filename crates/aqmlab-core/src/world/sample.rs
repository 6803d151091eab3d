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

/// The optional flow series (`metrics.flow_series`), filled in parts.
#[derive(Default)]
pub(super) struct Extras {
    /// Per flow: its place in `metrics.flow_series`, or `NOT_TRACED`.
    place: Vec<u32>,
    /// Per traced flow (by place): the next sample its sender and its
    /// receiver take (their numbers: sample `i` is at `i` intervals).
    next: Vec<[usize; 2]>,
    /// Every row, sample by sample, each in the order of the list; until
    /// the end `delivery_rate_bps` holds the segments delivered in order
    /// by the sample, `arrived` the data packets that reached the
    /// receiver, and `sent` the data segments the sender sent.
    flow_series: FlowSeries,
    arrived: Vec<u64>,
    sent: Vec<u64>,
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
        self.samples_due(self.now);
        let next = self.now + self.sc.metrics.sample_interval;
        if next <= self.sc.duration {
            self.events.schedule(next, Event::Sample);
        }
    }

    /// The traced flows' places, and their rows (a sample at 0, then
    /// every `sample_interval` up to `duration`).
    pub(super) fn trace_flows(&mut self) {
        let ids = &self.sc.metrics.flow_series;
        let every = self.sc.metrics.sample_interval;
        let samples = (self.sc.duration.0 / every.0) as usize + 1;
        let x = &mut self.extra;
        x.place = vec![NOT_TRACED; self.flows.len()];
        for (k, &f) in ids.iter().enumerate() {
            x.place[f as usize] = k as u32;
        }
        x.next = vec![[0; 2]; ids.len()];
        let rows = samples * ids.len();
        let fs = &mut x.flow_series;
        for c in fs.f64_columns() {
            *c = vec![0.0; rows];
        }
        for (r, t) in fs.time_s.iter_mut().enumerate() {
            *t = SimTime(every.0 * (r / ids.len()) as u64).as_secs_f64();
        }
        fs.flow = (0..samples).flat_map(|_| ids.iter().copied()).collect();
        fs.bbr_state = vec![""; rows];
        fs.ca_state = vec![""; rows];
        x.arrived = vec![0; rows];
        x.sent = vec![0; rows];
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

    /// Every traced flow's samples due at or before `t` (an event that
    /// reads or changes them all, at the clock's time).
    pub(super) fn samples_due(&mut self, t: SimTime) {
        for k in 0..self.extra.next.len() {
            self.sample_due(k, End::Both, t);
        }
    }

    /// End `end`'s parts of the `k`th traced flow's samples due at or
    /// before `t`.
    fn sample_due(&mut self, k: usize, end: End, t: SimTime) {
        let every = self.sc.metrics.sample_interval.0;
        let due = (t.min(self.sc.duration).0 / every) as usize + 1;
        let ends: &[usize] = match end {
            End::Sender => &[0],
            End::Receiver => &[1],
            End::Both => &[0, 1],
        };
        let n = self.sc.metrics.flow_series.len();
        let fl = &self.flows[self.sc.metrics.flow_series[k] as usize];
        let x = &mut self.extra;
        let fs = &mut x.flow_series;
        for &e in ends {
            for i in x.next[k][e]..due {
                let r = i * n + k;
                if e == 0 {
                    let (state, bw) = fl.bbr_status().unwrap_or(("", f64::NAN));
                    fs.cwnd[r] = fl.cwnd;
                    fs.ssthresh[r] = fl.ssthresh;
                    fs.srtt_s[r] = fl.srtt_s();
                    fs.rto_s[r] = fl.rto.as_secs_f64();
                    fs.alpha[r] = fl.dctcp_alpha().unwrap_or(f64::NAN);
                    fs.pacing_rate_bps[r] = fl.pacing_rate_bps().unwrap_or(f64::NAN);
                    fs.rate_sample_bps[r] = fl.rate_sample_bps().unwrap_or(f64::NAN);
                    fs.bbr_state[r] = state;
                    fs.bbr_bw_bps[r] = bw;
                    fs.ca_state[r] = fl.ca_state_name();
                    fs.in_flight[r] = fl.in_flight() as f64;
                    x.sent[r] = fl.stats.data_sent;
                } else {
                    // Counts below 2^53: exact in the column until the end.
                    fs.delivery_rate_bps[r] = fl.stats.segments_delivered as f64;
                    x.arrived[r] = fl.stats.data_arrived;
                }
            }
            x.next[k][e] = x.next[k][e].max(due);
        }
    }

    /// The flow series: a row per sample and traced flow, in order of
    /// time, then of `metrics.flow_series`; the samples both ends of every
    /// flow took (all of them at the end of a run).
    pub(super) fn take_flow_series(&mut self) -> FlowSeries {
        let ids = &self.sc.metrics.flow_series;
        let x = &mut self.extra;
        let mut fs = std::mem::take(&mut x.flow_series);
        let n = ids.len();
        let samples = x.next.iter().flatten().copied().min().unwrap_or(0);
        let dt = self.sc.metrics.sample_interval.as_secs_f64();
        // As goodput: in-order segments, at most those that arrived, since
        // the sample before (backwards, the counts before still in place).
        for (k, &f) in ids.iter().enumerate() {
            let bits_per_segment = self.flows[f as usize].mss() as f64 * 8.0;
            for i in (0..samples).rev() {
                let r = i * n + k;
                fs.delivery_rate_bps[r] = if i == 0 {
                    0.0
                } else {
                    let delivered = fs.delivery_rate_bps[r] - fs.delivery_rate_bps[r - n];
                    let segs = (delivered as u64).min(x.arrived[r] - x.arrived[r - n]);
                    segs as f64 * bits_per_segment / dt
                };
                fs.send_rate_bps[r] = if i == 0 {
                    0.0
                } else {
                    (x.sent[r] - x.sent[r - n]) as f64 * bits_per_segment / dt
                };
            }
        }
        let rows = samples * n;
        for c in fs.f64_columns() {
            c.truncate(rows);
        }
        fs.flow.truncate(rows);
        fs.bbr_state.truncate(rows);
        fs.ca_state.truncate(rows);
        fs
    }
}
