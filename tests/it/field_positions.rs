//! Where each field of the decode tree lies in the frame's bytes (what the browser highlights),
//! held to tshark's PDML, which gives every field's position and size: every registry field
//! tshark shows at a position, in every frame of every sample, in each of its occurrences.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rocescope::output::packet::tree::{self, LineKind};
use rocescope_engine::capture::Inputs;
use rocescope_engine::decode::Decoder;
use rocescope_engine::fields::{Frame, Layer, position};

/// tshark's fields of each frame: name → (position, size) of each occurrence, in order.
type Positions = HashMap<String, Vec<(usize, usize)>>;

fn attribute<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let start = line.find(&format!(" {name}=\""))? + name.len() + 3;
    line.get(start..).and_then(|rest| rest.split('"').next())
}

/// The PDML of `file`, per frame (`None` without tshark). Metamako's trailer heuristic, off in
/// tshark by default, is on, as rocescope reads the trailer.
fn tshark_positions(file: &Path) -> Option<Vec<Positions>> {
    let out = std::process::Command::new("tshark")
        .args(["--disable-protocol", "tftp", "--enable-heuristic", "metamako_eth", "-T", "pdml", "-r"])
        .arg(file)
        .output()
        .ok()?;
    let mut frames = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines().map(str::trim_start) {
        if line.starts_with("<packet>") {
            frames.push(Positions::new());
        }
        if !line.starts_with("<field ") || attribute(line, "hide") == Some("yes") {
            continue;
        }
        let (Some(name), Some(pos), Some(size)) =
            (attribute(line, "name"), attribute(line, "pos"), attribute(line, "size"))
        else {
            continue;
        };
        if let (Some(frame), Ok(pos), Ok(size)) = (frames.last_mut(), pos.parse(), size.parse()) {
            frame.entry(name.to_string()).or_default().push((pos, size));
        }
    }
    Some(frames)
}

/// Fields whose value rocescope computes where Wireshark gives it a place (a checksum's
/// status, placed on the checksum), and the CM's primary flow label, a 32-bit field of 20 bits
/// that Wireshark's CM dissector adds over 3 bytes where rocescope shows its container's 4:
/// their positions are not compared.
fn not_compared(name: &str) -> bool {
    name.ends_with(".status") || name.starts_with("rocescope.") || name == "infiniband.cm.req.prim_flowlabel"
}

/// A frame's shape: the fields its decode tree lists (with the layer, its bytes and the
/// occurrence of each) and tshark's position of every field. Frames of one shape have their fields at the same
/// bytes.
fn shape(lines: &[tree::TreeLine], tshark: &Positions) -> String {
    let mut shape = String::new();
    for line in lines {
        if let LineKind::Field(field) = line.kind {
            shape += &format!("{:?} {:?} {} {};", line.layer, line.span, field.name, line.occurrence);
        }
    }
    let mut theirs: Vec<_> = tshark.iter().collect();
    theirs.sort();
    shape + &format!("{theirs:?}")
}

#[test]
fn every_fields_bytes_are_where_tshark_puts_them() {
    if !common::tshark_available() {
        eprintln!("SKIPPED: tshark is not installed");
        return;
    }
    let decoder = Decoder::default();
    let (mut compared, mut differ) = (0, Vec::new());
    // the frames of one shape (the fields the tree lists, and where tshark puts each) are
    // compared once: a sample's frames are mostly of a few shapes, and probing where a field
    // lies decodes its frame once per bit
    let mut shapes = HashSet::new();
    let dir = tempfile::tempdir().expect("temp dir");
    for file in common::samples() {
        // tshark 4.0 does not read LINKTYPE_INFINIBAND: the same packets in ERF records,
        // whose header is outside the frame's bytes, have the same positions
        let readable = match common::pcap_link_type(&file) {
            Some(247) => common::infiniband_as_erf(&file, dir.path()),
            _ => file.clone(),
        };
        let Some(expected) = tshark_positions(&readable) else { return };
        let (mut inputs, _) = Inputs::open(std::slice::from_ref(&file), false);
        while let Some(f) = inputs.next_frame() {
            let packet = decoder.decode(&f.record);
            let frame = Frame::alone(f.number, &packet);
            let Some(tshark) = expected.get(f.number as usize - 1) else { break };
            // tshark 4.0 reads the RD transport's headers 8 bytes off (docs/wireshark-fields.md),
            // and does not decode some mirror formats
            if packet.bth().is_some_and(|b| (0x40..0x60).contains(&b.opcode()))
                || common::tshark_misreads(&file, f.number)
            {
                continue;
            }
            let lines = tree::tree(&frame);
            if !shapes.insert(shape(&lines, tshark)) {
                continue;
            }
            for line in lines {
                let LineKind::Field(field) = line.kind else { continue };
                if line.layer == Layer::Frame || not_compared(field.name) {
                    continue;
                }
                let Some(&(pos, size)) = tshark.get(field.name).and_then(|p| p.get(line.occurrence)) else { continue };
                if size == 0 {
                    continue;
                }
                compared += 1;
                let ours = position::field_bytes(&decoder, &f.record, field, line.layer, line.occurrence);
                if ours != Some(pos..pos + size) {
                    let name = file.file_name().unwrap().to_string_lossy().into_owned();
                    differ
                        .push(format!("{name} frame {}: {} ours {ours:?}, tshark {pos}+{size}", f.number, field.name));
                }
            }
        }
    }
    eprintln!("{compared} field positions compared with tshark's");
    assert!(compared > 1000, "only {compared} positions compared");
    assert!(differ.is_empty(), "{} of {compared} positions differ:\n{}", differ.len(), differ.join("\n"));
}
