//! Pairing the two directions of a connection from the evidence its responses carry, where no
//! CM exchange paired them (docs/analysis.md, "Pairing the two directions of a connection").
//!
//! A response (an ACK, a NAK, an ATOMIC ACK, a READ response) names a PSN of the flow it
//! answers: the candidates are the unpaired flows in the opposite direction whose request
//! PSN range holds it. Where several QPs between two hosts share their PSNs (NCCL starts every
//! QP at PSN 0 and stripes a connection over QPs that advance in lock-step), one response
//! rarely singles one out, so each response flow keeps its candidates and each later response
//! narrows them: a PSN outside a candidate's range rules it out, and a flow paired with
//! another response flow answers no other. A PSN-sequence NAK is answered by the QP whose
//! receiver sent it: the one candidate that resends the PSN it names pairs with it (a hole at
//! the tap proves nothing: the NAKed packet may have been late, or lost after the tap, while
//! another QP's copy of that PSN was what the mirror missed).

use crate::analyze::id::FlowId;

/// Candidates a response flow keeps between responses; with more, each response is judged
/// alone.
pub const CANDIDATES_KEPT: usize = 64;

/// The candidates an unpaired response flow still has.
pub type Candidates = Vec<FlowId>;
