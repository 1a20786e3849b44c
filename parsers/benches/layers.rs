//! Per-layer parser and ICRC costs on one RoCEv2 RDMA WRITE FIRST frame with a 1 KiB payload
//! and one ACK. Run with `cargo bench -p rocescope-parsers`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rocescope_parsers::{bth::Bth, ethernet::EthernetFrame, ib::IbPacket, icrc, ipv4::Ipv4Header, udp::UdpHeader};

/// Ethernet, IPv4 (DSCP 26, ECT(0)), UDP to 4791, BTH (WRITE FIRST), RETH, 1024 payload
/// bytes and four ICRC bytes.
fn write_first() -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let ib_len = 12 + 16 + 1024 + 4;
    let total = (20 + 8 + ib_len) as u16;
    f.extend_from_slice(&[0x45, 0x6a]);
    f.extend_from_slice(&total.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    f.extend_from_slice(&[0xc0, 0x01, 0x12, 0xb7]);
    f.extend_from_slice(&((8 + ib_len) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&[0x06, 0, 0xff, 0xff, 0, 0, 0x02, 0x02, 0, 0, 0x10, 0]);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 7, 0, 0, 0x20, 0]);
    f.extend((0..1024).map(|i| i as u8));
    f.extend_from_slice(&[0, 0, 0, 0]);
    f
}

fn layers(c: &mut Criterion) {
    let frame = write_first();
    let ip_at = 14;
    let udp_at = ip_at + 20;
    let ib_at = udp_at + 8;
    let ib = &frame[ib_at..];
    let mut g = c.benchmark_group("parse");
    g.bench_function("ethernet", |b| b.iter(|| EthernetFrame::parse(black_box(&frame)).map(|(e, _)| e.ethertype)));
    g.bench_function("ipv4", |b| b.iter(|| Ipv4Header::parse(black_box(&frame[ip_at..])).map(|(h, _)| h.ttl())));
    g.bench_function("udp", |b| b.iter(|| UdpHeader::parse(black_box(&frame[udp_at..])).map(|(h, _)| h.length())));
    g.bench_function("bth", |b| b.iter(|| Bth::parse(black_box(ib)).map(|(h, _)| h.psn())));
    g.bench_function("ib_packet", |b| b.iter(|| IbPacket::parse(black_box(ib), ib.len()).map(|p| p.payload_len)));
    g.bench_function("ib_packet_and_reth", |b| {
        b.iter(|| IbPacket::parse(black_box(ib), ib.len()).ok().and_then(|p| p.reth()).map(|r| r.dma_len))
    });
    g.finish();

    let mut g = c.benchmark_group("icrc");
    g.throughput(Throughput::Bytes(ib.len() as u64));
    let ip: &[u8] = &frame[ip_at..udp_at];
    let udp: [u8; 8] = frame[udp_at..ib_at].try_into().expect("8 bytes");
    let covered = &ib[..ib.len() - 4];
    g.bench_function("rocev2_ipv4_1k", |b| b.iter(|| icrc::rocev2_ipv4(black_box(ip), &udp, black_box(covered))));
    g.bench_function("crc32fast_1k", |b| b.iter(|| crc32fast::hash(black_box(covered))));
    g.finish();
}

criterion_group!(benches, layers);
criterion_main!(benches);
