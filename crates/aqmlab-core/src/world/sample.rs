//! The time series: the monitored links' queues every
//! `metrics.sample_interval`, and the TCP state of the flows of
//! `metrics.flow_series`.

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

/// The optional flow series (`metrics.flow_series`): state between samples.
#[derive(Default)]
pub(super) struct Extras {
    pub(super) flow_series: FlowSeries,
    /// Segments each traced flow had delivered, and data packets that had
    /// reached its receiver, at the previous sample.
    last_delivered: Vec<(u64, u64)>,
    last_sample: SimTime,
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
        if !self.sc.metrics.flow_series.is_empty() {
            self.sample_flows();
        }
        let next = self.now + self.sc.metrics.sample_interval;
        if next <= self.sc.duration {
            if self.flow_samples {
                self.schedule_barrier(next, Event::Sample);
            } else {
                self.events.schedule(next, Event::Sample);
            }
        }
    }

    /// Sample the TCP state of the flows of `metrics.flow_series`.
    #[cold]
    pub(super) fn sample_flows(&mut self) {
        let x = &mut self.extra;
        let ids = &self.sc.metrics.flow_series;
        if x.last_delivered.len() != ids.len() {
            x.last_delivered = vec![(0, 0); ids.len()];
        }
        let dt = (self.now - x.last_sample).as_secs_f64();
        let t = self.now.as_secs_f64();
        for (k, &f) in ids.iter().enumerate() {
            let fl = &self.flows[f as usize];
            let now = (fl.stats.segments_delivered, fl.stats.data_arrived);
            let fs = &mut x.flow_series;
            fs.time_s.push(t);
            fs.flow.push(f);
            fs.cwnd.push(fl.cwnd);
            fs.ssthresh.push(fl.ssthresh);
            fs.srtt_s.push(fl.srtt_s());
            fs.rto_s.push(fl.rto.as_secs_f64());
            // As goodput: in-order segments, at most those that arrived.
            let (d0, a0) = x.last_delivered[k];
            let segs = (now.0 - d0).min(now.1 - a0);
            let bits = segs as f64 * fl.mss() as f64 * 8.0;
            fs.delivery_rate_bps
                .push(if dt > 0.0 { bits / dt } else { 0.0 });
            fs.alpha.push(fl.dctcp_alpha().unwrap_or(f64::NAN));
            fs.pacing_rate_bps
                .push(fl.pacing_rate_bps().unwrap_or(f64::NAN));
            fs.rate_sample_bps
                .push(fl.rate_sample_bps().unwrap_or(f64::NAN));
            let (state, bw) = fl.bbr_status().unwrap_or(("", f64::NAN));
            fs.bbr_state.push(state);
            fs.bbr_bw_bps.push(bw);
            fs.ca_state.push(fl.ca_state_name());
            x.last_delivered[k] = now;
        }
        x.last_sample = self.now;
    }
}
