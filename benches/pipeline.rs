//! The frame pipeline on the frames of a 10 MB benchmark capture (64 RC connections, 1 KiB
//! RDMA WRITEs, ACKs, CE marks, CNPs, PFC) held in memory: decode alone, decode and analyse,
//! decode and write JSON lines, decode and match a display filter. Run with
//! `cargo bench --bench pipeline`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rocescope::analyze::frame::FrameSummary;
use rocescope::analyze::{Analyzer, Config, Verdict};
use rocescope::capture::{LinkType, Record};
use rocescope::decode::Decoder;
use rocescope::generate::bench::{BenchKind, write_benchmark};
use rocescope::output::packet::jsonl::FrameJson;

fn pipeline(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("rocescope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("mixed.pcap");
    write_benchmark(&path, BenchKind::Mixed, 10 << 20).expect("benchmark capture");
    let mut frames = Vec::new();
    let mut reader = rocescope::capture::CaptureReader::open(&path, false).expect("readable");
    while reader.advance().expect("intact") {
        let r = reader.current().expect("a record");
        frames.push((r.ts_ns, r.data.to_vec()));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let records = || {
        frames.iter().map(|(ts, bytes)| Record {
            ts_ns: *ts,
            orig_len: bytes.len() as u32,
            data: bytes,
            link_type: LinkType::ETHERNET,
            offset: 0,
        })
    };
    let decoder = Decoder::default();
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(frames.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            for r in records() {
                black_box(decoder.decode(&r).kind());
            }
        })
    });
    g.bench_function("decode_and_analyze", |b| {
        b.iter(|| {
            let mut analyzer = Analyzer::new(Config::default());
            for (n, r) in records().enumerate() {
                analyzer.observe(&FrameSummary::of(n as u64 + 1, &decoder.decode(&r)));
            }
            analyzer.finish();
            black_box(analyzer.frames());
        })
    });
    g.bench_function("decode_and_display_filter", |b| {
        let filter = rocescope::display_filter::DisplayFilter::compile(
            "infiniband.bth.opcode == 6 && ip.dsfield.dscp == 26 && udp.dstport == 4791 && infiniband.bth.psn > 100 && !rocescope.cnp",
        )
        .expect("a valid filter");
        b.iter(|| {
            let mut matched = 0u64;
            for (n, r) in records().enumerate() {
                let packet = decoder.decode(&r);
                let frame = rocescope::fields::Frame::alone(n as u64 + 1, &packet);
                matched += u64::from(filter.matches(&frame));
            }
            black_box(matched)
        })
    });
    g.bench_function("decode_and_jsonl", |b| {
        let mut out = Vec::with_capacity(1 << 20);
        b.iter(|| {
            out.clear();
            for (n, r) in records().enumerate() {
                let packet = decoder.decode(&r);
                FrameJson { number: n as u64, packet: &packet, verdict: &Verdict::default() }.write_to(&mut out).ok();
            }
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
