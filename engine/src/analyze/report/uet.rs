//! The `uet` section of a report: the capture's Ultra Ethernet Transport packets and what their
//! CRC32C trailers say. Defined in docs/analysis.md, "UET".

use serde::Serialize;

use crate::analyze::counts::UetCrcCounts;

#[derive(Debug, Clone, Serialize)]
pub struct UetReport {
    pub packets: u64,
    pub crc: UetCrcReport,
}

/// The trailers checked against the capture's reading of the CRC.
#[derive(Debug, Clone, Serialize)]
pub struct UetCrcReport {
    /// The reading the capture's packets match (the one most of them match); none when no
    /// packet matched any.
    pub variant: Option<&'static str>,
    /// Packets whose trailer is the reading's.
    pub ok: u64,
    /// Packets whose trailer is not, once the capture has a reading.
    pub bad: u64,
    /// Packets not checked: encrypted, cut, or any packet of a capture without a reading.
    pub unchecked: u64,
    /// Packets by the reading their trailer matched.
    pub readings: UetCrcCounts,
}

impl UetReport {
    /// The section of a capture with `packets` UET packets whose trailers matched `readings`;
    /// none without UET packets.
    pub fn of(packets: u64, readings: UetCrcCounts) -> Option<UetReport> {
        (packets > 0).then(|| UetReport { packets, crc: UetCrcReport::of(readings) })
    }
}

impl UetCrcReport {
    fn of(r: UetCrcCounts) -> UetCrcReport {
        let matched = [
            ("crc32c_le", r.crc32c_le),
            ("crc32c_be", r.crc32c_be),
            ("crc32c_raw_le", r.crc32c_raw_le),
            ("crc32c_raw_be", r.crc32c_raw_be),
        ];
        let total: u64 = matched.iter().map(|m| m.1).sum();
        // the most matched reading, the first of equals
        let best = matched.iter().copied().filter(|m| m.1 > 0).rev().max_by_key(|m| m.1);
        match best {
            Some((variant, ok)) => UetCrcReport {
                variant: Some(variant),
                ok,
                bad: r.no_variant + (total - ok),
                unchecked: r.unchecked,
                readings: r,
            },
            // never bad before a reading matched: nothing to check against
            None => UetCrcReport { variant: None, ok: 0, bad: 0, unchecked: r.unchecked + r.no_variant, readings: r },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capture_reading_is_the_most_matched_and_no_packet_is_bad_without_one() {
        let r = UetCrcCounts { crc32c_le: 90, crc32c_be: 1, no_variant: 4, unchecked: 5, ..UetCrcCounts::default() };
        let crc = UetCrcReport::of(r);
        assert_eq!((crc.variant, crc.ok, crc.bad, crc.unchecked), (Some("crc32c_le"), 90, 5, 5));
        let tie = UetCrcReport::of(UetCrcCounts { crc32c_be: 3, crc32c_raw_le: 3, ..UetCrcCounts::default() });
        assert_eq!((tie.variant, tie.ok, tie.bad), (Some("crc32c_be"), 3, 3), "the first of equals");
        let none = UetCrcReport::of(UetCrcCounts { no_variant: 7, unchecked: 2, ..UetCrcCounts::default() });
        assert_eq!((none.variant, none.ok, none.bad, none.unchecked), (None, 0, 0, 9));
        assert!(UetReport::of(0, UetCrcCounts::default()).is_none());
    }
}
