//! The engine's scenario-level tests, one test binary (linked once) whose
//! modules are the files beside this one, one concern each; `common` holds
//! their helpers (building and running a scenario, reading its series).

#[path = "aqm_apred_stred.rs"]
mod aqm_apred_stred;
#[path = "aqm_blue_avq.rs"]
mod aqm_blue_avq;
#[path = "aqm_fq.rs"]
mod aqm_fq;
#[path = "aqm_l4s.rs"]
mod aqm_l4s;
#[path = "aqm_modern.rs"]
mod aqm_modern;
#[path = "aqm_pi_rem.rs"]
mod aqm_pi_rem;
#[path = "aqm_red_adaptive.rs"]
mod aqm_red_adaptive;
#[path = "aqm_set_param.rs"]
mod aqm_set_param;
#[path = "base_rtt.rs"]
mod base_rtt;
#[path = "common/mod.rs"]
mod common;
#[path = "fidelity_engine.rs"]
mod fidelity_engine;
#[path = "pcap.rs"]
mod pcap;
#[path = "periodic_phases.rs"]
mod periodic_phases;
#[path = "ping.rs"]
mod ping;
#[path = "scenario_setups.rs"]
mod scenario_setups;
#[path = "scenarios.rs"]
mod scenarios;
#[path = "schedule.rs"]
mod schedule;
#[path = "tcp_bbr.rs"]
mod tcp_bbr;
#[path = "tcp_byte_counting.rs"]
mod tcp_byte_counting;
#[path = "tcp_cubic.rs"]
mod tcp_cubic;
#[path = "tcp_cwnd_validation.rs"]
mod tcp_cwnd_validation;
#[path = "tcp_dctcp.rs"]
mod tcp_dctcp;
#[path = "tcp_delack.rs"]
mod tcp_delack;
#[path = "tcp_ecn_fallback.rs"]
mod tcp_ecn_fallback;
#[path = "tcp_fidelity.rs"]
mod tcp_fidelity;
#[path = "tcp_hystart.rs"]
mod tcp_hystart;
#[path = "tcp_ledbat.rs"]
mod tcp_ledbat;
#[path = "tcp_prague.rs"]
mod tcp_prague;
#[path = "tcp_profiles.rs"]
mod tcp_profiles;
#[path = "tcp_rtt.rs"]
mod tcp_rtt;
#[path = "tcp_sack.rs"]
mod tcp_sack;
#[path = "tcp_timestamps.rs"]
mod tcp_timestamps;
#[path = "tcp_txrehash.rs"]
mod tcp_txrehash;
#[path = "tcp_undo.rs"]
mod tcp_undo;
#[path = "topologies.rs"]
mod topologies;
#[path = "traffic.rs"]
mod traffic;
#[path = "video.rs"]
mod video;
#[path = "web.rs"]
mod web;
