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

/// A timeline channel as (ms since `t0`, rate per second over each group of bins). The last
/// group may hold fewer bins than the others: its rate is over its own bins.
pub fn per_second(t: &Timeline, channel: usize, t0: i64, scale: f64) -> Vec<(f64, f64)> {
    let series = t.series(channel);
    let group = series.len().div_ceil(CHART_POINTS).max(1);
    let bin_seconds = t.width_ns() as f64 / 1e9;
    series
        .chunks(group)
        .map(|c| {
            let sum: u64 = c.iter().map(|(_, v)| v).sum();
            ((c[0].0 - t0) as f64 / 1e6, sum as f64 * scale / (bin_seconds * c.len() as f64))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_rate_is_the_same_in_the_last_short_group() {
        // 65 bins of 1 µs, 10 units in each: groups of 2 bins, the last one bin alone
        let mut t = Timeline::new(128, 1);
        for bin in 0..65 {
            t.add(bin * 1_000, 0, 10);
        }
        let points = per_second(&t, 0, 0, 1.0);
        assert_eq!(points.len(), 33);
        for (at, rate) in points {
            assert_eq!(rate, 10.0 / 1e-6, "at {at} ms");
        }
    }
}
