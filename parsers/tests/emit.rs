//! Every header written by an `emit` reads back through its parser as the values it was
//! written from (each field within its width), for arbitrary values.

use proptest::prelude::*;
use rocescope_parsers::bth::{Bth, BthRepr};
use rocescope_parsers::erf::ErfHeader;
use rocescope_parsers::ethernet::{EthernetFrame, EthernetHeader, EthernetRepr, MacAddr, VlanTag};
use rocescope_parsers::ext::{Aeth, AtomicAckEth, AtomicEth, Deth, ExtHeaders, Feth, Ieth, Rdeth, Reth, Xrceth};
use rocescope_parsers::ipv4::{Ipv4Header, Ipv4Repr, header_checksum};
use rocescope_parsers::ipv6::{Ipv6Header, Ipv6Repr};
use rocescope_parsers::lrh::{LrhHeader, LrhRepr, NextHeader};
use rocescope_parsers::mpls::{MplsLabel, MplsStack};
use rocescope_parsers::opcode;
use rocescope_parsers::udp::{UdpHeader, UdpRepr};
use rocescope_parsers::vxlan::{self, VxlanHeader};

const U24: u32 = 0xFF_FFFF;

fn bth() -> impl Strategy<Value = BthRepr> {
    (any::<u8>(), any::<[bool; 5]>(), 0..4u8, 0..16u8, any::<u16>(), 0..=U24, 0..=U24).prop_map(
        |(opcode, [solicited, mig_req, fecn, becn, ack_req], pad_count, tver, pkey, dest_qp, psn)| BthRepr {
            opcode,
            solicited,
            mig_req,
            pad_count,
            tver,
            pkey,
            fecn,
            becn,
            dest_qp,
            ack_req,
            psn,
        },
    )
}

/// Every extended header with arbitrary values, each field within its width.
fn all_ext() -> impl Strategy<Value = ExtHeaders> {
    let addressing = (0..=U24, any::<u32>(), 0..=U24, 0..=U24, any::<u32>());
    let rdma = (any::<u64>(), any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>());
    let acks = (any::<u8>(), 0..=U24, any::<u64>(), any::<u32>(), any::<u32>());
    (addressing, rdma, acks).prop_map(
        |((ee, qkey, src_qp, srq, feth), (va, rkey, len, swap, compare), (syndrome, msn, orig, imm, inval))| {
            ExtHeaders {
                rdeth: Some(Rdeth { ee_context: ee }),
                deth: Some(Deth { qkey, src_qp }),
                xrceth: Some(Xrceth { xrc_srq: srq }),
                feth: Some(Feth { raw: feth }),
                reth: Some(Reth { va, rkey, dma_len: len }),
                atomic_eth: Some(AtomicEth { va, rkey, swap_add: swap, compare }),
                aeth: Some(Aeth { syndrome, msn }),
                atomic_ack_eth: Some(AtomicAckEth { orig }),
                imm: Some(imm),
                ieth: Some(Ieth { rkey: inval }),
            }
        },
    )
}

proptest! {
    #[test]
    fn a_bth_reads_back(repr in bth()) {
        let bytes = repr.emit();
        let (view, rest) = Bth::parse(&bytes).unwrap();
        prop_assert!(rest.is_empty());
        prop_assert_eq!(BthRepr::of(&view), repr);
        prop_assert_eq!((view.resv6(), view.resv7()), (0, 0));
    }

    #[test]
    fn every_opcodes_extended_headers_read_back(all in all_ext(), op in any::<u8>(), tail in any::<u8>()) {
        let Some(info) = opcode::info(op) else { return Ok(()) };
        let mut bytes = Vec::new();
        all.emit(info.ext, |b| bytes.extend_from_slice(b));
        bytes.push(tail);
        let (parsed, rest) = ExtHeaders::parse(info.ext, &bytes).unwrap();
        prop_assert_eq!(parsed, all.only(info.ext));
        prop_assert_eq!(rest, &[tail][..]);
    }

    #[test]
    fn an_ipv4_header_reads_back_with_a_correct_checksum(
        (dscp, ecn, identification, dont_fragment, ttl, protocol) in (0..64u8, 0..4u8, any::<u16>(), any::<bool>(), any::<u8>(), any::<u8>()),
        (source, destination, payload_len) in (any::<[u8; 4]>(), any::<[u8; 4]>(), 0..=(u16::MAX - 20)),
    ) {
        let repr = Ipv4Repr { dscp, ecn, identification, dont_fragment, ttl, protocol, source, destination, payload_len };
        let bytes = repr.emit();
        let (view, _) = Ipv4Header::parse(&bytes).unwrap();
        prop_assert_eq!(Ipv4Repr::of(&view), repr);
        prop_assert_eq!(header_checksum(&bytes), 0);
        prop_assert!(!view.is_fragment());
    }

    #[test]
    fn an_ipv6_header_reads_back(
        (traffic_class, flow_label, payload_length, next_header, hop_limit) in (any::<u8>(), 0..=0xF_FFFFu32, any::<u16>(), any::<u8>(), any::<u8>()),
        (source, destination) in (any::<[u8; 16]>(), any::<[u8; 16]>()),
    ) {
        let repr = Ipv6Repr { traffic_class, flow_label, payload_length, next_header, hop_limit, source, destination };
        let bytes = repr.emit();
        prop_assert_eq!(Ipv6Repr::of(&Ipv6Header::parse(&bytes).unwrap().0), repr);
    }

    #[test]
    fn a_udp_header_reads_back(source_port in any::<u16>(), destination_port in any::<u16>(), length in 8..=u16::MAX, checksum in any::<u16>()) {
        let repr = UdpRepr { source_port, destination_port, length, checksum };
        prop_assert_eq!(UdpRepr::of(&UdpHeader::parse(&repr.emit()).unwrap().0), repr);
    }

    #[test]
    fn an_ethernet_header_and_its_tags_read_back(
        destination in any::<[u8; 6]>(), source in any::<[u8; 6]>(), ethertype in 0x0600..=u16::MAX,
        tags in proptest::collection::vec((0..8u8, 0..4096u16), 0..3),
    ) {
        let repr = EthernetRepr { destination: MacAddr(destination), source: MacAddr(source), ethertype };
        prop_assert_eq!(EthernetRepr::of(&EthernetHeader::parse(&repr.emit()).unwrap().0), repr);
        if rocescope_parsers::ethernet::is_vlan_tpid(ethertype) {
            return Ok(());
        }
        let tags: Vec<VlanTag> = tags.into_iter().map(|(pcp, vid)| VlanTag::new(0x8100, pcp, vid)).collect();
        let mut frame = repr.emit_addresses().to_vec();
        tags.iter().for_each(|t| frame.extend_from_slice(&t.emit()));
        frame.extend_from_slice(&ethertype.to_be_bytes());
        let (parsed, _) = EthernetFrame::parse(&frame).unwrap();
        prop_assert_eq!(parsed.vlans.iter().collect::<Vec<_>>(), tags);
        prop_assert_eq!(parsed.ethertype, ethertype);
    }

    #[test]
    fn an_lrh_reads_back(vl in 0..16u8, lver in 0..16u8, sl in 0..16u8, lnh in 0..4u8, dlid in any::<u16>(), words in 2..0x800u16, slid in any::<u16>()) {
        let next_header = [NextHeader::Raw, NextHeader::Ipv6, NextHeader::IbaLocal, NextHeader::IbaGlobal][usize::from(lnh)];
        let repr = LrhRepr { vl, lver, sl, next_header, dlid, packet_words: words, slid };
        let bytes = repr.emit();
        let (view, _) = LrhHeader::parse(&bytes).unwrap();
        prop_assert_eq!(LrhRepr::of(&view), repr);
        prop_assert_eq!((view.reserved2(), view.reserved5()), (0, 0));
    }

    #[test]
    fn a_vxlan_header_reads_back(vni in 0..=U24) {
        let bytes = vxlan::emit(vni);
        prop_assert_eq!(VxlanHeader::parse(&bytes).unwrap().0.vni(), vni);
    }

    #[test]
    fn an_mpls_stack_reads_back(labels in proptest::collection::vec((0..0x10_0000u32, 0..8u8, any::<u8>()), 1..4)) {
        let last = labels.len() - 1;
        let labels: Vec<MplsLabel> = labels.into_iter().enumerate()
            .map(|(i, (label, tc, ttl))| MplsLabel { label, tc, bottom: i == last, ttl }).collect();
        let mut bytes: Vec<u8> = labels.iter().flat_map(|l| l.emit()).collect();
        bytes.extend_from_slice(&[0x45, 0, 0, 20]);
        let (stack, _) = MplsStack::parse(&bytes).unwrap();
        prop_assert_eq!(stack.labels().collect::<Vec<_>>(), labels);
    }

    #[test]
    fn an_erf_header_reads_back_to_the_nanosecond(ts_ns in 0..(i64::from(u32::MAX) * 1_000_000_000), record_type in 0..128u8, flags in any::<u8>(), loss_counter in any::<u16>(), wlen in any::<u16>()) {
        let header = ErfHeader { timestamp: ErfHeader::timestamp_of(ts_ns), record_type, flags, rlen: 24, loss_counter, wlen, extensions: &[] };
        let mut record = header.emit().to_vec();
        record.extend_from_slice(&[0; 8]);
        let (parsed, _) = ErfHeader::parse(&record).unwrap();
        prop_assert_eq!(parsed, header);
        prop_assert_eq!(parsed.ts_ns(), ts_ns);
    }
}

mod encapsulations {
    use proptest::prelude::*;
    use rocescope_parsers::erspan::ErspanHeader;
    use rocescope_parsers::gre::GreHeader;
    use rocescope_parsers::mac_control::{MacControl, Pfc};

    fn written(emit: impl FnOnce(&mut dyn FnMut(&[u8]))) -> Vec<u8> {
        let mut bytes = Vec::new();
        emit(&mut |b: &[u8]| bytes.extend_from_slice(b));
        bytes
    }

    proptest! {
        #[test]
        fn a_gre_header_reads_back(protocol in any::<u16>(), words in any::<[Option<u32>; 3]>(), tail in any::<u8>()) {
            let [checksum, key, sequence] = words;
            let flags = [(0x8000, checksum), (0x2000, key), (0x1000, sequence)].iter()
                .filter(|(_, w)| w.is_some()).fold(0u16, |f, (flag, _)| f | flag);
            let header = GreHeader { flags_version: flags, protocol, checksum, key, sequence };
            let mut bytes = written(|put| header.emit(put));
            prop_assert_eq!(bytes.len(), header.header_len());
            bytes.push(tail);
            prop_assert_eq!(GreHeader::parse(&bytes).unwrap(), (header, &[tail][..]));
        }

        #[test]
        fn an_erspan_header_of_either_type_reads_back(
            (vlan, cos, en_or_bso, truncated, session_id) in (0..4096u16, 0..8u8, 0..4u8, any::<bool>(), 0..1024u16),
            (index, timestamp, frame_type, hw_id, egress, granularity) in (0..0x10_0000u32, any::<u32>(), 0..32u8, 0..64u8, any::<bool>(), 0..4u8),
            platform in any::<Option<u64>>(),
            type3 in any::<bool>(),
        ) {
            let common = ErspanHeader {
                version: 1, vlan, cos, en_or_bso, truncated, session_id, index: Some(index),
                timestamp: None, frame_type: None, hw_id: None, egress: None, granularity: None, platform: None,
            };
            let header = if type3 {
                ErspanHeader {
                    version: 2, index: None, timestamp: Some(timestamp), frame_type: Some(frame_type), hw_id: Some(hw_id),
                    egress: Some(egress), granularity: Some(granularity), platform, ..common
                }
            } else {
                common
            };
            let bytes = written(|put| header.emit(put));
            let parsed = if type3 { ErspanHeader::parse_type3(&bytes) } else { ErspanHeader::parse_type2(&bytes) };
            prop_assert_eq!(parsed.unwrap(), (header, &[][..]));
        }

        #[test]
        fn pause_and_pfc_frames_read_back(class_enable in 0..256u16, quanta in any::<[u16; 8]>(), pause in any::<u16>()) {
            for control in [MacControl::Pfc(Pfc { class_enable, quanta }), MacControl::Pause { quanta: pause }] {
                let bytes = written(|put| control.emit(put));
                prop_assert_eq!(MacControl::parse(&bytes).unwrap(), control);
            }
        }
    }
}

mod vendor_timestamps {
    use proptest::prelude::*;
    use rocescope_parsers::arista::{
        AristaHeader, AristaRepr, VERSION_48_TAI, VERSION_48_UTC, VERSION_64_TAI, VERSION_64_UTC,
    };
    use rocescope_parsers::metamako::{MIN_SECS, MetamakoRepr, MetamakoTrailer};

    proptest! {
        #[test]
        fn an_arista_header_reads_back(format in 0..4usize, seconds in any::<u32>(), nanoseconds in 0..1_000_000_000u32, ethertype in any::<u16>()) {
            let version = [VERSION_64_TAI, VERSION_64_UTC, VERSION_48_TAI, VERSION_48_UTC][format];
            let mut bytes = Vec::new();
            AristaRepr { version, seconds, nanoseconds }.emit(|b| bytes.extend_from_slice(b));
            bytes.extend_from_slice(&ethertype.to_be_bytes());
            let (header, rest) = AristaHeader::parse(&bytes).unwrap();
            let kept = if format < 2 { seconds } else { seconds & 0xFFFF };
            prop_assert_eq!((header.version(), header.seconds(), header.nanoseconds(), header.ethertype()), (version, kept, nanoseconds, ethertype));
            prop_assert!(rest.is_empty());
        }

        #[test]
        fn a_metamako_trailer_reads_back(
            (original_fcs, sequence_number, seconds, nanoseconds) in (any::<u32>(), any::<Option<u16>>(), MIN_SECS..u32::MAX, 0..1_000_000_000u32),
            (flags, device_id, port) in (0..2u8, any::<u16>(), any::<u8>()),
        ) {
            let repr = MetamakoRepr { original_fcs, sequence_number, seconds, nanoseconds, flags, device_id, port };
            let mut bytes = vec![0xAA; 60];
            repr.emit(|b| bytes.extend_from_slice(b));
            let t = MetamakoTrailer::find(&bytes, i64::from(seconds)).unwrap();
            prop_assert_eq!((t.original_fcs(), t.sequence_number(), t.seconds(), t.nanoseconds()), (original_fcs, sequence_number, seconds, nanoseconds));
            prop_assert_eq!((t.flags() & 1, t.device_id(), t.port(), t.new_fcs), (flags, device_id, port, None));
        }
    }
}
