//! The fabric's marking policy and the per-flow counts of packets that break it.
//!
//! Data packets are every RoCEv2 packet but CNPs and management packets (ACKs and NAKs
//! included); CNPs are opcode 0x81; management packets go to QP 0 or 1 (subnet management and
//! GSI MADs, RDMA CM), which NICs send with their management traffic class, and are checked
//! only against `cm_dscp` when one is set. Defaults follow the common RoCE deployment: data
//! DSCP 26 on priority 3, CNPs DSCP 48 on priority 6, data ECN-capable, priority 3 lossless.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use rocescope_parsers::opcode::CNP;
use serde::{Deserialize, Serialize};

/// The expected marking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    pub data_dscp: u8,
    pub cnp_dscp: u8,
    /// 802.1p priority of VLAN-tagged data.
    pub data_pcp: u8,
    /// 802.1p priority of VLAN-tagged CNPs.
    pub cnp_pcp: u8,
    /// Data must be ECT(0) or ECT(1).
    pub require_ect: bool,
    /// The priority PFC may pause.
    pub lossless_priority: u8,
    /// Expected DSCP of management packets (QP 0 and 1); not checked when absent.
    pub cm_dscp: Option<u8>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            data_dscp: 26,
            cnp_dscp: 48,
            data_pcp: 3,
            cnp_pcp: 6,
            require_ect: true,
            lossless_priority: 3,
            cm_dscp: None,
        }
    }
}

/// How often a rule was broken, and where first.
#[derive(Debug, Clone, PartialEq, Copy, Default, Serialize, serde::Deserialize, Renumber, Combine)]
pub struct Violations {
    #[combine(sum)]
    pub count: u64,
    #[combine(earliest)]
    pub first_frame: Option<FrameNumber>,
}

impl Violations {
    pub fn record(&mut self, frame: FrameNumber) {
        self.count += 1;
        self.first_frame.get_or_insert(frame);
    }
}

/// What a RoCE packet is to the marking policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Class {
    Data,
    Cnp,
    /// To QP 0 or 1: subnet management and GSI MADs (RDMA CM).
    Management,
}

impl Class {
    pub fn of(opcode: u8, dest_qp: u32) -> Class {
        if opcode == CNP {
            Class::Cnp
        } else if dest_qp <= 1 {
            Class::Management
        } else {
            Class::Data
        }
    }
}

/// Policy breaches of one flow.
#[derive(Debug, Clone, PartialEq, Copy, Default, Serialize, serde::Deserialize, Renumber, Combine)]
pub struct PolicyCounts {
    pub data_dscp: Violations,
    pub data_pcp: Violations,
    pub not_ect_data: Violations,
    pub cnp_dscp: Violations,
    pub cnp_pcp: Violations,
    pub cm_dscp: Violations,
}

impl PolicyCounts {
    /// Checks one RoCEv2 packet: `dscp`/`ecn` from IP, `pcp` of the outermost VLAN tag.
    pub fn check(&mut self, policy: &Policy, frame: FrameNumber, class: Class, dscp: u8, ecn: u8, pcp: Option<u8>) {
        if class == Class::Management {
            if policy.cm_dscp.is_some_and(|d| d != dscp) {
                self.cm_dscp.record(frame);
            }
        } else if class == Class::Cnp {
            if dscp != policy.cnp_dscp {
                self.cnp_dscp.record(frame);
            }
            if pcp.is_some_and(|p| p != policy.cnp_pcp) {
                self.cnp_pcp.record(frame);
            }
        } else {
            if dscp != policy.data_dscp {
                self.data_dscp.record(frame);
            }
            if pcp.is_some_and(|p| p != policy.data_pcp) {
                self.data_pcp.record(frame);
            }
            if policy.require_ect && ecn == 0 {
                self.not_ect_data.record(frame);
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.data_dscp.count
            + self.data_pcp.count
            + self.not_ect_data.count
            + self.cnp_dscp.count
            + self.cnp_pcp.count
            + self.cm_dscp.count
    }
}

/// The DSCPs a flow's data packets and its CNPs carry, each with the first frame that does:
/// what the fabric's configuration is checked against (docs/fabric.md). A bit per DSCP and
/// class tells a new one, so a packet costs one test.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize, Renumber)]
pub struct DscpsSeen {
    data: u64,
    cnps: u64,
    firsts: Vec<FirstDscp>,
}

/// A DSCP a flow's data packets (or CNPs) carry, and the first frame that does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Renumber)]
pub struct FirstDscp {
    pub cnp: bool,
    pub dscp: u8,
    pub frame: FrameNumber,
}

impl DscpsSeen {
    /// Notes a packet of `class` (management packets are not noted) carrying `dscp`.
    pub fn note(&mut self, class: Class, dscp: u8, frame: FrameNumber) {
        let (bits, cnp) = match class {
            Class::Data => (&mut self.data, false),
            Class::Cnp => (&mut self.cnps, true),
            Class::Management => return,
        };
        let bit = 1u64 << (dscp & 63);
        if *bits & bit == 0 {
            *bits |= bit;
            self.firsts.push(FirstDscp { cnp, dscp, frame });
        }
    }

    /// Each DSCP seen, by class, in the order first seen.
    pub fn firsts(&self) -> &[FirstDscp] {
        &self.firsts
    }

    /// Takes in `other`'s DSCPs, each at the earlier of the two first frames.
    fn join(&mut self, other: &DscpsSeen) {
        for first in &other.firsts {
            match self.firsts.iter_mut().find(|mine| (mine.cnp, mine.dscp) == (first.cnp, first.dscp)) {
                Some(mine) => mine.frame = mine.frame.min(first.frame),
                None => self.firsts.push(*first),
            }
        }
        self.firsts.sort_by_key(|first| first.frame);
        (self.data, self.cnps) = (self.data | other.data, self.cnps | other.cnps);
    }
}

/// A shard's DSCPs and a later part's join the flow's, each at its earliest first frame.
impl Combine for DscpsSeen {
    fn add(&mut self, other: &Self) -> Result<(), Refused> {
        self.join(other);
        Ok(())
    }

    fn graft(&mut self, _: &Self, end: Self, _: &Seam) -> Result<(), Refused> {
        self.join(&end);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_and_cnp_rules() {
        let p = Policy::default();
        let mut c = PolicyCounts::default();
        c.check(&p, FrameNumber::new(1), Class::Data, 26, 2, Some(3)); // good data
        c.check(&p, FrameNumber::new(2), Class::Data, 0, 0, Some(0)); // wrong DSCP, Not-ECT, wrong PCP
        c.check(&p, FrameNumber::new(3), Class::Cnp, 48, 0, Some(6)); // good CNP (ECN not checked)
        c.check(&p, FrameNumber::new(4), Class::Cnp, 0, 2, None); // wrong CNP DSCP, untagged
        c.check(&p, FrameNumber::new(5), Class::Management, 0, 0, Some(0)); // CM at DSCP 0, Not-ECT: no rule
        assert_eq!((c.data_dscp.count, c.data_dscp.first_frame.map(FrameNumber::get)), (1, Some(2)));
        assert_eq!((c.not_ect_data.count, c.data_pcp.count), (1, 1));
        assert_eq!((c.cnp_dscp.count, c.cnp_dscp.first_frame.map(FrameNumber::get), c.cnp_pcp.count), (1, Some(4), 0));
        assert_eq!(c.total(), 4);
        let p = Policy { cm_dscp: Some(48), ..p };
        c.check(&p, FrameNumber::new(6), Class::Management, 0, 0, None);
        c.check(&p, FrameNumber::new(7), Class::Management, 48, 0, None);
        assert_eq!(
            (c.cm_dscp.count, c.cm_dscp.first_frame.map(FrameNumber::get), c.not_ect_data.count),
            (1, Some(6), 1)
        );
    }

    #[test]
    fn each_dscp_of_data_and_cnps_is_kept_with_its_first_frame() {
        let mut seen = DscpsSeen::default();
        for (frame, class, dscp) in [
            (1, Class::Data, 26),
            (2, Class::Data, 26),
            (3, Class::Cnp, 48),
            (4, Class::Data, 46),
            (5, Class::Management, 0),
        ] {
            seen.note(class, dscp, FrameNumber::new(frame));
        }
        let firsts = |s: &DscpsSeen| s.firsts().iter().map(|f| (f.cnp, f.dscp, f.frame.get())).collect::<Vec<_>>();
        assert_eq!(firsts(&seen), [(false, 26, 1), (true, 48, 3), (false, 46, 4)]);
        let mut other = DscpsSeen::default();
        other.note(Class::Cnp, 48, FrameNumber::new(2));
        other.note(Class::Cnp, 26, FrameNumber::new(7));
        seen.add(&other).unwrap();
        assert_eq!(firsts(&seen), [(false, 26, 1), (true, 48, 2), (false, 46, 4), (true, 26, 7)]);
    }

    #[test]
    fn management_packets_go_to_qp_0_and_1() {
        assert_eq!(Class::of(0x64, 1), Class::Management);
        assert_eq!(Class::of(0x64, 0), Class::Management);
        assert_eq!(Class::of(0x0A, 2), Class::Data);
        assert_eq!(Class::of(CNP, 1), Class::Cnp);
    }

    #[test]
    fn policy_from_toml() {
        let p: Policy = toml::from_str("data_dscp = 24\nlossless_priority = 4\n").unwrap();
        assert_eq!((p.data_dscp, p.cnp_dscp, p.lossless_priority), (24, 48, 4));
        assert!(toml::from_str::<Policy>("data_dcsp = 1").is_err());
    }
}
