//! Every wire parser of `rocescope-parsers` on arbitrary bytes, with the accessors a decoder
//! calls on what parses. The parsers must return an error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope_parsers::{
    arista, bth, cm, erf, erspan, ethernet, ext, gre, grh, ib, icrc, ipv4, ipv6, lrh, mac_control, metamako, mpls,
    opcode, port_tag, sll, spectrum, udp, vcrc, vxlan,
};

fuzz_target!(|data: &[u8]| {
    if let Ok((h, payload)) = erf::ErfHeader::parse(data) {
        let _ = (h.ts_ns(), h.interface(), h.truncated(), h.rx_error(), payload.len());
    }
    for kind in [port_tag::PortTagKind::VnTag, port_tag::PortTagKind::ETag] {
        if let Ok((t, rest)) = port_tag::PortTag::parse(kind, data) {
            let _ = (t.word(), t.etag_words(), t.ethertype(), rest.len());
        }
    }
    if let Ok((a, rest)) = arista::AristaHeader::parse(data) {
        let _ = (a.subtype(), a.version(), a.seconds(), a.nanoseconds(), a.ethertype(), rest.len());
    }
    if let Ok((l, _)) = lrh::LrhHeader::parse(data) {
        let _ = (l.vl(), l.lver(), l.sl(), l.reserved2(), l.next_header(), l.dlid(), l.reserved5(), l.slid());
        let _ = l.packet_len();
    }
    let _ = (icrc::native(data), vcrc::vcrc(data));
    if let Ok((frame, _)) = ethernet::EthernetFrame::parse(data) {
        let _ = (frame.vlans.outer().map(|t| t.pcp()), frame.vlans.len(), frame.ethertype);
    }
    for version in [sll::SllVersion::V1, sll::SllVersion::V2] {
        if let Ok((sll, _)) = sll::SllHeader::parse(data, version) {
            let _ = sll.protocol();
        }
    }
    let _ = mac_control::MacControl::parse(data);
    if let Ok((ip, rest)) = ipv4::Ipv4Header::parse(data) {
        let _ = (ip.payload(rest), ip.payload_len(), ip.is_fragment(), ip.protocol(), ip.as_bytes());
    }
    if let Ok((ip, rest)) = ipv6::Ipv6Header::parse(data) {
        let _ = (ip.upper_layer(rest), ip.payload_length());
    }
    if let Ok((u, _)) = udp::UdpHeader::parse(data) {
        let _ = u.source_port();
    }
    if let Ok((m, rest)) = mpls::MplsStack::parse(data) {
        let _ = (m.labels().count(), m.payload, m.sequence_number(), m.as_bytes().len(), rest.len());
    }
    if let Ok((h, frame)) = spectrum::SpectrumHeader::parse(data) {
        let _ = (h.as_bytes().len(), frame.len());
    }
    if let [s0, s1, s2, s3, rest @ ..] = data {
        // the capture time, in seconds, near which a trailer's time must be
        let captured = i64::from(u32::from_be_bytes([*s0, *s1, *s2, *s3]));
        if let Some(t) = metamako::MetamakoTrailer::find(rest, captured) {
            let _ = (t.original_fcs(), t.time_ns(), t.flags(), t.device_id(), t.port(), t.sequence_number());
            let _ = (t.extensions().len(), t.as_bytes().len(), t.new_fcs);
        }
    }
    let _ = gre::GreHeader::parse(data);
    let _ = erspan::ErspanHeader::parse_type2(data);
    if let Ok((h, _)) = erspan::ErspanHeader::parse_type3(data) {
        let _ = (h.platform_id(), h.time_ns());
    }
    let _ = vxlan::VxlanHeader::parse(data);
    let _ = grh::GrhHeader::parse(data);
    let _ = bth::Bth::parse(data);
    let _ = cm::CmMad::parse(data);
    if let [op, rest @ ..] = data
        && let Some(info) = opcode::info(*op)
    {
        let _ = ext::ExtHeaders::parse(info.ext, rest);
        let _ =
            (ext::single::aeth(info.ext, rest), ext::single::reth(info.ext, rest), ext::single::deth(info.ext, rest));
    }
    if let [hi, lo, rest @ ..] = data {
        let declared = usize::from(u16::from_be_bytes([*hi, *lo]));
        if let Ok(packet) = ib::IbPacket::parse(rest, declared) {
            let _ = (packet.ext(), packet.aeth(), packet.reth(), packet.deth(), packet.icrc(), packet.fully_captured());
        }
    }
    if let Some((udp_header, rest)) = data.split_first_chunk::<8>() {
        let _ = icrc::rocev2_ipv4(rest.get(..20).unwrap_or_default(), udp_header, rest);
    }
    if let Some((header, rest)) = data.split_first_chunk::<40>() {
        let udp_header = [0u8; 8];
        let _ = icrc::rocev2_ipv6(header, &udp_header, rest);
        let _ = icrc::rocev1(header, rest);
    }
});
