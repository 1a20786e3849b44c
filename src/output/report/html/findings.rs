//! The page's findings, each with its flows, first frames, likely cause and first action, the
//! troubleshooting table's entries that explain them, each once, and a legend of the codes
//! present.

use maud::{Markup, html};

use crate::analyze::finding::{self, Finding};
use crate::analyze::id::{FlowId, FrameNumber};
use crate::analyze::report::Report;

pub(super) fn flow_link(report: &Report, id: FlowId) -> Markup {
    let label = report.roce.flows.get(id.index()).map_or_else(|| format!("flow {id}"), |f| f.label());
    html! { a href={ "#flow-" (id) } { (label) } }
}

fn finding(report: &Report, i: usize, f: &Finding) -> Markup {
    let rows: Vec<usize> = report
        .troubleshooting
        .iter()
        .enumerate()
        .filter(|(_, r)| r.findings.contains(&i))
        .map(|(n, _)| n + 1)
        .collect();
    html! {
        div class={ "finding " (f.severity.name()) } {
            p { span.sev { (f.severity.name()) } code { (f.code) } " " (f.message) }
            @if !f.evidence.flows.is_empty() {
                p { "Flows: " @for (i, id) in f.evidence.flows.iter().enumerate() { @if i > 0 { ", " } (flow_link(report, *id)) } }
            }
            @if !f.evidence.frames.is_empty() {
                p { "First frames: " (f.evidence.frames.iter().map(FrameNumber::to_string).collect::<Vec<_>>().join(", ")) }
            }
            p { strong { "Likely cause: " } (f.cause) }
            p { strong { "First action: " } (f.action) }
            @if !rows.is_empty() {
                p { "See troubleshooting " @for (k, n) in rows.iter().enumerate() { @if k > 0 { ", " } a href={ "#troubleshooting-" (n) } { "[" (n) "]" } } "." }
            }
        }
    }
}

/// The troubleshooting table's entries that explain some of the findings, each once.
fn troubleshooting(r: &Report) -> Markup {
    html! {
        @if !r.troubleshooting.is_empty() {
            h3 id="troubleshooting" { "Troubleshooting" }
            @for (n, row) in r.troubleshooting.iter().enumerate() {
                div class="finding" id={ "troubleshooting-" (n + 1) } {
                    p { "[" (n + 1) "] " strong { (row.symptom) } " — explains " @for (k, code) in row.codes.iter().enumerate() { @if k > 0 { ", " } code { (code) } } }
                    p { strong { "Most likely cause: " } (row.cause) }
                    p { strong { "First action: " } (row.action) }
                }
            }
        }
    }
}

pub(super) fn findings(r: &Report) -> Markup {
    html! {
        h2 id="findings" { "Findings" }
        @if r.findings.is_empty() {
            p { "Nothing to report: no loss, retransmission, congestion, pause or marking problem was found." }
        }
        @for (i, f) in r.findings.iter().enumerate() { (finding(r, i, f)) }
        (troubleshooting(r))
        @if !r.findings.is_empty() { (legend(r)) }
    }
}

/// What each code among the findings means, and where docs/ defines it, in the order of the
/// table of findings.
fn legend(r: &Report) -> Markup {
    let present = finding::ALL.iter().filter(|k| r.findings.iter().any(|f| f.code == k.code));
    html! {
        details.legend {
            summary { "What the codes mean" }
            table {
                thead { tr { th.l { "code" } th.l { "severity" } th.l { "what it is" } th.l { "defined in" } } }
                tbody {
                    @for k in present {
                        tr { td.l { code { (k.code) } } td.l { (k.severity.name()) } td.l { (k.title) } td.l { "docs/" (k.doc) } }
                    }
                }
            }
        }
    }
}
