//! BBR (`tcp.variant = "bbr"`) and pacing (`tcp.pacing`) in whole runs.

use crate::common;

use common::run;

#[test]
fn debug_one_flow() {
    let text = std::fs::read_to_string("/tmp/bbrx/one.toml").unwrap() + "trace = true\n";
    let r = run(&text);
    let s = &r.flow_series;
    for i in 0..s.time_s.len().min(200) {
        println!(
            "{:.1} cwnd {:.0} ss {:.0} srtt {:.3} rate {:.2e} pace {:.2e} rs {:.2e} {} bw {:.2e}",
            s.time_s[i],
            s.cwnd[i],
            s.ssthresh[i],
            s.srtt_s[i],
            s.delivery_rate_bps[i],
            s.pacing_rate_bps[i],
            s.rate_sample_bps[i],
            s.bbr_state[i],
            s.bbr_bw_bps[i]
        );
    }
    println!("{:?}", r.summary.bottleneck.utilization);
    let e = &r.events;
    for i in 0..e.time_s.len().min(30) {
        println!(
            "{:.4} {} {} {} {}",
            e.time_s[i], e.link[i], e.flow[i], e.event[i], e.packet[i]
        );
    }
}
