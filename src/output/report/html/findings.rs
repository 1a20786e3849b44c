//! The page's findings, each with its flows, first frames, likely cause and first action, and
//! a legend of the codes present.

use maud::{Markup, html};

use crate::analyze::finding::{self, Finding};
use crate::analyze::id::{FlowId, FrameNumber};
use crate::analyze::report::Report;

pub(super) fn flow_link(report: &Report, id: FlowId) -> Markup {
    let label = report.roce.flows.get(id.index()).map_or_else(|| format!("flow {id}"), |f| f.label());
    html! { a href={ "#flow-" (id) } { (label) } }
}

fn finding(report: &Report, f: &Finding) -> Markup {
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
        }
    }
}

pub(super) fn findings(r: &Report) -> Markup {
    html! {
        h2 id="findings" { "Findings" }
        @if r.findings.is_empty() {
            p { "Nothing to report: no loss, retransmission, congestion, pause or marking problem was found." }
        }
        @for f in &r.findings { (finding(r, f)) }
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
