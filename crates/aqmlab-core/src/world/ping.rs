//! Latency probes (`kind = "ping"`): each probe a packet of its own that the
//! far end echoes at once on the flow's return route, as ping and irtt
//! measure latency under load. A probe's row in [`PingTable`] is written when
//! it leaves and completed when its echo comes back; the packet carries the
//! row's index in its `seq` and its send time in `ts`.

use super::summary::nearest_rank;
use super::World;
use crate::packet::{Ecn, Packet};
use serde::Serialize;

/// One row per probe sent, in sending order.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PingTable {
    pub flow: Vec<u32>,
    pub group: Vec<u32>,
    /// The probe's number in its flow, from 1.
    pub seq: Vec<u64>,
    /// When it left.
    pub sent_s: Vec<f64>,
    /// Its round-trip time; NaN when no echo came back (lost, or still on
    /// its way at the end of the run).
    pub rtt_s: Vec<f64>,
}

/// The probes sent in the measurement interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PingSummary {
    /// Flows of `ping` groups.
    pub count: u64,
    pub probes: u64,
    pub answered: u64,
    /// Share of the probes lost, counted among those sent before the last
    /// answered probe of their flow (a probe still on its way at the end is
    /// not counted as lost).
    pub loss_rate: f64,
    pub rtt_mean_s: f64,
    pub rtt_min_s: f64,
    pub rtt_p50_s: f64,
    pub rtt_p90_s: f64,
    pub rtt_p99_s: f64,
    pub rtt_max_s: f64,
}

impl PingTable {
    /// Over the probes sent in [from, to): `None` without any.
    pub(super) fn summary(&self, flows: u64, from: f64, to: f64) -> Option<PingSummary> {
        let rows: Vec<usize> = (0..self.sent_s.len())
            .filter(|&i| self.sent_s[i] >= from && self.sent_s[i] < to)
            .collect();
        if rows.is_empty() {
            return None;
        }
        // Per flow, the send time of its last answered probe.
        let mut last = std::collections::HashMap::new();
        for &i in &rows {
            if !self.rtt_s[i].is_nan() {
                last.insert(self.flow[i], self.sent_s[i]);
            }
        }
        let settled = rows
            .iter()
            .filter(|&&i| {
                last.get(&self.flow[i])
                    .is_some_and(|&t| self.sent_s[i] <= t)
            })
            .count();
        let mut rtt: Vec<f64> = rows
            .iter()
            .map(|&i| self.rtt_s[i])
            .filter(|r| !r.is_nan())
            .collect();
        rtt.sort_by(f64::total_cmp);
        let n = rtt.len();
        let q = |p: f64| {
            if n == 0 {
                f64::NAN
            } else {
                nearest_rank(&rtt, p)
            }
        };
        Some(PingSummary {
            count: flows,
            probes: rows.len() as u64,
            answered: n as u64,
            loss_rate: if settled == 0 {
                0.0
            } else {
                1.0 - n as f64 / settled as f64
            },
            rtt_mean_s: if n == 0 {
                f64::NAN
            } else {
                rtt.iter().sum::<f64>() / n as f64
            },
            rtt_min_s: rtt.first().copied().unwrap_or(f64::NAN),
            rtt_p50_s: q(0.5),
            rtt_p90_s: q(0.9),
            rtt_p99_s: q(0.99),
            rtt_max_s: rtt.last().copied().unwrap_or(f64::NAN),
        })
    }
}

impl World {
    /// A probe of flow `f` leaves now: its row, whose index it carries.
    pub(super) fn ping_row(&mut self, f: usize, seq: u64) -> u64 {
        let t = &mut self.pings;
        t.flow.push(f as u32);
        t.group.push(self.meta[f].group);
        t.seq.push(seq);
        t.sent_s.push(self.now.as_secs_f64());
        t.rtt_s.push(f64::NAN);
        (t.flow.len() - 1) as u64
    }

    /// A probe reached the far end (`dir` 0: echoed at once on the return
    /// route) or its echo came back (`dir` 1: the round trip is recorded).
    pub(super) fn ping_arrives(&mut self, f: usize, p: Packet) {
        if p.dir() == 0 {
            let s = &mut self.flows[f].stats;
            s.data_arrived += 1;
            s.segments_delivered += 1;
            let pos = self.routes.first(2 * f + 1);
            let id = self.arena.alloc(Packet {
                pos,
                dir_label: 1,
                flags: 0,
                ecn: Ecn::NotEct,
                enq_time: self.now,
                ..p
            });
            self.send_on(self.routes.link_at(pos) as usize, id);
        } else {
            self.pings.rtt_s[p.seq as usize] = (self.now - p.ts).as_secs_f64();
        }
    }
}
