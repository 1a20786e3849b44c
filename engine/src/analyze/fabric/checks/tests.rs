//! The checks on the sample fabrics: consistent ones give nothing; each finding is made by
//! changing one setting of a consistent set, and names exactly the devices and lines at fault.

use super::*;
use crate::analyze::fabric::policy::fabric_policy;
use crate::analyze::fabric::samples::{NVIDIA, SONIC_DEFAULT, Sample, devices_of, edit, first_line, line_of};

/// The mismatches of the samples with `edits` made, judged with `seen`.
fn mismatches(samples: &[Sample], edits: &[(&str, &str, &str)], seen: Option<&Seen>) -> Vec<Mismatch> {
    let devices = devices_of(&edit(samples, edits)).unwrap();
    check(&devices, &fabric_policy(&devices), seen)
}

/// The only mismatch there is, which must be of `code`. Found without a capture, it is found
/// alike with one that shows each host's data on the fabric's data DSCP (but for first frames).
fn alone(samples: &[Sample], edits: &[(&str, &str, &str)], seen: Option<&Seen>, code: &str) -> Mismatch {
    let found = mismatches(samples, edits, seen);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].code, code, "{found:#?}");
    if seen.is_none() {
        let with_capture = mismatches(samples, edits, Some(&data_on_the_fabrics_dscp(samples)));
        let without_frames =
            |found: &[Mismatch]| found.iter().map(|m| Mismatch { first_frame: None, ..m.clone() }).collect::<Vec<_>>();
        assert_eq!(without_frames(&with_capture), without_frames(&found), "with a capture");
    }
    found.into_iter().next().unwrap()
}

/// A capture of the unedited fabric's hosts sending data on its data DSCP.
fn data_on_the_fabrics_dscp(samples: &[Sample]) -> Seen {
    let devices = devices_of(&edit(samples, &[])).unwrap();
    let dscp = fabric_policy(&devices).data_dscp;
    let data = devices.iter().filter(|d| d.is_host()).enumerate().map(|(i, host)| seen(dscp, i as u64 + 1, &host.name));
    Seen { data: data.collect(), cnps: Vec::new() }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|name| name.to_string()).collect()
}

fn seen(dscp: u8, first_frame: u64, sender: &str) -> SeenDscp {
    SeenDscp { dscp, first_frame, sender: sender.to_string() }
}

#[test]
fn consistent_fabrics_give_no_mismatch_with_or_without_a_capture() {
    let capture =
        Seen { data: vec![seen(26, 10, "10.0.0.1"), seen(26, 12, "10.0.0.2")], cnps: vec![seen(48, 40, "10.0.0.2")] };
    assert_eq!(mismatches(&NVIDIA, &[], None), []);
    assert_eq!(mismatches(&NVIDIA, &[], Some(&capture)), []);
    let capture = Seen { data: vec![seen(3, 5, "10.1.0.1")], cnps: vec![seen(48, 9, "10.1.0.1")] };
    assert_eq!(mismatches(&SONIC_DEFAULT, &[], None), []);
    assert_eq!(mismatches(&SONIC_DEFAULT, &[], Some(&capture)), []);
}

/// The NVIDIA fabric with leaf1 configured by `nv set qos roce` alone (Cumulus's RoCE defaults).
fn with_roce_defaults_leaf() -> Vec<(String, String, String)> {
    let (_, _, leaf1) = NVIDIA[4];
    let defaults = include_str!("../switch/testdata/nvue_roce_defaults.yaml");
    edit(&NVIDIA, &[("leaf1-nv.yaml", leaf1, defaults)])
}

#[test]
fn cumulus_roce_defaults_fit_the_fabric_but_leave_the_watchdog_off() {
    let devices = devices_of(&with_roce_defaults_leaf()).unwrap();
    let found = check(&devices, &fabric_policy(&devices), None);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!((found[0].code, found[0].devices.as_slice()), ("QOS_PFC_WATCHDOG_OFF", &names(&["leaf1"])[..]));
    // The interfaces' section, where `qos pfc-watchdog` would stand.
    assert_eq!(found[0].config_lines, ["leaf1-nv.yaml:7"]);
}

#[test]
fn among_several_lossless_dscps_the_policy_prefers_26() {
    // Cumulus's defaults make DSCP 24-31 lossless; without NCCL_IB_TC, 26 is taken, not 24.
    let files: Vec<(String, String, String)> = with_roce_defaults_leaf()
        .into_iter()
        .map(|(name, file, text)| {
            (name, file, text.replace("export NCCL_IB_TC=106\n", "").replace("NCCL_IB_TC=106\n", ""))
        })
        .collect();
    let policy = fabric_policy(&devices_of(&files).unwrap());
    assert_eq!((policy.data_dscp, policy.data_dscp_source.as_str()), (26, "leaf1-nv.yaml:24"));
}

#[test]
fn hosts_alone_are_judged_among_themselves() {
    assert_eq!(mismatches(&NVIDIA[..4], &[], None), []);
    // No switch to say what is lossless: NCCL_IB_TC is not judged.
    let edits = [("10.0.0.2-nccl.env", "NCCL_IB_TC=106", "NCCL_IB_TC=108")];
    assert_eq!(mismatches(&NVIDIA[..4], &edits, None), []);
    let edits = [("10.0.0.2-qos.txt", "enabled     0   0   0   1   0", "enabled     0   0   0   0   0")];
    let found = mismatches(&NVIDIA[..4], &edits, None);
    let pfc = found.iter().find(|m| m.code == "QOS_PFC_MISMATCH").expect("a PFC mismatch");
    // A tie between the two hosts: the first named sets the reference.
    assert_eq!(pfc.devices, names(&["10.0.0.2"]));
}

#[test]
fn dscp_map_mismatch() {
    let file = "leaf2-config_db.json";
    let found = alone(&SONIC_DEFAULT, &[(file, "\"3\" : \"3\"", "\"3\" : \"4\"")], None, "QOS_DSCP_MAP_MISMATCH");
    assert_eq!(found.devices, names(&["leaf2"]));
    assert_eq!(found.config_lines, [line_of(&SONIC_DEFAULT, file, "\"3\" : \"3\"")]);
    assert_eq!((found.severity, found.first_frame), (Severity::Error, None));
    assert!(found.message.contains("leaf2 to 4"), "{}", found.message);
}

#[test]
fn lossy_roce_proven_by_the_capture() {
    // Data on DSCP 46, which the hosts' NICs put in priority 5, without PFC.
    let capture = Seen { data: vec![seen(46, 700, "10.0.0.1"), seen(46, 650, "10.0.0.2")], cnps: vec![] };
    let found = alone(&NVIDIA, &[], Some(&capture), "QOS_LOSSY_ROCE");
    assert_eq!(found.devices, names(&["10.0.0.1", "10.0.0.2"]));
    let expected = [
        line_of(&NVIDIA, "10.0.0.1.txt", "prio:5 dscp:"),
        line_of(&NVIDIA, "10.0.0.1.txt", "enabled "),
        line_of(&NVIDIA, "10.0.0.2-qos.txt", "prio:5 dscp:"),
        line_of(&NVIDIA, "10.0.0.2-qos.txt", "enabled "),
    ];
    assert_eq!(found.config_lines, expected);
    assert_eq!(found.first_frame, Some(650));
}

#[test]
fn lossy_roce_on_a_switch_proven_by_the_capture() {
    // SONiC's default map puts DSCP 46 in priority 5: no PFC, and no WRED/ECN either; a DSCP
    // only the capture shows is judged by QOS_LOSSY_ROCE alone (ECN is the RoCE class's)
    let capture = Seen { data: vec![seen(46, 1200, "10.1.0.1")], cnps: vec![] };
    let found = mismatches(&SONIC_DEFAULT, &[], Some(&capture));
    let codes: Vec<&str> = found.iter().map(|mismatch| mismatch.code).collect();
    assert_eq!(codes, ["QOS_LOSSY_ROCE"]);
    let lossy = &found[0];
    assert_eq!(lossy.devices, names(&["10.1.0.1", "10.1.0.2", "leaf1", "leaf2"]));
    for file in ["leaf1-config_db.json", "leaf2-config_db.json"] {
        assert!(lossy.config_lines.contains(&line_of(&SONIC_DEFAULT, file, "\"46\": \"5\"")), "{lossy:?}");
        assert!(lossy.config_lines.contains(&line_of(&SONIC_DEFAULT, file, "\"pfc_enable\"")), "{lossy:?}");
    }
    assert_eq!(lossy.first_frame, Some(1200));
    // the same DSCP given to RoCE by NCCL_IB_TC is the RoCE class: ECN is judged on it too
    let edits = [("10.1.0.1.txt", "NCCL_IB_TC=12", "NCCL_IB_TC=184")];
    let found = mismatches(&SONIC_DEFAULT, &edits, Some(&capture));
    let ecn = found.iter().find(|m| m.code == "QOS_ECN_OFF").expect("ECN off");
    assert_eq!((ecn.devices.clone(), ecn.first_frame), (names(&["leaf1", "leaf2"]), Some(1200)));
}

#[test]
fn pfc_mismatch() {
    let file = "10.0.0.2-qos.txt";
    let edits = [(file, "enabled     0   0   0   1   0", "enabled     0   0   0   0   0")];
    let found = mismatches(&NVIDIA, &edits, None);
    let pfc = found.iter().find(|m| m.code == "QOS_PFC_MISMATCH").expect("a PFC mismatch");
    assert_eq!(pfc.devices, names(&["10.0.0.2"]));
    assert_eq!(pfc.config_lines, [line_of(&NVIDIA, file, "enabled ")]);
    assert_eq!(pfc.severity, Severity::Warning);
    // the host's data on priority 3 without PFC is lossy there too
    assert_eq!(found.iter().map(|m| m.code).collect::<Vec<_>>(), ["QOS_LOSSY_ROCE", "QOS_PFC_MISMATCH"]);
}

#[test]
fn pfc_on_a_priority_roce_does_not_use_is_no_mismatch() {
    // SONiC's default PFC on 3 and 4 beside a NIC with PFC on 3 alone, RoCE on 3
    let edits = [("10.0.0.2-qos.txt", "enabled     0   0   0   1   0", "enabled     0   0   0   1   1")];
    assert_eq!(mismatches(&NVIDIA, &edits, None), []);
}

#[test]
fn ecn_off_on_a_switch_queue() {
    let file = "spine1-eos.cfg";
    let marking =
        "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100\n";
    let found = alone(&NVIDIA, &[(file, marking, "")], None, "QOS_ECN_OFF");
    assert_eq!(found.devices, names(&["spine1"]));
    // The queue's `tx-queue 3` section: it holds no marking.
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "tx-queue 3")]);
}

#[test]
fn ecn_off_with_no_marking_cites_the_qos_tree() {
    let file = "leaf1-nv.yaml";
    let (_, _, text) = NVIDIA[4];
    let start = text.find("      congestion-control:").unwrap();
    let end = text.find("    system:").unwrap();
    let found = alone(&NVIDIA, &[(file, &text[start..end], "")], None, "QOS_ECN_OFF");
    assert_eq!(found.devices, names(&["leaf1"]));
    // The top-level `qos` tree's key (not an interface's `qos`).
    assert_eq!(found.config_lines, [first_line(&NVIDIA, file, |line| line == "    qos:")]);
}

#[test]
fn ecn_off_on_a_host() {
    let file = "10.0.0.2-qos.txt";
    let found = alone(&NVIDIA, &[(file, "roce_rp/enable/3:1", "roce_rp/enable/3:0")], None, "QOS_ECN_OFF");
    assert_eq!(found.devices, names(&["10.0.0.2"]));
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "roce_rp/enable/3")]);
    assert!(found.message.contains("reaction point off"), "{}", found.message);
}

#[test]
fn ecn_thresholds() {
    let file = "leaf1-nv.yaml";
    let edits = [(file, "min-threshold: 150000", "min-threshold: 1500000")];
    let found = alone(&NVIDIA, &edits, None, "QOS_ECN_THRESHOLDS");
    assert_eq!(found.devices, names(&["leaf1"]));
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "ecn: enable")]);
    let file = "spine1-eos.cfg";
    let edits = [(file, "minimum-threshold 150 kbytes", "minimum-threshold 16 kbytes")];
    let found = alone(&NVIDIA, &edits, None, "QOS_ECN_THRESHOLDS");
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "random-detect ecn")]);
    assert!(found.message.contains("below 32 KB"), "{}", found.message);
    let edits = [(file, "max-mark-probability 100", "max-mark-probability 0")];
    let found = alone(&NVIDIA, &edits, None, "QOS_ECN_THRESHOLDS");
    assert!(found.message.contains("probability 0"), "{}", found.message);
    let file = "leaf2-config_db.json";
    let edits = [(file, "\"2097152\"", "\"33554432\"")];
    let found = alone(&SONIC_DEFAULT, &edits, None, "QOS_ECN_THRESHOLDS");
    assert_eq!(found.devices, names(&["leaf2"]));
    assert_eq!(found.config_lines, [line_of(&SONIC_DEFAULT, file, "\"ecn\"")]);
    assert!(found.message.contains("above 16 MB"), "{}", found.message);
}

#[test]
fn cnp_class_on_a_switch() {
    let file = "spine1-eos.cfg";
    let edits = [(file, "qos map dscp 48 to traffic-class 6", "qos map dscp 48 to traffic-class 3")];
    let found = alone(&NVIDIA, &edits, None, "QOS_CNP_CLASS");
    assert_eq!(found.devices, names(&["spine1"]));
    let expected = [
        line_of(&NVIDIA, file, "qos map dscp 26"),
        line_of(&NVIDIA, file, "qos map dscp 48"),
        line_of(&NVIDIA, file, "priority 3 no-drop"),
    ];
    assert_eq!(found.config_lines, expected);
    assert_eq!(found.first_frame, None);
}

#[test]
fn cnp_class_proven_by_the_capture() {
    let capture = Seen {
        data: vec![],
        cnps: vec![
            seen(48, 30, "10.0.0.1"),
            seen(46, 90, "10.0.0.2"),
            seen(0, 55, "10.0.0.2"),
            seen(46, 5, "10.9.9.9"),
        ],
    };
    let found = alone(&NVIDIA, &[], Some(&capture), "QOS_CNP_CLASS");
    assert_eq!(found.devices, names(&["10.0.0.2"]));
    assert_eq!(found.config_lines, [line_of(&NVIDIA, "10.0.0.2-qos.txt", "cnp_dscp:48")]);
    assert_eq!(found.first_frame, Some(55));
    assert!(found.message.contains("DSCP 0"), "{}", found.message);
}

#[test]
fn nccl_tc() {
    let file = "10.0.0.2-nccl.env";
    let found = alone(&NVIDIA, &[(file, "NCCL_IB_TC=106", "NCCL_IB_TC=108")], None, "QOS_NCCL_TC");
    assert_eq!(found.devices, names(&["10.0.0.2"]));
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "NCCL_IB_TC")]);
    assert_eq!(found.severity, Severity::Error);
}

#[test]
fn gid_index_errors() {
    let file = "10.0.0.1.txt";
    let index_line = line_of(&NVIDIA, file, "NCCL_IB_GID_INDEX");
    let row = |index: &str| line_of(&NVIDIA, file, &format!("mlx5_0\t1\t{index}\t"));
    for (index, row_at_fault, words) in
        [("2", true, "RoCE v1"), ("1", true, "not an IPv4"), ("7", false, "not an index")]
    {
        let edits = [(file, "NCCL_IB_GID_INDEX=3", &*format!("NCCL_IB_GID_INDEX={index}"))];
        let found = alone(&NVIDIA, &edits, None, "QOS_GID_INDEX");
        assert_eq!(found.devices, names(&["10.0.0.1"]));
        let mut expected = vec![index_line.clone()];
        if row_at_fault {
            expected.push(row(index));
        }
        expected.sort_by_key(|line| line.rsplit_once(':').map(|(_, n)| n.parse::<usize>().unwrap()));
        assert_eq!(found.config_lines, expected, "{index}");
        assert_eq!(found.severity, Severity::Error);
        assert!(found.message.contains(words), "{}", found.message);
    }
}

#[test]
fn gid_index_unset_is_info() {
    let file = "10.0.0.2-nccl.env";
    let found = alone(&NVIDIA, &[(file, "NCCL_IB_GID_INDEX=3\n", "")], None, "QOS_GID_INDEX");
    assert_eq!(found.devices, names(&["10.0.0.2"]));
    assert_eq!(found.severity, Severity::Info);
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "NCCL_IB_TC")]);
    let found = alone(&NVIDIA, &[(file, "NCCL_IB_GID_INDEX=3", "NCCL_IB_GID_INDEX=-1")], None, "QOS_GID_INDEX");
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "NCCL_IB_GID_INDEX")]);
}

#[test]
fn trust_mode() {
    let file = "10.0.0.1.txt";
    let edits = [(file, "Priority trust state: dscp", "Priority trust state: pcp")];
    let found = alone(&NVIDIA, &edits, None, "QOS_TRUST_MODE");
    assert_eq!(found.devices, names(&["10.0.0.1"]));
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "Priority trust state")]);
}

#[test]
fn mtu_of_a_host_too_small_for_roce() {
    let file = "10.0.0.2-gids.txt";
    let found = alone(&NVIDIA, &[(file, "mtu 9000", "mtu 4000")], None, "QOS_MTU");
    assert_eq!(found.devices, names(&["10.0.0.2"]));
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "mtu 9000")]);
}

#[test]
fn mtu_of_a_switch_below_the_hosts() {
    let file = "spine1-eos.cfg";
    let found = alone(&NVIDIA, &[(file, "mtu 9214", "mtu 1500")], None, "QOS_MTU");
    assert_eq!(found.devices, names(&["10.0.0.1", "10.0.0.2", "spine1"]));
    let expected = [
        line_of(&NVIDIA, "10.0.0.1.txt", "mtu 9000"),
        line_of(&NVIDIA, "10.0.0.2-gids.txt", "mtu 9000"),
        line_of(&NVIDIA, file, "mtu 9214"),
    ];
    assert_eq!(found.config_lines, expected);
}

#[test]
fn pfc_watchdog_off() {
    let file = "spine1-eos.cfg";
    let edits = [(file, "priority-flow-control pause watchdog default timeout 0.2", "!")];
    let found = alone(&NVIDIA, &edits, None, "QOS_PFC_WATCHDOG_OFF");
    assert_eq!(found.devices, names(&["spine1"]));
    // No watchdog anywhere: the first interface, where it would be turned on.
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "interface Ethernet1/1")]);
    let file = "leaf1-nv.yaml";
    let found = alone(&NVIDIA, &[(file, "state: enable", "state: disable")], None, "QOS_PFC_WATCHDOG_OFF");
    assert_eq!(found.devices, names(&["leaf1"]));
    assert_eq!(found.config_lines, [line_of(&NVIDIA, file, "pfc-watchdog:")]);
}

#[test]
fn every_rule_has_its_texts_and_a_unique_code() {
    for (index, rule) in RULES.iter().enumerate() {
        assert!(rule.kind.code.starts_with("QOS_"));
        assert!(rule.cause.len() > 40 && rule.action.len() > 40, "{}", rule.kind.code);
        assert!(RULES[..index].iter().all(|other| other.kind.code != rule.kind.code), "{}", rule.kind.code);
        assert_eq!(super::rule(rule.kind.code), Some(rule));
    }
    assert_eq!(super::rule("QOS_NOPE"), None);
}

#[test]
fn pfc_watchdog_missing_from_a_config_db_cites_the_document() {
    let file = "leaf1-config_db.json";
    let found = alone(&SONIC_DEFAULT, &[(file, "\"PFC_WD\"", "\"PFC_WD_OFF\"")], None, "QOS_PFC_WATCHDOG_OFF");
    assert_eq!(found.devices, names(&["leaf1"]));
    assert_eq!(found.config_lines, [format!("{file}:1")]);
}

/// Every sample with any one line removed reads, or fails with an error; and what reads is
/// checked, with a capture of odd values, without panic.
#[test]
fn damaged_samples_never_panic() {
    let capture = Seen {
        data: vec![seen(0, 0, "10.0.0.1"), seen(63, u64::MAX, "nobody"), seen(255, 1, "leaf1")],
        cnps: vec![seen(255, 2, "10.0.0.2"), seen(48, 3, "10.1.0.1"), seen(0, 4, "leaf1")],
    };
    for samples in [&NVIDIA[..], &SONIC_DEFAULT[..]] {
        for (_, file, text) in samples {
            for removed in 0..text.lines().count() {
                let damaged: String = text
                    .lines()
                    .enumerate()
                    .filter(|(index, _)| *index != removed)
                    .map(|(_, line)| format!("{line}\n"))
                    .collect();
                let files = edit(samples, &[(file, text, &damaged)]);
                let Ok(devices) = devices_of(&files) else { continue };
                let policy = fabric_policy(&devices);
                let _ = check(&devices, &policy, Some(&capture));
                let _ = crate::analyze::fabric::report::fabric_report(&devices, &policy, Vec::new());
            }
        }
    }
}
