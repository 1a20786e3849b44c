//! What names a flow (its key, and its number in the flow table) and each of its two PSN
//! spaces: the one thing every room of the analysis says of flows.

use crate::decode::Endpoint;

/// A flow: one direction of one QP, as the packets to it name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FlowKey {
    pub src: Endpoint,
    pub dst: Endpoint,
    pub dst_qp: u32,
}

/// A flow's number: its place in the flow table, in order of appearance.
pub type FlowId = u32;

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
