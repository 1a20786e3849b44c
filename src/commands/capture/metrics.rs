//! `rocescope capture --metrics ADDR`: the rolling counters in the Prometheus text exposition
//! format at `http://ADDR/metrics`, named after the NIC counters fabric teams already graph
//! (mlx5's `out_of_sequence`, `np_cnp_sent`, `rp_cnp_handled`, `packet_seq_err`, ethtool's
//! `rx_pause`), so that a dashboard can show the fabric's view beside the hosts'.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use super::Counters;

/// An exported counter: name, help, and its value in [`Counters`].
type Metric = (&'static str, &'static str, fn(&Counters) -> u64);

const METRICS: [Metric; 14] = [
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
    ("rx_pause", "PFC and 802.3x PAUSE frames (ethtool rx_pause / rx_prio*_pause).", |c| c.pfc_frames + c.pause_frames),
    ("icrc_bad", "RoCE packets whose ICRC does not match.", |c| c.icrc_bad),
    ("kernel_dropped", "Packets libpcap reports dropped for want of buffer space: they look like PSN gaps.", |c| {
        c.kernel_dropped
    }),
    ("interface_dropped", "Packets libpcap reports dropped by the interface or its driver.", |c| c.interface_dropped),
];

/// With `capture --counters DEV`: how much each of the device's counters grew since the
/// capture began.
pub struct NicGrowth {
    pub device: String,
    pub counters: Vec<(String, u64)>,
}

/// A label value, escaped.
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The exposition text of `counters` for `interface`, with the device's counters' growth
/// beside them as `rocescope_nic_NAME_total{interface, device}`, NAME the counter's own
/// (`np_cnp_sent`, `rx_out_of_buffer`).
pub fn exposition(interface: &str, counters: &Counters, nic: Option<&NicGrowth>) -> String {
    let interface = label(interface);
    let mut out = String::new();
    for (name, help, value) in METRICS {
        let _ = writeln!(out, "# HELP rocescope_{name}_total {help}");
        let _ = writeln!(out, "# TYPE rocescope_{name}_total counter");
        let _ = writeln!(out, "rocescope_{name}_total{{interface=\"{interface}\"}} {}", value(counters));
    }
    if let Some(nic) = nic {
        let device = label(&nic.device);
        for (name, grown) in &nic.counters {
            let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
            let _ =
                writeln!(out, "# HELP rocescope_nic_{name}_total The RDMA device's {name} since the capture began.");
            let _ = writeln!(out, "# TYPE rocescope_nic_{name}_total counter");
            let _ =
                writeln!(out, "rocescope_nic_{name}_total{{interface=\"{interface}\",device=\"{device}\"}} {grown}");
        }
    }
    out
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

    #[test]
    fn counters_are_exposed_with_help_type_and_interface() {
        let c = Counters { out_of_sequence: 3, cnps: 7, pfc_frames: 2, pause_frames: 1, ..Counters::default() };
        let text = exposition("ens1f0", &c, None);
        assert!(text.contains(
            "# TYPE rocescope_out_of_sequence_total counter\nrocescope_out_of_sequence_total{interface=\"ens1f0\"} 3\n"
        ));
        assert!(text.contains("rocescope_np_cnp_sent_total{interface=\"ens1f0\"} 7\n"));
        assert!(text.contains("rocescope_rx_pause_total{interface=\"ens1f0\"} 3\n"));
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), METRICS.len());
        assert!(exposition("a\"b", &c, None).contains("interface=\"a\\\"b\""));
    }

    #[test]
    fn a_devices_counters_are_exposed_by_their_own_names() {
        let nic = NicGrowth {
            device: "mlx5_0".into(),
            counters: vec![("np_cnp_sent".into(), 24), ("rx-odd.name".into(), 1)],
        };
        let text = exposition("ens1f0", &Counters::default(), Some(&nic));
        assert!(text.contains(
            "# TYPE rocescope_nic_np_cnp_sent_total counter\nrocescope_nic_np_cnp_sent_total{interface=\"ens1f0\",device=\"mlx5_0\"} 24\n"
        ), "{text}");
        assert!(text.contains("rocescope_nic_rx_odd_name_total{interface=\"ens1f0\",device=\"mlx5_0\"} 1\n"));
    }
}
