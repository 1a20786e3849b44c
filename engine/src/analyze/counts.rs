//! Counters by verdict and by codepoint, named: the analysis counts into them and the report
//! shows them as they are.

use serde::Serialize;

use crate::decode::IcrcStatus;

/// RoCE packets by ICRC verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IcrcCounts {
    pub ok: u64,
    pub bad: u64,
    pub unverifiable: u64,
}

impl IcrcCounts {
    pub fn count(&mut self, status: IcrcStatus) {
        match status {
            IcrcStatus::Ok => self.ok += 1,
            IcrcStatus::Bad => self.bad += 1,
            IcrcStatus::Unverifiable => self.unverifiable += 1,
        }
    }
}

/// Packets by ECN codepoint (RFC 3168 §5: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EcnCounts {
    pub not_ect: u64,
    pub ect0: u64,
    pub ect1: u64,
    pub ce: u64,
}

impl EcnCounts {
    /// Counts the codepoint in the low two bits of `ecn`.
    pub fn count(&mut self, ecn: u8) {
        match ecn & 3 {
            0 => self.not_ect += 1,
            1 => self.ect1 += 1,
            2 => self.ect0 += 1,
            _ => self.ce += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codepoints_and_verdicts_land_in_their_counters() {
        let mut ecn = EcnCounts::default();
        for codepoint in [0, 1, 2, 2, 3, 3, 3, 7] {
            ecn.count(codepoint);
        }
        assert_eq!(ecn, EcnCounts { not_ect: 1, ect1: 1, ect0: 2, ce: 4 });
        let mut icrc = IcrcCounts::default();
        for status in [IcrcStatus::Ok, IcrcStatus::Bad, IcrcStatus::Bad, IcrcStatus::Unverifiable] {
            icrc.count(status);
        }
        assert_eq!(icrc, IcrcCounts { ok: 1, bad: 2, unverifiable: 1 });
    }
}
