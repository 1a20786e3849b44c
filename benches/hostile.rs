//! Inputs built to be slow: one frame of 60,000 VLAN tags, one of 60,000 MPLS labels, through
//! the decoder and the decode tree (`packets -V`); a display filter of 100,000 terms compiled
//! and matched. Each must take milliseconds at most (docs/performance.md, "Hostile input").
//! Run with `cargo bench --bench hostile`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rocescope::capture::{LinkType, Record};
use rocescope::decode::Decoder;
use rocescope::display_filter::DisplayFilter;
use rocescope::fields::Frame;
use rocescope::output::packet::tree;

/// Destination and source MAC addresses.
const MACS: [u8; 12] = [2, 2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4];
/// A stack's depth: a 240 kB frame, within a pcap record's 262,144 bytes.
const DEPTH: u16 = 60_000;

/// An Ethernet frame of `DEPTH` 802.1Q tags, then an IPv4 header.
fn vlan_stack() -> Vec<u8> {
    let mut frame = MACS.to_vec();
    for vid in 0..DEPTH {
        frame.extend_from_slice(&[0x81, 0x00]);
        frame.extend_from_slice(&(vid % 4096).to_be_bytes());
    }
    frame.extend_from_slice(&[0x08, 0x00, 0x45]);
    frame.extend_from_slice(&[0; 19]);
    frame
}

/// An Ethernet frame of `DEPTH` MPLS labels, the last with the bottom-of-stack bit, then IPv4.
fn mpls_stack() -> Vec<u8> {
    let mut frame = MACS.to_vec();
    frame.extend_from_slice(&[0x88, 0x47]);
    for i in 0..u32::from(DEPTH) {
        let bottom = u32::from(i + 1 == u32::from(DEPTH)) << 8;
        frame.extend_from_slice(&(((16 + i) & 0xf_ffff) << 12 | bottom | 64).to_be_bytes());
    }
    frame.push(0x45);
    frame.extend_from_slice(&[0; 19]);
    frame
}

fn hostile(c: &mut Criterion) {
    let decoder = Decoder::default();
    let mut g = c.benchmark_group("hostile");
    for (name, bytes) in [("tree_of_60k_vlan_tags", vlan_stack()), ("tree_of_60k_mpls_labels", mpls_stack())] {
        let record =
            Record { ts_ns: 0, orig_len: bytes.len() as u32, data: &bytes, link_type: LinkType::ETHERNET, offset: 0 };
        g.bench_function(name, |b| {
            let mut text = String::new();
            b.iter(|| {
                text.clear();
                let packet = decoder.decode(&record);
                let frame = Frame::alone(1, &packet);
                tree::write_tree(&mut text, &frame).ok();
                black_box(text.len())
            })
        });
    }
    let terms: Vec<String> = (0..100_000).map(|qp| format!("infiniband.bth.destqp == {qp}")).collect();
    let filter = terms.join(" || ");
    g.bench_function("compile_100k_term_filter", |b| b.iter(|| black_box(DisplayFilter::compile(&filter).is_ok())));
    g.finish();
}

criterion_group!(benches, hostile);
criterion_main!(benches);
