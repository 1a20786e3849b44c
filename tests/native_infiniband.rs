//! Native InfiniBand on the real capture (`../shared/captures/real/native_ib_erf_cm_rc.pcap`,
//! `ibdump` ERF records): the wire parsers read every record's ERF header and LRH as tshark
//! does, and both CRCs verify on every packet with the rules of
//! `../shared/protocol-facts.md` §15.

mod common;

use rocescope_engine::capture::Inputs;
use rocescope_parsers::erf::{ErfHeader, TYPE_INFINIBAND};
use rocescope_parsers::icrc;
use rocescope_parsers::lrh::{LrhHeader, NextHeader};
use rocescope_parsers::vcrc;

/// Per packet: VL, LNH, DLID, PktLen, SLID, opcode, and whether ICRC and VCRC verify.
fn decoded(path: &std::path::Path) -> Vec<(String, bool, bool)> {
    let (mut inputs, errors) = Inputs::open(&[path.to_path_buf()], false);
    assert!(errors.is_empty());
    let mut packets = Vec::new();
    while let Some(frame) = inputs.next_frame() {
        let (erf, payload) = ErfHeader::parse(frame.record.data).expect("an ERF record");
        assert_eq!((erf.record_type, erf.loss_counter), (TYPE_INFINIBAND, 0));
        let (lrh, _) = LrhHeader::parse(payload).expect("an LRH");
        // the record is padded past the packet: PktLen bounds it
        let len = lrh.packet_len();
        let packet = payload.get(..len + 2).expect("the packet and its VCRC are captured");
        let bth_at = if lrh.next_header() == NextHeader::IbaGlobal { 48 } else { 8 };
        // VL and LNH in hex, as tshark prints them
        let fields = format!(
            "0x{:02x}\t0x{:02x}\t{}\t{}\t{}\t{}",
            lrh.vl(),
            lrh.lnh(),
            lrh.dlid(),
            lrh.packet_words(),
            lrh.slid(),
            packet[bth_at]
        );
        let icrc_ok = icrc::native(&packet[..len - 4]).map(icrc::to_wire) == packet[len - 4..len].try_into().ok();
        let vcrc_ok = vcrc::to_wire(vcrc::vcrc(&packet[..len])) == packet[len..len + 2];
        packets.push((fields, icrc_ok, vcrc_ok));
    }
    packets
}

#[test]
fn every_packet_of_the_real_capture_parses_as_tshark_shows_it_and_both_crcs_verify() {
    let Some(real) = common::shared_subdir("captures/real") else { return };
    let path = real.join("native_ib_erf_cm_rc.pcap");
    let packets = decoded(&path);
    assert_eq!(packets.len(), 43);
    assert!(packets.iter().all(|(_, icrc, vcrc)| *icrc && *vcrc), "{packets:#?}");
    let global = packets.iter().filter(|(f, ..)| f.split('\t').nth(1) == Some("0x03")).count();
    assert_eq!((packets.len() - global, global), (37, 6));
    if !common::tshark_available() {
        eprintln!("SKIPPED the comparison with tshark: tshark is not installed");
        return;
    }
    let fields = ["vl", "lnh", "dlid", "pktlen", "slid"].map(|f| format!("infiniband.lrh.{f}"));
    let mut tshark = std::process::Command::new("tshark");
    tshark.arg("-r").arg(&path).args(["-T", "fields"]);
    for f in fields.iter().map(String::as_str).chain(["infiniband.bth.opcode"]) {
        tshark.args(["-e", f]);
    }
    let out = tshark.output().expect("tshark runs");
    let theirs: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    let ours: Vec<String> = packets.into_iter().map(|(f, ..)| f).collect();
    assert_eq!(ours, theirs);
}
