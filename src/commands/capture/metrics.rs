//! `rocescope capture --metrics ADDR`: the rolling counters in the Prometheus text exposition
//! format at `http://ADDR/metrics`, named and labelled as the NIC exporters name theirs, so that
//! a query joins the capture's view with the NIC's: a counter is `rocescope_NAME_total`, NAME
//! the NIC counter it mirrors (mlx5's `out_of_sequence`, `np_cnp_sent`, `packet_seq_err`) as
//! the exporters' `rdma_NAME_total`; every series carries the exporters' labels `device` and
//! `port` (the interface's RDMA device and port) and `netdev` (the interface); the pauses are
//! per `direction` and `priority`, their time in microseconds as ethtool's
//! `rx_prioN_pause_duration`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use super::Counters;
use crate::analyze::counters::sysfs::RdmaPort;
use crate::analyze::roce::report::PauseReport;

/// An exported counter: name, help, and its value in [`Counters`].
type Metric = (&'static str, &'static str, fn(&Counters) -> u64);

const METRICS: [Metric; 13] = [
    ("frames", "Frames captured and analysed.", |c| c.frames),
    ("bytes", "Bytes of the captured frames, as on the wire.", |c| c.bytes),
    ("roce_packets", "RoCE packets.", |c| c.roce_packets),
    ("out_of_sequence", "PSN gaps: packets that arrived after PSNs that never did (mlx5 out_of_sequence).", |c| {
        c.out_of_sequence
    }),
    ("missing_psns", "PSNs skipped by the gaps.", |c| c.missing_psns),
    ("resent", "Packets sent again (retransmissions).", |c| c.resent),
    ("packet_seq_err", "NAKs other than RNR NAKs (mlx5 packet_seq_err counts PSN-sequence NAKs received).", |c| c.naks),
    ("rnr_naks", "RNR NAKs.", |c| c.rnr_naks),
    ("ecn_marked_roce_packets", "RoCEv2 packets marked CE by a switch.", |c| c.ce_marks),
    (
        "np_cnp_sent",
        "CNPs on the wire: sent by notification points (mlx5 np_cnp_sent), handled by reaction points (rp_cnp_handled).",
        |c| c.cnps,
    ),
    ("icrc_bad", "RoCE packets whose ICRC does not match.", |c| c.icrc_bad),
    ("kernel_dropped", "Packets libpcap reports dropped for want of buffer space: they look like PSN gaps.", |c| {
        c.kernel_dropped
    }),
    ("interface_dropped", "Packets libpcap reports dropped by the interface or its driver.", |c| c.interface_dropped),
];

/// The pause frames per direction and priority (ethtool's `rx_prioN_pause`).
const PAUSE_FRAMES: &str = "rocescope_pause_frames_total";
/// The time they paused, in microseconds (ethtool's `rx_prioN_pause_duration`).
const PAUSE_DURATION: &str = "rocescope_pause_duration_microseconds_total";

/// With `capture --counters DEV`: how much each of the device's counters grew since the
/// capture began.
pub struct NicGrowth {
    pub counters: Vec<(String, u64)>,
}

/// A label value, escaped as the exposition format asks: backslash, double quote, line feed.
fn escaped(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// `{name="value",…}`, the labels in the order given.
fn label_set(labels: &[(&str, &str)]) -> String {
    let pairs: Vec<String> = labels.iter().map(|(name, value)| format!("{name}=\"{}\"", escaped(value))).collect();
    format!("{{{}}}", pairs.join(","))
}

/// The labels of every series: `device` and `port` where the interface has them, `netdev`.
fn place_labels(place: &RdmaPort) -> Vec<(&'static str, &str)> {
    let device = place.device.as_deref().map(|d| ("device", d));
    let port = place.port.as_deref().map(|p| ("port", p));
    device.into_iter().chain(port).chain([("netdev", place.netdev.as_str())]).collect()
}

/// A counter family's HELP and TYPE lines.
fn family(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} counter");
}

/// One sample line.
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: u64) {
    let _ = writeln!(out, "{name}{} {value}", label_set(labels));
}

/// The exposition text of `counters` and `pauses` for the interface at `place`, with the
/// device's counters' growth beside them as `rocescope_nic_NAME_total`, NAME the counter's own
/// (`np_cnp_sent`, `rx_out_of_buffer`).
pub fn exposition(place: &RdmaPort, counters: &Counters, pauses: &[PauseReport], nic: Option<&NicGrowth>) -> String {
    let labels = place_labels(place);
    let mut out = String::new();
    for (name, help, value) in METRICS {
        let name = format!("rocescope_{name}_total");
        family(&mut out, &name, help);
        sample(&mut out, &name, &labels, value(counters));
    }
    write_pauses(&mut out, place, &labels, pauses);
    // a family is given once: of two counters whose names differ only in characters made `_`
    // (`rx-a`, `rx_a`), the first
    let mut written = BTreeSet::new();
    for (name, grown) in nic.map(|n| n.counters.as_slice()).unwrap_or_default() {
        let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let name = format!("rocescope_nic_{name}_total");
        if !written.insert(name.clone()) {
            continue;
        }
        family(&mut out, &name, "The RDMA device's counter of this name: its growth since the capture began.");
        sample(&mut out, &name, &labels, *grown);
    }
    out
}

/// Whether the interface's own port sent a pause (`tx`: its source MAC is the interface's) or
/// received it (`rx`).
fn direction(place: &RdmaPort, pause: &PauseReport) -> &'static str {
    if place.mac.as_deref().is_some_and(|mac| mac.eq_ignore_ascii_case(&pause.src_mac)) { "tx" } else { "rx" }
}

/// One pause series: its own labels and its two values.
struct PauseSeries {
    direction: &'static str,
    /// `None` for 802.3x PAUSE.
    priority: Option<String>,
    frames: u64,
    nanos: u64,
}

impl PauseSeries {
    /// `place` followed by its own labels.
    fn labels<'a>(&'a self, place: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let own = [("direction", Some(self.direction)), ("priority", self.priority.as_deref())];
        place.iter().copied().chain(own.into_iter().filter_map(|(name, value)| Some((name, value?)))).collect()
    }
}

/// The pause series, one per direction and priority, the sources of each summed: frames (XOFF
/// and XON) and time paused. 802.3x PAUSE pauses every priority, so its series has no
/// `priority` label, as ethtool's `rx_pause` has none.
fn write_pauses(out: &mut String, place: &RdmaPort, labels: &[(&str, &str)], pauses: &[PauseReport]) {
    let mut summed: BTreeMap<(&'static str, Option<u8>), PauseSeries> = BTreeMap::new();
    for pause in pauses {
        let (direction, priority) = (direction(place, pause), pause.priority);
        let series = summed.entry((direction, priority)).or_insert_with(|| PauseSeries {
            direction,
            priority: priority.map(|p| p.to_string()),
            frames: 0,
            nanos: 0,
        });
        series.frames += pause.stats.xoff + pause.stats.xon;
        series.nanos += pause.stats.paused_ns;
    }
    family(out, PAUSE_FRAMES, "PFC and 802.3x PAUSE frames, XOFF and XON (ethtool rx_prioN_pause, tx_prioN_pause).");
    for series in summed.values() {
        sample(out, PAUSE_FRAMES, &series.labels(labels), series.frames);
    }
    family(
        out,
        PAUSE_DURATION,
        "Time the pauses held their priority, from each XOFF to its XON or expiry (ethtool rx_prioN_pause_duration).",
    );
    for series in summed.values() {
        sample(out, PAUSE_DURATION, &series.labels(labels), series.nanos / 1_000);
    }
}

/// Serves the latest exposition text from a thread of its own; the capture replaces it at
/// every summary.
pub fn serve(addr: &str) -> Result<Arc<Mutex<String>>, String> {
    let server = tiny_http::Server::http(addr).map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
    let text = Arc::new(Mutex::new(String::new()));
    let shared = Arc::clone(&text);
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            let body = if request.url() == "/metrics" { shared.lock().map(|t| t.clone()).ok() } else { None };
            let response = match body {
                Some(body) => {
                    let response = tiny_http::Response::from_string(body);
                    match tiny_http::Header::from_bytes("Content-Type", "text/plain; version=0.0.4; charset=utf-8") {
                        Ok(header) => response.with_header(header),
                        Err(()) => response,
                    }
                }
                None => {
                    tiny_http::Response::from_string("rocescope: the metrics are at /metrics\n").with_status_code(404)
                }
            };
            let _ = request.respond(response);
        }
    });
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::roce::wide::pfc::PauseStats;

    /// One sample of the exposition text: its name, labels and value.
    #[derive(Debug, PartialEq)]
    struct Sample {
        name: String,
        labels: Vec<(String, String)>,
        value: f64,
    }

    /// The exposition text read as the Prometheus text format (0.0.4) defines it: `# HELP
    /// NAME text` and `# TYPE NAME counter` lines, then samples `NAME{label="value",…} VALUE`
    /// with label values escaped (`\\`, `\"`, `\n`). Fails on anything else, on a sample
    /// whose family has no HELP or TYPE before it, and on a HELP or TYPE given twice.
    fn parse(text: &str) -> Result<Vec<Sample>, String> {
        let (mut helped, mut typed, mut samples) = (Vec::new(), Vec::new(), Vec::new());
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let (name, help) = rest.split_once(' ').ok_or(format!("a HELP without text: {line}"))?;
                if helped.contains(&name.to_string()) || help.is_empty() {
                    return Err(format!("HELP twice or empty: {line}"));
                }
                helped.push(name.to_string());
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let name = rest.strip_suffix(" counter").ok_or(format!("not a counter: {line}"))?;
                if typed.contains(&name.to_string()) || !helped.contains(&name.to_string()) {
                    return Err(format!("TYPE twice or before HELP: {line}"));
                }
                typed.push(name.to_string());
            } else {
                let sample = parse_sample(line)?;
                if !typed.contains(&sample.name) {
                    return Err(format!("a sample without HELP and TYPE: {line}"));
                }
                samples.push(sample);
            }
        }
        Ok(samples)
    }

    /// `NAME{label="value",…} VALUE`.
    fn parse_sample(line: &str) -> Result<Sample, String> {
        let valid_name = |n: &str| {
            n.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        let (name, mut rest) = line.split_once('{').ok_or(format!("no labels: {line}"))?;
        if !valid_name(name) {
            return Err(format!("a bad metric name: {line}"));
        }
        let mut labels = Vec::new();
        if let Some(empty) = rest.strip_prefix('}') {
            rest = empty;
        }
        while !rest.starts_with(' ') {
            let (label, after) = rest.split_once("=\"").ok_or(format!("a bad label: {line}"))?;
            if !valid_name(label) {
                return Err(format!("a bad label name: {line}"));
            }
            let mut value = String::new();
            let mut chars = after.char_indices();
            let end = loop {
                match chars.next() {
                    Some((_, '\\')) => match chars.next() {
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, c @ ('\\' | '"'))) => value.push(c),
                        _ => return Err(format!("a bad escape: {line}")),
                    },
                    Some((i, '"')) => break i,
                    Some((_, c)) => value.push(c),
                    None => return Err(format!("an unterminated label value: {line}")),
                }
            };
            labels.push((label.to_string(), value));
            rest = &after[end + 1..];
            rest = rest.strip_prefix(',').or_else(|| rest.strip_prefix('}')).ok_or(format!("bad labels: {line}"))?;
        }
        let value = rest.trim_start().parse().map_err(|_| format!("a bad value: {line}"))?;
        Ok(Sample { name: name.to_string(), labels, value })
    }

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    fn mlx5_0() -> RdmaPort {
        RdmaPort {
            device: Some("mlx5_0".into()),
            port: Some("1".into()),
            netdev: "ens1f0np0".into(),
            mac: Some("0c:42:a1:00:00:01".into()),
        }
    }

    fn pause(src_mac: &str, priority: Option<u8>, xoff: u64, xon: u64, paused_ns: u64) -> PauseReport {
        PauseReport {
            src_mac: src_mac.into(),
            priority,
            stats: PauseStats { xoff, xon, paused_ns, ..PauseStats::default() },
        }
    }

    /// The value of the sample `name` with exactly `labels`.
    fn value(samples: &[Sample], name: &str, pairs: &[(&str, &str)]) -> Option<f64> {
        samples.iter().find(|s| s.name == name && s.labels == labels(pairs)).map(|s| s.value)
    }

    #[test]
    fn counters_are_exposed_with_the_exporters_labels() {
        let c = Counters { out_of_sequence: 3, cnps: 7, ce_marks: 5, ..Counters::default() };
        let samples = parse(&exposition(&mlx5_0(), &c, &[], None)).expect("valid exposition text");
        let place = [("device", "mlx5_0"), ("port", "1"), ("netdev", "ens1f0np0")];
        assert_eq!(value(&samples, "rocescope_out_of_sequence_total", &place), Some(3.0));
        assert_eq!(value(&samples, "rocescope_np_cnp_sent_total", &place), Some(7.0));
        assert_eq!(value(&samples, "rocescope_ecn_marked_roce_packets_total", &place), Some(5.0));
        assert_eq!(samples.len(), METRICS.len(), "no pause series without pauses");
    }

    #[test]
    fn an_interface_without_an_rdma_device_is_labelled_by_its_name_alone() {
        let place = RdmaPort { netdev: "a\"b\\c".into(), ..RdmaPort::default() };
        let text = exposition(&place, &Counters { frames: 2, ..Counters::default() }, &[], None);
        assert!(text.contains("rocescope_frames_total{netdev=\"a\\\"b\\\\c\"} 2\n"), "{text}");
        let samples = parse(&text).expect("valid exposition text");
        assert_eq!(value(&samples, "rocescope_frames_total", &[("netdev", "a\"b\\c")]), Some(2.0));
    }

    #[test]
    fn pauses_are_per_direction_and_priority_in_microseconds() {
        let pauses = [
            pause("0c:42:a1:00:00:01", Some(3), 4, 1, 2_500_000),
            pause("0C:42:A1:00:00:01", Some(3), 1, 0, 500_000),
            pause("b8:59:9f:00:00:09", Some(3), 2, 2, 7_000),
            pause("b8:59:9f:00:00:09", None, 1, 0, 1_999),
        ];
        let samples = parse(&exposition(&mlx5_0(), &Counters::default(), &pauses, None)).expect("valid");
        let labelled = |direction, priority: Option<&'static str>| {
            let mut l = vec![("device", "mlx5_0"), ("port", "1"), ("netdev", "ens1f0np0"), ("direction", direction)];
            l.extend(priority.map(|p| ("priority", p)));
            l
        };
        assert_eq!(value(&samples, PAUSE_FRAMES, &labelled("tx", Some("3"))), Some(6.0), "sources summed");
        assert_eq!(value(&samples, PAUSE_DURATION, &labelled("tx", Some("3"))), Some(3_000.0));
        assert_eq!(value(&samples, PAUSE_FRAMES, &labelled("rx", Some("3"))), Some(4.0));
        assert_eq!(value(&samples, PAUSE_DURATION, &labelled("rx", Some("3"))), Some(7.0));
        assert_eq!(value(&samples, PAUSE_FRAMES, &labelled("rx", None)), Some(1.0), "802.3x PAUSE");
        assert_eq!(value(&samples, PAUSE_DURATION, &labelled("rx", None)), Some(1.0));
        assert_eq!(samples.len(), METRICS.len() + 6);
    }

    #[test]
    fn a_devices_counters_are_exposed_by_their_own_names() {
        let nic = NicGrowth {
            counters: vec![("np_cnp_sent".into(), 24), ("rx-odd.name".into(), 1), ("rx_odd_name".into(), 2)],
        };
        let samples = parse(&exposition(&mlx5_0(), &Counters::default(), &[], Some(&nic))).expect("valid");
        let place = [("device", "mlx5_0"), ("port", "1"), ("netdev", "ens1f0np0")];
        assert_eq!(value(&samples, "rocescope_nic_np_cnp_sent_total", &place), Some(24.0));
        assert_eq!(value(&samples, "rocescope_nic_rx_odd_name_total", &place), Some(1.0));
        assert_eq!(samples.len(), METRICS.len() + 2, "a name made the same as another's is given once");
    }

    #[test]
    fn the_parser_refuses_what_the_format_does_not_allow() {
        let family = "# HELP m_total A counter.\n# TYPE m_total counter\n";
        assert!(parse(&format!("{family}m_total{{a=\"1\"}} 2\n")).is_ok());
        assert!(parse("m_total{a=\"1\"} 2\n").is_err(), "no HELP and TYPE");
        assert!(parse("# TYPE m_total counter\n").is_err(), "TYPE before HELP");
        for bad in ["m_total{a=\"1} 2", "m_total{a=\"\\x\"} 2", "m_total{1a=\"1\"} 2", "m_total{a=\"1\"} two"] {
            assert!(parse(&format!("{family}{bad}\n")).is_err(), "{bad}");
        }
    }
}
