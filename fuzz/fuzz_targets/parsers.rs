//! Every wire parser of `rocescope-parsers` on arbitrary bytes, with the accessors a decoder
//! calls on what parses. The parsers must return an error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope_parsers::{
    arista, bth, cm, erf, erspan, ethernet, ext, gre, grh, ib, icrc, ipv4, ipv6, lrh, mac_control, metamako, mpls,
    opcode, port_tag, sll, spectrum, udp, uet, vcrc, vxlan,
};

/// Every accessor of a UET packet that parses, in both trailer modes.
fn uet_packet(data: &[u8]) {
    for complete in [true, false] {
        match uet::Uet::parse(data, complete) {
            Ok(uet::Uet::Secured { tss, ciphertext, tag }) => {
                let _ = (tss.sp(), tss.an(), tss.sdi(), tss.ssi(), tss.tsc(), ciphertext.len(), tag.map(<[u8]>::len));
            }
            Ok(uet::Uet::Clear { pds, ses, payload, crc }) => {
                uet_pds(&pds);
                match ses {
                    Some(uet::Ses::Request(r)) => uet_request(&r),
                    Some(uet::Ses::Response(r)) => {
                        let _ = (r.list(), r.opcode(), r.return_code(), r.message_id(), r.job_id());
                        let _ = (r.modified_length(), r.payload_length(), r.read(), r.original_request_psn());
                    }
                    None => {}
                }
                let _ = (payload.len(), crc);
            }
            Err(_) => {}
        }
    }
}

fn uet_pds(p: &uet::Pds<'_>) {
    let _ = (p.next_header(), p.flags(), p.retx(), p.ar(), p.syn(), p.ecn_marked(), p.probe(), p.ack_request());
    let _ = (p.psn(), p.clear_psn(), p.spdcid(), p.dpdcid(), p.pdc_info(), p.start_psn(), p.ccc_id());
    let _ = (p.credit_target(), p.cack_psn(), p.ack_psn(), p.probe_opaque(), p.cc_type(), p.cc_flags(), p.mpr());
    let _ = (p.sack_base(), p.sack_bitmap(), p.sacks(0), p.cc_state(), p.nscc(), p.credit(), p.ccx_state());
    let _ = (p.nack_code(), p.nack_vendor_code(), p.nack_psn(), p.payload(), p.ctl_type(), p.packet_id());
    let _ = (p.nack_rudi(), p.control_rod(), p.pds_type().name());
}

fn uet_request(r: &uet::SesRequest<'_>) {
    let _ = (r.opcode(), r.version(), r.flags(), r.message_id(), r.request_length(), r.job_id(), r.header_len());
    let _ = (r.pid_on_fep(), r.resource_index(), r.buffer_offset(), r.header_data(), r.initiator());
    let _ = (r.memory_key(), r.continuation());
    if let Some(e) = r.extension() {
        let _ = (e.eager_length(), e.read_resource(), e.read_offset(), e.read_memory_key(), e.atomic_opcode());
        let _ = (e.atomic_datatype(), e.semantic_control(), e.compare_swap());
    }
}

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
    uet_packet(data);
    if let Ok((entropy, rest)) = uet::Entropy::parse(data) {
        let _ = (entropy.entropy(), entropy.reserved());
        uet_packet(rest);
    }
    if let Some((header, rest)) = data.split_first_chunk::<40>() {
        let udp_header = [0u8; 8];
        let _ = icrc::rocev2_ipv6(header, &udp_header, rest);
        let _ = icrc::rocev1(header, rest);
    }
});
