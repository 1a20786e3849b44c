//! The page's fabric charts: CE marks and CNPs, pauses per priority, DSCP and ECN, top
//! talkers and throughput.

use maud::{Markup, html};

use super::charts::{self, Series};
use super::figure::{figure, per_second};
use crate::analyze::report::Report;
use crate::analyze::roce::report::chart_data::ChartData;
use crate::analyze::roce::wide::pfc::PAUSE_CHANNEL;
use crate::analyze::{CE_MARKS, CNPS};
use crate::decode::Endpoint;

/// Hosts in the top-talkers chart.
const TOP_TALKERS: usize = 10;

pub(super) fn fabric(r: &Report, a: &ChartData, t0: i64) -> Markup {
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
    let dscp: Vec<(String, f64)> = r.roce.dscp.iter().map(|(d, n)| (d.to_string(), *n as f64)).collect();
    let e = &r.roce.ecn;
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
    for f in &r.roce.flows {
        match by_host.iter_mut().find(|(h, _)| *h == f.src_ip) {
            Some((_, b)) => *b += f.counts.bytes,
            None => by_host.push((f.src_ip, f.counts.bytes)),
        }
    }
    by_host.sort_by_key(|(h, b)| (std::cmp::Reverse(*b), *h));
    by_host.into_iter().take(TOP_TALKERS).map(|(h, b)| (h.to_string(), b as f64)).collect()
}
