//! `analyze --html FILE` (and `DIR/index.html` with `--out DIR`): one self-contained page —
//! inline CSS and SVG, no script, font or request of any kind — with the capture's facts, the
//! findings, the path over several taps ([`path`]), the counters ([`counters`]), the fabric's
//! configuration ([`qos`]), UET
//! ([`uet`]), the flows most troubled first ([`flows`]), fabric charts ([`fabric`]), congestion
//! control ([`congestion`]), and a detail section per flow with its PSN graph, throughput, ACK
//! latency and its rate around CNPs. It prints as it shows.

mod capture;
pub mod charts;
mod congestion;
mod counters;
mod fabric;
mod figure;
mod findings;
mod flows;
mod path;
mod qos;
mod uet;

use maud::{DOCTYPE, PreEscaped, html};

use crate::analyze::report::Report;
use crate::analyze::roce::report::FlowReport;

/// Flows given a detail section (the most troubled ones); the table lists every flow.
pub const DETAILED_FLOWS: usize = 64;

const STYLE: &str = r#"
:root { --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --error: #b3261e; --warning: #9a6700; --info: #0b5cad; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); margin: 0 auto; max-width: 1180px; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 10px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.muted { color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.finding { border-left: 5px solid var(--line); padding: 6px 12px; margin: 10px 0; background: #f7f8fa; break-inside: avoid; }
.finding.error { border-color: var(--error); } .finding.warning { border-color: var(--warning); } .finding.info { border-color: var(--info); }
.sev { font-weight: 700; text-transform: uppercase; font-size: 12px; margin-right: 8px; }
.error .sev { color: var(--error); } .warning .sev { color: var(--warning); } .info .sev { color: var(--info); }
.finding p { margin: 3px 0; } .finding code { font-size: 12px; }
.legend { margin: 10px 0; } .legend summary { cursor: pointer; color: var(--muted); } .legend td, .legend th { font-size: 13px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: #eef1f5; position: sticky; top: 0; } td.l, th.l { text-align: left; }
.wide { overflow-x: auto; } table.pdcs th { white-space: normal; vertical-align: bottom; }
tr.trouble td:first-child { box-shadow: inset 4px 0 var(--warning); }
figure.chart { margin: 10px 0; break-inside: avoid; } figure.chart svg { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { font-weight: 600; margin-bottom: 4px; } p.nothing { color: var(--muted); margin: 4px 0 12px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 8px 20px; }
section.flow { break-before: auto; border-top: 1px solid var(--line); margin-top: 18px; }
@media print { body { max-width: none; padding: 0; } th { position: static; } .wide { overflow: visible; } a { color: inherit; text-decoration: none; } }
"#;

/// The page.
pub fn render(report: &Report) -> String {
    let charts = &report.roce.charts;
    let t0 = report.roce.capture.first_ts_ns.unwrap_or(0);
    let flows = report.roce.flows_by_trouble();
    let detailed: Vec<&FlowReport> =
        flows.iter().copied().filter(|f| charts.trace(f.id).is_some()).take(DETAILED_FLOWS).collect();
    let title = format!("rocescope: {}", files(report));
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    h1 { (heading(report)) }
                    p.muted { (files(report)) " · rocescope " (report.tool.version) " · report schema " (report.schema_version) }
                    (capture::facts(report))
                }
                (findings::findings(report))
                @if let Some(path) = &report.path {
                    (path::section(path))
                }
                (counters::section(&report.counters))
                (qos::section(report.fabric.as_ref()))
                (uet::section(report.uet.as_ref(), charts, t0))
                (flows::flow_table(report, &flows, &detailed))
                (fabric::fabric(report, charts, t0))
                (congestion::section(report, charts, t0))
                @if !detailed.is_empty() {
                    h2 id="flow-details" { "Flow details" }
                    @if flows.len() > detailed.len() {
                        p.muted { "The " (detailed.len()) " most troubled flows that have charts; the table above lists all " (flows.len()) "." }
                    }
                    @for f in &detailed {
                        (flows::flow_detail(report, charts, f, t0))
                    }
                }
            }
        }
    }
    .into_string()
}

/// The page's heading, by what the capture holds: RoCE (or native InfiniBand) packets, UET
/// packets or both (a capture with neither is a RoCE capture that has none).
fn heading(report: &Report) -> &'static str {
    let t = &report.roce.totals;
    let uet = report.uet.as_ref().is_some_and(|u| u.packets > 0);
    match (t.roce_packets + t.infiniband > 0, uet) {
        (true, true) => "RoCE and UET capture report",
        (false, true) => "UET capture report",
        (_, false) => "RoCE capture report",
    }
}

fn files(report: &Report) -> String {
    report.roce.inputs.iter().map(|i| i.file.as_str()).collect::<Vec<_>>().join(", ")
}

pub(super) fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

pub(super) fn us(ns: Option<u64>) -> String {
    ns.map_or_else(|| "–".into(), |v| format!("{:.1}", v as f64 / 1e3))
}

pub(super) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 { "–".into() } else { format!("{:.1} %", part as f64 * 100.0 / whole as f64) }
}
