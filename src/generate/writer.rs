//! Capture writers for the generator: classic pcap (µs or ns, either byte order, any snap
//! length) and pcapng (any number of interfaces with their own link type, snap length and
//! time resolution; enhanced or simple packet blocks).

use std::io::{self, Write};

/// One pcapng interface.
#[derive(Debug, Clone, Copy)]
pub struct Interface {
    pub link_type: u16,
    pub snaplen: u32,
    /// `if_tsresol`: power of ten of the time unit (6 = µs, 9 = ns).
    pub tsresol: u8,
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
        // Section header block: type, length, byte-order magic, version 1.0, section length -1.
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        write_block(&mut out, 0x0A0D_0D0A, &shb)?;
        for iface in interfaces {
            let mut idb = Vec::new();
            idb.extend_from_slice(&iface.link_type.to_le_bytes());
            idb.extend_from_slice(&0u16.to_le_bytes());
            idb.extend_from_slice(&iface.snaplen.to_le_bytes());
            if iface.tsresol != 6 {
                // option if_tsresol (9), length 1, value, 3 bytes padding; then opt_endofopt
                idb.extend_from_slice(&9u16.to_le_bytes());
                idb.extend_from_slice(&1u16.to_le_bytes());
                idb.extend_from_slice(&[iface.tsresol, 0, 0, 0]);
                idb.extend_from_slice(&[0, 0, 0, 0]);
            }
            write_block(&mut out, 1, &idb)?;
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
                let iface = interfaces[interface];
                // A pcapng snap length of 0 means no limit.
                let limit = if iface.snaplen == 0 { frame.len() } else { iface.snaplen as usize };
                let captured = &frame[..frame.len().min(limit)];
                let units = if iface.tsresol >= 9 {
                    ts * 10u64.pow(u32::from(iface.tsresol) - 9)
                } else {
                    ts / 10u64.pow(9 - u32::from(iface.tsresol))
                };
                let mut epb = Vec::with_capacity(20 + captured.len() + 3);
                epb.extend_from_slice(&(interface as u32).to_le_bytes());
                epb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
                epb.extend_from_slice(&(units as u32).to_le_bytes());
                epb.extend_from_slice(&(captured.len() as u32).to_le_bytes());
                epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
                epb.extend_from_slice(captured);
                write_block(&mut self.out, 6, &epb)
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
