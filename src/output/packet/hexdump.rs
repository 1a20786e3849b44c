//! The hex dump of a frame (`packets -x`): offset, 16 bytes in two groups of 8, printable ASCII.

use std::fmt::{self, Write};

/// The column of a dump line where the hex digits of the row's `i`-th byte start.
pub fn hex_column(i: usize) -> usize {
    6 + 3 * i + usize::from(i >= 8)
}

/// The column of a dump line where the row's `i`-th byte is shown as a character.
pub fn char_column(i: usize) -> usize {
    hex_column(16) + 1 + i
}

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

    #[test]
    fn the_columns_are_those_of_the_dump() {
        let mut s = String::new();
        write_hexdump(&mut s, &(0u8..16).map(|i| b'A' + i).collect::<Vec<_>>()).unwrap();
        for i in 0..16 {
            assert_eq!(&s[hex_column(i)..hex_column(i) + 2], format!("{:02x}", b'A' + i as u8), "byte {i}");
            assert_eq!(s.as_bytes()[char_column(i)], b'A' + i as u8, "byte {i}");
        }
    }
}
