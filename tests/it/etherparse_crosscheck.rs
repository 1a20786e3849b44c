//! rocescope's parsers against an independent decoder: etherparse reads the Ethernet, 802.1Q,
//! IPv4, IPv6 and UDP headers of every plain Ethernet frame of every sample and of the
//! reference and real captures, and what it reads equals what rocescope decodes.

use crate::common;

use std::net::IpAddr;

use etherparse::{LinkExtSlice, LinkSlice, NetSlice, SlicedPacket, TransportSlice};
use rocescope::capture::{Inputs, LinkType};
use rocescope::decode::{Decoder, Network};
use serde_json::{Value, json};

/// What both decoders read of a frame's headers, as JSON.
fn theirs(bytes: &[u8]) -> Option<Value> {
    let sliced = SlicedPacket::from_ethernet(bytes).ok()?;
    let Some(LinkSlice::Ethernet2(eth)) = &sliced.link else { return None };
    let vlans: Vec<Value> = sliced
        .link_exts
        .iter()
        .filter_map(|e| match e {
            LinkExtSlice::Vlan(v) => {
                Some(json!([v.vlan_identifier().value(), v.priority_code_point().value(), v.drop_eligible_indicator()]))
            }
            LinkExtSlice::Macsec(_) => None,
        })
        .collect();
    let (src, dst, dscp, ecn, ttl) = match &sliced.net {
        Some(NetSlice::Ipv4(ip)) => {
            let h = ip.header();
            (
                IpAddr::from(h.source_addr()),
                IpAddr::from(h.destination_addr()),
                h.dcp().value(),
                h.ecn().value(),
                h.ttl(),
            )
        }
        Some(NetSlice::Ipv6(ip)) => {
            let h = ip.header();
            let tc = h.traffic_class();
            (IpAddr::from(h.source_addr()), IpAddr::from(h.destination_addr()), tc >> 2, tc & 3, h.hop_limit())
        }
        _ => return None,
    };
    let udp = match &sliced.transport {
        Some(TransportSlice::Udp(u)) => json!([u.source_port(), u.destination_port(), u.length()]),
        _ => Value::Null,
    };
    Some(json!({
        "src_mac": eth.source(), "dst_mac": eth.destination(), "vlans": vlans,
        "src_ip": src.to_string(), "dst_ip": dst.to_string(), "dscp": dscp, "ecn": ecn, "ttl": ttl, "udp": udp,
    }))
}

/// The same of rocescope's decode, for a frame with no encapsulation (outer and inner alike).
fn ours(bytes: &[u8]) -> Option<Value> {
    let record = rocescope::capture::Record {
        ts_ns: 0,
        orig_len: bytes.len() as u32,
        data: bytes,
        link_type: LinkType::ETHERNET,
        offset: 0,
    };
    let p = Decoder::new(&[]).decode(&record);
    let eth =
        p.eth.filter(|_| p.encaps.is_empty() && p.arista.is_none() && p.port_tag.is_none() && p.mpls.is_none())?;
    let vlans: Vec<Value> = eth.vlans.iter().map(|t| json!([t.vid(), t.pcp(), t.dei()])).collect();
    let net = p.net.filter(|n| matches!(n, Network::Ipv4(_) | Network::Ipv6(_)))?;
    let udp = p.udp.map_or(Value::Null, |u| json!([u.source_port(), u.destination_port(), u.length()]));
    Some(json!({
        "src_mac": eth.header.source().0, "dst_mac": eth.header.destination().0, "vlans": vlans,
        "src_ip": net.source().to_string(), "dst_ip": net.destination().to_string(),
        "dscp": net.dscp(), "ecn": net.ecn(), "ttl": net.ttl(), "udp": udp,
    }))
}

#[test]
fn etherparse_reads_every_plain_frames_headers_as_rocescope_does() {
    // the samples, the shared captures where they are there, and a generated capture of mixed
    // traffic (so that there are thousands of frames either way)
    let dir = tempfile::tempdir().expect("temp dir");
    let generated = dir.path().join("mixed.pcap");
    rocescope::generate::bench::write_benchmark(&generated, rocescope::generate::bench::BenchKind::Mixed, 4 << 20)
        .expect("generated");
    let mut compared = 0;
    for path in common::samples_and_shared_captures().into_iter().chain([generated]) {
        let (mut inputs, errors) = Inputs::open(std::slice::from_ref(&path), false);
        assert!(errors.is_empty(), "{errors:?}");
        while let Some(frame) = inputs.next_frame() {
            if frame.record.link_type != LinkType::ETHERNET {
                continue;
            }
            let bytes = frame.record.data;
            // a frame one of the two does not read as plain Ethernet and IP is not compared
            // (mirrors, tags etherparse does not take, RoCEv1, non-IP frames)
            let (Some(ours), Some(theirs)) = (ours(bytes), theirs(bytes)) else { continue };
            assert_eq!(ours, theirs, "{} frame {}", path.display(), frame.number);
            compared += 1;
        }
    }
    assert!(compared > 5_000, "only {compared} frames compared");
}

mod emit {
    use etherparse::{IpDscp, IpEcn, IpNumber, Ipv4Header, UdpHeader};
    use proptest::prelude::*;
    use rocescope_parsers::ipv4::Ipv4Repr;
    use rocescope_parsers::udp::UdpRepr;

    proptest! {
        /// The IPv4 headers the generator writes are etherparse's, byte for byte (checksum
        /// included).
        #[test]
        fn an_ipv4_header_is_written_as_etherparse_writes_it(
            (dscp, ecn, identification, dont_fragment, ttl, protocol) in (0..64u8, 0..4u8, any::<u16>(), any::<bool>(), any::<u8>(), any::<u8>()),
            (source, destination, payload_len) in (any::<[u8; 4]>(), any::<[u8; 4]>(), 0..=(u16::MAX - 20)),
        ) {
            let ours = Ipv4Repr { dscp, ecn, identification, dont_fragment, ttl, protocol, source, destination, payload_len };
            let mut theirs = Ipv4Header::new(payload_len, ttl, IpNumber(protocol), source, destination).unwrap();
            (theirs.identification, theirs.dont_fragment) = (identification, dont_fragment);
            (theirs.dscp, theirs.ecn) = (IpDscp::try_new(dscp).unwrap(), IpEcn::try_new(ecn).unwrap());
            theirs.header_checksum = theirs.calc_header_checksum();
            prop_assert_eq!(&ours.emit()[..], &theirs.to_bytes()[..]);
        }

        #[test]
        fn a_udp_header_is_written_as_etherparse_writes_it(source_port in any::<u16>(), destination_port in any::<u16>(), length in 8..=u16::MAX) {
            let ours = UdpRepr { source_port, destination_port, length, checksum: 0 };
            let theirs = UdpHeader { source_port, destination_port, length, checksum: 0 };
            prop_assert_eq!(ours.emit(), theirs.to_bytes());
        }
    }
}
