//! The report's charts, drawn with plotters into SVG strings for inlining in the HTML page:
//! lines over time (with highlighted spans), the PSN-versus-time graph of a flow, and bars.
//! Every chart is drawn from a bounded summary (timelines, traces, histograms), never from
//! the packets.

use plotters::coord::Shift;
use plotters::prelude::*;

pub const WIDTH: u32 = 720;
pub const HEIGHT: u32 = 280;

/// Colours of the series, in order (colour-blind safe, from the Okabe–Ito palette).
pub const PALETTE: [RGBColor; 9] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 120, 120),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

const STORM: RGBColor = RGBColor(213, 94, 0);
const FONT: &str = "sans-serif";

/// One named line.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Draws into a fresh SVG document; a drawing error yields an empty chart with its title.
fn svg(draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        let drawn = root.fill(&WHITE).map_err(|e| e.to_string()).and_then(|()| draw(&root));
        let _ = drawn.and_then(|()| root.present().map_err(|e| e.to_string()));
    }
    out
}

/// The range of `values`, widened so that it is never empty.
fn range(values: impl Iterator<Item = f64>, floor_zero: bool) -> std::ops::Range<f64> {
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if floor_zero {
        lo = lo.min(0.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    lo..hi + (hi - lo) * 0.05
}

/// How many labels an axis of counts up to the values' largest takes: one a count where
/// there are few (plotters then puts them on whole numbers), at most 11.
fn count_labels(values: impl Iterator<Item = f64>) -> usize {
    let most = values.fold(0.0f64, f64::max).ceil();
    (most as usize).saturating_add(1).clamp(2, 11)
}

/// A tick of an axis of counts: whole numbers only, as [`tick`] writes them.
fn count_tick(v: &f64) -> String {
    if v.fract() == 0.0 { tick(v) } else { String::new() }
}

/// A tick's label: no decimals for whole numbers, at most two otherwise, and thousands,
/// millions and billions shortened (`50k`, `2.5M`), so that labels stay clear of the axis's
/// title.
pub fn tick(v: &f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = match a {
        _ if a >= 1e9 => (v / 1e9, "G"),
        _ if a >= 1e6 => (v / 1e6, "M"),
        _ if a >= 1e4 => (v / 1e3, "k"),
        _ => (*v, ""),
    };
    let text = format!("{scaled:.2}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    let text = if text == "-0" { "0" } else { text };
    format!("{text}{suffix}")
}

/// Spans of the x axis shaded in one colour, named in the legend.
pub struct Shading<'a> {
    pub name: &'a str,
    pub colour: RGBColor,
    pub spans: &'a [(f64, f64)],
}

/// Does any series have a value other than zero?
fn anything(series: &[Series]) -> bool {
    series.iter().any(|s| s.points.iter().any(|p| p.1 != 0.0))
}

/// Lines over time (x in milliseconds), with `spans` shaded (storm periods); `None` when
/// there is nothing to draw (no value other than zero).
pub fn lines(x_label: &str, y_label: &str, series: &[Series], spans: &[(f64, f64)]) -> Option<String> {
    let storms = [Shading { name: "storm", colour: STORM, spans }];
    lines_with(x_label, y_label, series, if spans.is_empty() { &[] } else { &storms }, &[])
}

/// Lines over time with shaded spans and vertical marks (the times of events); `None` when
/// there is nothing to draw.
pub fn lines_with(
    x_label: &str,
    y_label: &str,
    series: &[Series],
    shadings: &[Shading<'_>],
    marks: &[f64],
) -> Option<String> {
    if !anything(series) {
        return None;
    }
    Some(svg(|root| {
        let spans = || shadings.iter().flat_map(|s| s.spans.iter());
        let xs = range(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).chain(spans().map(|s| s.1)), false);
        let ys = range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)), true);
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(xs, ys.clone())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 17))
            .max_light_lines(1)
            .draw()
            .map_err(|e| e.to_string())?;
        for shading in shadings {
            let fill = shading.colour.mix(0.15).filled();
            chart
                .draw_series(shading.spans.iter().map(|&(a, b)| Rectangle::new([(a, ys.start), (b, ys.end)], fill)))
                .map_err(|e| e.to_string())?
                .label(shading.name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], fill));
        }
        let mark = PALETTE[8];
        chart
            .draw_series(marks.iter().map(|&x| PathElement::new([(x, ys.start), (x, ys.end)], mark.stroke_width(1))))
            .map_err(|e| e.to_string())?;
        for (i, s) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(s.name.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        if series.len() > 1 || !shadings.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font((FONT, 17))
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK.mix(0.3))
                .draw()
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }))
}

/// What the PSN graph of one flow shows, x in milliseconds, y as PSNs after the first.
pub struct PsnGraph {
    pub sent: Vec<(f64, f64)>,
    pub resent: Vec<(f64, f64)>,
    pub gaps: Vec<(f64, f64)>,
    pub naks: Vec<(f64, f64)>,
}

/// The sequence graph of a flow (the equivalent of Wireshark's TCP stream graph): first
/// transmissions as dots, resends as crosses, the first PSN of each gap and the PSN of each
/// NAK as markers; `None` without packets.
pub fn psn_graph(g: &PsnGraph) -> Option<String> {
    if g.sent.is_empty() && g.resent.is_empty() {
        return None;
    }
    Some(svg(|root| {
        let all = || g.sent.iter().chain(&g.resent).chain(&g.gaps).chain(&g.naks);
        let xs = range(all().map(|p| p.0), false);
        let ys = range(all().map(|p| p.1), true);
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(xs, ys)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("ms since the capture's start")
            .y_desc("PSN − first PSN")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 17))
            .max_light_lines(1)
            .draw()
            .map_err(|e| e.to_string())?;
        let [sent, resent, gap, nak] = [PALETTE[0], PALETTE[1], PALETTE[6], PALETTE[8]];
        chart
            .draw_series(g.sent.iter().map(|&p| Circle::new(p, 2, sent.filled())))
            .map_err(|e| e.to_string())?
            .label("sent")
            .legend(move |(x, y)| Circle::new((x + 8, y), 3, sent.filled()));
        chart
            .draw_series(g.resent.iter().map(|&p| Cross::new(p, 4, resent.stroke_width(2))))
            .map_err(|e| e.to_string())?
            .label("resent")
            .legend(move |(x, y)| Cross::new((x + 8, y), 4, resent.stroke_width(2)));
        chart
            .draw_series(g.gaps.iter().map(|&p| TriangleMarker::new(p, 5, gap.filled())))
            .map_err(|e| e.to_string())?
            .label("gap (first missing PSN)")
            .legend(move |(x, y)| TriangleMarker::new((x + 8, y), 5, gap.filled()));
        chart
            .draw_series(g.naks.iter().map(|&p| Rectangle::new([(p.0, p.1), (p.0, p.1)], nak.stroke_width(6))))
            .map_err(|e| e.to_string())?
            .label("NAK (expected PSN)")
            .legend(move |(x, y)| Rectangle::new([(x + 5, y - 3), (x + 11, y + 3)], nak.filled()));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font((FONT, 17))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(|e| e.to_string())
    }))
}

/// Vertical bars with a label each; `None` when every bar is empty.
pub fn bars(x_label: &str, y_label: &str, bars: &[(String, f64)]) -> Option<String> {
    if bars.iter().all(|b| b.1 == 0.0) {
        return None;
    }
    Some(svg(|root| {
        let n = bars.len().max(1);
        let ys = range(bars.iter().map(|b| b.1), true);
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d((0..n - 1).into_segmented(), ys)
            .map_err(|e| e.to_string())?;
        let label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => bars.get(*i).map(|b| b.0.clone()).unwrap_or_default(),
            SegmentValue::Last => String::new(),
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_labels(n)
            .x_label_formatter(&label)
            .y_labels(count_labels(bars.iter().map(|b| b.1)))
            .y_label_formatter(&count_tick)
            .label_style((FONT, 17))
            .max_light_lines(1)
            .draw()
            .map_err(|e| e.to_string())?;
        // rectangles in order (plotters' Histogram sums through a hash map, whose order
        // varies from run to run), each filling its segment (the last ends at `Last`); a
        // white outline separates neighbours
        let segment = |i: usize, v: f64| {
            let end = if i + 1 < n { SegmentValue::Exact(i + 1) } else { SegmentValue::Last };
            [(SegmentValue::Exact(i), 0.0), (end, v)]
        };
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| Rectangle::new(segment(i, b.1), PALETTE[0].filled())))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| Rectangle::new(segment(i, b.1), WHITE.stroke_width(6))))
            .map_err(|e| e.to_string())?;
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_documents_with_their_labels() {
        let l = lines(
            "ms",
            "CE marks",
            &[Series { name: "CE".into(), points: vec![(0.0, 1.0), (1.0, 3.0)] }],
            &[(0.2, 0.4)],
        )
        .unwrap();
        assert!(l.starts_with("<svg") && l.contains("CE marks") && l.trim_end().ends_with("</svg>"));
        let g = psn_graph(&PsnGraph { sent: vec![(0.0, 0.0)], resent: vec![(1.0, 0.0)], gaps: vec![], naks: vec![] });
        assert!(g.unwrap().contains("resent"));
        let b = bars("DSCP", "packets", &[("26".into(), 10.0), ("48".into(), 2.0)]).unwrap();
        assert!(b.contains(">\n26\n<") || b.contains(">26<"), "{b}");
        // nothing to draw: no chart
        assert_eq!(lines("ms", "x", &[], &[]), None);
        let zeros = Series { name: "CE".into(), points: vec![(0.0, 0.0), (1.0, 0.0)] };
        assert_eq!(lines("ms", "x", &[zeros], &[]), None);
        assert_eq!(bars("x", "y", &[]), None);
    }

    #[test]
    fn an_axis_of_counts_has_whole_numbers_only() {
        let svg = bars("µs", "ACKed requests", &[("1".into(), 3.0), ("2".into(), 1.0)]).unwrap();
        let labels: Vec<&str> = svg.split('>').filter_map(|t| t.split('<').next()).map(str::trim).collect();
        for whole in ["0", "1", "2", "3"] {
            assert!(labels.contains(&whole), "{whole} in {labels:?}");
        }
        assert!(!labels.iter().any(|l| l.contains('.')), "{labels:?}");
        assert_eq!(count_labels([0.0, 3.0].into_iter()), 4);
        assert_eq!(count_labels([2.5e6].into_iter()), 11);
        assert_eq!((count_tick(&1.5), count_tick(&2.0)), (String::new(), "2".to_string()));
    }

    #[test]
    fn ticks_have_no_needless_decimals_and_short_large_numbers() {
        let ticks: Vec<String> = [0.0, 2500.0, 50_000.0, 2.5e6, 3e9, 0.25, 1.0, -0.0, 12.5].iter().map(tick).collect();
        assert_eq!(ticks, ["0", "2500", "50k", "2.5M", "3G", "0.25", "1", "0", "12.5"]);
    }
}
