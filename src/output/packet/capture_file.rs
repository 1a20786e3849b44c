//! Capture-file writers, for the generator's samples, `annotate` and `capture -w`: classic
//! pcap (µs or ns, either byte order, any snap length) and pcapng (any number of interfaces with
//! their own link type, snap length and time resolution; enhanced or simple packet blocks).

use std::io::{self, Read, Write};

/// One pcapng interface.
#[derive(Debug, Clone, Default)]
pub struct Interface {
    pub link_type: u16,
    pub snaplen: u32,
    /// `if_tsresol`: power of ten of the time unit (6 = µs, 9 = ns).
    pub tsresol: u8,
    /// `if_name`: the device captured on.
    pub name: Option<String>,
}

#[derive(Debug, Clone)]
enum Kind {
    Pcap { nanos: bool, big_endian: bool, snaplen: u32 },
    Pcapng { interfaces: Vec<Interface> },
}

pub struct CaptureWriter<W: Write> {
    out: W,
    kind: Kind,
}

fn u16b(v: u16, be: bool) -> [u8; 2] {
    if be { v.to_be_bytes() } else { v.to_le_bytes() }
}

fn u32b(v: u32, be: bool) -> [u8; 4] {
    if be { v.to_be_bytes() } else { v.to_le_bytes() }
}

impl<W: Write> CaptureWriter<W> {
    /// A classic pcap file.
    pub fn pcap(mut out: W, link_type: u32, snaplen: u32, nanos: bool, big_endian: bool) -> io::Result<Self> {
        let magic: u32 = if nanos { 0xA1B2_3C4D } else { 0xA1B2_C3D4 };
        out.write_all(&u32b(magic, big_endian))?;
        out.write_all(&u16b(2, big_endian))?;
        out.write_all(&u16b(4, big_endian))?;
        out.write_all(&[0; 8])?;
        out.write_all(&u32b(snaplen, big_endian))?;
        out.write_all(&u32b(link_type, big_endian))?;
        Ok(CaptureWriter { out, kind: Kind::Pcap { nanos, big_endian, snaplen } })
    }

    /// A little-endian pcapng file with one section and these interfaces.
    pub fn pcapng(mut out: W, interfaces: &[Interface]) -> io::Result<Self> {
        write_section_header(&mut out, None)?;
        for iface in interfaces {
            write_interface(&mut out, iface)?;
        }
        Ok(CaptureWriter { out, kind: Kind::Pcapng { interfaces: interfaces.to_vec() } })
    }

    /// Writes a frame seen at `ts_ns` on `interface` (pcapng) — cut to the snap length, with
    /// its full length recorded as the original length.
    pub fn packet(&mut self, interface: usize, ts_ns: i64, frame: &[u8]) -> io::Result<()> {
        let ts = u64::try_from(ts_ns).unwrap_or(0);
        match &self.kind {
            Kind::Pcap { nanos, big_endian, snaplen } => {
                let (be, captured) = (*big_endian, &frame[..frame.len().min(*snaplen as usize)]);
                let frac = if *nanos { ts % 1_000_000_000 } else { ts % 1_000_000_000 / 1000 };
                self.out.write_all(&u32b((ts / 1_000_000_000) as u32, be))?;
                self.out.write_all(&u32b(frac as u32, be))?;
                self.out.write_all(&u32b(captured.len() as u32, be))?;
                self.out.write_all(&u32b(frame.len() as u32, be))?;
                self.out.write_all(captured)
            }
            Kind::Pcapng { interfaces } => {
                let iface = &interfaces[interface];
                // A pcapng snap length of 0 means no limit.
                let limit = if iface.snaplen == 0 { frame.len() } else { iface.snaplen as usize };
                let captured = &frame[..frame.len().min(limit)];
                let packet =
                    EnhancedPacket { interface: interface as u32, ts_ns, captured, orig_len: frame.len() as u32 };
                write_enhanced_packet(&mut self.out, &packet, iface.tsresol, None)
            }
        }
    }

    /// Writes a pcapng simple packet block (interface 0, no timestamp).
    pub fn simple_packet(&mut self, frame: &[u8]) -> io::Result<()> {
        let mut spb = (frame.len() as u32).to_le_bytes().to_vec();
        spb.extend_from_slice(frame);
        write_block(&mut self.out, 3, &spb)
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Appends a pcapng option: code, length, value padded to 4 bytes.
fn push_option(block: &mut Vec<u8>, code: u16, value: &[u8]) {
    block.extend_from_slice(&code.to_le_bytes());
    block.extend_from_slice(&(value.len() as u16).to_le_bytes());
    block.extend_from_slice(value);
    block.resize(block.len().div_ceil(4) * 4, 0);
}

/// The options of a block: each given one, then opt_endofopt (none at all when none is given).
fn push_options(block: &mut Vec<u8>, options: &[(u16, &[u8])]) {
    for (code, value) in options {
        push_option(block, *code, value);
    }
    if !options.is_empty() {
        block.extend_from_slice(&[0, 0, 0, 0]);
    }
}

/// pcapng's opt_comment, the option code of comments on any block.
const OPT_COMMENT: u16 = 1;

/// A little-endian section header block (version 1.0, length unknown), with a comment.
pub fn write_section_header(out: &mut impl Write, comment: Option<&str>) -> io::Result<()> {
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let options: Vec<(u16, &[u8])> = comment.map(|c| (OPT_COMMENT, c.as_bytes())).into_iter().collect();
    push_options(&mut shb, &options);
    write_block(out, 0x0A0D_0D0A, &shb)
}

/// The `if_name` option of an interface description block.
const OPT_IF_NAME: u16 = 2;

/// An interface description block.
pub fn write_interface(out: &mut impl Write, iface: &Interface) -> io::Result<()> {
    let mut idb = Vec::new();
    idb.extend_from_slice(&iface.link_type.to_le_bytes());
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&iface.snaplen.to_le_bytes());
    // if_name (2) where known; if_tsresol (9) only where it is not the default, microseconds
    let tsresol = [iface.tsresol];
    let name = iface.name.as_deref().map(|n| (OPT_IF_NAME, n.as_bytes()));
    let options: Vec<(u16, &[u8])> =
        name.into_iter().chain((iface.tsresol != 6).then_some((9, &tsresol[..]))).collect();
    push_options(&mut idb, &options);
    write_block(out, 1, &idb)
}

/// A packet for an enhanced packet block.
pub struct EnhancedPacket<'a> {
    pub interface: u32,
    pub ts_ns: i64,
    pub captured: &'a [u8],
    pub orig_len: u32,
}

/// An enhanced packet block, its timestamp in units of 10^-`tsresol` s, with a comment.
pub fn write_enhanced_packet(
    out: &mut impl Write,
    packet: &EnhancedPacket<'_>,
    tsresol: u8,
    comment: Option<&str>,
) -> io::Result<()> {
    let ts = u64::try_from(packet.ts_ns).unwrap_or(0);
    let units =
        if tsresol >= 9 { ts * 10u64.pow(u32::from(tsresol) - 9) } else { ts / 10u64.pow(9 - u32::from(tsresol)) };
    let captured = packet.captured;
    let mut epb = Vec::with_capacity(32 + captured.len() + comment.map_or(0, str::len));
    epb.extend_from_slice(&packet.interface.to_le_bytes());
    epb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
    epb.extend_from_slice(&(units as u32).to_le_bytes());
    epb.extend_from_slice(&(captured.len() as u32).to_le_bytes());
    epb.extend_from_slice(&packet.orig_len.to_le_bytes());
    epb.extend_from_slice(captured);
    epb.resize(epb.len().div_ceil(4) * 4, 0);
    let options: Vec<(u16, &[u8])> = comment.map(|c| (OPT_COMMENT, c.as_bytes())).into_iter().collect();
    push_options(&mut epb, &options);
    write_block(out, 6, &epb)
}

/// The next pcapng block of `input`, whole (type, length, body, length), or `None` at its end.
pub fn read_block(input: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut head = [0u8; 8];
    match input.read_exact(&mut head) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let total = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if total < 12 || !total.is_multiple_of(4) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("a pcapng block of {total} bytes")));
    }
    let mut block = head.to_vec();
    block.resize(total, 0);
    input.read_exact(&mut block[8..])?;
    Ok(Some(block))
}

/// An enhanced packet block as [`write_enhanced_packet`] writes it, with `more` added to its
/// comment on a line of its own (or as its comment where it has none). pcapng: the block's
/// body is 20 bytes of interface, timestamp and lengths, the captured bytes padded to 4, then
/// its options (code, length, value padded to 4) up to opt_endofopt.
pub fn with_comment_added(block: &[u8], more: &str) -> io::Result<Vec<u8>> {
    let invalid = || io::Error::new(io::ErrorKind::InvalidData, "not an enhanced packet block");
    let word = |at: usize| block.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if word(0) != Some(6) {
        return Err(invalid());
    }
    let body = block.get(8..block.len().saturating_sub(4)).ok_or_else(invalid)?;
    let captured = word(20).ok_or_else(invalid)? as usize;
    let options_at = 20 + captured.div_ceil(4) * 4;
    let mut kept: Vec<(u16, &[u8])> = Vec::new();
    let mut comment = String::new();
    let mut at = options_at;
    while let Some(option) = body.get(at..at + 4) {
        let code = u16::from_le_bytes([option[0], option[1]]);
        let len = usize::from(u16::from_le_bytes([option[2], option[3]]));
        if code == 0 {
            break;
        }
        let value = body.get(at + 4..at + 4 + len).ok_or_else(invalid)?;
        if code == OPT_COMMENT && comment.is_empty() {
            comment = String::from_utf8_lossy(value).into_owned();
            comment.push('\n');
        } else {
            kept.push((code, value));
        }
        at += 4 + len.div_ceil(4) * 4;
    }
    comment.push_str(more);
    kept.insert(0, (OPT_COMMENT, comment.as_bytes()));
    let mut epb = body.get(..options_at).ok_or_else(invalid)?.to_vec();
    push_options(&mut epb, &kept);
    let mut out = Vec::with_capacity(epb.len() + 12);
    write_block(&mut out, 6, &epb)?;
    Ok(out)
}

/// A pcapng block: type, total length, body padded to 4 bytes, total length again.
fn write_block(out: &mut impl Write, block_type: u32, body: &[u8]) -> io::Result<()> {
    let padded = body.len().div_ceil(4) * 4;
    let total = (12 + padded) as u32;
    out.write_all(&block_type.to_le_bytes())?;
    out.write_all(&total.to_le_bytes())?;
    out.write_all(body)?;
    out.write_all(&vec![0u8; padded - body.len()])?;
    out.write_all(&total.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An enhanced packet block of 5 bytes (padded to 8) with `comment`.
    fn block(comment: Option<&str>) -> Vec<u8> {
        let packet = EnhancedPacket { interface: 1, ts_ns: 1_500, captured: &[1, 2, 3, 4, 5], orig_len: 9 };
        let mut out = Vec::new();
        write_enhanced_packet(&mut out, &packet, 9, comment).expect("written");
        out
    }

    #[test]
    fn a_comment_is_added_on_a_line_of_its_own_or_as_the_comment() {
        assert_eq!(with_comment_added(&block(None), "more").expect("a block"), block(Some("more")));
        assert_eq!(with_comment_added(&block(Some("first")), "more").expect("a block"), block(Some("first\nmore")));
        let mut section = Vec::new();
        write_section_header(&mut section, None).expect("written");
        assert!(with_comment_added(&section, "more").is_err());
        assert!(with_comment_added(&[6, 0, 0, 0], "more").is_err());
    }

    #[test]
    fn blocks_are_read_back_whole_until_the_end() {
        let mut file = block(None);
        file.extend(block(Some("a comment")));
        let mut input = file.as_slice();
        assert_eq!(read_block(&mut input).expect("read"), Some(block(None)));
        assert_eq!(read_block(&mut input).expect("read"), Some(block(Some("a comment"))));
        assert_eq!(read_block(&mut input).expect("read"), None);
        assert!(read_block(&mut [6u8, 0, 0, 0, 7, 0, 0, 0].as_slice()).is_err());
    }
}
