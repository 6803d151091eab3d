//! Congestion control: how the window grows on ACKs and how it is cut on
//! a loss, a timeout or an ECN-Echo. One file per algorithm; loss
//! detection and recovery, which decide what is sent next, are apart
//! (`recovery.rs`).

mod reno;
