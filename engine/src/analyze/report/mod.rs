//! The report shell: the document `analyze --json` prints (schema in docs/report-schema.md),
//! each analysis's section of it built from the finished [`Analyzer`] state or joined with it.

pub mod troubleshooting;

use serde::Serialize;

use crate::analyze::counters::report::HostCounters;
use crate::analyze::fabric::report::FabricReport;
use crate::analyze::finding::Finding;
use crate::analyze::identity::report::IdentityReport;
use crate::analyze::path::report::PathReport;
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::report::inputs::{InputReport, LiveReport};
use crate::analyze::roce::report::model::RoceReport;
use crate::analyze::uet::report::UetReport;

/// Version of the report schema; raised on any incompatible change.
pub const SCHEMA_VERSION: u32 = 8;

/// The report: each analysis's section, the findings their rules raise, and what it was made
/// by. The RoCE analysis's keys stand at the top level, as the schema has always had them.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: ToolReport,
    #[serde(flatten)]
    pub roce: RoceReport,
    pub findings: Vec<Finding>,
    /// The troubleshooting table's entries that explain some of the findings, each once:
    /// absent when none does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub troubleshooting: Vec<troubleshooting::Row>,
    /// Several taps of one path (`analyze --tap`): absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathReport>,
    /// Counter snapshots reconciled with the capture (`analyze --counters`): absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<HostCounters>,
    /// The hosts' QP tables and NCCL logs (`analyze --qps`, `--nccl-log`): each absent otherwise.
    #[serde(flatten)]
    pub identity: IdentityReport,
    /// The fabric's QoS configuration (`analyze --config`): absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric: Option<FabricReport>,
    /// Ultra Ethernet Transport packets: absent when the capture has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uet: Option<UetReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolReport {
    pub name: &'static str,
    pub version: &'static str,
}

impl Report {
    /// What the analysis of `inputs` counted, without findings ([`crate::analyze::assemble`]
    /// adds them) or what is joined with it; `live` gives a live capture's statistics.
    pub fn model(a: &Analyzer, inputs: Vec<InputReport>, live: Option<LiveReport>) -> Report {
        let t = a.wide.totals();
        Report {
            schema_version: SCHEMA_VERSION,
            tool: ToolReport { name: "rocescope", version: env!("CARGO_PKG_VERSION") },
            roce: RoceReport::model(a, inputs, live),
            findings: Vec::new(),
            troubleshooting: Vec::new(),
            path: None,
            counters: Vec::new(),
            identity: IdentityReport::default(),
            fabric: None,
            uet: UetReport::of(t.frames.uet_packets, t.uet_crc, &t.uet_crc_frames, &a.uet),
        }
    }
}
