//! The packet capture of `metrics.pcap`: the first N packets that leave
//! the queue of the capture link (the first monitored link and, where it
//! is measured too, its reverse direction), written as a classic libpcap
//! file that Wireshark and tshark read.
//!
//! Format (the libpcap file format, draft-ietf-opsawg-pcap sections 3-5;
//! link types from the tcpdump.org LINKTYPE registry):
//! - file header, 24 bytes, little-endian: magic `0xa1b23c4d` (time stamps
//!   in nanoseconds), version 2.4, two reserved zero words, snaplen
//!   [`SNAPLEN`], link type 101 (`LINKTYPE_RAW`: each record starts with
//!   an IP header);
//! - per packet, a 16-byte record header (seconds, nanoseconds, bytes
//!   captured, bytes on the wire) and the captured bytes: the synthesised
//!   headers only, so the bytes on the wire are the simulated packet's
//!   size and the payload is "not captured" (Wireshark: "packet size
//!   limited during capture").
//!
//! The headers (RFC 791 for IPv4, RFC 9293 section 3.1 for TCP, RFC 768
//! for UDP) are made from the simulated packet:
//! - addresses from the flow: flow f's data sender is 10.0.0.0 + (f + 1)
//!   (in 10.0.0.0/9) and its receiver 10.128.0.0 + (f + 1); a packet of the
//!   ACK route goes from the receiver to the sender;
//! - ports: a bulk flow's sender 10000, its receiver 5001; a web or
//!   web-simple session's server (the data sender) 80 and its client
//!   10000 + the connection number, so that each transfer on a new
//!   connection is a TCP stream of its own; UDP 10000 -> 5001;
//! - IP: total length = the packet's size (at least the headers), DF, TTL
//!   64, the header checksum; the ECN field of the TOS octet (RFC 3168
//!   section 5): Not-ECT 00, ECT(0) 10, CE 11 (the simulator sends no
//!   ECT(1));
//! - TCP: sequence and acknowledgement numbers in bytes, with initial
//!   sequence numbers 0 at both ends (the SYN takes number 0): data
//!   segment k (counted from 0) has sequence number 1 + k x MSS and
//!   acknowledgement 1; an ACK for segments up to k - 1 acknowledges
//!   1 + k x MSS with sequence number 1; the flags SYN, FIN, ACK (every
//!   segment but the first SYN), ECE and CWR as the packet carries them
//!   (RFC 3168 section 6.1); window 65535, no options, checksum 0 (the
//!   payload it covers is not captured);
//! - UDP: length = size - 20, checksum 0 ("none" in IPv4).

use crate::packet::{flags, Packet};
use crate::units::SimTime;

/// Bytes captured of a packet at most: an IPv4 and a TCP header.
pub const SNAPLEN: u32 = 40;
/// `LINKTYPE_RAW`: the record starts with the IP header.
pub const LINKTYPE_RAW: u32 = 101;
/// The file header's magic for nanosecond time stamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// Bytes of the file header and of a record header.
pub const FILE_HEADER: usize = 24;
pub const RECORD_HEADER: usize = 16;
const IP_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
const UDP_HEADER: usize = 8;

/// The first `limit` packets to leave one link, with the time each
/// began its transmission.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub limit: u64,
    pub packets: Vec<(SimTime, Packet)>,
}

impl Capture {
    pub fn new(limit: u64) -> Capture {
        Capture {
            limit,
            packets: Vec::new(),
        }
    }

    /// Packet `p` starts its transmission at `t` (kept while fewer than
    /// `limit` are).
    #[cold]
    pub fn record(&mut self, t: SimTime, p: &Packet) {
        if (self.packets.len() as u64) < self.limit {
            self.packets.push((t, *p));
        }
    }
}

/// What the headers need to know of a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowWire {
    /// Payload bytes of a full segment (numbers segments in bytes).
    pub mss: u32,
    /// A UDP source.
    pub udp: bool,
    /// A web or web-simple session (its data sender is a server on port 80).
    pub web: bool,
}

/// Flow `f`'s data sender's and receiver's addresses.
pub fn addresses(f: u32) -> ([u8; 4], [u8; 4]) {
    let host = (f + 1) & 0x7f_ffff;
    let s = host.to_be_bytes();
    ([10, s[1], s[2], s[3]], [10, s[1] | 0x80, s[2], s[3]])
}

/// The RFC 791 header checksum: the ones' complement of the ones'
/// complement sum of the header's 16-bit words (its checksum field 0).
pub fn ip_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The captured bytes of packet `p` (its IPv4 header and its TCP or UDP
/// header) appended to `out`; returns the IP total length (the bytes on
/// the wire).
pub fn headers(p: &Packet, w: FlowWire, out: &mut Vec<u8>) -> u32 {
    let transport = if w.udp { UDP_HEADER } else { TCP_HEADER };
    let len = p.size.clamp((IP_HEADER + transport) as u32, 65_535);
    let (sender, receiver) = addresses(p.flow);
    let (src, dst) = if p.dir() == 0 {
        (sender, receiver)
    } else {
        (receiver, sender)
    };
    // RFC 3168 section 5: the two low bits of the old TOS octet.
    let tos = p.ecn as u8; // the codepoint's two bits (`Ecn`'s discriminant)
    let start = out.len();
    out.extend_from_slice(&[0x45, tos]);
    out.extend_from_slice(&(len as u16).to_be_bytes());
    // Identification 0, DF set (no fragments), TTL 64.
    out.extend_from_slice(&[0, 0, 0x40, 0, 64, if w.udp { 17 } else { 6 }, 0, 0]);
    out.extend_from_slice(&src);
    out.extend_from_slice(&dst);
    let sum = ip_checksum(&out[start..start + IP_HEADER]);
    out[start + 10..start + 12].copy_from_slice(&sum.to_be_bytes());
    // Data sender's port, receiver's port.
    let (sport, dport) = if w.udp {
        (10_000, 5001)
    } else if w.web {
        (80, 10_000 + u16::from(p.conn))
    } else {
        (10_000 + u16::from(p.conn), 5001)
    };
    let (a, b) = if p.dir() == 0 {
        (sport, dport)
    } else {
        (dport, sport)
    };
    out.extend_from_slice(&a.to_be_bytes());
    out.extend_from_slice(&b.to_be_bytes());
    if w.udp {
        out.extend_from_slice(&((len - IP_HEADER as u32) as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        return len;
    }
    let (seq, ack, mut f) = tcp_numbers(p, w.mss);
    if p.has(flags::ECE) {
        f |= 0x40;
    }
    if p.has(flags::CWR) {
        f |= 0x80;
    }
    if p.has(flags::DATA) && p.has(flags::PSH) {
        f |= 0x08;
    }
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&ack.to_be_bytes());
    // Data offset 5 words; window 65535; checksum 0; urgent pointer 0.
    out.extend_from_slice(&[0x50, f, 0xff, 0xff, 0, 0, 0, 0]);
    len
}

/// A TCP packet's sequence and acknowledgement numbers in bytes and its
/// SYN, FIN and ACK bits (see the module's head).
fn tcp_numbers(p: &Packet, mss: u32) -> (u32, u32, u8) {
    const FIN: u8 = 0x01;
    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    let bytes = |k: u64| (1 + k.wrapping_mul(u64::from(mss))) as u32;
    if p.has(flags::SYN) {
        return if p.has(flags::ACK) {
            (0, 1, SYN | ACK)
        } else {
            (0, 0, SYN)
        };
    }
    let fin = if p.has(flags::FIN) { FIN } else { 0 };
    if p.has(flags::DATA) {
        // A data segment (on its flow's data route: `seq` is its number).
        (bytes(p.seq), 1, ACK | fin)
    } else if p.dir() == 0 {
        // The data sender's FIN/ACK: after the last segment acknowledged.
        (bytes(p.seq), 1, ACK | fin)
    } else {
        // An ACK (a web client's request or FIN too): `seq` is the next
        // segment expected.
        (1, bytes(p.seq), ACK | fin)
    }
}

/// The capture file of `packets` (in time order), the flows' `wire`
/// indexed by flow id.
pub fn file(packets: &[(SimTime, Packet)], wire: &[FlowWire]) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(FILE_HEADER + packets.len() * (RECORD_HEADER + SNAPLEN as usize));
    for word in [MAGIC_NS, 0x0004_0002, 0, 0, SNAPLEN, LINKTYPE_RAW] {
        if word == 0x0004_0002 {
            // Major version 2, minor 4 (two 16-bit fields).
            out.extend_from_slice(&2u16.to_le_bytes());
            out.extend_from_slice(&4u16.to_le_bytes());
        } else {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    for (t, p) in packets {
        let at = out.len();
        out.extend_from_slice(&[0; RECORD_HEADER]);
        let w = wire.get(p.flow as usize).copied().unwrap_or_default();
        let orig = headers(p, w, &mut out);
        let incl = (out.len() - at - RECORD_HEADER) as u32;
        let (s, ns) = ((t.0 / 1_000_000_000) as u32, (t.0 % 1_000_000_000) as u32);
        for (i, v) in [s, ns, incl, orig].into_iter().enumerate() {
            out[at + 4 * i..at + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// The packets of two captures (each in time order) merged in time order,
/// the first's before the second's at equal times, at most `limit`; a
/// packet planned to start after `end` (it never left the queue) is not
/// among them.
pub fn merge(
    a: Vec<(SimTime, Packet)>,
    b: Vec<(SimTime, Packet)>,
    end: SimTime,
    limit: u64,
) -> Vec<(SimTime, Packet)> {
    let mut out = Vec::with_capacity((a.len() + b.len()).min(limit as usize));
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while (out.len() as u64) < limit {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => {
                if y.0 < x.0 {
                    b.next()
                } else {
                    a.next()
                }
            }
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (None, None) => None,
        };
        match next {
            Some(r) if r.0 <= end => out.push(r),
            Some(_) => {}
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;

    fn data(flow: u32, seq: u64, size: u32, ecn: Ecn, f: u8) -> Packet {
        Packet {
            size,
            flow,
            seq,
            flags: flags::DATA | f,
            ecn,
            ..Packet::default()
        }
    }

    const BULK: FlowWire = FlowWire {
        mss: 1460,
        udp: false,
        web: false,
    };

    #[test]
    fn flow_addresses() {
        assert_eq!(addresses(0), ([10, 0, 0, 1], [10, 128, 0, 1]));
        // 300 + 1 = 0x00012d: 10.0.1.45.
        assert_eq!(addresses(300), ([10, 0, 1, 45], [10, 128, 1, 45]));
        assert_eq!(addresses(999_999), ([10, 15, 66, 64], [10, 143, 66, 64]));
    }

    /// By hand: the header 4500 05dc 0000 4000 4006 0000 0a00 0001 0a80
    /// 0001 sums to 4500 + 05dc + 4000 + 4006 + 0a00 + 0001 + 0a80 + 0001
    /// = df64 (no carry to fold), complemented 209b.
    #[test]
    fn ip_header_checksum_by_hand() {
        let mut out = Vec::new();
        let len = headers(&data(0, 0, 1500, Ecn::NotEct, 0), BULK, &mut out);
        assert_eq!(len, 1500);
        assert_eq!(
            &out[..20],
            &[
                0x45, 0x00, 0x05, 0xdc, 0, 0, 0x40, 0, 0x40, 0x06, 0x20, 0x9b, 10, 0, 0, 1, 10,
                128, 0, 1
            ]
        );
        // The checksum of a header with its checksum in place is 0.
        assert_eq!(ip_checksum(&out[..20]), 0);
    }

    /// Segment 2 of a 1460-byte MSS: bytes from 1 + 2 x 1460 = 2921; CE
    /// in the TOS octet; CWR set. Its ACK (next expected 3) acknowledges
    /// 1 + 3 x 1460 = 4381 and echoes ECE, from the receiver's address and
    /// port.
    #[test]
    fn tcp_numbers_in_bytes_and_ecn_bits() {
        let mut out = Vec::new();
        headers(&data(0, 2, 1500, Ecn::Ce, flags::CWR), BULK, &mut out);
        assert_eq!(out[1], 0b11);
        assert_eq!(&out[20..24], &[0x27, 0x10, 0x13, 0x89]); // 10000 -> 5001
        assert_eq!(u32::from_be_bytes(out[24..28].try_into().unwrap()), 2921);
        assert_eq!(u32::from_be_bytes(out[28..32].try_into().unwrap()), 1);
        assert_eq!(out[32], 0x50);
        assert_eq!(out[33], 0x80 | 0x10); // CWR, ACK
        let ack = Packet {
            size: 40,
            seq: 3,
            dir_label: 1,
            flags: flags::ACK | flags::ECE,
            ..Packet::default()
        };
        out.clear();
        assert_eq!(headers(&ack, BULK, &mut out), 40);
        assert_eq!(out[1], 0);
        assert_eq!(&out[12..20], &[10, 128, 0, 1, 10, 0, 0, 1]);
        assert_eq!(&out[20..24], &[0x13, 0x89, 0x27, 0x10]);
        assert_eq!(u32::from_be_bytes(out[24..28].try_into().unwrap()), 1);
        assert_eq!(u32::from_be_bytes(out[28..32].try_into().unwrap()), 4381);
        assert_eq!(out[33], 0x40 | 0x10); // ECE, ACK
                                          // ECT(0): 10.
        out.clear();
        headers(&data(0, 0, 1500, Ecn::Ect0, 0), BULK, &mut out);
        assert_eq!(out[1], 0b10);
    }

    #[test]
    fn syn_web_ports_and_udp() {
        let web = FlowWire {
            mss: 960,
            udp: false,
            web: true,
        };
        let syn = Packet {
            size: 40,
            flow: 1,
            conn: 3,
            dir_label: 1,
            flags: flags::SYN,
            ..Packet::default()
        };
        let mut out = Vec::new();
        headers(&syn, web, &mut out);
        // The client (receiver) 10003 opens to the server's port 80.
        assert_eq!(&out[20..24], &[0x27, 0x13, 0, 80]);
        assert_eq!(&out[24..32], &[0; 8]);
        assert_eq!(out[33], 0x02);
        let udp = FlowWire {
            mss: 0,
            udp: true,
            web: false,
        };
        out.clear();
        let len = headers(&data(2, 7, 200, Ecn::NotEct, 0), udp, &mut out);
        assert_eq!((len, out.len()), (200, 28));
        assert_eq!(out[9], 17);
        assert_eq!(&out[20..28], &[0x27, 0x10, 0x13, 0x89, 0, 180, 0, 0]);
        // A packet smaller than its headers is sent at their size.
        out.clear();
        assert_eq!(headers(&data(2, 7, 20, Ecn::NotEct, 0), udp, &mut out), 28);
    }

    /// The file: a 24-byte header, then per packet 16 + 40 bytes; 1.5 s
    /// and 7 ns as 1 s and 500 000 007 ns.
    #[test]
    fn file_layout() {
        let p = data(0, 0, 1500, Ecn::Ect0, 0);
        let f = file(&[(SimTime(1_500_000_007), p)], &[BULK]);
        assert_eq!(f.len(), 24 + 16 + 40);
        assert_eq!(&f[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(&f[4..8], &[2, 0, 4, 0]);
        assert_eq!(&f[16..24], &[40, 0, 0, 0, 101, 0, 0, 0]);
        let word = |i: usize| u32::from_le_bytes(f[24 + 4 * i..28 + 4 * i].try_into().unwrap());
        assert_eq!(
            (word(0), word(1), word(2), word(3)),
            (1, 500_000_007, 40, 1500)
        );
    }

    #[test]
    fn merge_in_time_order_within_the_end_and_limit() {
        let at = |t: u64, flow: u32| (SimTime(t), data(flow, 0, 40, Ecn::NotEct, 0));
        let a = vec![at(1, 0), at(3, 0), at(9, 0)];
        let b = vec![at(3, 1), at(4, 1)];
        let times = |v: &[(SimTime, Packet)]| -> Vec<(u64, u32)> {
            v.iter().map(|(t, p)| (t.0, p.flow)).collect()
        };
        let m = merge(a.clone(), b.clone(), SimTime(5), 10);
        assert_eq!(times(&m), vec![(1, 0), (3, 0), (3, 1), (4, 1)]);
        let m = merge(a, b, SimTime(100), 3);
        assert_eq!(times(&m), vec![(1, 0), (3, 0), (3, 1)]);
    }
}
