//! The congestion-control section of the HTML page: the senders' reactions to CNP bursts,
//! message completion times by size and their distribution, and each receiver's fan-in over
//! time with its incast periods shaded; and, in a flow's details, its rate around the CNPs
//! addressed to it, the windows before and after each burst shaded.

use maud::{Markup, html};

use super::charts::{self, PALETTE, Series, Shading};
use super::figure::{figure, per_second};
use crate::analyze::report::Report;
use crate::analyze::roce::report::FlowReport;
use crate::analyze::roce::report::chart_data::ChartData;
use crate::analyze::roce::report::congestion::FctSummary;
use crate::analyze::trace::FlowTrace;

/// Flows in the reactions table, receivers charted and bursts shaded per flow, at most.
const FLOWS_LISTED: usize = 20;
const RECEIVERS_CHARTED: usize = 8;
const BURSTS_SHADED: usize = 32;

fn us(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.1}"))
}

fn ms(ns: i64, t0: i64) -> f64 {
    (ns - t0) as f64 / 1e6
}

pub fn section(r: &Report, a: &ChartData, t0: i64) -> Markup {
    let c = &r.roce.congestion;
    let fan_in = c.incast.receivers.iter().any(|x| x.max_fan_in >= 2);
    if c.cnp_bursts.is_empty() && c.completion.all.messages == 0 && !fan_in {
        return html! {};
    }
    html! {
        h2 id="congestion-control" { "Congestion control" }
        (reactions(r))
        (completion(r, a))
        (incast(r, a, t0))
    }
}

fn reactions(r: &Report) -> Markup {
    let flows: Vec<&FlowReport> =
        r.roce.flows.iter().filter(|f| f.congestion.cnp_bursts > 0).take(FLOWS_LISTED).collect();
    if flows.is_empty() {
        return html! {};
    }
    html! {
        h3 { "Reactions to CNP bursts" }
        table {
            tr { th.l { "data flow" } th { "bursts" } th { "measured" } th { "ratio p50" } th { "reacted" } th { "recovered" } th { "not recovered" } th { "recovery p50 µs" } th { "recovery max µs" } }
            @for f in flows {
                @let c = &f.congestion;
                tr {
                    td.l { a href={ "#flow-" (f.id) } { (f.label()) } }
                    td { (c.cnp_bursts) } td { (c.reactions_measured) }
                    td { (c.reaction_ratio_p50.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))) }
                    td { (c.reacted) } td { (c.recovered) } td { (c.not_recovered) }
                    td { (us(c.recovery_us_p50)) } td { (us(c.recovery_us_max)) }
                }
            }
        }
    }
}

fn completion(r: &Report, a: &ChartData) -> Markup {
    let completion = &r.roce.congestion.completion;
    if completion.all.messages == 0 {
        return html! {};
    }
    let row = |label: &str, s: &FctSummary| {
        html! { tr { td.l { (label) } td { (s.messages) } td { (us(s.p50_us)) } td { (us(s.p99_us)) } td { (us(s.max_us)) } } }
    };
    html! {
        h3 { "Message completion times (RC)" }
        div.grid {
            table {
                tr { th.l { "size" } th { "messages" } th { "p50 µs" } th { "p99 µs" } th { "max µs" } }
                @for class in completion.by_size.iter().filter(|c| c.fct.messages > 0) {
                    (row(class.label, &class.fct))
                }
                (row("≤ 64 KiB (judged)", &completion.small))
                (row("all", &completion.all))
            }
            (figure("chart-fct", "Completion times", charts::bars("µs, at most", "messages", &distribution(a)), "no completed messages"))
        }
    }
}

/// The completion times in bars of one power of two each, labelled by their upper bound.
fn distribution(a: &ChartData) -> Vec<(String, f64)> {
    let mut bars: Vec<(u64, f64)> = Vec::new();
    for (low, width, n) in a.completion_times().buckets() {
        let bound = (low + width).next_power_of_two();
        match bars.last_mut() {
            Some((b, count)) if *b == bound => *count += f64::from(n),
            _ => bars.push((bound, f64::from(n))),
        }
    }
    let label = |us: f64| if us >= 10.0 { format!("{us:.0}") } else { charts::tick(&us) };
    bars.into_iter().map(|(bound, n)| (label(bound as f64 / 1e3), n)).collect()
}

fn incast(r: &Report, a: &ChartData, t0: i64) -> Markup {
    let incast = &r.roce.congestion.incast;
    let mut receivers: Vec<_> = incast.receivers.iter().filter(|x| x.max_fan_in >= 2).collect();
    receivers.sort_by_key(|x| std::cmp::Reverse(x.max_fan_in));
    receivers.truncate(RECEIVERS_CHARTED);
    if receivers.is_empty() {
        return html! {};
    }
    html! {
        h3 { "Fan-in (senders to a receiver in the last " (r.roce.config.incast_window_ns as f64 / 1e3) " µs; incast at " (r.roce.config.incast_senders) " or more)" }
        div.grid {
            @for x in receivers {
                @let periods: Vec<(f64, f64)> = incast.periods.iter().filter(|p| p.receiver == x.receiver)
                    .map(|p| (ms(p.start_ns, t0), ms(p.end_ns, t0))).collect();
                @let points: Vec<(f64, f64)> = a.fan_in(x.receiver)
                    .map(|t| t.series(0).into_iter().map(|(ts, v)| (ms(ts, t0), v as f64)).collect()).unwrap_or_default();
                @let shading = [Shading { name: "incast", colour: PALETTE[1], spans: &periods }];
                @let chart = charts::lines_with("ms since the capture's start", "senders", &[Series { name: "fan-in".into(), points }], &shading, &[]);
                (figure(&format!("chart-fan-in-{}", x.receiver), &format!("Fan-in of {}", x.receiver), chart, "not charted (beyond the first receivers)"))
            }
        }
    }
}

/// A flow's rate over time with the windows before (blue) and after (orange) each CNP burst
/// shaded and the bursts' first and last CNPs marked.
pub fn reaction_chart(r: &Report, trace: &FlowTrace, f: &FlowReport, t0: i64) -> Option<String> {
    let (w, d) = (r.roce.config.cc_window_ns, r.roce.config.cc_delay_ns);
    let bursts: Vec<_> = r.roce.congestion.cnp_bursts.iter().filter(|b| b.flow == f.id).take(BURSTS_SHADED).collect();
    let before: Vec<(f64, f64)> = bursts.iter().map(|b| (ms(b.start_ns - w, t0), ms(b.start_ns, t0))).collect();
    let after: Vec<(f64, f64)> = bursts.iter().map(|b| (ms(b.start_ns + d, t0), ms(b.start_ns + d + w, t0))).collect();
    let marks: Vec<f64> = bursts.iter().flat_map(|b| [ms(b.start_ns, t0), ms(b.end_ns, t0)]).collect();
    let shadings = [
        Shading { name: "before", colour: PALETTE[0], spans: &before },
        Shading { name: "after", colour: PALETTE[1], spans: &after },
    ];
    let rate = Series { name: "Gb/s".into(), points: per_second(&trace.bytes, 0, t0, 8e-9) };
    charts::lines_with("ms since the capture's start (CNP bursts marked)", "Gb/s", &[rate], &shadings, &marks)
}
