//! Building a topology: its links and the route of every flow.
//!
//! Every topology is built the same way: a plan of links (rate, delay,
//! buffer, AQM, loss), the routes of the flows as link-index lists, then
//! the links themselves, each AQM configured from the flows whose data
//! crosses its link ([`LinkInfo`]).
//!
//! Link indices: each duplex link of the topology ([`Scenario::duplex_links`])
//! takes two consecutive indices, forward then reverse (dumbbell: 0 = R1 -> R2,
//! 1 = R2 -> R1; parking lot: 2k = Rk -> Rk+1, 2k+1 back; custom: 2j =
//! `from` -> `to` of `topology.links[j]`). The dumbbell and the parking lot
//! then give each flow four access links (sender up, sender down, receiver
//! down, receiver up) at 2K + 4f .. 2K + 4f + 3; on a custom topology, a
//! flow of a group with `extra_delay` gets two pure-delay links (into and
//! out of its path) after the duplex links, in flow order. Random streams follow the
//! index: `Stream::Aqm(i)`, `Stream::LinkLoss(i)`.

use super::link::{Link, LossModel};
use crate::aqm::{Aqm, AqmSpec, LinkInfo};
use crate::rng::{Rng, Stream};
use crate::scenario::{
    Buffer, Direction, LossSpec, ParkingLot, PathSpec, Purpose, Scenario, TimeDist, Topology,
};
use crate::units::{BitRate, SimTime};

/// Links, routes and the monitored links of a built topology.
#[derive(Debug)]
pub struct Built {
    pub links: Vec<Link>,
    /// Routes as link-index lists; flow `f` uses `2f` for data, `2f + 1` for ACKs.
    pub routes: Vec<Vec<u32>>,
    /// The links whose queues are measured, with their names; the first is
    /// the summary's `bottleneck` (dumbbell: R1 -> R2).
    pub monitored: Vec<(u32, String)>,
    /// Base round-trip propagation delay of each flow.
    pub base_rtt: Vec<SimTime>,
    /// Dumbbell and parking lot: each flow's four access links.
    pub access: Vec<[u32; 4]>,
    /// The duplex links by name with their (forward, reverse) link indices,
    /// as [`Scenario::duplex_links`] lists them.
    pub duplex: Vec<(String, u32, u32)>,
}

/// Every route's links in one array, each route followed by an end mark
/// (route `r` is `links[start[r]..start[r + 1] - 1]`): two small dense
/// arrays instead of one heap block per route, which the per-packet path
/// reads with fewer cache misses at 10^5 flows. A packet keeps the
/// position of its current link in `links` ([`crate::packet::Packet::pos`]),
/// so its next link is one read away ([`Routes::link_at`]).
#[derive(Clone, Debug, Default)]
pub struct Routes {
    start: Vec<u32>,
    links: Vec<u32>,
}

/// [`Routes::link_at`] past a route's last link.
pub const ROUTE_END: u32 = u32::MAX;

impl Routes {
    pub fn new(routes: &[Vec<u32>]) -> Routes {
        let mut start = crate::mem::huge_vec(routes.len() + 1);
        let mut links =
            crate::mem::huge_vec(routes.iter().map(Vec::len).sum::<usize>() + routes.len());
        start.push(0);
        for r in routes {
            links.extend_from_slice(r);
            links.push(ROUTE_END);
            start.push(links.len() as u32);
        }
        Routes { start, links }
    }

    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The position of route `r`'s first link.
    #[inline]
    pub fn first(&self, r: usize) -> u32 {
        self.start[r]
    }

    /// The link at position `pos`, or [`ROUTE_END`] past a route's last.
    #[inline]
    pub fn link_at(&self, pos: u32) -> u32 {
        self.links[pos as usize]
    }

    /// Prefetch where route `r` starts (see `World::warm`).
    #[inline]
    pub fn prefetch_start(&self, r: usize) {
        crate::mem::prefetch(&self.start[r]);
    }

    /// Prefetch the link ids of route `r` (reads where it starts).
    #[inline]
    pub fn prefetch_links(&self, r: usize) {
        if let Some(l) = self.links.get(self.start[r] as usize) {
            crate::mem::prefetch(l);
        }
    }

    /// Prefetch the link ids from position `pos` on.
    #[inline]
    pub fn prefetch_at(&self, pos: u32) {
        if let Some(l) = self.links.get(pos as usize) {
            crate::mem::prefetch(l);
        }
    }
}

impl std::ops::Index<usize> for Routes {
    type Output = [u32];

    /// Route `r`'s links (without its end mark).
    #[inline]
    fn index(&self, r: usize) -> &[u32] {
        &self.links[self.start[r] as usize..self.start[r + 1] as usize - 1]
    }
}

/// Link 0 is the forward bottleneck (R1 -> R2), link 1 its reverse (R2 -> R1).
pub const BOTTLENECK_FWD: u32 = 0;
pub const BOTTLENECK_REV: u32 = 1;

/// Rate of a custom flow's `extra_delay` links: 10^6 Gbps, so that a
/// packet's transmission takes 1 ns and the link is a pure delay.
const DELAY_LINE_RATE: BitRate = BitRate(1_000_000_000_000_000);
/// Queue limit of an `extra_delay` link (it never queues more than a
/// window of the one flow that uses it).
const DELAY_LINE_BUFFER: u32 = 1_000_000;

/// A link before it is built.
struct Plan<'a> {
    rate: BitRate,
    delay: SimTime,
    limit: Buffer,
    aqm: &'a AqmSpec,
    loss: Option<&'a LossSpec>,
}

/// A topology's links and routes before the links are built.
struct Layout<'a> {
    links: Vec<Plan<'a>>,
    routes: Vec<Vec<u32>>,
    monitored: Vec<(u32, String)>,
    access: Vec<[u32; 4]>,
}

/// Build the scenario's topology. `groups[f]` is the traffic group of flow
/// `f` (flows of a group in the order of their ids); `live[f]` whether it is
/// active from the start (flows the schedule starts later exist from the
/// start but do not count as load yet).
pub fn build(sc: &Scenario, seed: u64, groups: &[u32], live: &[bool]) -> Built {
    let duplex = sc.duplex_links();
    let mut layout = Layout {
        links: Vec::with_capacity(2 * duplex.len() + 4 * groups.len()),
        routes: Vec::with_capacity(2 * groups.len()),
        monitored: Vec::new(),
        access: Vec::new(),
    };
    for d in &duplex {
        for (aqm, loss) in [(d.aqm, d.loss), (d.reverse_aqm, d.reverse_loss)] {
            layout.links.push(Plan {
                rate: d.rate,
                delay: d.delay,
                limit: d.buffer,
                aqm,
                loss,
            });
        }
    }
    let droptail = AqmSpec::Droptail;
    let rtt_seed = sc.seeds.get(Purpose::Rtt, seed);
    match &sc.topology {
        Topology::Dumbbell(d) => {
            layout
                .monitored
                .push((BOTTLENECK_FWD, "bottleneck".to_string()));
            for (f, &g) in groups.iter().enumerate() {
                let mut rng = Rng::new(rtt_seed, Stream::Flow(f as u32));
                // Links 0 and 1 are the left host's, 2 and 3 the right
                // host's; a reverse flow's sender is on the right.
                let delays = match sc.traffic[g as usize].base_rtt() {
                    Some(rtt) => split_rtt(rtt.sample(&mut rng), d.bottleneck_delay),
                    None => {
                        let (src, snk) = d.draw_access(&mut rng);
                        let (left, right) = match direction(sc, g) {
                            Direction::Forward => (src, snk),
                            Direction::Reverse => (snk, src),
                        };
                        [left, left, right, right]
                    }
                };
                let acc = add_access(
                    &mut layout,
                    (d.access_rate, d.access_buffer, d.access_loss.as_ref()),
                    &droptail,
                    delays,
                );
                let data = vec![acc[0], BOTTLENECK_FWD, acc[2]];
                let ack = vec![acc[3], BOTTLENECK_REV, acc[1]];
                push_routes(&mut layout, direction(sc, g), data, ack);
            }
        }
        Topology::ParkingLot(p) => {
            let k = p.links;
            for i in 0..k {
                layout.monitored.push((2 * i, format!("link{i}")));
            }
            let mut seen = vec![0u32; sc.traffic.len()];
            for (f, &g) in groups.iter().enumerate() {
                let nth = seen[g as usize];
                seen[g as usize] += 1;
                let (first, last, rtt) = match sc.traffic[g as usize].path() {
                    Some(PathSpec::Short) => (nth % k, nth % k, &p.short_rtt),
                    Some(PathSpec::ShortOn(i)) => (*i, *i, &p.short_rtt),
                    _ => (0, k - 1, &p.long_rtt),
                };
                let acc = add_access(
                    &mut layout,
                    (p.access_rate, p.access_buffer, p.access_loss.as_ref()),
                    &droptail,
                    parking_access(p, rtt_seed, f, first..=last, rtt),
                );
                let mut data = vec![acc[0]];
                data.extend((first..=last).map(|i| 2 * i));
                data.push(acc[2]);
                let mut ack = vec![acc[3]];
                ack.extend((first..=last).rev().map(|i| 2 * i + 1));
                ack.push(acc[1]);
                push_routes(&mut layout, direction(sc, g), data, ack);
            }
        }
        Topology::Custom(c) => {
            for (j, l) in c.links.iter().enumerate() {
                if l.monitor {
                    layout.monitored.push((2 * j as u32, l.name.clone()));
                }
                if l.reverse_monitor {
                    layout
                        .monitored
                        .push((2 * j as u32 + 1, format!("{}-rev", l.name)));
                }
            }
            for (f, &g) in groups.iter().enumerate() {
                let group = &sc.traffic[g as usize];
                let Some(PathSpec::Nodes(nodes)) = group.path() else {
                    unreachable!("Scenario::check_paths requires a node path on a custom topology")
                };
                let steps = c
                    .resolve(nodes, "path")
                    .expect("Scenario::check_paths validated every path");
                let mut data: Vec<u32> = steps
                    .iter()
                    .map(|&(j, rev)| 2 * j as u32 + u32::from(rev))
                    .collect();
                let mut ack: Vec<u32> = steps
                    .iter()
                    .rev()
                    .map(|&(j, rev)| 2 * j as u32 + u32::from(!rev))
                    .collect();
                if let Some(extra) = group.extra_delay() {
                    // The flow's own delay line at the path's first node,
                    // one per direction: into the path ahead of its first
                    // link, out of it after the ACKs' last.
                    let e = extra.sample(&mut Rng::new(rtt_seed, Stream::Flow(f as u32)));
                    let base = layout.links.len() as u32;
                    for _ in 0..2 {
                        layout.links.push(Plan {
                            rate: DELAY_LINE_RATE,
                            delay: e,
                            limit: Buffer::Packets(DELAY_LINE_BUFFER),
                            aqm: &droptail,
                            loss: None,
                        });
                    }
                    data.insert(0, base);
                    ack.push(base + 1);
                }
                push_routes(&mut layout, direction(sc, g), data, ack);
            }
        }
    }
    let duplex: Vec<(String, u32, u32)> = duplex
        .into_iter()
        .enumerate()
        .map(|(i, d)| (d.name, 2 * i as u32, 2 * i as u32 + 1))
        .collect();
    let bulk: Vec<bool> = groups
        .iter()
        .map(|&g| {
            matches!(
                sc.traffic[g as usize],
                crate::scenario::TrafficSpec::Bulk(_)
            )
        })
        .collect();
    finish(sc, seed, layout, duplex, live, &bulk)
}

fn direction(sc: &Scenario, g: u32) -> Direction {
    sc.traffic[g as usize].direction()
}

/// A flow's data and ACK routes; reverse flows swap them.
fn push_routes(layout: &mut Layout, dir: Direction, data: Vec<u32>, ack: Vec<u32>) {
    let (data, ack) = match dir {
        Direction::Forward => (data, ack),
        Direction::Reverse => (ack, data),
    };
    layout.routes.push(data);
    layout.routes.push(ack);
}

/// Add a flow's four access links (sender up, sender down, receiver down,
/// receiver up) with the given one-way delays; returns their indices.
fn add_access<'a>(
    layout: &mut Layout<'a>,
    (rate, limit, loss): (BitRate, Buffer, Option<&'a LossSpec>),
    aqm: &'a AqmSpec,
    delays: [SimTime; 4],
) -> [u32; 4] {
    let base = layout.links.len() as u32;
    for delay in delays {
        layout.links.push(Plan {
            rate,
            delay,
            limit,
            aqm,
            loss,
        });
    }
    let acc = [base, base + 1, base + 2, base + 3];
    layout.access.push(acc);
    acc
}

/// Access delays of parking-lot flow `f` over links `span`: a base RTT drawn
/// from `rtt`, less the bottleneck links' round trip, split over the four
/// access links (the receiver's downlink takes the nanoseconds left over).
fn parking_access(
    p: &ParkingLot,
    seed: u64,
    f: usize,
    span: std::ops::RangeInclusive<u32>,
    rtt: &TimeDist,
) -> [SimTime; 4] {
    let rtt = rtt.sample(&mut Rng::new(seed, Stream::Flow(f as u32)));
    let path = span.fold(0u64, |a, i| a.saturating_add(p.delay_of(i).0));
    // Validation keeps every RTT at least twice the path's delay.
    let rest = rtt.0.saturating_sub(path.saturating_mul(2));
    let a = rest / 4;
    [SimTime(a), SimTime(a), SimTime(rest - 3 * a), SimTime(a)]
}

/// The four access delays (left up, left down, right down, right up) that
/// give a dumbbell flow the two-way propagation delay `rtt`: its data and
/// ACK cross the bottleneck once each (2 x `bottleneck`), and four access
/// links share the rest, the right host's downlink taking the nanoseconds
/// a quarter leaves over. Validation keeps `rtt` at least 2 x `bottleneck`.
fn split_rtt(rtt: SimTime, bottleneck: SimTime) -> [SimTime; 4] {
    let rest = rtt.0.saturating_sub(bottleneck.0.saturating_mul(2));
    let a = rest / 4;
    [SimTime(a), SimTime(a), SimTime(rest - 3 * a), SimTime(a)]
}

/// Build the planned links: each AQM learns the live flows whose data
/// crosses its link and their mean base RTT; loss models get their streams;
/// each duplex link's directions are paired for reverse observation.
fn finish(
    sc: &Scenario,
    seed: u64,
    layout: Layout,
    duplex: Vec<(String, u32, u32)>,
    live: &[bool],
    bulk: &[bool],
) -> Built {
    let Layout {
        links: plans,
        routes,
        monitored,
        access,
    } = layout;
    let base_rtt: Vec<SimTime> = routes
        .chunks(2)
        .map(|r| {
            let d = r[0]
                .iter()
                .chain(&r[1])
                .fold(0u64, |a, &l| a.saturating_add(plans[l as usize].delay.0));
            SimTime(d)
        })
        .collect();
    let mut flows = vec![0u32; plans.len()];
    let mut rtt_sum = vec![0u128; plans.len()];
    let mut bulk_flows = vec![0u32; plans.len()];
    let mut bulk_rtt_sum = vec![0u128; plans.len()];
    for (f, r) in routes.iter().step_by(2).enumerate() {
        if live[f] {
            for &l in r {
                flows[l as usize] += 1;
                rtt_sum[l as usize] += base_rtt[f].0 as u128;
                if bulk[f] {
                    bulk_flows[l as usize] += 1;
                    bulk_rtt_sum[l as usize] += base_rtt[f].0 as u128;
                }
            }
        }
    }
    let ps = u32::from(sc.tcp.packet_size);
    let (aqm_seed, loss_seed) = (
        sc.seeds.get(Purpose::Aqm, seed),
        sc.seeds.get(Purpose::Loss, seed),
    );
    let mut links: Vec<Link> = crate::mem::huge_vec(plans.len());
    links.extend(plans.iter().enumerate().map(|(i, p)| {
        let mean = |sum: u128, n: u32| SimTime(sum.checked_div(n as u128).unwrap_or(0) as u64);
        let load = Load {
            flows: flows[i],
            rtt: mean(rtt_sum[i], flows[i]),
            bulk_flows: bulk_flows[i],
            bulk_rtt: mean(bulk_rtt_sum[i], bulk_flows[i]),
        };
        let mut link = make_link(aqm_seed, i, p.rate, p.delay, p.limit, p.aqm, ps, load);
        if let Some(l) = p.loss {
            link.loss = Some(Box::new(LossModel::new(
                l,
                Rng::new(loss_seed, Stream::LinkLoss(i as u32)),
            )));
        }
        link
    }));
    // Each direction's AQM may watch the other direction of its link.
    for (_, fwd, rev) in &duplex {
        for (l, o) in [(*rev, *fwd), (*fwd, *rev)] {
            if links[o as usize].aqm.wants_reverse() {
                links[l as usize].observer = Some(o);
            }
        }
    }
    Built {
        links,
        routes,
        monitored,
        base_rtt,
        access,
        duplex,
    }
}

/// The load the scenario puts on a link (see [`LinkInfo`]).
struct Load {
    flows: u32,
    rtt: SimTime,
    bulk_flows: u32,
    bulk_rtt: SimTime,
}

/// Build a link; `load` describes the load the scenario puts on it.
#[allow(clippy::too_many_arguments)]
fn make_link(
    seed: u64,
    idx: usize,
    rate: BitRate,
    delay: SimTime,
    limit: Buffer,
    aqm: &AqmSpec,
    pkt_size: u32,
    load: Load,
) -> Link {
    let info = LinkInfo {
        rate,
        delay,
        buffer: limit,
        mean_pkt_size: pkt_size,
        flows: load.flows,
        rtt: load.rtt,
        bulk_flows: load.bulk_flows,
        bulk_rtt: load.bulk_rtt,
    };
    Link::new(
        rate,
        delay,
        limit,
        aqm.build(info),
        Rng::new(seed, Stream::Aqm(idx as u32)),
    )
}

/// Mark the links that may be passed through ahead of time: those that
/// [`Link::can_cut_through`] and whose packets all come from one and the
/// same upstream link, or all from hosts (a host's first hop: hosts send
/// at the current time, so the packets reach it in time order too).
pub fn mark_cut_through(links: &mut [Link], routes: &[Vec<u32>]) {
    const NONE: u32 = u32::MAX;
    const HOST: u32 = u32::MAX - 1;
    const MANY: u32 = u32::MAX - 2;
    let mut pred = vec![NONE; links.len()];
    for r in routes {
        for (i, &l) in r.iter().enumerate() {
            let from = if i == 0 { HOST } else { r[i - 1] };
            let p = &mut pred[l as usize];
            *p = match *p {
                NONE => from,
                x if x == from => x,
                _ => MANY,
            };
        }
    }
    for (l, p) in links.iter_mut().zip(pred) {
        l.cut_through = p != MANY && p != NONE && l.can_cut_through();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 40 ms over a 10 ms bottleneck: 20 ms of access delay, 5 ms a link.
    /// 26 000 003 ns left over: 6 500 000 ns a link, the right host's
    /// downlink 6 500 003. Exactly the bottleneck's round trip: none.
    #[test]
    fn split_rtt_gives_the_rtt_to_the_nanosecond() {
        let ms = SimTime::from_millis;
        assert_eq!(split_rtt(ms(40), ms(10)), [ms(5); 4]);
        let a = split_rtt(SimTime(40_000_003), ms(7));
        assert_eq!(
            a,
            [
                SimTime(6_500_000),
                SimTime(6_500_000),
                SimTime(6_500_003),
                SimTime(6_500_000)
            ]
        );
        // Data (left up, bottleneck, right down) and ACK (right up,
        // bottleneck, left down): 2 x 7 ms + the four links.
        let rtt = a[0].0 + a[2].0 + a[3].0 + a[1].0 + 2 * ms(7).0;
        assert_eq!(rtt, 40_000_003);
        assert_eq!(split_rtt(ms(14), ms(7)), [SimTime::ZERO; 4]);
    }
}
