//! The path section of the HTML page (`analyze --tap`): the taps as boxes in path order, each
//! hop as an arrow (forward above, reverse below) coloured by what happened on it — red where
//! packets were lost, amber where they were CE-marked or re-marked, grey otherwise — with its
//! figures; the taps' clocks; the hops' table; and each hop's delay distribution.

use maud::{Markup, PreEscaped, html};

use super::charts;
use super::figure::figure;
use crate::analyze::path::report::{DelayBins, Direction, HopReport, PathReport};

const BOX_WIDTH: usize = 120;
const GAP: usize = 200;
const BOX_TOP: usize = 60;
const BOX_HEIGHT: usize = 40;

pub fn section(path: &PathReport) -> Markup {
    html! {
        h2 id="path" { "Path" }
        (PreEscaped(drawing(path)))
        h3 { "Clocks" }
        table {
            tr { th.l { "tap" } th { "clock offset ms" } th { "± µs" } th.l { "method" } th { "drift ppm" } th { "frames" } th { "RoCE" } th { "missed" } }
            @for t in &path.taps {
                tr {
                    td.l { (t.name) }
                    td { (format!("{:.6}", t.clock_offset_ns as f64 / 1e6)) }
                    td { (t.offset_uncertainty_ns.map_or_else(|| "–".to_string(), |u| format!("{:.1}", u as f64 / 1e3))) }
                    td.l { (serde_name(&t.offset_method)) }
                    td { (format!("{:.3}", t.drift_ppm)) }
                    td { (t.frames) } td { (t.roce_packets) } td { (t.missed) }
                }
            }
        }
        h3 { "Hops" }
        table {
            tr { th.l { "hop" } th { "matched" } th { "lost" } th { "CE added" } th.l { "re-marked" } th { "TTL −" } th { "reordered" } th { "p50 µs" } th { "p99 µs" } th { "max µs" } th { "± µs" } }
            @for h in &path.hops {
                tr {
                    td.l { (hop_name(h)) }
                    td { (h.matched) } td { (h.lost) } td { (h.ce_added) }
                    td.l { (remarked(h)) }
                    td { (h.ttl_decrement.map_or_else(|| "–".to_string(), |d| d.to_string())) }
                    td { (h.reordered) }
                    td { (us(h.delay_p50_ns)) } td { (us(h.delay_p99_ns)) } td { (us(h.delay_max_ns)) }
                    td { (us(h.delay_uncertainty_ns.map(|u| u as i64))) }
                }
            }
        }
        div.grid {
            @for (i, h) in path.hops.iter().enumerate() {
                (figure(&format!("hop-delay-{i}"), &format!("One-way delay, {}", hop_name(h)), h.delay_bins.as_ref().and_then(delay_bars), "the hop's delays are not measured (a tap's clock is only bounded), or no packet crossed it"))
            }
        }
    }
}

fn us(ns: Option<i64>) -> String {
    ns.map_or_else(|| "–".to_string(), |v| format!("{:.1}", v as f64 / 1e3))
}

fn serde_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn hop_name(h: &HopReport) -> String {
    format!("{} → {} ({})", h.from, h.to, serde_name(&h.direction))
}

fn remarked(h: &HopReport) -> String {
    let dscp = h.dscp_rewritten.iter().map(|(c, n)| format!("DSCP {c} ×{n}"));
    let pcp = h.pcp_rewritten.iter().map(|(c, n)| format!("PCP {c} ×{n}"));
    let all: Vec<String> = dscp.chain(pcp).collect();
    if all.is_empty() { "–".to_string() } else { all.join(", ") }
}

fn delay_bars(bins: &DelayBins) -> Option<String> {
    let bars: Vec<(String, f64)> = bins
        .counts
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let middle = bins.first_ns + bins.width_ns * i as i64 + bins.width_ns / 2;
            (format!("{:.2}", middle as f64 / 1e3), n as f64)
        })
        .collect();
    charts::bars("delay µs", "packets", &bars)
}

/// The colour of a hop's arrow: what happened on it.
fn colour(h: &HopReport) -> &'static str {
    if h.lost > 0 {
        "#b3261e"
    } else if h.ce_added > 0 || !h.dscp_rewritten.is_empty() || !h.pcp_rewritten.is_empty() {
        "#9a6700"
    } else {
        "#5b6475"
    }
}

/// The taps as boxes and the hops as arrows, as one SVG.
fn drawing(path: &PathReport) -> String {
    let taps = path.taps.len();
    let width = taps * BOX_WIDTH + taps.saturating_sub(1) * GAP + 20;
    let height = BOX_TOP * 2 + BOX_HEIGHT;
    let left = |i: usize| 10 + i * (BOX_WIDTH + GAP);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" style="max-width:100%;height:auto" font-family="sans-serif" font-size="12"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>"#
    );
    for (i, t) in path.taps.iter().enumerate() {
        let x = left(i);
        svg.push_str(&format!(
            r##"<rect x="{x}" y="{BOX_TOP}" width="{BOX_WIDTH}" height="{BOX_HEIGHT}" rx="6" fill="#eef1f5" stroke="#1d2330"/><text x="{}" y="{}" text-anchor="middle" font-weight="600">{}</text>"##,
            x + BOX_WIDTH / 2,
            BOX_TOP + 25,
            escape(&t.name)
        ));
    }
    let index = |name: &str| path.taps.iter().position(|t| t.name == name);
    for h in &path.hops {
        let (Some(from), Some(to)) = (index(&h.from), index(&h.to)) else { continue };
        let (a, b) = (from.min(to), from.max(to));
        let (x1, x2) = (left(a) + BOX_WIDTH + 4, left(b) - 4);
        let forward = h.direction == Direction::Forward;
        let y = if forward { BOX_TOP - 12 } else { BOX_TOP + BOX_HEIGHT + 12 };
        let text_y = if forward { y - 8 } else { y + 18 };
        let (start, end) = if from < to { (x1, x2) } else { (x2, x1) };
        let label = format!(
            "{} lost · {} CE · p99 {} µs",
            h.lost,
            h.ce_added,
            h.delay_p99_ns.map_or_else(|| "–".to_string(), |d| format!("{:.1}", d as f64 / 1e3))
        );
        svg.push_str(&format!(
            r#"<line x1="{start}" y1="{y}" x2="{end}" y2="{y}" stroke="{c}" stroke-width="3" marker-end="url(#arrow)"/><text x="{}" y="{text_y}" text-anchor="middle" fill="{c}">{}</text>"#,
            (x1 + x2) / 2,
            escape(&label),
            c = colour(h)
        ));
    }
    svg.push_str("</svg>");
    svg
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
