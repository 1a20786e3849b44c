//! Values written in a filter, read as the type of the field they are compared with: integers
//! (decimal, `0x` hex, `0` octal), booleans (`1`/`0`, `True`/`False`), IPv4 and IPv6 addresses
//! with an optional `/prefix`, MAC addresses (`aa:bb:cc:dd:ee:ff`, `aa-bb-…`, `aabb.ccdd.eeff`),
//! byte strings (`01:80:c2`, `0x80`), strings, and times in seconds.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::fields::FieldType;

/// A value to compare occurrences with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    Uint(u64),
    /// An IPv4 network: address and mask.
    Ipv4 {
        net: u32,
        mask: u32,
    },
    Ipv6 {
        net: u128,
        mask: u128,
    },
    Ether([u8; 6]),
    Bytes(Vec<u8>),
    Str(String),
    /// Nanoseconds.
    Time(i64),
}

pub fn integer(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if text.len() > 1
        && let Some(octal) = text.strip_prefix('0')
    {
        u64::from_str_radix(octal, 8).ok()
    } else {
        text.parse().ok()
    }
}

fn boolean(text: &str) -> Option<u64> {
    match text {
        "1" => Some(1),
        "0" => Some(0),
        t if t.eq_ignore_ascii_case("true") => Some(1),
        t if t.eq_ignore_ascii_case("false") => Some(0),
        _ => None,
    }
}

/// An address with an optional `/prefix`: its bits and the mask of the prefix.
fn network<const BITS: u32>(text: &str, parse: impl Fn(&str) -> Option<u128>) -> Option<(u128, u128)> {
    let (address, prefix) = match text.split_once('/') {
        Some((a, p)) => (a, p.parse::<u32>().ok().filter(|p| *p <= BITS)?),
        None => (text, BITS),
    };
    let all = if BITS == 128 { u128::MAX } else { (1u128 << BITS) - 1 };
    let mask = match prefix {
        0 => 0,
        128.. => u128::MAX,
        p => all & !(all >> p),
    };
    let value = parse(address)?;
    Some((value & mask, mask))
}

/// Hex byte pairs separated by `:`, `-` or `.`, or one `0x`-prefixed run of hex digits.
fn bytes(text: &str) -> Option<Vec<u8>> {
    let digits: String = match text.strip_prefix("0x") {
        Some(hex) => hex.to_string(),
        None if text.contains([':', '-', '.']) => {
            let parts: Vec<&str> = text.split([':', '-', '.']).collect();
            // pairs (aa:bb), single digits (a:b), or Cisco's groups of four (aabb.ccdd)
            if parts.iter().any(|p| !matches!(p.len(), 1 | 2 | 4)) {
                return None;
            }
            parts.iter().map(|p| if p.len() == 1 { format!("0{p}") } else { p.to_string() }).collect()
        }
        None => text.to_string(),
    };
    if digits.is_empty() || !digits.len().is_multiple_of(2) {
        return None;
    }
    (0..digits.len()).step_by(2).map(|i| digits.get(i..i + 2).and_then(|d| u8::from_str_radix(d, 16).ok())).collect()
}

fn ether(text: &str) -> Option<[u8; 6]> {
    bytes(text).and_then(|b| b.try_into().ok())
}

fn seconds(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 9 || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let fraction: i64 = format!("{fraction:0<9}").parse().ok()?;
    whole.checked_mul(1_000_000_000)?.checked_add(fraction)
}

/// Reads `text` as a value of `ty` (`sliced`: of the bytes of a slice); `None` when it is not
/// one, with the kind of value expected for the error message.
pub fn read(text: &str, quoted: bool, ty: FieldType, sliced: bool) -> Result<Literal, &'static str> {
    if sliced {
        return bytes(text)
            .or_else(|| quoted.then(|| text.as_bytes().to_vec()))
            .map(Literal::Bytes)
            .ok_or("a byte string");
    }
    match ty {
        FieldType::Uint(_) | FieldType::FrameNum => integer(text).map(Literal::Uint).ok_or("an integer"),
        FieldType::Bool(_) => boolean(text).map(Literal::Uint).ok_or("a boolean (1, 0, True or False)"),
        FieldType::Ipv4 => network::<32>(text, |a| a.parse::<Ipv4Addr>().ok().map(|a| u128::from(u32::from(a))))
            .map(|(net, mask)| Literal::Ipv4 { net: net as u32, mask: mask as u32 })
            .ok_or("an IPv4 address or network"),
        FieldType::Ipv6 => network::<128>(text, |a| a.parse::<Ipv6Addr>().ok().map(u128::from))
            .map(|(net, mask)| Literal::Ipv6 { net, mask })
            .ok_or("an IPv6 address or network"),
        FieldType::Ether => ether(text).map(Literal::Ether).ok_or("a MAC address"),
        FieldType::Bytes => {
            bytes(text).or_else(|| quoted.then(|| text.as_bytes().to_vec())).map(Literal::Bytes).ok_or("a byte string")
        }
        FieldType::String => Ok(Literal::Str(text.to_string())),
        FieldType::AbsoluteTime | FieldType::RelativeTime => {
            seconds(text).map(Literal::Time).ok_or("a time in seconds")
        }
        FieldType::Protocol => Err("nothing: a protocol is only present or not"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_of_every_type() {
        assert_eq!(read("0x1a", false, FieldType::Uint(8), false), Ok(Literal::Uint(26)));
        assert_eq!(read("017", false, FieldType::Uint(8), false), Ok(Literal::Uint(15)));
        assert_eq!(read("True", false, FieldType::Bool(8), false), Ok(Literal::Uint(1)));
        assert_eq!(
            read("172.16.0.0/12", false, FieldType::Ipv4, false),
            Ok(Literal::Ipv4 { net: 0xAC10_0000, mask: 0xFFF0_0000 })
        );
        assert_eq!(
            read("10.0.0.1", false, FieldType::Ipv4, false),
            Ok(Literal::Ipv4 { net: 0x0A00_0001, mask: u32::MAX })
        );
        assert!(read("10.0.0.300", false, FieldType::Ipv4, false).is_err());
        assert!(
            matches!(read("fe80::/10", false, FieldType::Ipv6, false), Ok(Literal::Ipv6 { mask, .. }) if mask >> 118 == 0x3ff)
        );
        assert_eq!(read("::1", false, FieldType::Ipv6, false), Ok(Literal::Ipv6 { net: 1, mask: u128::MAX }));
        assert_eq!(read("::1/128", false, FieldType::Ipv6, false), Ok(Literal::Ipv6 { net: 1, mask: u128::MAX }));
        assert!(read("::1/129", false, FieldType::Ipv6, false).is_err());
        assert_eq!(read("02-00-00-00-00-01", false, FieldType::Ether, false), Ok(Literal::Ether([2, 0, 0, 0, 0, 1])));
        assert_eq!(read("0200.0000.0001", false, FieldType::Ether, false), Ok(Literal::Ether([2, 0, 0, 0, 0, 1])));
        assert_eq!(read("01:80:c2", false, FieldType::Ether, true), Ok(Literal::Bytes(vec![1, 0x80, 0xc2])));
        assert_eq!(read("0x80", false, FieldType::Bytes, true), Ok(Literal::Bytes(vec![0x80])));
        assert_eq!(read("GET", true, FieldType::Bytes, false), Ok(Literal::Bytes(b"GET".to_vec())));
        assert_eq!(read("0.000061", false, FieldType::RelativeTime, false), Ok(Literal::Time(61_000)));
    }
}
