//! What the router reads from and writes into an IPv4 header.
//!
//! Facts used (RFC 791, RFC 3168, RFC 1624, RFC 9293):
//! - byte 0: version (high nibble) and header length in 32-bit words (low nibble);
//! - byte 1: DSCP (high six bits) and the ECN field (low two bits):
//!   `00` not ECT, `10` ECT(0), `01` ECT(1), `11` CE (RFC 3168 section 5);
//! - bytes 2-3: total length; byte 9: protocol (6 TCP, 17 UDP);
//!   bytes 10-11: header checksum; bytes 12-19: source and destination;
//! - TCP: ports in bytes 0-3, sequence number in 4-7, data offset in the
//!   high nibble of byte 12, flags in byte 13 (FIN 0x01, SYN 0x02, ACK 0x10,
//!   ECE 0x40, CWR 0x80).
//!
//! Setting CE changes one 16-bit word of the header; the checksum is updated
//! incrementally with RFC 1624 equation 3, `HC' = ~(~HC + ~m + m')`.

use aqmlab_core::packet::flags;

/// The ECN field's CE codepoint.
pub const CE: u8 = 0b11;

/// What the AQM needs of one IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Total length (bytes on the wire at the IP layer).
    pub len: u32,
    /// The two ECN bits.
    pub ecn: u8,
    /// A hash of the 5-tuple (protocol, addresses, ports), or the flow's
    /// number where [`FlowPorts`] names it.
    pub flow: u32,
    /// Source and destination port (TCP and UDP; 0 and 0 otherwise).
    pub ports: (u16, u16),
    /// TCP flags in the core's encoding ([`aqmlab_core::packet::flags`]).
    pub flags: u8,
    /// TCP sequence number (0 for other protocols).
    pub seq: u64,
    /// IP protocol number.
    pub proto: u8,
}

impl Header {
    /// The ECN codepoint of the header's two ECN bits.
    pub fn codepoint(&self) -> aqmlab_core::packet::Ecn {
        use aqmlab_core::packet::Ecn;
        match self.ecn & 0b11 {
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            0b11 => Ecn::Ce,
            _ => Ecn::NotEct,
        }
    }

    /// ECN-capable transport: ECT(0), ECT(1) or already CE.
    pub fn ect(&self) -> bool {
        self.ecn != 0
    }
}

/// Why a packet is not handled as IPv4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotIpv4 {
    /// Shorter than its headers claim, or a version other than 4.
    Malformed,
    /// IPv6 or another version.
    OtherVersion,
}

fn fnv1a(data: &[u8], mut h: u32) -> u32 {
    for &b in data {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Parse the IPv4 (and TCP) header of `pkt`.
pub fn parse(pkt: &[u8]) -> Result<Header, NotIpv4> {
    if pkt.is_empty() {
        return Err(NotIpv4::Malformed);
    }
    if pkt[0] >> 4 != 4 {
        return Err(NotIpv4::OtherVersion);
    }
    let ihl = ((pkt[0] & 0x0f) as usize) * 4;
    if ihl < 20 || pkt.len() < ihl {
        return Err(NotIpv4::Malformed);
    }
    let total = u16::from_be_bytes([pkt[2], pkt[3]]) as usize;
    if total < ihl || total > pkt.len() {
        return Err(NotIpv4::Malformed);
    }
    let proto = pkt[9];
    let mut h = fnv1a(&pkt[12..20], 0x811c_9dc5);
    h = fnv1a(&[proto], h);
    let l4 = &pkt[ihl..total];
    let (mut fl, mut seq, mut ports) = (0u8, 0u64, (0u16, 0u16));
    if (proto == 6 || proto == 17) && l4.len() >= 4 {
        h = fnv1a(&l4[0..4], h);
        ports = (
            u16::from_be_bytes([l4[0], l4[1]]),
            u16::from_be_bytes([l4[2], l4[3]]),
        );
    }
    if proto == 6 && l4.len() >= 20 {
        seq = u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]) as u64;
        let off = ((l4[12] >> 4) as usize) * 4;
        let f = l4[13];
        for (bit, ours) in [
            (0x01, flags::FIN),
            (0x02, flags::SYN),
            (0x10, flags::ACK),
            (0x40, flags::ECE),
            (0x80, flags::CWR),
        ] {
            if f & bit != 0 {
                fl |= ours;
            }
        }
        if l4.len() > off {
            fl |= flags::DATA;
        }
    }
    Ok(Header {
        len: total as u32,
        ecn: pkt[1] & 0b11,
        flow: h,
        ports,
        flags: fl,
        seq,
        proto,
    })
}

/// The testbed's hosts send flow `i` of the scenario from port `base + i`
/// (and receive its ACKs there), so the router can key a flow queue by the
/// flow's number, as the simulator keys it, rather than by a hash of ports
/// the kernel chose: a flow-queueing scheme then puts the same flows in the
/// same queues on both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct FlowPorts {
    /// The port of flow 0.
    pub base: u16,
    /// How many flows have a port of their own.
    pub count: u16,
}

impl FlowPorts {
    /// The flow number of a TCP or UDP packet sent from or to a flow's port.
    pub fn flow(&self, h: &Header) -> Option<u32> {
        if h.proto != 6 && h.proto != 17 {
            return None;
        }
        let of = |p: u16| {
            p.checked_sub(self.base)
                .filter(|&i| i < self.count)
                .map(u32::from)
        };
        of(h.ports.0).or_else(|| of(h.ports.1))
    }

    /// `h` with its flow keyed by the flow's number where it has one.
    pub fn key(ports: Option<FlowPorts>, mut h: Header) -> Header {
        if let Some(i) = ports.and_then(|p| p.flow(&h)) {
            h.flow = i;
        }
        h
    }
}

/// Set CE in an ECN-capable IPv4 packet and update its header checksum.
/// Returns whether the packet was changed (not for a packet already CE).
pub fn set_ce(pkt: &mut [u8]) -> bool {
    if pkt[1] & 0b11 == CE {
        return false;
    }
    let old = u16::from_be_bytes([pkt[0], pkt[1]]);
    pkt[1] |= CE;
    let new = u16::from_be_bytes([pkt[0], pkt[1]]);
    let hc = u16::from_be_bytes([pkt[10], pkt[11]]);
    // RFC 1624 eqn 3 in 32-bit ones' complement arithmetic.
    let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let out = !(sum as u16);
    pkt[10..12].copy_from_slice(&out.to_be_bytes());
    true
}

/// The header checksum of an IPv4 header computed from scratch (the
/// checksum field counted as zero): for tests and for building packets.
pub fn header_checksum(hdr: &[u8]) -> u16 {
    let ihl = ((hdr[0] & 0x0f) as usize) * 4;
    let mut sum = 0u32;
    for i in (0..ihl).step_by(2) {
        if i == 10 {
            continue;
        }
        sum += u16::from_be_bytes([hdr[i], hdr[i + 1]]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A minimal IPv4/TCP packet of `len` bytes (tests and the benchmark).
pub fn build_tcp(len: usize, ecn: u8, sport: u16, seq: u32, tcp_flags: u8) -> Vec<u8> {
    let mut p = vec![0u8; len.max(40)];
    p[0] = 0x45;
    p[1] = ecn & 0b11;
    let n = p.len() as u16;
    p[2..4].copy_from_slice(&n.to_be_bytes());
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&[10, 1, 0, 2]);
    p[16..20].copy_from_slice(&[10, 2, 0, 2]);
    p[20..22].copy_from_slice(&sport.to_be_bytes());
    p[22..24].copy_from_slice(&5001u16.to_be_bytes());
    p[24..28].copy_from_slice(&seq.to_be_bytes());
    p[32] = 5 << 4;
    p[33] = tcp_flags;
    let c = header_checksum(&p);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_data_segment() {
        let p = build_tcp(1500, 0b10, 40000, 7, 0x10);
        let h = parse(&p).unwrap();
        assert_eq!(h.len, 1500);
        assert!(h.ect());
        assert_eq!(h.seq, 7);
        assert_eq!(h.proto, 6);
        assert_eq!(h.flags, flags::ACK | flags::DATA);
        // A pure ACK carries no data.
        let a = parse(&build_tcp(40, 0, 40000, 7, 0x10)).unwrap();
        assert_eq!(a.flags, flags::ACK);
        assert!(!a.ect());
        // Different ports, different flows; the same 5-tuple, the same flow.
        assert_ne!(
            h.flow,
            parse(&build_tcp(1500, 2, 40001, 7, 0x10)).unwrap().flow
        );
        assert_eq!(
            h.flow,
            parse(&build_tcp(60, 0, 40000, 9, 0x11)).unwrap().flow
        );
    }

    #[test]
    fn a_flows_port_gives_its_number() {
        let fp = FlowPorts {
            base: 10000,
            count: 5,
        };
        // Data from flow 3's port (build_tcp's destination port is 5001),
        // and a packet to it.
        let d = parse(&build_tcp(1500, 2, 10003, 7, 0x10)).unwrap();
        assert_eq!(d.ports, (10003, 5001));
        assert_eq!(fp.flow(&d), Some(3));
        let mut a = d;
        a.ports = (5001, 10003);
        assert_eq!(fp.flow(&a), Some(3));
        assert_eq!(FlowPorts::key(Some(fp), d).flow, 3);
        // Outside the range, or no range: the 5-tuple's hash.
        let o = parse(&build_tcp(1500, 2, 10005, 7, 0x10)).unwrap();
        assert_eq!(fp.flow(&o), None);
        assert_eq!(FlowPorts::key(Some(fp), o).flow, o.flow);
        assert_eq!(FlowPorts::key(None, d).flow, d.flow);
        let low = parse(&build_tcp(1500, 2, 9999, 7, 0x10)).unwrap();
        assert_eq!(fp.flow(&low), None);
        // Neither TCP nor UDP: no ports.
        let mut icmp = d;
        icmp.proto = 1;
        assert_eq!(fp.flow(&icmp), None);
    }

    #[test]
    fn rejects_what_is_not_ipv4() {
        assert_eq!(parse(&[]), Err(NotIpv4::Malformed));
        assert_eq!(parse(&[0x60; 40]), Err(NotIpv4::OtherVersion));
        let mut p = build_tcp(100, 0, 1, 1, 0x10);
        p[2..4].copy_from_slice(&200u16.to_be_bytes());
        assert_eq!(parse(&p), Err(NotIpv4::Malformed));
        assert_eq!(parse(&p[..10]), Err(NotIpv4::Malformed));
    }

    #[test]
    fn ce_keeps_the_checksum_valid() {
        // Every TOS byte with an ECT codepoint and many other header values:
        // the incremental update equals the checksum computed from scratch.
        for tos in 0u8..=255 {
            if tos & 0b11 == 0 || tos & 0b11 == CE {
                continue;
            }
            for ttl in [0u8, 1, 63, 64, 255] {
                let mut p = build_tcp(576, 0, 1234, 99, 0x18);
                p[1] = tos;
                p[8] = ttl;
                let c = header_checksum(&p);
                p[10..12].copy_from_slice(&c.to_be_bytes());
                assert!(set_ce(&mut p));
                assert_eq!(p[1], tos | CE);
                assert_eq!(
                    u16::from_be_bytes([p[10], p[11]]),
                    header_checksum(&p),
                    "tos {tos:#x} ttl {ttl}"
                );
            }
        }
        // Already CE: left alone.
        let mut p = build_tcp(100, CE, 1, 1, 0x10);
        let before = p.clone();
        assert!(!set_ce(&mut p));
        assert_eq!(p, before);
    }
}
