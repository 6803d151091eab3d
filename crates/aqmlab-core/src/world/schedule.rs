//! The scenario's mid-run changes (`[[schedule]]`): link rates and delays,
//! flows and web sessions started and stopped, AQM parameters, UDP rates;
//! and what the AQMs are told when their links' facts or loads change.

use super::apps::udp_rate;
use super::World;
use crate::aqm::{Aqm, LinkInfo};
use crate::rng::{Rng, Stream};
use crate::scenario::{Action, Direction, LinkSel, Occurrence, Purpose, TrafficSpec};
use crate::sim::Event;
use crate::units::SimTime;

impl World {
    /// Apply one occurrence of a `[[schedule]]` entry (the entry at `at`,
    /// or one of its repetitions); each draws from its own stream.
    pub(super) fn apply_schedule(&mut self, o: Occurrence) {
        // Departures before now happen under the old settings; the traced
        // flows' samples before it as they were.
        self.settle_all(self.now);
        self.samples_due(self.now);
        let i = o.entry as usize;
        let stream = Stream::Schedule(o.entry, o.rep);
        let entry = self.sc.schedule[i].clone();
        let now = self.now;
        match entry.action {
            Action::Link {
                link,
                rate,
                delay,
                reorder,
            } => {
                let mut rng = Rng::new(self.sc.seed_for(Purpose::Rtt), stream);
                if let Some((src, snk)) = link.access_sides() {
                    for f in 0..self.access.len() {
                        let d = delay.map(|d| d.sample(&mut rng));
                        // Links 0 and 1 are the left host's, 2 and 3 the
                        // right host's; a reverse flow's sender is on the right.
                        let fwd = self.meta[f].direction == Direction::Forward;
                        let (left, right) = if fwd { (src, snk) } else { (snk, src) };
                        let acc = self.access[f];
                        let chosen = [left, left, right, right];
                        for (k, l) in acc.into_iter().enumerate() {
                            if !chosen[k] {
                                continue;
                            }
                            let link = &mut self.links[l as usize];
                            if let Some(r) = rate {
                                link.set_rate(now, r);
                            }
                            if let Some(d) = d {
                                link.set_delay(d, reorder);
                            }
                        }
                    }
                } else {
                    for l in self.select(&link) {
                        let link = &mut self.links[l];
                        if let Some(r) = rate {
                            link.set_rate(now, r);
                        }
                        if let Some(d) = delay {
                            link.set_delay(d.sample(&mut rng), reorder);
                        }
                    }
                }
                // New base round-trip times: the delays along both routes.
                for f in 0..self.meta.len() {
                    let rtt = self.routes[2 * f]
                        .iter()
                        .chain(&self.routes[2 * f + 1])
                        .fold(0u64, |a, &l| {
                            a.saturating_add(self.links[l as usize].delay.0)
                        });
                    self.meta[f].base_rtt = SimTime(rtt);
                }
                self.notify_links(&self.select_all());
                // A link that was idle gets no TxDone; a busy one finishes its
                // current packet at the old rate and continues at the new one.
            }
            Action::Flows {
                group,
                start,
                stop,
                spread,
            } => {
                let g = group as usize;
                let mut rng = Rng::new(self.sc.seed_for(Purpose::Start), stream);
                // Stop the most recently started live flows first.
                let mut to_stop = stop;
                let members = self.groups[g].members.clone();
                let next = self.groups[g].next;
                let mut live: Vec<u32> = members[..next]
                    .iter()
                    .copied()
                    .filter(|&f| self.meta[f as usize].live)
                    .collect();
                live.sort_by_key(|&f| (self.meta[f as usize].start, f));
                while to_stop > 0 {
                    let Some(f) = live.pop() else { break };
                    let m = &mut self.meta[f as usize];
                    m.live = false;
                    m.stopped = Some(now);
                    self.flows[f as usize].stop();
                    if let Some(u) = self.udp[f as usize].as_mut() {
                        u.stop();
                    }
                    to_stop -= 1;
                }
                for _ in 0..start {
                    let gs = &mut self.groups[g];
                    let Some(&f) = gs.members.get(gs.next) else {
                        break;
                    };
                    gs.next += 1;
                    let t = now + SimTime((rng.uniform() * spread.0 as f64) as u64);
                    let m = &mut self.meta[f as usize];
                    m.live = true;
                    m.start = t;
                    self.events.schedule(t, Event::FlowStart(f));
                }
                self.notify_links(&self.select_all());
            }
            Action::Aqm { link, set } => {
                for l in self.select(&link) {
                    let keys = set.iter().map(|(k, v)| (k.as_str(), *v));
                    for (k, v, e) in crate::aqm::apply_set(&mut self.links[l].aqm, keys) {
                        self.warnings
                            .push(format!("schedule[{i}] at {now}: aqm.{k} = {v}: {e}"));
                    }
                    // One record of the values now in force (a scheme flags
                    // its own change too; drop that flag, not record twice).
                    self.links[l].aqm.take_changed();
                    self.links[l].sample_params(now);
                }
            }
            Action::Web {
                group,
                add_sessions,
                remove_sessions,
                spread,
            } => {
                let g = group as usize;
                // Removed sessions finish the page or transfer under way
                // and begin no other (the next `FlowStart` of a stopped
                // session does nothing); the most recently started go first.
                let next = self.groups[g].next;
                let mut live: Vec<u32> = self.groups[g].members[..next]
                    .iter()
                    .copied()
                    .filter(|&f| self.meta[f as usize].live)
                    .collect();
                live.sort_by_key(|&f| (self.meta[f as usize].start, f));
                for _ in 0..remove_sessions {
                    let Some(f) = live.pop() else { break };
                    let m = &mut self.meta[f as usize];
                    m.live = false;
                    m.stopped = Some(now);
                }
                let mut rng = (spread > SimTime::ZERO)
                    .then(|| Rng::new(self.sc.seed_for(Purpose::Start), stream));
                for _ in 0..add_sessions {
                    let gs = &mut self.groups[g];
                    let Some(&f) = gs.members.get(gs.next) else {
                        break;
                    };
                    gs.next += 1;
                    let t = match rng.as_mut() {
                        Some(r) => now + SimTime((r.uniform() * spread.0 as f64) as u64),
                        None => now,
                    };
                    let m = &mut self.meta[f as usize];
                    m.live = true;
                    m.start = t;
                    self.events.schedule(t, Event::FlowStart(f));
                }
                self.notify_links(&self.select_all());
            }
            Action::Udp { group, rate } => {
                let g = group as usize;
                let (TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u)) = &self.sc.traffic[g] else {
                    return; // rejected by validation
                };
                let spec = crate::scenario::UdpSpec { rate, ..u.clone() };
                let r = udp_rate(&self.sc, g, &spec);
                for &f in &self.groups[g].members {
                    if let Some(src) = self.udp[f as usize].as_mut() {
                        src.set_rate(r);
                    }
                }
            }
        }
    }

    /// The links a schedule selection names (nothing for `access`, which
    /// is handled on its own).
    pub(super) fn select(&self, sel: &LinkSel) -> Vec<usize> {
        let LinkSel::Link { name, dir } = sel else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(2);
        for (n, fwd, rev) in &self.duplex {
            if n == name {
                if dir.fwd() {
                    out.push(*fwd as usize);
                }
                if dir.rev() {
                    out.push(*rev as usize);
                }
            }
        }
        out
    }

    /// Both directions of every named duplex link (those whose AQMs are
    /// told of changed link facts and loads).
    pub(super) fn select_all(&self) -> Vec<usize> {
        self.duplex
            .iter()
            .flat_map(|(_, f, r)| [*f as usize, *r as usize])
            .collect()
    }

    /// Tell the AQMs of the bottleneck links that their facts changed.
    pub(super) fn notify_links(&mut self, links: &[usize]) {
        for &l in links {
            let info = self.link_info(l);
            let now = self.now;
            let link = &mut self.links[l];
            link.aqm.set_link(now, &info);
            link.note_changes(now);
        }
    }

    /// The facts an AQM on link `l` configures itself from: the link's
    /// rate, delay and buffer, and the live flows whose data crosses it.
    pub fn link_info(&self, l: usize) -> LinkInfo {
        let link = &self.links[l];
        let (mut n, mut rtt_sum) = (0u64, 0u64);
        let (mut nb, mut rtt_sum_b) = (0u64, 0u64);
        for (f, m) in self.meta.iter().enumerate() {
            if m.live && self.routes[2 * f].contains(&(l as u32)) {
                n += 1;
                rtt_sum += m.base_rtt.0;
                if matches!(self.sc.traffic[m.group as usize], TrafficSpec::Bulk(_)) {
                    nb += 1;
                    rtt_sum_b += m.base_rtt.0;
                }
            }
        }
        LinkInfo {
            rate: link.rate,
            delay: link.delay,
            buffer: link.limit,
            mean_pkt_size: u32::from(self.sc.tcp.packet_size),
            flows: n as u32,
            rtt: SimTime(rtt_sum.checked_div(n).unwrap_or(0)),
            bulk_flows: nb as u32,
            bulk_rtt: SimTime(rtt_sum_b.checked_div(nb).unwrap_or(0)),
        }
    }
}
