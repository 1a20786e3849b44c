//! Pairing the two directions of a connection from the evidence its responses carry, where no
//! CM exchange paired them (docs/analysis.md, "Pairing the two directions of a connection").
//!
//! A response (an ACK, a NAK, an ATOMIC ACK, a READ response) names a PSN of the flow it
//! answers: the candidates are the unpaired flows in the opposite direction whose request
//! PSN range holds it. Where several QPs between two hosts share their PSNs (NCCL starts every
//! QP at PSN 0 and stripes a connection over QPs that advance in lock-step), one response
//! rarely singles one out, so each response flow keeps its candidates and each later response
//! narrows them: a PSN-sequence NAK names a hole, which only the flow that lost a packet has;
//! a PSN outside a candidate's range rules it out; and a flow paired with another response
//! flow answers no other.

use crate::analyze::id::FlowId;

/// Candidates a response flow keeps between responses; with more, each response is judged
/// alone.
pub const CANDIDATES_KEPT: usize = 64;

/// The candidates an unpaired response flow still has.
pub type Candidates = Vec<FlowId>;

/// What a response says of the flow it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// A PSN-sequence NAK: its PSN is the one the responder expected, a hole of the flow it
    /// answers when the tap saw the gap.
    Nak,
    /// Any other response: its PSN lies in the range the flow it answers has requested.
    Psn,
}
