//! The streaming analysis: one pass over decoded frames builds per-flow PSN sequences,
//! retransmit episodes, congestion (ECN, CNP) and pause (PFC, PAUSE) accounting and policy
//! checks. Definitions are in docs/analysis.md. State grows with the number of flows, pause
//! sources and CM connections, never with the number of packets (retransmit episode details
//! are kept up to [`MAX_EPISODES_KEPT`]); the frames it holds back are bounded too: the first
//! RoCE frames until the doubled-mirror decision, and those of one reorder window.

pub mod assemble;
pub mod combine;
pub mod combining;
pub mod counters;
pub mod counts;
pub mod exemplar;
pub mod fabric;
pub mod finding;
pub mod frame;
pub mod histogram;
pub mod id;
pub mod identity;
pub(crate) mod names;
pub mod partition;
pub mod path;
pub mod renumber;
pub mod report;
pub mod rfc3339;
pub mod roce;
pub mod rules;
pub mod saved;
pub mod seq_class;
pub mod timeline;
pub mod trace;
pub mod uet;
pub use counts::FrameCounts;
pub use roce::analyzer::{
    Analyzer, MAX_EPISODES_KEPT, MAX_PAIRING_CANDIDATES, PACKETS_HELD, PROBE_HELD, PROBE_HELD_BYTES, ShardStart,
    VERDICTS_HELD,
};
pub use roce::config::{Config, DEFAULT_MAX_FLOWS};
pub use roce::flow::verdicts::Verdict;
pub use roce::wide::facts::{CaptureFacts, MalformedLayer, Totals};
pub use roce::wide::{CE_MARKS, CNPS, ROCE_BYTES, TIMELINE_BINS};
pub use saved::state::{STATE_MAGIC, STATE_VERSION, SavedRun, decompressed_limit};
