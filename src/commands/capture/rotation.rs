//! The capture file of `rocescope capture -w FILE`: pcap with nanosecond timestamps, or pcapng
//! when the name ends in `.pcapng`, started anew after `-C` megabytes or `-G` seconds like
//! tcpdump (FILE, FILE.1, FILE.2, …).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::output::packet::capture_file::{CaptureWriter, Interface};

pub struct RotatingWriter {
    base: PathBuf,
    pcapng: bool,
    link_type: u32,
    snaplen: u32,
    /// The device captured on, named in a pcapng file's interface description.
    interface_name: Option<String>,
    max_bytes: Option<u64>,
    max_age_ns: Option<i64>,
    current: Option<Open>,
    /// Every file started, in order.
    pub files: Vec<PathBuf>,
}

struct Open {
    writer: CaptureWriter<BufWriter<File>>,
    bytes: u64,
    opened_ns: i64,
}

impl RotatingWriter {
    pub fn new(base: &Path, link_type: u32, snaplen: u32, max_bytes: Option<u64>, max_age_ns: Option<i64>) -> Self {
        let pcapng = base.extension().is_some_and(|e| e.eq_ignore_ascii_case("pcapng"));
        RotatingWriter {
            base: base.to_path_buf(),
            pcapng,
            link_type,
            snaplen,
            interface_name: None,
            max_bytes,
            max_age_ns,
            current: None,
            files: Vec::new(),
        }
    }

    /// Names the device captured on in pcapng files (`if_name`).
    pub fn naming(mut self, interface: &str) -> Self {
        self.interface_name = Some(interface.to_string());
        self
    }

    pub fn is_pcapng(&self) -> bool {
        self.pcapng
    }

    fn path(&self, index: usize) -> PathBuf {
        if index == 0 {
            return self.base.clone();
        }
        let mut name = self.base.clone().into_os_string();
        name.push(format!(".{index}"));
        PathBuf::from(name)
    }

    fn open(&mut self, ts_ns: i64) -> io::Result<()> {
        let path = self.path(self.files.len());
        let file = BufWriter::with_capacity(1 << 20, crate::output::atomic::create_streaming(&path)?);
        let writer = if self.pcapng {
            let link_type = u16::try_from(self.link_type).unwrap_or(u16::MAX);
            let name = self.interface_name.clone();
            CaptureWriter::pcapng(file, &[Interface { link_type, snaplen: self.snaplen, tsresol: 9, name }])?
        } else {
            CaptureWriter::pcap(file, self.link_type, self.snaplen, true, false)?
        };
        self.files.push(path);
        self.current = Some(Open { writer, bytes: 0, opened_ns: ts_ns });
        Ok(())
    }

    /// Writes one frame, starting a new file first when the current one is full or old.
    pub fn write(&mut self, ts_ns: i64, frame: &[u8]) -> io::Result<()> {
        let due = self.current.as_ref().is_none_or(|c| {
            self.max_bytes.is_some_and(|max| c.bytes >= max)
                || self.max_age_ns.is_some_and(|age| ts_ns.saturating_sub(c.opened_ns) >= age)
        });
        if due {
            if let Some(previous) = self.current.take() {
                previous.writer.finish()?.flush()?;
            }
            self.open(ts_ns)?;
        }
        let Some(c) = self.current.as_mut() else { return Ok(()) };
        c.writer.packet(0, ts_ns, frame)?;
        c.bytes += 16 + frame.len() as u64;
        Ok(())
    }

    /// Flushes the last file; returns every file written.
    pub fn finish(mut self) -> io::Result<Vec<PathBuf>> {
        if let Some(c) = self.current.take() {
            c.writer.finish()?.flush()?;
        }
        Ok(self.files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_rotate_by_size_and_by_age() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("cap.pcap");
        let mut w = RotatingWriter::new(&base, 1, 65535, Some(200), None);
        for i in 0..5 {
            w.write(i, &[0u8; 84]).unwrap(); // 100 bytes a record
        }
        let files = w.finish().unwrap();
        let names: Vec<String> = files.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["cap.pcap", "cap.pcap.1", "cap.pcap.2"]);
        assert_eq!(std::fs::metadata(&files[0]).unwrap().len(), 24 + 200);
        let base = dir.path().join("t.pcapng");
        let mut w = RotatingWriter::new(&base, 1, 65535, None, Some(1_000));
        assert!(w.is_pcapng());
        for ts in [0, 500, 999, 1_000, 2_500] {
            w.write(ts, &[0u8; 60]).unwrap();
        }
        assert_eq!(w.finish().unwrap().len(), 3, "[0, 1000), [1000, 2000), [2500, …)");
    }
}
