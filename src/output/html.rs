//! `analyze --html FILE` (and `DIR/index.html` with `--out DIR`): one self-contained page —
//! inline CSS and SVG, no script, font or request of any kind — with the capture's facts, the
//! findings, the path over several taps ([`super::html_path`]), the flows most troubled
//! first, fabric charts, congestion control ([`super::html_congestion`]), and a detail
//! section per flow with its PSN graph, throughput, ACK latency and its rate around CNPs. It
//! prints as it shows.

use crate::decode::Endpoint;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::charts::{self, PsnGraph, Series};
use super::html_figure::{figure, per_second};
use crate::analyze::flow::trace::FlowTrace;
use crate::analyze::histogram::LogHistogram;
use crate::analyze::report::chart_data::ChartData;
use crate::analyze::report::finding::{self, Finding};
use crate::analyze::report::{FlowReport, Report};
use crate::analyze::wide::pfc::PAUSE_CHANNEL;
use crate::analyze::{CE_MARKS, CNPS};
use rocescope_parsers::psn::psn_forward_distance;

/// Flows given a detail section (the most troubled ones); the table lists every flow.
pub const DETAILED_FLOWS: usize = 64;
/// Hosts in the top-talkers chart.
const TOP_TALKERS: usize = 10;

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
tr.trouble td:first-child { box-shadow: inset 4px 0 var(--warning); }
figure.chart { margin: 10px 0; break-inside: avoid; } figure.chart svg { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { font-weight: 600; margin-bottom: 4px; } p.nothing { color: var(--muted); margin: 4px 0 12px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 8px 20px; }
section.flow { break-before: auto; border-top: 1px solid var(--line); margin-top: 18px; }
@media print { body { max-width: none; padding: 0; } th { position: static; } a { color: inherit; text-decoration: none; } }
"#;

/// The page.
pub fn render(report: &Report) -> String {
    let charts = &report.charts;
    let t0 = report.capture.first_ts_ns.unwrap_or(0);
    let flows = report.flows_by_trouble();
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
                    h1 { "RoCE capture report" }
                    p.muted { (files(report)) " · rocescope " (report.tool.version) " · report schema " (report.schema_version) }
                    (facts(report))
                }
                (findings(report))
                @if let Some(path) = &report.path {
                    (super::html_path::section(path))
                }
                (super::html_counters::section(&report.counters))
                (super::html_uet::section(report.uet.as_ref(), charts, t0))
                (flow_table(report, &flows, &detailed))
                (fabric(report, charts, t0))
                (super::html_congestion::section(report, charts, t0))
                @if !detailed.is_empty() {
                    h2 id="flow-details" { "Flow details" }
                    @if flows.len() > detailed.len() {
                        p.muted { "The " (detailed.len()) " most troubled flows that have charts; the table above lists all " (flows.len()) "." }
                    }
                    @for f in &detailed {
                        (flow_detail(report, charts, f, t0))
                    }
                }
            }
        }
    }
    .into_string()
}

fn files(report: &Report) -> String {
    report.inputs.iter().map(|i| i.file.as_str()).collect::<Vec<_>>().join(", ")
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn us(ns: Option<u64>) -> String {
    ns.map_or_else(|| "–".into(), |v| format!("{:.1}", v as f64 / 1e3))
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 { "–".into() } else { format!("{:.1} %", part as f64 * 100.0 / whole as f64) }
}

fn facts(r: &Report) -> Markup {
    let t = &r.totals;
    let damaged: Vec<String> = r
        .inputs
        .iter()
        .filter_map(|i| {
            i.damage.as_ref().map(|d| format!("{} at byte {}: {}", i.file, d.offset.unwrap_or(0), d.message))
        })
        .collect();
    let encaps: Vec<String> = r.capture.encapsulations.iter().map(|(k, v)| format!("{k} {v}")).collect();
    html! {
        dl.facts {
            dt { "Duration" } dd { (ms(r.capture.duration_ns)) }
            dt { "Frames" } dd { (t.frames) " frames, " (t.bytes) " bytes" }
            dt { "RoCE" } dd { (t.roce_packets) " packets (" (percent(t.roce_packets, t.frames)) "): v2 " (t.roce_v2) ", v1 " (t.roce_v1) ", native InfiniBand " (t.infiniband) "; " (r.flows.len()) " flows" }
            dt { "Other frames" } dd { "PFC " (t.pfc_frames) ", PAUSE " (t.pause_frames) ", other " (t.non_roce.saturating_sub(t.pfc_frames + t.pause_frames)) ", malformed " (t.malformed) @if t.headers_cut > 0 { ", cut inside their headers " (t.headers_cut) } }
            dt { "ICRC" } dd { (r.icrc.ok) " ok, " strong { (r.icrc.bad) " bad" } ", " (r.icrc.unverifiable) " unverifiable" }
            dt { "ECN" } dd { (r.ecn.ce) " CE-marked of " (t.roce_v2) " RoCEv2 packets" @if r.ecn.outer_ce > 0 { " (and " (r.ecn.outer_ce) " in a VXLAN overlay's outer header only)" } "; " (r.cnps) " CNPs" }
            @if t.infiniband + t.infiniband_link > 0 {
                dt { "InfiniBand" } dd {
                    (t.infiniband) " packets, " (t.infiniband_link) " link packets; VCRC " (r.infiniband.vcrc_ok) " ok, "
                    strong { (r.infiniband.vcrc_bad) " bad" } ", " (r.infiniband.vcrc_unverifiable) " unverifiable; FECN "
                    (r.infiniband.fecn) ", BECN " (r.infiniband.becn) "; ERF records lost " (r.infiniband.erf_records_lost)
                }
            }
            dt { "Capture quality" } dd {
                (r.capture.snaplen_cut) " frames cut by the snap length, " (r.capture.mirror_truncated) " truncated by a mirror, "
                (r.capture.truncated_copies) " mirror copies cut with no mark, "
                (t.mirror_duplicates) " mirror duplicates, " (r.capture.non_monotonic_timestamps) " timestamps going backwards"
                @if r.limits.untracked_packets > 0 { ", " (r.limits.untracked_packets) " packets beyond the flow limit" }
            }
            dt { "Encapsulations" } dd { @if encaps.is_empty() { "none" } @else { (encaps.join(", ")) } }
            @if !damaged.is_empty() {
                dt { "Damage" } dd { strong { (damaged.join("; ")) } " — analysed up to the damage" }
            }
        }
    }
}

fn flow_link(report: &Report, id: u32) -> Markup {
    let label = report.flows.get(id as usize).map_or_else(|| format!("flow {id}"), |f| f.label());
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
                p { "First frames: " (f.evidence.frames.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")) }
            }
            p { strong { "Likely cause: " } (f.cause) }
            p { strong { "First action: " } (f.action) }
        }
    }
}

fn findings(r: &Report) -> Markup {
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

fn flow_table(r: &Report, flows: &[&FlowReport], detailed: &[&FlowReport]) -> Markup {
    html! {
        h2 id="flows" { "Flows" }
        p.muted { "Most troubled first: bad ICRCs, then NAKs, then loss and retransmissions, then marking and congestion. Late arrivals are reordered packets, not loss." }
        table id="flow-table" {
            thead { tr {
                th { "id" } th.l { "flow" } th { "type" } th { "packets" } th { "Gb/s" } th { "missing" } th { "resent" }
                th { "episodes" } th { "late" } th { "NAK" } th { "RNR" } th { "CE" } th { "CNP" } th { "bad ICRC" } th { "ACK p50 µs" } th.l { "peer" }
            } }
            tbody {
                @for f in flows {
                    tr class=[(f.trouble() > 0).then_some("trouble")] {
                        td { (f.id) }
                        td.l { @if detailed.iter().any(|d| d.id == f.id) { (flow_link(r, f.id)) } @else { (f.label()) } }
                        td { (f.transport) } td { (f.counts.packets) } td { (format!("{:.2}", f.throughput_bps as f64 / 1e9)) }
                        td { (f.sequence.missing_psns) } td { (f.sequence.retransmitted) } td { (f.sequence.retransmit_episodes) }
                        td { (f.sequence.late_arrivals) } td { (f.counts.naks_psn_seq_err + f.counts.naks_other) } td { (f.counts.rnr_naks) } td { (f.ce) } td { (f.counts.cnps) }
                        td { (f.counts.icrc_bad) } td { (us(f.ack_latency_ns.p50)) }
                        td.l { @match f.peer { Some(p) => { (p) " (" (f.pairing.unwrap_or("")) ")" }, None => "–" } }
                    }
                }
            }
        }
    }
}

fn fabric(r: &Report, a: &ChartData, t0: i64) -> Markup {
    let congestion = charts::lines(
        "ms since the capture's start",
        "per second",
        &[
            Series { name: "CE marks/s".into(), points: per_second(a.timeline(), CE_MARKS, t0, 1.0) },
            Series { name: "CNPs/s".into(), points: per_second(a.timeline(), CNPS, t0, 1.0) },
        ],
        &[],
    );
    let paused = a.paused();
    let channels: Vec<usize> = (0..=PAUSE_CHANNEL).filter(|c| paused.series(*c).iter().any(|(_, v)| *v > 0)).collect();
    let pause_series: Vec<Series> = channels
        .iter()
        .map(|&c| Series {
            name: if c == PAUSE_CHANNEL { "802.3x PAUSE".into() } else { format!("priority {c}") },
            points: per_second(paused, c, t0, 100.0 / 1e9),
        })
        .collect();
    let storms: Vec<(f64, f64)> =
        a.storms().iter().map(|&(_, s, e)| ((s - t0) as f64 / 1e6, (e - t0) as f64 / 1e6)).collect();
    let pause =
        charts::lines("ms since the capture's start (storms shaded)", "% of time paused", &pause_series, &storms);
    let dscp: Vec<(String, f64)> = r.dscp.iter().map(|(d, n)| (d.to_string(), *n as f64)).collect();
    let e = &r.ecn;
    let ecn = [("Not-ECT", e.not_ect), ("ECT(0)", e.ect0), ("ECT(1)", e.ect1), ("CE", e.ce)]
        .map(|(k, v)| (k.to_string(), v as f64))
        .to_vec();
    html! {
        h2 id="fabric" { "Fabric" }
        div.grid {
            (figure("chart-congestion", "CE marks and CNPs over time", congestion, "no CE marks or CNPs"))
            (figure("chart-pfc", "PFC pause per priority over time", pause, "no PFC or PAUSE frames pausing"))
            (figure("chart-dscp", "DSCP of RoCEv2 packets", charts::bars("DSCP", "packets", &dscp), "no RoCEv2 packets"))
            (figure("chart-ecn", "ECN of RoCEv2 packets", charts::bars("ECN", "packets", &ecn), "no RoCEv2 packets"))
            (figure("chart-talkers", "Top talkers (RoCE bytes sent)", charts::bars("source", "bytes", &top_talkers(r)), "no RoCE packets"))
            (figure("chart-throughput", "RoCE throughput over time", charts::lines(
                "ms since the capture's start", "Gb/s",
                &[Series { name: "RoCE".into(), points: per_second(a.timeline(), crate::analyze::ROCE_BYTES, t0, 8e-9) }], &[]), "no RoCE packets"))
        }
    }
}

fn top_talkers(r: &Report) -> Vec<(String, f64)> {
    let mut by_host: Vec<(Endpoint, u64)> = Vec::new();
    for f in &r.flows {
        match by_host.iter_mut().find(|(h, _)| *h == f.src_ip) {
            Some((_, b)) => *b += f.counts.bytes,
            None => by_host.push((f.src_ip, f.counts.bytes)),
        }
    }
    by_host.sort_by_key(|(h, b)| (std::cmp::Reverse(*b), *h));
    by_host.into_iter().take(TOP_TALKERS).map(|(h, b)| (h.to_string(), b as f64)).collect()
}

fn psn_graph(a: &ChartData, f: &FlowReport, trace: &FlowTrace, t0: i64) -> PsnGraph {
    let first = f.sequence.first_psn.unwrap_or(0);
    let at = |ts: i64, psn: u32| ((ts - t0) as f64 / 1e6, f64::from(psn_forward_distance(psn, first)));
    // NAKs travel on the peer flow and name this flow's PSNs
    let peer_trace = f.peer.and_then(|p| a.trace(p));
    PsnGraph {
        sent: trace.sent.iter().map(|p| at(p.ts_ns, p.psn)).collect(),
        resent: trace.resent.iter().map(|p| at(p.ts_ns, p.psn)).collect(),
        gaps: trace.gaps.iter().map(|e| at(e.ts_ns, e.psn)).collect(),
        naks: peer_trace.map(|p| p.naks.iter().map(|e| at(e.ts_ns, e.psn)).collect()).unwrap_or_default(),
    }
}

fn latency_bars(h: &LogHistogram) -> Vec<(String, f64)> {
    h.buckets()
        .into_iter()
        .map(|(low, width, n)| (format!("{:.1}", (low + width / 2) as f64 / 1e3), f64::from(n)))
        .collect()
}

fn flow_detail(r: &Report, a: &ChartData, f: &FlowReport, t0: i64) -> Markup {
    let (Some(trace), Some(ack_latency)) = (a.trace(f.id), a.ack_latency(f.id)) else { return html! {} };
    let id = f.id;
    let throughput = charts::lines(
        "ms since the capture's start",
        "Gb/s",
        &[Series { name: "bytes".into(), points: per_second(&trace.bytes, 0, t0, 8e-9) }],
        &[],
    );
    html! {
        section.flow id={ "flow-" (id) } {
            h3 { "Flow " (id) ": " (f.label()) }
            p.muted {
                (f.transport) ", " (f.counts.packets) " packets, " (f.sequence.missing_psns) " PSNs missing, " (f.sequence.retransmitted) " resent in "
                (f.sequence.retransmit_episodes) " episodes, " (f.sequence.late_arrivals) " late arrivals, " (f.counts.naks_psn_seq_err + f.counts.naks_other) " NAKs and " (f.counts.rnr_naks) " RNR NAKs carried, "
                (f.ce) " CE marks, " (f.counts.cnps) " CNPs"
                @if let Some(p) = f.peer { "; peer " a href={ "#flow-" (p) } { "flow " (p) } }
            }
            div.grid {
                @if f.sequence.sequenced > 0 {
                    (figure(&format!("chart-psn-{id}"), "Sequence: PSN over time", charts::psn_graph(&psn_graph(a, f, trace, t0)), "no sequenced packets"))
                }
                (figure(&format!("chart-throughput-{id}"), "Throughput over time", throughput, "no bytes"))
                @if ack_latency.count() > 0 {
                    (figure(&format!("chart-ack-{id}"), "ACK latency (µs, from the tap)", charts::bars("µs", "ACKed requests", &latency_bars(ack_latency)), "no ACKed requests"))
                }
                @if f.congestion.cnp_bursts > 0 {
                    (figure(&format!("chart-reaction-{id}"), "Rate around the CNPs addressed to it", super::html_congestion::reaction_chart(r, trace, f, t0), "no data"))
                }
            }
        }
    }
}
