//! Writing frames from the browser into a pcapng file: one interface per link type, nanosecond
//! timestamps, each frame's captured bytes and original length as they were.

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

use crate::capture::mapped::Location;
use crate::output::atomic::AtomicFile;
use crate::output::packet::capture_file::{
    EnhancedPacket, Interface, write_enhanced_packet, write_interface, write_section_header,
};

/// Writes the frames at `frames` (in the files `mappings` map) into a new pcapng file at
/// `path`; the frames written.
pub fn write_pcapng(path: &Path, frames: &[Location], mappings: &[Arc<Mmap>]) -> io::Result<usize> {
    let mut link_types: Vec<u32> = Vec::new();
    for e in frames {
        if !link_types.contains(&e.link_type.0) {
            link_types.push(e.link_type.0);
        }
    }
    let (atomic, file) = AtomicFile::create_at(path)?;
    let mut out = BufWriter::new(file);
    write_section_header(&mut out, Some("frames written by rocescope browse"))?;
    for &link in &link_types {
        let link_type =
            u16::try_from(link).map_err(|_| io::Error::other(format!("link type {link} does not fit pcapng")))?;
        write_interface(&mut out, &Interface { link_type, snaplen: 0, tsresol: 9, name: None })?;
    }
    for e in frames {
        let interface = link_types.iter().position(|&l| l == e.link_type.0).unwrap_or(0) as u32;
        let packet = EnhancedPacket { interface, ts_ns: e.ts_ns, captured: e.bytes(mappings), orig_len: e.orig_len };
        write_enhanced_packet(&mut out, &packet, 9, None)?;
    }
    out.flush()?;
    atomic.commit()?;
    Ok(frames.len())
}
