//! The page's flows: the table of every flow, most troubled first, and a detail section per
//! detailed flow with its charts.

use maud::{Markup, html};

use super::charts::{self, PsnGraph, Series};
use super::figure::{figure, per_second};
use super::findings::flow_link;
use super::us;
use crate::analyze::histogram::LogHistogram;
use crate::analyze::identity::owners::Owner;
use crate::analyze::report::Report;
use crate::analyze::roce::report::FlowReport;
use crate::analyze::roce::report::chart_data::ChartData;
use crate::analyze::trace::FlowTrace;
use rocescope_parsers::psn::psn_forward_distance;

pub(super) fn flow_table(r: &Report, flows: &[&FlowReport], detailed: &[&FlowReport]) -> Markup {
    let owned = r.roce.flows.iter().any(|f| f.owner.is_some() || f.dst_owner.is_some());
    let owner = |o: &Option<Owner>| o.as_ref().map_or("–".to_string(), Owner::label);
    html! {
        h2 id="flows" { "Flows" }
        p.muted { "Most troubled first: bad ICRCs, then NAKs, then loss and retransmissions, then marking and congestion. Late arrivals are reordered packets, not loss." }
        table id="flow-table" {
            thead { tr {
                th { "id" } th.l { "flow" } th { "type" } th { "packets" } th { "Gb/s" } th { "missing" } th { "resent" }
                th { "episodes" } th { "late" } th { "NAK" } th { "RNR" } th { "CE" } th { "CNP" } th { "bad ICRC" } th { "ACK p50 µs" } th.l { "peer" }
                @if owned { th.l { "owner" } th.l { "dst owner" } }
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
                        @if owned { td.l { (owner(&f.owner)) } td.l { (owner(&f.dst_owner)) } }
                    }
                }
            }
        }
    }
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

pub(super) fn flow_detail(r: &Report, a: &ChartData, f: &FlowReport, t0: i64) -> Markup {
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
                    (figure(&format!("chart-reaction-{id}"), "Rate around the CNPs addressed to it", super::congestion::reaction_chart(r, trace, f, t0), "no data"))
                }
            }
        }
    }
}
