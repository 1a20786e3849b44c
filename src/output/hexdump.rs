//! The hex dump of a frame (`packets -x`): offset, 16 bytes in two groups of 8, printable ASCII.

use std::fmt::{self, Write};

pub fn write_hexdump(out: &mut impl Write, bytes: &[u8]) -> fmt::Result {
    for (row, chunk) in bytes.chunks(16).enumerate() {
        write!(out, "{:04x}  ", row * 16)?;
        for i in 0..16 {
            match chunk.get(i) {
                Some(b) => write!(out, "{b:02x} ")?,
                None => out.write_str("   ")?,
            }
            if i == 7 {
                out.write_char(' ')?;
            }
        }
        out.write_char(' ')?;
        for &b in chunk {
            out.write_char(if b.is_ascii_graphic() || b == b' ' { char::from(b) } else { '.' })?;
        }
        out.write_char('\n')?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_rows() {
        let mut s = String::new();
        write_hexdump(&mut s, b"0123456789abcdefXY\x00").unwrap();
        assert_eq!(
            s,
            "0000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  0123456789abcdef\n\
             0010  58 59 00                                          XY.\n"
        );
    }
}
