//! A growable read buffer over any byte stream, tracking the absolute offset of its first
//! unread byte so that damage can be reported by position.

use std::io::{self, Read};

/// Bytes read ahead in one go.
const READ_CHUNK: usize = 1 << 20;

pub struct ByteSource {
    reader: Box<dyn Read + Send>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// Stream offset of `buf[start]`.
    offset: u64,
}

impl ByteSource {
    pub fn new(reader: Box<dyn Read + Send>) -> Self {
        ByteSource { reader, buf: vec![0; READ_CHUNK], start: 0, end: 0, eof: false, offset: 0 }
    }

    /// The unread bytes held in memory.
    pub fn available(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or_default()
    }

    /// Stream offset of the first unread byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Has the stream ended (no more bytes beyond [`ByteSource::available`])?
    pub fn at_eof(&self) -> bool {
        self.eof
    }

    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.offset += n as u64;
    }

    /// Reads until at least `want` unread bytes are held or the stream ends. The caller bounds
    /// `want`; the buffer grows to it when needed.
    pub fn fill_to(&mut self, want: usize) -> io::Result<()> {
        if self.end - self.start >= want || self.eof {
            return Ok(());
        }
        if self.buf.len() - self.start < want.max(READ_CHUNK / 2) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        while self.end - self.start < want {
            let space = self.buf.get_mut(self.end..).unwrap_or_default();
            match self.reader.read(space) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most 3 bytes per call.
    struct Trickle(Vec<u8>, usize);

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(3).min(self.0.len() - self.1);
            out[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    #[test]
    fn fills_across_short_reads_and_tracks_offsets() {
        let data: Vec<u8> = (0..100).collect();
        let mut s = ByteSource::new(Box::new(Trickle(data, 0)));
        s.fill_to(10).unwrap();
        assert!(s.available().len() >= 10);
        s.consume(7);
        assert_eq!(s.offset(), 7);
        assert_eq!(s.available()[0], 7);
        s.fill_to(1000).unwrap();
        assert!(s.at_eof());
        assert_eq!(s.available().len(), 93);
        s.consume(93);
        assert_eq!(s.offset(), 100);
        assert!(s.available().is_empty());
    }

    #[test]
    fn grows_for_a_large_record() {
        let data = vec![5u8; 3 * READ_CHUNK];
        let mut s = ByteSource::new(Box::new(io::Cursor::new(data)));
        s.fill_to(2 * READ_CHUNK + 1).unwrap();
        assert!(s.available().len() > 2 * READ_CHUNK);
    }
}
