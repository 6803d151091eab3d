//! Mid-run parameter changes (`Aqm::set_param`, `aqm::apply_set`) of the
//! schemes whose files other work shares (CoDel, ST-RED), through the
//! public API, and the order-free application of a scheduled `set`. The
//! other schemes' `set_param` tests are unit tests beside their code.

use aqmlab_core::aqm::st_red::VarianceQueue;
use aqmlab_core::aqm::{
    apply_set, Aqm, Codel, CodelParams, LinkInfo, PacketInfo, QueueLen, Red, RedParams, StRed,
    StRedParams, Verdict,
};
use aqmlab_core::rng::{Rng, Stream};
use aqmlab_core::units::{BitRate, SimTime};

fn link() -> LinkInfo {
    LinkInfo::new(BitRate(10_000_000), 500)
}

fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

/// What a scheme reports to params.parquet, by name.
fn reported(a: &impl Aqm, name: &str) -> f64 {
    let mut v = f64::NAN;
    a.params(&mut |n, x| {
        if n == name {
            v = x;
        }
    });
    v
}

// ---------------------------------------------------------------- CoDel

/// A packet leaving at `now` after waiting 10 ms, 10 000 bytes behind it.
fn dequeue_10ms(c: &mut Codel, now: SimTime) -> Verdict {
    let pkt = PacketInfo {
        size: 500,
        enq_time: now.saturating_sub(ms(10)),
        ..PacketInfo::default()
    };
    let q = QueueLen {
        pkts: 20,
        bytes: 10_000,
    };
    c.on_dequeue(now, &pkt, q, now)
}

#[test]
fn codel_set_param_applies_from_the_next_packet() {
    let p = CodelParams {
        maxpacket: 500,
        ..CodelParams::default()
    };
    // Target 5 ms: a 10 ms sojourn at 10 ms starts the interval
    // (first_above_time = 110 ms); still above at 110 ms, the packet is dropped.
    let mut c = Codel::new(p.clone(), link());
    assert_eq!(dequeue_10ms(&mut c, ms(10)), Verdict::Pass);
    assert!(matches!(dequeue_10ms(&mut c, ms(110)), Verdict::Drop(_)));
    // The same, but the target is raised to 20 ms ("20ms" arrives as 0.02 s)
    // after the first packet: 10 ms is below target, nothing is dropped.
    let mut c = Codel::new(p.clone(), link());
    assert_eq!(dequeue_10ms(&mut c, ms(10)), Verdict::Pass);
    c.set_param("target", 0.02).unwrap();
    assert_eq!(c.params().target, ms(20));
    assert_eq!(dequeue_10ms(&mut c, ms(110)), Verdict::Pass);
    assert_eq!(dequeue_10ms(&mut c, ms(310)), Verdict::Pass);
    // A longer interval set before the queue goes above target: 10 ms
    // sojourns from 10 ms on are dropped only from 210 ms on.
    let mut c = Codel::new(p, link());
    c.set_param("interval", 0.2).unwrap();
    c.set_param("maxpacket", 1500.0).unwrap();
    assert_eq!((c.params().interval, c.params().maxpacket), (ms(200), 1500));
    assert_eq!(dequeue_10ms(&mut c, ms(10)), Verdict::Pass);
    assert_eq!(dequeue_10ms(&mut c, ms(110)), Verdict::Pass);
    assert!(matches!(dequeue_10ms(&mut c, ms(210)), Verdict::Drop(_)));
}

#[test]
fn codel_set_param_rejects_bad_values_and_keys() {
    let mut c = Codel::new(CodelParams::default(), link());
    let before = c.params().clone();
    let e = c.set_param("target", 0.0).unwrap_err();
    assert!(e.contains("0s is not allowed"), "{e}");
    let e = c.set_param("interval", 2e6).unwrap_err();
    assert!(
        e.contains("2000000") && e.contains("[0, 1000000] seconds"),
        "{e}"
    );
    let e = c.set_param("maxpacket", 0.0).unwrap_err();
    assert!(e.contains("0 is not allowed"), "{e}");
    let e = c.set_param("maxpacket", 1.5).unwrap_err();
    assert!(e.contains("1.5") && e.contains("whole number"), "{e}");
    assert_eq!(c.params(), &before);
    let e = c.set_param("ecn", 1.0).unwrap_err();
    assert!(
        e.contains("`ecn`") && e.contains("target, interval, maxpacket"),
        "{e}"
    );
}

// ---------------------------------------------------------------- ST-RED

/// ST-RED with section 5.5's defaults (20 / 60, w_q 5e-5, byte mode, 500 B)
/// after one arrival that finds 30 packets, with fig. 5.3's literal reading
/// (the detector samples the instantaneous queue).
fn st_red() -> StRed {
    let p = StRedParams {
        variance_queue: VarianceQueue::Instantaneous,
        ..StRedParams::default()
    };
    let mut s = StRed::new(p, link());
    let mut rng = Rng::new(1, Stream::Aqm(0));
    let pkt = PacketInfo {
        size: 500,
        ..PacketInfo::default()
    };
    let q = QueueLen {
        pkts: 30,
        bytes: 15_000,
    };
    s.on_enqueue(ms(1), &pkt, q, &mut rng);
    s
}

#[test]
fn st_red_set_param_changes_the_values_in_force() {
    let mut s = st_red();
    s.take_changed();
    // q = 30, q_ref = 40: sigma^2 = 5e-5 x (30 - 40)^2 = 0.005.
    let (sigma2, _, _) = s.detector();
    assert!((sigma2 - 0.005).abs() < 1e-12, "{sigma2}");
    s.set_param("max_th", 30.0).unwrap();
    s.set_param("min_th", 10.0).unwrap();
    let r = s.red().params();
    assert_eq!((r.min_th, r.max_th), (10.0, 30.0));
    // q_ref = 20, reported; g^2 restarts from ((h_s q_ref)^2 + (h_l q_ref)^2) / 2
    // = (0.03^2 + 0.7^2) / 3 / 2 x 20^2 = 32.72667; sigma^2 carries over.
    assert_eq!(reported(&s, "q_ref"), 20.0);
    let (sigma2_after, g2, k) = s.detector();
    assert_eq!(sigma2_after, sigma2);
    assert!((g2 - 0.4909 / 6.0 * 400.0).abs() < 1e-9, "{g2}");
    assert_eq!(k, 1.0);
    assert!(s.take_changed() && !s.take_changed());
    // RED's max_p and w_q reach the RED inside; the AIMD interval the tick.
    s.set_param("max_p", 0.2).unwrap();
    s.set_param("w_q", 1e-4).unwrap();
    s.set_param("interval", 1.0).unwrap();
    let r = s.red().params();
    assert_eq!((r.max_p, r.w_q), (0.2, 1e-4));
    assert_eq!(s.tick_interval(), Some(SimTime::from_secs(1)));
    assert_eq!(reported(&s, "interval_s"), 1.0);
    // A new gamma keeps g^2 (its initial value does not depend on gamma);
    // a new h_l restarts it: (0.03^2 + 0.5^2 x 3) / 3 / 2 x 400.
    s.set_param("gamma", 0.5).unwrap();
    assert!((s.detector().1 - g2).abs() < 1e-9);
    s.set_param("h_l", 0.5).unwrap();
    let g2_hl = (0.0009 / 3.0 + 0.25) / 2.0 * 400.0;
    assert!((s.detector().1 - g2_hl).abs() < 1e-9, "{}", s.detector().1);
    s.set_param("phi_1", 2.0).unwrap();
    s.set_param("phi_2", 1.0).unwrap();
    s.set_param("h_s", 0.1).unwrap();
}

#[test]
fn st_red_set_param_rejects_bad_values_and_keys() {
    let mut s = st_red();
    let red = s.red().params().clone();
    let det = s.detector();
    // RED's own check: min_th must stay below max_th (60).
    let e = s.set_param("min_th", 70.0).unwrap_err();
    assert!(e.contains("70 must be less than max_th (60)"), "{e}");
    // h_s must stay below h_l = 0.7 / sqrt(3) = 0.404.
    let e = s.set_param("h_s", 0.5).unwrap_err();
    assert!(
        e.contains("0.5 must be > 0 and less than h_l (0.404"),
        "{e}"
    );
    // phi_1 w_q <= 1 with w_q = 5e-5: phi_1 <= 20000.
    let e = s.set_param("phi_1", 30_000.0).unwrap_err();
    assert!(e.contains("30000") && e.contains("(0, 20000]"), "{e}");
    let e = s.set_param("max_p", 0.0).unwrap_err();
    assert!(e.contains("0 is not allowed here"), "{e}");
    let e = s.set_param("interval", 0.0).unwrap_err();
    assert!(e.contains("0s is not allowed"), "{e}");
    assert_eq!(s.red().params(), &red);
    assert_eq!(s.detector(), det);
    assert_eq!(s.tick_interval(), Some(ms(500)));
    let e = s.set_param("mode", 1.0).unwrap_err();
    assert!(
        e.contains("`mode`")
            && e.contains("min_th, max_th, max_p, w_q, interval, phi_1, phi_2, gamma, h_l, h_s"),
        "{e}"
    );
}

// ---------------------------------------------------------------- apply_set

/// A scheduled `set` is applied whatever the order of its keys: RED's
/// thresholds moved down past each other (max_th = 15 alone is below the
/// old min_th = 20, so it is applied after min_th = 5).
#[test]
fn apply_set_orders_dependent_keys() {
    let p = RedParams {
        min_th: 20.0,
        max_th: 60.0,
        mean_pkt_size: 500,
        ..RedParams::default()
    };
    let mut r = Red::new(p.clone(), link());
    // Keys in the scenario's (alphabetical) order: max_th before min_th.
    let refused = apply_set(&mut r, [("max_th", 15.0), ("min_th", 5.0)]);
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!((r.params().min_th, r.params().max_th), (5.0, 15.0));
    // A set that cannot hold in any order is refused with the scheme's error.
    let mut r = Red::new(p, link());
    let refused = apply_set(&mut r, [("max_th", 40.0), ("min_th", 50.0), ("w_q", 2.0)]);
    let keys: Vec<&str> = refused.iter().map(|(k, _, _)| *k).collect();
    assert_eq!(keys, ["min_th", "w_q"]);
    assert!(refused[0].2.contains("50 must be less than max_th (40)"));
    assert_eq!((r.params().min_th, r.params().max_th), (20.0, 40.0));
}
