//! The RoCE transport analysis's room: each flow's state machines (`flow/`), what the
//! capture does as a whole (`wide/`: frames, PFC and PAUSE, the marking policy, RDMA CM,
//! mirror copies, the timeline), congestion (`congestion/`), its report sections
//! (`report/`) and its rules (`rules/`). Definitions are in docs/analysis.md.

pub mod analyzer;
pub mod config;
pub mod congestion;
pub mod flow;
pub mod report;
pub mod rules;
pub mod wide;
