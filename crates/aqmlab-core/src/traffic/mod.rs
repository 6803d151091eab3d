//! The applications that drive the flows: web-browsing sessions and
//! adaptive video players. Bulk (FTP) transfers need no state of their
//! own, and the UDP sources sit in [`crate::transport::udp`].

pub mod video;
pub mod web;
