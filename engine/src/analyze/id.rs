//! What names a flow (its key, and its number in the flow table) and each of its two PSN
//! spaces, and a frame's number in the capture: the one thing every room of the analysis says
//! of flows and frames. The numbers are declared with how they move when analyses are
//! combined ([`crate::analyze::renumber`], the floor below) and named here.

use crate::decode::Endpoint;

pub use crate::analyze::renumber::{FlowId, FrameNumber};

/// A flow: one direction of one QP, as the packets to it name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FlowKey {
    pub src: Endpoint,
    pub dst: Endpoint,
    pub dst_qp: u32,
}

// a frame number is a moment of the capture: two combine as the earlier or the later
impl crate::analyze::combining::by::Plain for FrameNumber {}

impl FlowKey {
    /// The flow as messages name it: `the flow 10.0.0.1 → 10.0.0.2 QP 0x11`.
    pub fn described(&self) -> String {
        format!("the flow {} → {} QP {:#x}", self.src, self.dst, self.dst_qp)
    }
}

/// The PSN spaces of a flow: its own requests, and its READ responses to the peer's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    Requests,
    Responses,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Requests => "requests",
            Space::Responses => "responses",
        }
    }
}

// what names a flow: its endpoints and QP; a PSN space
crate::holds_no_numbers!(FlowKey, Space);
