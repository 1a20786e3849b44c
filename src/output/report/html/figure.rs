//! What the HTML page's sections share: a chart in a figure with its caption (or the line that
//! says there was nothing to draw), and a timeline channel as a rate for a line chart.

use maud::{Markup, PreEscaped, html};

use crate::analyze::timeline::Timeline;

/// A chart with its caption; where there was nothing to draw, one line that says so.
pub fn figure(id: &str, caption: &str, svg: Option<String>, nothing: &str) -> Markup {
    html! {
        figure.chart id=(id) {
            figcaption { (caption) }
            @match svg {
                Some(svg) => (PreEscaped(svg)),
                None => p.nothing { "Nothing to draw: " (nothing) "." },
            }
        }
    }
}

/// Points per line chart: a timeline's bins are summed in groups to at most this many.
const CHART_POINTS: usize = 64;

/// A timeline channel as (ms since `t0`, rate per second over each group of bins).
pub fn per_second(t: &Timeline, channel: usize, t0: i64, scale: f64) -> Vec<(f64, f64)> {
    let series = t.series(channel);
    let group = series.len().div_ceil(CHART_POINTS).max(1);
    let seconds = (t.width_ns() as f64 / 1e9) * group as f64;
    series
        .chunks(group)
        .map(|c| {
            let sum: u64 = c.iter().map(|(_, v)| v).sum();
            ((c[0].0 - t0) as f64 / 1e6, sum as f64 * scale / seconds)
        })
        .collect()
}
