//! The deterministic sample generator behind `rocescope generate`: frame encoders, capture
//! writers and the sample scenarios (documented in docs/samples.md).

pub mod bench;
mod congestion;
pub mod encode;
mod infiniband;
mod mirrors;
pub mod path;
pub mod scenarios;
pub mod uet;

use std::fs;
use std::io::BufWriter;
use std::path::Path;

use crate::output::packet::capture_file::CaptureWriter;
use scenarios::{Container, Scenario};

/// Every scenario, in the order they are written.
pub fn all_scenarios() -> Vec<Scenario> {
    vec![
        scenarios::rc_write_healthy(),
        scenarios::congestion_ecn_cnp(),
        scenarios::loss_go_back_n(),
        scenarios::pfc_storm(),
        scenarios::bad_icrc(),
        scenarios::mirror_erspan(),
        scenarios::opcodes(),
        scenarios::encapsulations(),
        scenarios::bidirectional_read_write(),
        scenarios::reordering(),
        congestion::dcqcn_reaction(),
        congestion::dcqcn_slow_recovery(),
        congestion::incast(),
        congestion::message_sizes(),
        infiniband::rc_with_grh(),
        infiniband::go_back_n(),
        infiniband::crc_errors(),
        mirrors::truncated_copies(),
        mirrors::arista_timestamps(),
        mirrors::spectrum_everflow(),
        uet::sample(),
        uet::sprayed("uet_sprayed.pcap", &[]),
        uet::sprayed("uet_trimmed.pcap", &[50, 151]),
    ]
}

/// Writes one scenario into `dir`.
pub fn write_scenario(dir: &Path, scenario: &Scenario) -> std::io::Result<()> {
    let file = BufWriter::new(fs::File::create(dir.join(scenario.file))?);
    let mut w = match &scenario.container {
        Container::Pcap { snaplen, link_type } => CaptureWriter::pcap(file, *link_type, *snaplen, false, false)?,
        Container::Pcapng { interfaces } => CaptureWriter::pcapng(file, interfaces)?,
    };
    for frame in &scenario.frames {
        if frame.simple {
            w.simple_packet(&frame.bytes)?;
        } else {
            w.packet(frame.interface, frame.ts_ns, &frame.bytes)?;
        }
    }
    w.finish()?;
    Ok(())
}
