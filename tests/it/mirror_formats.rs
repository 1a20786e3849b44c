//! What real switches' mirror sessions put on the wire (`../shared/mirror-formats.md`),
//! decoded to the inner RoCE packet and analysed as the plain packet would be.

use crate::common;

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
    // the TAI format (0x0010) counts 37 seconds more than UTC
    let seconds = T0 / 1_000_000_000;
    let expected = format!("0x0010\t{}\t5\t\t\t0x0800\n0x0120\t\t\t{}\t5\t0x0800\n", seconds + 37, seconds & 0xFFFF);
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

/// Two frames, a WRITE and its ACK, as plain Ethernet frames.
fn plain_pair() -> [Vec<u8>; 2] {
    use common::capture::{A, B, ack, write_only};
    [write_only(A, B, 7, true).encode(), ack(B, A, 7, 0x1F).encode()]
}

/// A capture of `frames`, a microsecond apart.
fn capture_of(frames: impl IntoIterator<Item = Vec<u8>>) -> common::capture::Capture {
    let mut c = common::capture::Capture::new();
    for (i, f) in frames.into_iter().enumerate() {
        c.add_bytes(common::capture::T0 + i as i64 * common::capture::US, f);
    }
    c
}

/// The collector's side of a mirror session.
fn collector() -> rocescope::generate::encode::L2 {
    rocescope::generate::encode::L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 0xFF])
}

#[test]
fn spectrum_mirror_copies_decode_to_the_plain_frame_whatever_the_vendor_header_length() {
    use rocescope::generate::encode::spectrum_mirror;
    let plain = capture_of(plain_pair());
    // 22 bytes on the parts SONiC tests; newer parts may differ by a few bytes
    for header_len in [22, 16, 24, 30] {
        let mirrored = capture_of(
            plain_pair().map(|f| spectrum_mirror(&collector(), [192, 0, 2, 1], [192, 0, 2, 9], header_len, &f)),
        );
        assert_eq!(inner_fields(&mirrored), inner_fields(&plain), "header of {header_len} bytes");
        let path = mirrored.write();
        assert_eq!(common::jsonl(&path, &[])[0]["encap"], json!(["spectrum"]));
        let out = common::run_ok(&[
            "packets",
            "-T",
            "fields",
            "-e",
            "gre.proto",
            "-e",
            "rocescope.spectrum.header_len",
            "-c",
            "1",
            path.to_str().unwrap(),
        ]);
        assert_eq!(out, format!("0x8949\t{header_len}\n"));
    }
}

#[test]
fn a_spectrum_copy_without_a_frame_after_its_header_is_malformed_with_the_reason() {
    use rocescope::generate::encode::spectrum_mirror;
    // a vendor header longer than any looked for: no Ethernet header where one is expected
    let [write, _] = plain_pair();
    let c = capture_of([spectrum_mirror(&collector(), [192, 0, 2, 1], [192, 0, 2, 9], 40, &write)]);
    let frames = common::jsonl(&c.write(), &[]);
    assert_eq!(frames[0]["kind"], json!("malformed"));
    let reason = "spectrum: no Ethernet frame after a vendor header of 14 to 30 bytes";
    assert_eq!(frames[0]["error"], json!({"layer": "spectrum", "reason": reason}));
}

#[test]
fn the_spectrum_sample_is_analysed_as_plain_traffic() {
    let r = common::capture::analyze_file(&sample("mirror_spectrum.pcap"), &[]);
    assert_eq!(r["capture"]["encapsulations"], json!({"spectrum": 22}));
    assert_eq!((&r["icrc"]["ok"], &r["totals"]["malformed"], &r["cnps"]), (&json!(22), &json!(0), &json!(2)));
    let f = common::capture::flow(&r, 1, 0x000B22);
    assert_eq!((&f["packets"], &f["gaps"], &f["ce"], &f["messages"]), (&json!(16), &json!(0), &json!(2), &json!(4)));
    assert_eq!(f["from_peer"]["cnps"], json!(2));
}

#[test]
fn mpls_over_ethernet_and_inside_gre_decodes_to_the_plain_frame() {
    use rocescope::generate::encode::{gre_mpls, mpls_pseudowire, with_mpls};
    let plain = capture_of(plain_pair());
    let labels = [(16, 5, 64), (0x12345, 3, 1)];
    let over_ethernet = capture_of(plain_pair().map(|f| with_mpls(&f, &labels)));
    let in_gre =
        capture_of(plain_pair().map(|f| gre_mpls(&collector(), [192, 0, 2, 1], [192, 0, 2, 9], &labels, &f[14..])));
    let pseudowire = |sequence| capture_of(plain_pair().map(|f| mpls_pseudowire(&collector(), &labels, sequence, &f)));
    // the label-switched frame has no Ethernet header of the plain frame's but its own
    let without_l2 = |c: &common::capture::Capture| {
        let mut frames = inner_fields(c);
        frames.iter_mut().for_each(|f| ["src_mac", "dst_mac"].iter().for_each(|k| f[k] = json!(null)));
        frames
    };
    assert_eq!(inner_fields(&over_ethernet), inner_fields(&plain));
    assert_eq!(without_l2(&in_gre), without_l2(&plain));
    assert_eq!(inner_fields(&pseudowire(Some(9))), inner_fields(&plain));
    assert_eq!(inner_fields(&pseudowire(None)), inner_fields(&plain));
    let encap = |c: &common::capture::Capture| common::jsonl(&c.write(), &[])[0]["encap"].clone();
    assert_eq!(encap(&over_ethernet), json!(["mpls"]));
    assert_eq!(encap(&in_gre), json!(["gre", "mpls"]));
    assert_eq!(encap(&pseudowire(Some(9))), json!(["mpls_pw", "mpls"]));
    // the label stack, field by field, and the control word's sequence number
    let fields = ["-e", "mpls.label", "-e", "mpls.exp", "-e", "mpls.bottom", "-e", "mpls.ttl"];
    let with_control_word = pseudowire(Some(9));
    let pw = with_control_word.write();
    let more = ["-e", "pweth.cw.sequence_number", "-c", "1", pw.to_str().unwrap()];
    let out = common::run_ok(&[&["packets", "-T", "fields"], &fields[..], &more[..]].concat());
    assert_eq!(out, "16,74565\t5,3\t0,1\t64,1\t9\n");
    // tshark decodes the two forms that carry IP the same way
    for c in [&over_ethernet, &in_gre] {
        let path = c.write();
        if let Some(expected) = common::tshark_bth_fields(&path) {
            assert_eq!(common::rocescope_bth_fields(&path), expected);
        }
    }
}

#[test]
fn mpls_that_carries_neither_ip_nor_ethernet_is_named_not_decoded() {
    use rocescope::generate::encode::L2;
    let mut frame = L2::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).header(0x8847);
    frame.extend_from_slice(&[0x00, 0x01, 0x01, 0x40, 0x9A, 0xBC, 0xDE, 0xF0]);
    let frames = common::jsonl(&capture_of([frame]).write(), &[]);
    assert_eq!((&frames[0]["kind"], &frames[0]["encap"]), (&json!("other"), &json!(["mpls"])));
    let cut = capture_of([frame_of_mpls_cut()]);
    let list = common::run_ok(&["packets", cut.write().to_str().unwrap()]);
    assert!(list.contains("Malformed: mpls: truncated"), "{list}");
}

/// A label stack whose bottom entry is missing.
fn frame_of_mpls_cut() -> Vec<u8> {
    let mut frame = rocescope::generate::encode::L2::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).header(0x8847);
    frame.extend_from_slice(&[0x00, 0x01, 0x00, 0x40, 0x00]);
    frame
}

/// tshark's `-T fields` of `fields`, Metamako's heuristic on, times in UTC.
fn tshark_metamako(path: &std::path::Path, fields: &[&str]) -> Option<String> {
    if !common::tshark_available() {
        return None;
    }
    let mut tshark = std::process::Command::new("tshark");
    tshark.env("TZ", "UTC").args(["--enable-heuristic", "metamako_eth", "-T", "fields", "-r"]).arg(path);
    fields.iter().for_each(|f| {
        tshark.args(["-e", f]);
    });
    let out = tshark.output().expect("tshark runs");
    Some(String::from_utf8(out.stdout).expect("UTF-8"))
}

#[test]
fn a_metamako_trailer_is_read_as_tshark_reads_it() {
    use common::capture::T0;
    use rocescope::generate::encode::with_metamako_trailer;
    let [write, ack] = plain_pair();
    // 2023-12-02 (a one-digit day), a sequence number and no new FCS; then neither
    // extension nor a time near the capture's, with a new FCS
    let stamped = capture_of([
        with_metamako_trailer(&write, 1_701_475_200_123_456_789, 0x0102, 7, Some(0x0A0B), false),
        with_metamako_trailer(&ack, T0 - 500, 3, 250, None, true),
    ]);
    assert_eq!(inner_fields(&stamped), inner_fields(&capture_of(plain_pair())));
    let path = stamped.write();
    assert_eq!(common::jsonl(&path, &[])[1]["encap"], json!(["metamako"]));
    let fields = [
        "metamako.orig_fcs",
        "metamako.seqnum",
        "metamako.time",
        "metamako.flags",
        "metamako.flags.orig_fcs_vld",
        "metamako.flags.has_extensions",
        "metamako.reserved",
        "metamako.srcdevice",
        "metamako.srcport",
    ];
    let args: Vec<&str> = fields.iter().flat_map(|f| ["-e", f]).collect();
    let ours = common::run_ok(&[&["packets", "-T", "fields"], &args[..], &[path.to_str().unwrap()]].concat());
    let original_fcs = |f: &[u8]| format!("0x{:08x}", u32::from_be_bytes(crc32fast::hash(f).to_le_bytes()));
    let expected = format!(
        "{}\t2571\tDec  2, 2023 00:00:00.123456789 UTC\t0x03\t1\t1\t0x00\t258\t7\n\
         {}\t\tNov 14, 2023 22:13:19.999999500 UTC\t0x01\t1\t0\t0x00\t3\t250\n",
        original_fcs(&write),
        original_fcs(&ack)
    );
    assert_eq!(ours, expected);
    if let Some(theirs) = tshark_metamako(&path, &fields) {
        assert_eq!(ours, theirs);
    }
}

#[test]
fn trailers_with_implausible_times_are_not_metamakos() {
    use common::capture::T0;
    use rocescope::generate::encode::with_metamako_trailer;
    let [write, ack] = plain_pair();
    // 40 days from the capture's time, and a nanosecond field of 10^9
    let mut bad_ns = with_metamako_trailer(&ack, T0, 1, 1, None, false);
    let ns_at = bad_ns.len() - 8;
    bad_ns[ns_at..ns_at + 4].copy_from_slice(&1_000_000_000u32.to_be_bytes());
    let c = capture_of([with_metamako_trailer(&write, T0 + 40 * 86_400 * 1_000_000_000, 1, 1, None, false), bad_ns]);
    let frames = common::jsonl(&c.write(), &[]);
    assert!(frames.iter().all(|f| f["encap"] == json!([])), "{frames:?}");
}

#[test]
fn hardware_times_are_the_frames_times_when_every_frame_has_one() {
    use common::capture::{T0, US};
    use rocescope::generate::encode::{erspan3_ieee1588, with_arista_timestamp, with_metamako_trailer};
    let [write, ack] = plain_pair();
    // stamped 300, 200 and 100 ns before the capture saw them, by each kind of device
    let stamped = [
        with_arista_timestamp(&write, 0x0010, T0 - 300),
        erspan3_ieee1588(&collector(), [192, 0, 2, 1], [192, 0, 2, 9], T0 + US - 200, 7, &ack),
        with_metamako_trailer(&write, T0 + 2 * US - 100, 1, 1, None, false),
        // 48-bit: 16 bits of seconds, the capture's time a second into the next period
        with_arista_timestamp(&ack, 0x0120, T0 + 3 * US - 400),
    ];
    let mut c = capture_of(stamped.clone());
    let period_end = ((T0 / 1_000_000_000) | 0xFFFF) * 1_000_000_000 + 999_999_000;
    let wrapped = with_arista_timestamp(&write, 0x0120, period_end);
    c.add_bytes(period_end + 1_000_000_000, wrapped);
    let path = c.write();
    let times = |extra: &[&str]| -> Vec<i64> {
        common::jsonl(&path, extra).iter().map(|f| f["ts_ns"].as_i64().unwrap()).collect()
    };
    assert_eq!(
        times(&["--time-source", "hardware"]),
        [T0 - 300, T0 + US - 200, T0 + 2 * US - 100, T0 + 3 * US - 400, period_end]
    );
    assert_eq!(times(&[])[0], T0);
    let r = common::capture::analyze_file(&path, &["--time-source", "hardware"]);
    assert_eq!((&r["config"]["time_source"], &r["capture"]["hardware_timestamps"]), (&json!("hardware"), &json!(5)));
    assert_eq!(r["capture"]["first_ts_ns"], json!(T0 - 300));
    // the field shows the time whatever the frames' times are
    let out = common::run_ok(&[
        "packets",
        "-T",
        "fields",
        "-e",
        "rocescope.frame.hardware_time",
        "-c",
        "1",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out, "Nov 14, 2023 22:13:19.999999700 UTC\n");
}

#[test]
fn a_frame_without_a_hardware_time_keeps_every_frame_on_the_capture_clock() {
    use common::capture::T0;
    use rocescope::generate::encode::with_arista_timestamp;
    let [write, ack] = plain_pair();
    let c = capture_of([with_arista_timestamp(&write, 0x0010, T0 - 300), ack]);
    let path = c.write();
    let out = common::run(&["analyze", "--json", "--time-source", "hardware", path.to_str().unwrap()]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("frame 2 has no hardware timestamp"), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((&r["config"]["time_source"], &r["capture"]["hardware_timestamps"]), (&json!("capture"), &json!(1)));
    assert_eq!(r["capture"]["first_ts_ns"], json!(T0));
    // annotate chooses the frames' times alike
    let dir = tempfile::tempdir().unwrap();
    let annotated = dir.path().join("annotated.pcapng");
    let out = common::run(&[
        "annotate",
        "--time-source",
        "hardware",
        path.to_str().unwrap(),
        "-o",
        annotated.to_str().unwrap(),
    ]);
    assert!(out.status.success() && annotated.exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("frame 2 has no hardware timestamp"));
    // standard input cannot be read twice
    let out = common::run(&["packets", "--time-source", "hardware", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("reads the captures twice, and standard input can be read once only")
    );
}

#[test]
fn an_erspan_iii_ieee_1588_time_is_shown_as_tshark_shows_it() {
    use common::capture::T0;
    use rocescope::generate::encode::erspan3_ieee1588;
    let [write, _] = plain_pair();
    let c = capture_of([erspan3_ieee1588(&collector(), [192, 0, 2, 1], [192, 0, 2, 9], T0 - 200, 7, &write)]);
    let path = c.write();
    let fields = ["erspan.gra", "erspan.o", "erspan.platid", "erspan.pid3.timestamp", "erspan.timestamp"];
    let args: Vec<&str> = fields.iter().flat_map(|f| ["-e", f]).collect();
    let ours = common::run_ok(&[&["packets", "-T", "fields"], &args[..], &[path.to_str().unwrap()]].concat());
    // PTP counts TAI: 37 seconds ahead of the UTC time stamped
    let (seconds, nanos) = ((T0 - 200) / 1_000_000_000 + 37, (T0 - 200).rem_euclid(1_000_000_000));
    assert_eq!(ours, format!("2\t1\t3\t{seconds}\t{nanos}\n"));
    if common::tshark_available() {
        let mut tshark = std::process::Command::new("tshark");
        tshark.args(["-T", "fields", "-r"]).arg(&path);
        fields.iter().for_each(|f| {
            tshark.args(["-e", f]);
        });
        assert_eq!(ours, String::from_utf8(tshark.output().expect("tshark runs").stdout).unwrap());
        assert_eq!(common::rocescope_bth_fields(&path), common::tshark_bth_fields(&path).unwrap());
    }
}
