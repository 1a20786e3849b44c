//! The finished report: what the analysis counted ([`Report::model`]) with the findings its
//! rules raise over those numbers ([`findings`]).

use crate::analyze::counters::report::HostCounters;
use crate::analyze::counters::{self, HostSnapshots, SwitchSnapshots};
use crate::analyze::fabric::{self, devices::Device, report::FabricReport};
use crate::analyze::finding::Finding;
use crate::analyze::identity::join::FlowSeen;
use crate::analyze::identity::{self, HostAccounts};
use crate::analyze::path::{self, report::PathReport};
use crate::analyze::report::{Report, troubleshooting};
use crate::analyze::roce;
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::report::FlowReport;
use crate::analyze::roce::report::inputs::{DamageReport, InputReport, LiveReport};
use crate::analyze::rules::Rules;
use crate::analyze::uet;
use crate::capture::{CaptureError, CaptureReader};

/// The report of an analysis of `inputs`; `live` gives a live capture's statistics.
pub fn report(a: &Analyzer, inputs: Vec<InputReport>, live: Option<LiveReport>) -> Report {
    let mut report = Report::model(a, inputs, live);
    report.findings = findings(&report);
    report.troubleshooting = troubleshooting::rows(&report, &report.findings);
    report
}

/// The findings every analysis's rules raise over `report`.
/// Each reads its own section, and errors come first; the troubleshooting table's entries that
/// explain them are the report's (`troubleshooting::rows`), listed once beside them.
pub fn findings(report: &Report) -> Vec<Finding> {
    let mut out = Vec::new();
    roce::rules::roce(&mut Rules::new(&report.roce, &mut out));
    path::rules::path(&mut Rules::new(&report.path, &mut out));
    let counters = counters::rules::Sections { counters: &report.counters, roce: &report.roce };
    counters::rules::counters(&mut Rules::new(&counters, &mut out));
    identity::rules::identity(&mut Rules::new(&report.identity, &mut out));
    if let Some(configured) = &report.fabric {
        fabric::rules::fabric(&mut Rules::new(configured, &mut out));
    }
    uet::rules::uet(&mut Rules::new(&report.uet, &mut out));
    if let Some(configured) = &report.fabric {
        fabric::rules::cite_policy(configured, &report.roce.policy, &mut out);
    }
    by_severity(out)
}

/// The findings of the fabric's configuration read without a capture (`rocescope fabric`).
pub fn fabric_findings(fabric: &FabricReport) -> Vec<Finding> {
    let mut out = Vec::new();
    fabric::rules::fabric(&mut Rules::new(fabric, &mut out));
    by_severity(out)
}

/// `findings`, errors first (in the order raised among each severity).
fn by_severity(mut findings: Vec<Finding>) -> Vec<Finding> {
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// What the report joins with the analysis of the frames, each read apart from the main pass:
/// the path traced over several taps (`analyze --tap`, a pass of its own before the main one),
/// counter snapshots to reconcile (`analyze --counters`, `--switch-counters`) and the hosts'
/// QP tables and NCCL logs (`--qps`, `--nccl-log`) and the fabric's configurations
/// (`--config`), files read before the capture.
#[derive(Debug, Clone, Default)]
pub struct Joined {
    pub path: Option<PathReport>,
    pub counters: Vec<HostSnapshots>,
    pub switches: Vec<SwitchSnapshots>,
    pub accounts: HostAccounts,
    /// The devices of the fabric whose configurations were given (`--config`).
    pub fabric: Vec<Device>,
}

/// The report with what it `joined`: each room's section of it (the path's losses naming the
/// report's flows they belong to, each host's counters reconciled with its flows, the owners
/// of each flow's QPs), then the findings over them all.
pub fn report_joined(a: &Analyzer, inputs: Vec<InputReport>, joined: &Joined) -> Report {
    let mut report = Report::model(a, inputs, None);
    report.path = joined.path.as_ref().map(|path| path_of_flows(path, &report.roce.flows));
    report.counters = joined.counters.iter().map(|h| HostCounters::of(&report.roce, h)).collect();
    report.counters.extend(joined.switches.iter().map(HostCounters::of_switch));
    let seen: Vec<FlowSeen> = report.roce.flows.iter().map(FlowReport::seen).collect();
    let (owners, sections) = identity::join::join(&seen, &joined.accounts);
    for (f, owners) in report.roce.flows.iter_mut().zip(owners) {
        (f.owner, f.dst_owner) = (owners.owner, owners.dst_owner);
    }
    report.identity = sections;
    report.fabric = (!joined.fabric.is_empty()).then(|| fabric::analyse(&joined.fabric, Some(&report.roce)));
    report.findings = findings(&report);
    report.troubleshooting = troubleshooting::rows(&report, &report.findings);
    report
}

/// The path's report, each loss naming the report's flow it belongs to.
fn path_of_flows(path: &PathReport, flows: &[FlowReport]) -> PathReport {
    let mut path = path.clone();
    for loss in &mut path.losses {
        let flow = flows.iter().find(|f| (f.src_ip, f.dst_ip, f.dst_qp) == (loss.src, loss.dst, loss.dest_qp));
        loss.flow = flow.map(|f| f.id);
    }
    path
}

/// The report of an analysis of the files `readers` read; `damage` lists where they were cut short.
pub fn report_of_files(a: &Analyzer, readers: &[CaptureReader], damage: &[CaptureError]) -> Report {
    report(a, input_reports(readers, damage), None)
}

/// How the files `readers` read are described; `damage` lists where they were cut short.
pub fn input_reports(readers: &[CaptureReader], damage: &[CaptureError]) -> Vec<InputReport> {
    readers.iter().map(|r| input_report(r, damage)).collect()
}

/// How an input file is described, with where it was cut short if it was.
fn input_report(r: &CaptureReader, damage: &[CaptureError]) -> InputReport {
    let cut = damage.iter().find(|d| d.file == r.name());
    let damage = cut.map(|d| DamageReport { offset: d.offset, message: d.message.clone() });
    InputReport::of_capture(r.name(), r.info(), damage)
}
