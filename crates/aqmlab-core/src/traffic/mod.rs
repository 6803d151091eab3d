//! The applications that drive the flows: web-browsing sessions. Bulk
//! (FTP) transfers need no state of their own, and the UDP sources sit in
//! [`crate::transport::udp`].

pub mod web;
