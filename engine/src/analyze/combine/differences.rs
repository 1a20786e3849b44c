//! Where two analyses' settings differ, named as the command line names them, for the
//! refusals of `merge` and `--resume` (the parts of one capture are analysed alike).

use crate::analyze::roce::config::Config;

/// A setting: its command-line option, and its value in a [`Config`] as that option takes it.
struct Setting {
    option: &'static str,
    value: fn(&Config) -> String,
}

fn us(ns: i64) -> String {
    (ns / 1_000).to_string()
}

fn ms(ns: i64) -> String {
    (ns / 1_000_000).to_string()
}

const SETTINGS: &[Setting] = &[
    Setting { option: "--link-speed", value: |c| format!("{}G", c.link_gbps) },
    Setting { option: "--pfc-storm-ms", value: |c| ms(c.pfc_storm_ns) },
    Setting { option: "--mirror-window-us", value: |c| us(c.mirror_window_ns) },
    Setting { option: "--reorder-window-us", value: |c| us(c.reorder.window_ns) },
    Setting { option: "--nak-reaction-us", value: |c| us(c.reorder.nak_reaction_ns) },
    Setting { option: "--span-window-us", value: |c| us(c.span_window_ns) },
    Setting { option: "--qp-reuse-idle-ms", value: |c| ms(c.qp_reuse_idle_ns) },
    Setting { option: "--min-ack-timeout-us", value: |c| us(c.min_ack_timeout_ns) },
    Setting { option: "--cc-window-us", value: |c| us(c.congestion.window_ns) },
    Setting { option: "--cc-delay-us", value: |c| us(c.congestion.delay_ns) },
    Setting { option: "--cc-recovery-us", value: |c| us(c.congestion.recovery_ns) },
    Setting { option: "--fct-p99-us", value: |c| us(c.congestion.fct_p99_ns) },
    Setting { option: "--incast-window-us", value: |c| us(c.congestion.incast_window_ns) },
    Setting { option: "--incast-senders", value: |c| c.congestion.incast_senders.to_string() },
    Setting { option: "--max-flows", value: |c| c.max_flows.to_string() },
    Setting { option: "--data-dscp", value: |c| c.policy.data_dscp.to_string() },
    Setting { option: "--cnp-dscp", value: |c| c.policy.cnp_dscp.to_string() },
    Setting { option: "--data-pcp", value: |c| c.policy.data_pcp.to_string() },
    Setting { option: "--cnp-pcp", value: |c| c.policy.cnp_pcp.to_string() },
    Setting { option: "--lossless-priority", value: |c| c.policy.lossless_priority.to_string() },
    Setting { option: "--allow-not-ect", value: |c| (!c.policy.require_ect).to_string() },
    Setting { option: "--cm-dscp", value: |c| c.policy.cm_dscp.map_or("none".into(), |d| d.to_string()) },
    Setting { option: "--time-source", value: |c| c.time_source.name().to_string() },
];

/// The options whose values differ between `a` and `b`: each with its value in `a`, then in
/// `b`. Empty only where the two are the same.
pub fn differences(a: &Config, b: &Config) -> Vec<(&'static str, String, String)> {
    let differ = SETTINGS.iter().filter_map(|s| {
        let (in_a, in_b) = ((s.value)(a), (s.value)(b));
        (in_a != in_b).then_some((s.option, in_a, in_b))
    });
    let mut found: Vec<_> = differ.collect();
    if found.is_empty() && a != b {
        found.push(("--policy", "one policy".into(), "another".into()));
    }
    found
}

/// `differences` as a message: `--reorder-window-us 50 and 20, --time-source hardware and
/// capture`.
pub fn describe(a: &Config, b: &Config) -> String {
    let each: Vec<String> =
        differences(a, b).into_iter().map(|(option, in_a, in_b)| format!("{option} {in_a} and {in_b}")).collect();
    each.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_differing_option_is_named_with_both_values() {
        let a = Config::default();
        let mut b = a;
        assert!(differences(&a, &b).is_empty());
        b.reorder.window_ns = 50_000;
        b.time_source = crate::decode::TimeSource::Hardware;
        b.policy.cm_dscp = Some(48);
        assert_eq!(
            describe(&a, &b),
            "--reorder-window-us 20 and 50, --cm-dscp none and 48, --time-source capture and hardware"
        );
    }
}
