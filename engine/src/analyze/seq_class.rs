//! How a packet relates to its PSN space's expected PSN: the class every sequenced packet gets,
//! RoCE's (per flow, `roce/flow/sequence.rs`) and UET's (per PDC, `uet/pdc.rs`) alike, shown
//! per frame as `rocescope.seq`.

use crate::analyze::renumber::Renumber;

/// How a sequenced packet relates to its PSN space's expected PSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub enum SeqClass {
    First,
    InOrder,
    /// PSNs were skipped and `missing` of them never arrived.
    Gap {
        missing: u32,
    },
    /// The packet skipped PSNs that all arrived late: a reorder event.
    Ahead,
    /// The first appearance of a skipped PSN, late but not resent.
    LateArrival,
    Retransmission,
}

impl SeqClass {
    pub fn name(self) -> &'static str {
        match self {
            SeqClass::First => "first",
            SeqClass::InOrder => "in_order",
            SeqClass::Gap { .. } => "gap",
            SeqClass::Ahead => "ahead",
            SeqClass::LateArrival => "late_arrival",
            SeqClass::Retransmission => "retransmission",
        }
    }

    /// Sent for the first time (everything but a retransmission).
    pub fn is_new(self) -> bool {
        self != SeqClass::Retransmission
    }
}
