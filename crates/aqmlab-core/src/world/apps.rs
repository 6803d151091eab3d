//! The applications' side of a flow's start, and the UDP sources: a
//! flow's `FlowStart` (a UDP source, a web session's step, a `web-simple`
//! transfer, a video session's next segment, a bulk flow's open) and a UDP
//! source's timer.

use super::sample::End;
use super::web::WebApp;
use super::World;
use crate::packet::{flags, Ecn, Packet};
use crate::scenario::Scenario;
use crate::sim::Event;

impl World {
    /// A flow's `FlowStart`: a UDP source starts sending; a `web` session
    /// takes its next step; a `web-simple` session begins a transfer on a
    /// new connection; then the flow's TCP opens (a SYN, or data at once).
    pub(super) fn start_flow(&mut self, f: u32) {
        self.flow_event(f as usize, End::Both, self.now);
        if self.meta[f as usize].stopped.is_some() {
            return; // stopped by the schedule before it started
        }
        if let Some(u) = self.udp[f as usize].as_mut() {
            if let Some(t) = u.start(self.now) {
                self.events.schedule(t, Event::UdpSend(f));
            }
            return;
        }
        if let Some(app) = self.web[f as usize].as_deref_mut() {
            let w = match app {
                WebApp::Simple(w) => w,
                WebApp::Browse(_) => {
                    self.browse_event(f as usize);
                    return;
                }
                WebApp::Video(_) => {
                    self.video_event(f as usize);
                    return;
                }
            };
            let n = w.begin(self.now);
            let fl = &mut self.flows[f as usize];
            if fl.started() {
                fl.new_connection(n);
                self.tag[f as usize].conn = self.tag[f as usize].conn.wrapping_add(1);
            } else {
                fl.new_connection(n);
            }
        }
        let mut out = std::mem::take(&mut self.out);
        self.flows[f as usize].start(self.now, &mut out);
        self.emit(f as usize, &mut out);
        self.out = out;
    }

    /// A UDP source's timer: maybe send a packet, then re-arm.
    pub(super) fn udp_send(&mut self, f: usize) {
        let Some(u) = self.udp[f].as_mut() else {
            return;
        };
        let (send, next) = u.on_timer(self.now);
        let (size, mut seq) = (u.size, u.seq);
        if let Some(t) = next {
            self.events.schedule(t, Event::UdpSend(f as u32));
        }
        if send {
            self.flows[f].stats.data_sent += 1;
            if self.tag[f].ping {
                seq = self.ping_row(f, seq);
            }
            let pos = self.routes.first(2 * f);
            let id = self.arena.alloc(Packet {
                size,
                flow: f as u32,
                seq,
                ts: self.now,
                enq_time: self.now,
                pos,
                dir_label: 0,
                conn: 0,
                flags: flags::DATA,
                ecn: Ecn::NotEct,
            });
            self.send_on(self.routes.link_at(pos) as usize, id);
        }
    }
}

/// The per-flow rate of UDP group `g` (while ON): its `rate`, or density x
/// C / flows with C the rate of the bottleneck its data crosses.
pub(super) fn udp_rate(
    sc: &Scenario,
    g: usize,
    u: &crate::scenario::UdpSpec,
) -> crate::units::BitRate {
    match u.rate {
        crate::scenario::UdpRate::Rate(r) => r,
        crate::scenario::UdpRate::Density(d) => {
            let c = sc.path_rate(g).bps() as f64;
            crate::units::BitRate(((d * c / u.flows as f64).round() as u64).max(1))
        }
        crate::scenario::UdpRate::Interval(i) => crate::units::BitRate(
            ((u.packet_size as f64 * 8.0 / i.as_secs_f64()).round() as u64).max(1),
        ),
    }
}
