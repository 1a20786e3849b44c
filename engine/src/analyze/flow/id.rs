//! What names a flow (its number in the flow table) and each of its two PSN spaces.

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
