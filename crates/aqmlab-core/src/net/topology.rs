//! Building a topology: its links and the route of every flow.

use super::link::{Link, LossModel};
use crate::aqm::{Aqm, AqmSpec, LinkInfo};
use crate::rng::{Rng, Stream};
use crate::scenario::{Buffer, Direction, Scenario, Topology};
use crate::units::{BitRate, SimTime};

/// Links, routes and the monitored link of a built topology.
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
    /// Dumbbell: each flow's four access links.
    pub access: Vec<[u32; 4]>,
}

/// Link 0 is the forward bottleneck (R1 -> R2), link 1 its reverse (R2 -> R1).
pub const BOTTLENECK_FWD: u32 = 0;
pub const BOTTLENECK_REV: u32 = 1;

/// Build a link; `flows` and `rtt` describe the load the scenario puts on it.
#[allow(clippy::too_many_arguments)]
fn make_link(
    seed: u64,
    idx: usize,
    rate: BitRate,
    delay: SimTime,
    limit: Buffer,
    aqm: &AqmSpec,
    pkt_size: u32,
    (flows, rtt): (u32, SimTime),
) -> Link {
    let info = LinkInfo {
        rate,
        delay,
        buffer: limit,
        mean_pkt_size: pkt_size,
        flows,
        rtt,
    };
    Link::new(
        rate,
        delay,
        limit,
        aqm.build(info),
        Rng::new(seed, Stream::Aqm(idx as u32)),
    )
}

/// Build the scenario's topology. `directions[f]` is the direction of flow
/// `f`; `live[f]` whether it is active from the start (flows the schedule
/// starts later exist from the start but do not count as load yet).
pub fn build(sc: &Scenario, seed: u64, directions: &[Direction], live: &[bool]) -> Built {
    let Topology::Dumbbell(d) = &sc.topology;
    let ps = sc.tcp.packet_size;
    let n = directions.len();
    // Access delays first: the bottleneck's AQM may configure itself from
    // its flows' round-trip times.
    let access: Vec<SimTime> = (0..n)
        .map(|f| {
            d.access_delay
                .sample(&mut Rng::new(seed, Stream::Flow(f as u32)))
        })
        .collect();
    let base_rtt: Vec<SimTime> = access
        .iter()
        .map(|a| SimTime(2 * (2 * a.0 + d.bottleneck_delay.0)))
        .collect();
    let load = |dir: Direction| {
        let rtts: Vec<u64> = directions
            .iter()
            .zip(&base_rtt)
            .zip(live)
            .filter(|((d, _), l)| **d == dir && **l)
            .map(|(x, _)| x)
            .map(|(_, r)| r.0)
            .collect();
        let mean = if rtts.is_empty() {
            SimTime::ZERO
        } else {
            SimTime(rtts.iter().sum::<u64>() / rtts.len() as u64)
        };
        (rtts.len() as u32, mean)
    };
    let mut links = Vec::with_capacity(2 + 4 * n);
    let mut fwd = make_link(
        seed,
        0,
        d.bottleneck_rate,
        d.bottleneck_delay,
        d.buffer,
        &sc.aqm,
        ps,
        load(Direction::Forward),
    );
    if let Some(l) = &d.loss {
        fwd.loss = Some(LossModel::new(l, Rng::new(seed, Stream::LinkLoss(0))));
    }
    links.push(fwd);
    links.push(make_link(
        seed,
        1,
        d.bottleneck_rate,
        d.bottleneck_delay,
        d.buffer,
        &sc.reverse_aqm,
        ps,
        load(Direction::Reverse),
    ));
    let mut routes = Vec::with_capacity(2 * n);
    let mut access_links = Vec::with_capacity(n);
    let droptail = AqmSpec::Droptail;
    for (f, dir) in directions.iter().enumerate() {
        let a = access[f];
        let base = links.len() as u32;
        // left up (host -> R1), left down (R1 -> host), right down (R2 -> host), right up (host -> R2)
        for _ in 0..4 {
            let i = links.len();
            links.push(make_link(
                seed,
                i,
                d.access_rate,
                a,
                d.access_buffer,
                &droptail,
                ps,
                (1, base_rtt[f]),
            ));
        }
        let (lu, ld, rd, ru) = (base, base + 1, base + 2, base + 3);
        access_links.push([lu, ld, rd, ru]);
        let (data, ack) = match dir {
            Direction::Forward => (vec![lu, BOTTLENECK_FWD, rd], vec![ru, BOTTLENECK_REV, ld]),
            Direction::Reverse => (vec![ru, BOTTLENECK_REV, ld], vec![lu, BOTTLENECK_FWD, rd]),
        };
        routes.push(data);
        routes.push(ack);
    }
    // Each bottleneck direction's AQM may watch the other direction.
    for (l, o) in [
        (BOTTLENECK_REV, BOTTLENECK_FWD),
        (BOTTLENECK_FWD, BOTTLENECK_REV),
    ] {
        if links[o as usize].aqm.wants_reverse() {
            links[l as usize].observer = Some(o);
        }
    }
    Built {
        links,
        routes,
        monitored: vec![(BOTTLENECK_FWD, "bottleneck".to_string())],
        base_rtt,
        access: access_links,
    }
}

/// Mark the links that may be passed through ahead of time: those that
/// [`Link::can_cut_through`] and whose packets all come from one and the
/// same upstream link (never straight from a host, whose sends are
/// already one event each).
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
        l.cut_through = p < MANY && l.can_cut_through();
    }
}
