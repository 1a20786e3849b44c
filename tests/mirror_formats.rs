//! What real switches' mirror sessions put on the wire (`../shared/mirror-formats.md`),
//! decoded to the inner RoCE packet and analysed as the plain packet would be.

mod common;

use serde_json::json;

fn sample(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

#[test]
fn truncated_mirror_copies_are_analysed_and_counted() {
    let path = sample("mirror_truncated.pcap");
    let r = common::capture::analyze_file(&path, &[]);
    assert_eq!((&r["capture"]["truncated_copies"], &r["capture"]["snaplen_cut"]), (&json!(13), &json!(0)));
    assert_eq!((&r["icrc"]["unverifiable"], &r["icrc"]["ok"]), (&json!(13), &json!(4)));
    let f = common::capture::flow(&r, 1, 0x000922);
    let sequence = (&f["gaps"], &f["missing_psns"], &f["retransmitted"], &f["messages"]);
    assert_eq!(sequence, (&json!(1), &json!(1), &json!(2), &json!(3)));
    // a header-only copy's payload length is the UDP length's, not the captured bytes'
    let frames = common::jsonl(&path, &[]);
    assert_eq!((&frames[0]["payload_len"], &frames[0]["encap"]), (&json!(1024), &json!(["erspan1"])));
    let finding = r["findings"].as_array().unwrap().iter().find(|f| f["code"] == json!("TRUNCATED_FRAMES")).unwrap();
    assert!(finding["message"].as_str().unwrap().contains("13 of them mirror copies cut with no mark"));
}

/// The JSON line of every frame of `c` without the keys a mirror header changes (lengths,
/// the list of encapsulations).
fn inner_fields(c: &common::capture::Capture) -> Vec<serde_json::Value> {
    let mut frames = common::jsonl(&c.write(), &[]);
    for f in &mut frames {
        for key in ["len", "caplen", "encap", "frame", "ts_ns"] {
            f.as_object_mut().unwrap().remove(key);
        }
    }
    frames
}

#[test]
fn an_arista_timestamp_header_decodes_to_the_plain_frame() {
    use common::capture::{A, B, Capture, T0, ack, write_only};
    use rocescope::generate::encode;
    let frames = [write_only(A, B, 7, true).encode(), ack(B, A, 7, 0x1F).encode()];
    let (mut plain, mut stamped) = (Capture::new(), Capture::new());
    for (i, f) in frames.iter().enumerate() {
        plain.add_bytes(T0 + i as i64, f.clone());
        let version = if i == 0 { 0x0010 } else { 0x0120 };
        stamped.add_bytes(T0 + i as i64, encode::with_arista_timestamp(f, version, T0 + 5));
    }
    assert_eq!(inner_fields(&stamped), inner_fields(&plain));
    let listed = common::jsonl(&stamped.write(), &[]);
    assert_eq!(listed[0]["encap"], json!(["arista"]));
    let path = stamped.write();
    let fields = ["-e", "avsp.ver", "-e", "avsp.64sec", "-e", "avsp.64ns", "-e", "avsp.48sec", "-e", "avsp.48ns"];
    let out = common::run_ok(
        &[&["packets", "-T", "fields"], &fields[..], &["-e", "avsp.etype", path.to_str().unwrap()]].concat(),
    );
    let seconds = T0 / 1_000_000_000;
    let expected = format!("0x0010\t{seconds}\t5\t\t\t0x0800\n0x0120\t\t\t{}\t5\t0x0800\n", seconds & 0xFFFF);
    assert_eq!(out, expected);
}

#[test]
fn arista_timestamps_sample_is_analysed_as_plain_traffic() {
    let r = common::capture::analyze_file(&sample("mirror_arista_timestamp.pcap"), &[]);
    assert_eq!(
        (&r["capture"]["encapsulations"]["arista"], &r["capture"]["encapsulations"]["gre"]),
        (&json!(15), &json!(4))
    );
    assert_eq!((&r["icrc"]["ok"], &r["totals"]["malformed"]), (&json!(15), &json!(0)));
    let f = common::capture::flow(&r, 1, 0x000A22);
    assert_eq!((&f["packets"], &f["gaps"], &f["pairing"]), (&json!(12), &json!(0), &json!("psn")));
}

#[test]
fn port_extender_tags_decode_to_the_plain_frame() {
    use common::capture::{A, B, Capture, T0, write_only};
    use rocescope::generate::encode;
    let (mut plain, mut tagged) = (Capture::new(), Capture::new());
    for (i, (tpid, fields)) in
        [(0x8926u16, &[0x81, 0x23, 0x00, 0x45][..]), (0x893F, &[0x60, 0x12, 0x13, 0x45, 6, 7])].into_iter().enumerate()
    {
        let frame = write_only(A, B, 9 + i as u32, true).encode();
        plain.add_bytes(T0 + i as i64, frame.clone());
        tagged.add_bytes(T0 + i as i64, encode::with_header_after_macs(&frame, tpid, fields));
    }
    assert_eq!(inner_fields(&tagged), inner_fields(&plain));
    let path = tagged.write();
    let listed = common::jsonl(&path, &[]);
    assert_eq!((&listed[0]["encap"], &listed[1]["encap"]), (&json!(["vntag"]), &json!(["etag"])));
    let fields = ["-e", "vntag.dir", "-e", "vntag.dst", "-e", "vntag.src", "-e", "etag.pcp", "-e", "etag.iecid_base"];
    let more = ["-e", "etag.group", "-e", "etag.ecid_base", "-e", "etag.ecid_ext", path.to_str().unwrap()];
    let out = common::run_ok(&[&["packets", "-T", "fields"], &fields[..], &more[..]].concat());
    // hexadecimal fields as tshark prints them: their container's width
    assert_eq!(out, "1\t291\t69\t\t\t\t\t\n\t\t\t3\t0x0012\t1\t0x0345\t0x07\n");
}
