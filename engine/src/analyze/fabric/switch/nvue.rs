//! NVIDIA Cumulus Linux's `nv config show -o yaml`: a list of a `header` and a `set` of the
//! configuration tree (a bare tree, as `nv config show -o yaml` of a single revision or a
//! startup.yaml's `set`, is read too). The `qos` tree read:
//!
//! ```yaml
//! qos:
//!   roce: {enable: on, mode: lossless}
//!   mapping: {default-global: {trust: l3, dscp: {26: {switch-priority: 3}}}}
//!   pfc: {default-global: {switch-priority: {3: {}}}}
//!   egress-queue-mapping: {default-global: {switch-priority: {3: {traffic-class: 3}}}}
//!   congestion-control:
//!     default-global:
//!       traffic-class: {3: {ecn: enable, min-threshold: 150000, max-threshold: 1500000, probability: 100}}
//! interface: {swp1: {link: {mtu: 9216}, qos: {pfc-watchdog: {state: enable}}}}  # default: disable
//! ```
//!
//! `roce: enable: on` alone configures Cumulus's RoCE defaults, which the reader fills in where
//! the tree does not say otherwise (NVIDIA, Cumulus Linux 5.14 user guide, "RDMA over Converged
//! Ethernet - RoCE", "Default RoCE Configuration" and `nv show qos roce`): trust `pcp,dscp`
//! (DSCP for IP packets), DSCP → switch priority DSCP / 8 (so RoCE's DSCP 26 → 3 and CNPs'
//! DSCP 48 → 6), switch priority 3 → traffic class 3 and 6 → 6 (others → 0), ECN at
//! 150 000 – 1 500 000 bytes with probability 100, and in `lossless` mode (the default mode) PFC
//! on switch priority 3; `lossy` mode has no PFC. ECN's classes: the guide's table says traffic
//! class 3, its `nv show qos roce` example shows `enabled-tc 0,3`; the example is followed, so
//! every switch priority but 6 (CNPs, strict) marks.
//! Priorities here are switch priorities; ECN is per traffic class and is given for each switch
//! priority that `egress-queue-mapping` sends to that class.

use std::collections::BTreeMap;

use super::tree::{Entry, Node, Value, at, error, most_common, parse_dscp, parse_priority};
use super::yaml;
use crate::analyze::fabric::model::{ConfigError, DeviceConfig, EcnMarking, Read, Trust};

/// The profile NVUE applies to all ports unless one is named per interface.
const GLOBAL_PROFILE: &str = "default-global";

/// Whether `text` looks like NVUE's YAML: its header or a top-level `qos`/`interface` tree.
pub fn recognises(text: &str) -> bool {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('!') {
        return false;
    }
    text.lines().any(|line| {
        matches!(line.trim_end(), "- header:" | "- set:" | "qos:" | "interface:" | "set:" | "  qos:" | "  interface:")
            || line.starts_with("    nvue-api-version:")
    })
}

/// Reads the `qos` tree and the interfaces' MTU and PFC watchdog into `config`.
pub fn read(file: &str, text: &str, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let root = yaml::parse(file, text)?;
    let Some((tree, tree_line)) = configuration(&root) else {
        return Err(error(file, root.line, "no `set` tree with `qos` or `interface` in NVUE's YAML"));
    };
    let qos = tree.entry("qos");
    let section_line = qos.map_or(tree_line, |entry| entry.key_line);
    let roce = match qos {
        Some(qos) => read_roce(&qos.node),
        None => None,
    };
    if let Some(qos) = qos {
        read_trust_and_dscp(file, &qos.node, roce.as_ref(), config)?;
        read_pfc(file, &qos.node, roce.as_ref(), config)?;
        read_ecn(file, &qos.node, roce.as_ref(), config)?;
    }
    for (name, missing) in [
        ("dscp_to_priority", config.dscp_to_priority.is_empty()),
        ("pfc", config.pfc_priorities.is_none()),
        ("ecn", config.ecn.is_empty()),
    ] {
        if missing {
            config.sections.insert(name.into(), at(file, section_line));
        }
    }
    read_interfaces(file, tree, tree_line, config)?;
    Ok(())
}

/// The configuration tree: the `set` item of the list NVUE prints, or the document itself;
/// and the line of its `set` key (of the document where there is none).
fn configuration(root: &Node) -> Option<(&Node, usize)> {
    match &root.value {
        Value::List(items) => items.iter().find_map(set_tree),
        Value::Map(_) => set_tree(root).or(Some((root, root.line)).filter(|(root, _)| has_tree(root))),
        Value::Scalar(_) => None,
    }
}

fn has_tree(node: &Node) -> bool {
    node.get("qos").is_some() || node.get("interface").is_some()
}

fn set_tree(node: &Node) -> Option<(&Node, usize)> {
    node.entry("set").filter(|set| has_tree(&set.node)).map(|set| (&set.node, set.key_line))
}

/// `qos roce` when enabled: its line and whether its mode is lossless.
struct Roce {
    line: usize,
    lossless: bool,
    mode_line: usize,
}

fn read_roce(qos: &Node) -> Option<Roce> {
    let roce = qos.entry("roce")?;
    // `nv set qos roce` writes `enable: on` (some releases' configurations say `state: enabled`);
    // an explicit `off` disables the RoCE defaults.
    let enable = roce.node.entry("enable").or_else(|| roce.node.entry("state"));
    let off = ["off", "false", "disable", "disabled"];
    if enable.and_then(|entry| entry.node.scalar()).is_some_and(|value| off.contains(&value)) {
        return None;
    }
    let line = enable.map_or(roce.key_line, |entry| entry.key_line);
    let mode = roce.node.entry("mode");
    let mode_text = mode.and_then(|entry| entry.node.scalar()).unwrap_or("lossless");
    Some(Roce {
        line,
        lossless: mode_text.starts_with("lossless"),
        mode_line: mode.map_or(line, |entry| entry.key_line),
    })
}

/// The global profile of a `qos` subtree (`mapping`, `pfc`, ...), else its first profile.
fn global_profile<'a>(qos: &'a Node, subtree: &str) -> Option<&'a Entry> {
    let profiles = qos.get(subtree)?;
    profiles.entry(GLOBAL_PROFILE).or_else(|| profiles.entries().first())
}

fn read_trust_and_dscp(
    file: &str,
    qos: &Node,
    roce: Option<&Roce>,
    config: &mut DeviceConfig,
) -> Result<(), ConfigError> {
    if let Some(roce) = roce {
        config.trust = Some(Read { value: Trust::Dscp, at: at(file, roce.line) });
        for dscp in 0..=63u8 {
            config.dscp_to_priority.insert(dscp, Read { value: dscp / 8, at: at(file, roce.line) });
        }
    }
    let Some(mapping) = global_profile(qos, "mapping") else { return Ok(()) };
    if let Some(trust) = mapping.node.entry("trust") {
        // NVUE: `l2` (PCP), `l3` (DSCP), `both` (DSCP for IP packets), `port` (none).
        match trust.node.scalar() {
            Some("l3" | "both") => config.trust = Some(Read { value: Trust::Dscp, at: at(file, trust.key_line) }),
            Some("l2") => config.trust = Some(Read { value: Trust::Pcp, at: at(file, trust.key_line) }),
            Some("port") => config.trust = None,
            other => {
                return Err(error(file, trust.key_line, format!("unknown trust `{}`", other.unwrap_or_default())));
            }
        }
    }
    for entry in mapping.node.get("dscp").map(Node::entries).unwrap_or_default() {
        let dscp = parse_dscp(file, entry.key_line, &entry.key)?;
        let Some(priority) = entry.node.entry("switch-priority") else { continue };
        let value =
            parse_priority(file, priority.key_line, priority.node.scalar().unwrap_or_default(), "switch-priority")?;
        config.dscp_to_priority.insert(dscp, Read { value, at: at(file, entry.key_line) });
    }
    Ok(())
}

fn read_pfc(file: &str, qos: &Node, roce: Option<&Roce>, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    if let Some(roce) = roce {
        let (priorities, line) = if roce.lossless { (vec![3], roce.line) } else { (Vec::new(), roce.mode_line) };
        config.pfc_priorities = Some(Read { value: priorities, at: at(file, line) });
    }
    let Some(pfc) = global_profile(qos, "pfc") else { return Ok(()) };
    let Some(list) = pfc.node.entry("switch-priority") else { return Ok(()) };
    let mut priorities = Vec::new();
    // `switch-priority: {3: {}}`; a scalar `switch-priority: 3` is accepted too.
    match &list.node.value {
        Value::Map(entries) => {
            for entry in entries {
                priorities.push(parse_priority(file, entry.key_line, &entry.key, "switch-priority")?);
            }
        }
        Value::Scalar(text) => priorities.push(parse_priority(file, list.key_line, text, "switch-priority")?),
        Value::List(items) => {
            for item in items {
                priorities.push(parse_priority(file, item.line, item.scalar().unwrap_or_default(), "switch-priority")?);
            }
        }
    }
    priorities.sort_unstable();
    priorities.dedup();
    config.pfc_priorities = Some(Read { value: priorities, at: at(file, list.key_line) });
    Ok(())
}

/// Switch priority → traffic class: RoCE's defaults, or the identity, then the tree's own.
fn egress_queue_mapping(file: &str, qos: &Node, roce: Option<&Roce>) -> Result<BTreeMap<u8, u8>, ConfigError> {
    let mut mapping: BTreeMap<u8, u8> = (0..=7u8)
        .map(|priority| match roce {
            Some(_) if priority == 3 || priority == 6 => (priority, priority),
            Some(_) => (priority, 0),
            None => (priority, priority),
        })
        .collect();
    let Some(profile) = global_profile(qos, "egress-queue-mapping") else { return Ok(mapping) };
    for entry in profile.node.get("switch-priority").map(Node::entries).unwrap_or_default() {
        let priority = parse_priority(file, entry.key_line, &entry.key, "switch-priority")?;
        let Some(class) = entry.node.entry("traffic-class") else { continue };
        let class = parse_priority(file, class.key_line, class.node.scalar().unwrap_or_default(), "traffic-class")?;
        mapping.insert(priority, class);
    }
    Ok(mapping)
}

/// One traffic class's marking, before it is given to switch priorities.
#[derive(Clone)]
struct ClassMarking {
    enabled: bool,
    min_bytes: Option<u64>,
    max_bytes: Option<u64>,
    probability: Option<u8>,
    line: usize,
}

fn read_ecn(file: &str, qos: &Node, roce: Option<&Roce>, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let mut classes: BTreeMap<u8, ClassMarking> = BTreeMap::new();
    if let Some(roce) = roce {
        let marking = ClassMarking {
            enabled: true,
            min_bytes: Some(150_000),
            max_bytes: Some(1_500_000),
            probability: Some(100),
            line: roce.line,
        };
        classes.insert(0, marking.clone());
        classes.insert(3, marking);
    }
    if let Some(profile) = global_profile(qos, "congestion-control") {
        for entry in profile.node.get("traffic-class").map(Node::entries).unwrap_or_default() {
            let class = parse_priority(file, entry.key_line, &entry.key, "traffic-class")?;
            classes.insert(class, class_marking(file, entry)?);
        }
    }
    let mapping = egress_queue_mapping(file, qos, roce)?;
    for (priority, class) in mapping {
        let Some(marking) = classes.get(&class) else { continue };
        config.ecn.push(EcnMarking {
            priority,
            enabled: marking.enabled,
            min_bytes: marking.min_bytes,
            max_bytes: marking.max_bytes,
            probability: marking.probability,
            at: at(file, marking.line),
        });
    }
    Ok(())
}

/// A `congestion-control` traffic class: `ecn: enable|disable`, thresholds in bytes (NVUE
/// prints bytes; a `KB`/`MB` suffix is read as 1024-based), `probability` in percent.
fn class_marking(file: &str, entry: &Entry) -> Result<ClassMarking, ConfigError> {
    let ecn = entry.node.entry("ecn");
    let enabled = ecn.and_then(|ecn| ecn.node.scalar()).is_none_or(|value| matches!(value, "enable" | "on" | "true"));
    let bytes = |field: &str| -> Result<Option<u64>, ConfigError> {
        let Some(value) = entry.node.entry(field) else { return Ok(None) };
        let text = value.node.scalar().unwrap_or_default();
        parse_bytes(text)
            .map(Some)
            .ok_or_else(|| error(file, value.key_line, format!("{field} `{text}` is not a size")))
    };
    let probability = match entry.node.entry("probability") {
        Some(value) => {
            let text = value.node.scalar().unwrap_or_default();
            match text.trim().parse::<u8>() {
                Ok(percent) if percent <= 100 => Some(percent),
                _ => return Err(error(file, value.key_line, format!("probability `{text}` is not 0..=100"))),
            }
        }
        None => None,
    };
    Ok(ClassMarking {
        enabled,
        min_bytes: bytes("min-threshold")?,
        max_bytes: bytes("max-threshold")?,
        probability,
        line: ecn.map_or(entry.key_line, |ecn| ecn.key_line),
    })
}

fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let scale = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "KB" | "K" => 1024,
        "MB" | "M" => 1024 * 1024,
        _ => return None,
    };
    number.checked_mul(scale)
}

/// The interfaces' most common `link: mtu`, and whether any has `qos: pfc-watchdog` on.
fn read_interfaces(file: &str, tree: &Node, tree_line: usize, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let interfaces = tree.entry("interface");
    let section_line = interfaces.map_or(tree_line, |entry| entry.key_line);
    let mut mtus = Vec::new();
    let mut watchdog = None;
    for interface in interfaces.map(|entry| entry.node.entries()).unwrap_or_default() {
        if let Some(mtu) = interface.node.entry_at(&["link", "mtu"]) {
            let text = mtu.node.scalar().unwrap_or_default();
            let value = text
                .trim()
                .parse::<u32>()
                .map_err(|_| error(file, mtu.key_line, format!("mtu `{text}` is not a number")))?;
            mtus.push((value, mtu.key_line));
        }
        // `nv set interface <id> qos pfc-watchdog state enable|disable` (NVUE command reference,
        // Cumulus Linux 5.x: "The default setting is `disable`"): on only where `state` says so.
        if let Some(entry) = interface.node.entry_at(&["qos", "pfc-watchdog"]) {
            let state = entry.node.get("state").and_then(Node::scalar);
            let on = matches!(state, Some("enable" | "enabled" | "on"));
            if watchdog.as_ref().is_none_or(|seen: &Read<bool>| on && !seen.value) {
                watchdog = Some(Read { value: on, at: at(file, entry.key_line) });
            }
        }
    }
    match most_common(&mtus) {
        Some((mtu, line)) => config.mtu = Some(Read { value: mtu, at: at(file, line) }),
        None => {
            config.sections.insert("mtu".into(), at(file, section_line));
        }
    }
    match watchdog {
        Some(watchdog) => config.pfc_watchdog = Some(watchdog),
        None => {
            config.sections.insert("pfc_watchdog".into(), at(file, section_line));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nv set qos roce` and MTUs only: Cumulus's RoCE defaults apply.
    const ROCE_DEFAULTS: &str = include_str!("testdata/nvue_roce_defaults.yaml");
    /// The same fabric spelled out: DSCP 26 → 3, CNPs' 48 → 6, PFC on 3, ECN on class 3, and a
    /// PFC watchdog on swp1.
    const ROCE_EXPLICIT: &str = include_str!("testdata/nvue_roce_explicit.yaml");
    /// SONiC's default QoS written in NVUE: DSCP 3 and 4 lossless on switch priorities 3 and 4.
    const TWO_LOSSLESS: &str = "\
- header:
    model: SN2700
    version: Cumulus Linux 5.4.0
- set:
    qos:
      mapping:
        default-global:
          trust: l3
          dscp:
            3:
              switch-priority: 3
            4:
              switch-priority: 4
      pfc:
        default-global:
          switch-priority:
            3: {}
            4: {}
      congestion-control:
        default-global:
          traffic-class:
            3:
              ecn: enable
              min-threshold: 1048576
              max-threshold: 2097152
              probability: 5
            4:
              ecn: enable
              min-threshold: 1048576
              max-threshold: 2097152
              probability: 5
    interface:
      swp1:
        link:
          mtu: 9100
";

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        let mut config = DeviceConfig::default();
        read("nv.yaml", text, &mut config).map(|()| config)
    }

    fn here(line: usize) -> crate::analyze::fabric::model::At {
        at("nv.yaml", line)
    }

    fn marking(priority: u8, enabled: bool, line: usize) -> EcnMarking {
        EcnMarking {
            priority,
            enabled,
            min_bytes: Some(150_000),
            max_bytes: Some(1_500_000),
            probability: Some(100),
            at: here(line),
        }
    }

    #[test]
    fn roce_enable_alone_implies_cumulus_defaults() {
        let config = read_text(ROCE_DEFAULTS).unwrap();
        assert_eq!(config.trust, Some(Read { value: Trust::Dscp, at: here(24) }));
        assert_eq!(config.dscp_to_priority.len(), 64);
        assert_eq!(config.dscp_to_priority.get(&26), Some(&Read { value: 3, at: here(24) }));
        assert_eq!(config.dscp_to_priority.get(&48), Some(&Read { value: 6, at: here(24) }));
        assert_eq!(config.dscp_to_priority.get(&0).map(|read| read.value), Some(0));
        assert_eq!(config.dscp_to_priority.get(&63).map(|read| read.value), Some(7));
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3], at: here(24) }));
        let marked: Vec<u8> = config.ecn.iter().map(|marking| marking.priority).collect();
        assert_eq!(marked, [0, 1, 2, 3, 4, 5, 7]);
        assert_eq!(config.ecn.iter().find(|marking| marking.priority == 3), Some(&marking(3, true, 24)));
        // Two interfaces at 9216, one at 1500.
        assert_eq!(config.mtu, Some(Read { value: 9216, at: here(10) }));
        assert_eq!(config.pfc_watchdog, None);
        assert_eq!(config.sections.get("pfc_watchdog"), Some(&here(7)));
        assert_eq!(config.sections.len(), 1, "{:?}", config.sections);
    }

    #[test]
    fn roce_off_implies_nothing() {
        let config = read_text(&ROCE_DEFAULTS.replace("enable: on", "enable: off")).unwrap();
        assert_eq!((config.trust, config.pfc_priorities), (None, None));
        assert!(config.dscp_to_priority.is_empty() && config.ecn.is_empty());
        assert_eq!(config.sections.get("pfc"), Some(&here(22)));
        let config = read_text(&ROCE_DEFAULTS.replace("enable: on", "state: enabled")).unwrap();
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3], at: here(24) }));
    }

    #[test]
    fn lossy_roce_has_no_pfc() {
        let config = read_text(&ROCE_DEFAULTS.replace("mode: lossless", "mode: lossy")).unwrap();
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![], at: here(25) }));
        assert_eq!(config.ecn.get(3), Some(&marking(3, true, 24)));
    }

    #[test]
    fn roce_spelled_out_reads_every_value_with_its_line() {
        let config = read_text(ROCE_EXPLICIT).unwrap();
        assert_eq!(config.trust, Some(Read { value: Trust::Dscp, at: here(24) }));
        let map: Vec<(u8, u8, usize)> =
            config.dscp_to_priority.iter().map(|(dscp, read)| (*dscp, read.value, read.at.line)).collect();
        assert_eq!(map, [(26, 3, 26), (48, 6, 28)]);
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3], at: here(32) }));
        assert_eq!(config.ecn, [marking(3, true, 48)]);
        assert_eq!(config.mtu, Some(Read { value: 9216, at: here(12) }));
        assert_eq!(config.pfc_watchdog, Some(Read { value: true, at: here(14) }));
        assert!(config.sections.is_empty(), "{:?}", config.sections);
    }

    #[test]
    fn two_lossless_priorities() {
        let config = read_text(TWO_LOSSLESS).unwrap();
        let map: Vec<(u8, u8, usize)> =
            config.dscp_to_priority.iter().map(|(dscp, read)| (*dscp, read.value, read.at.line)).collect();
        assert_eq!(map, [(3, 3, 10), (4, 4, 12)]);
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3, 4], at: here(16) }));
        let azure = |priority, line| EcnMarking {
            priority,
            enabled: true,
            min_bytes: Some(1_048_576),
            max_bytes: Some(2_097_152),
            probability: Some(5),
            at: here(line),
        };
        assert_eq!(config.ecn, [azure(3, 23), azure(4, 28)]);
        assert_eq!(config.mtu, Some(Read { value: 9100, at: here(35) }));
        assert_eq!(config.sections.get("pfc_watchdog"), Some(&here(32)));
    }

    #[test]
    fn ecn_disabled_on_the_roce_class() {
        let config = read_text(&ROCE_EXPLICIT.replace("ecn: enable", "ecn: disable")).unwrap();
        assert_eq!(config.ecn, [marking(3, false, 48)]);
    }

    #[test]
    fn ecn_follows_the_egress_queue_mapping() {
        // Switch priority 4 sent to class 3 too: it shares class 3's marking.
        let text = ROCE_EXPLICIT.replace(
            "            6:\n              traffic-class: 6",
            "            4:\n              traffic-class: 3",
        );
        let config = read_text(&text).unwrap();
        assert_eq!(config.ecn, [marking(3, true, 48), marking(4, true, 48)]);
    }

    #[test]
    fn no_pfc_watchdog() {
        let text = ROCE_EXPLICIT.replace("        qos:\n          pfc-watchdog:\n            state: enable\n", "");
        let config = read_text(&text).unwrap();
        assert_eq!(config.pfc_watchdog, None);
        assert_eq!(config.sections.get("pfc_watchdog"), Some(&here(7)));
        let text = ROCE_EXPLICIT.replace("state: enable", "state: disable");
        assert_eq!(read_text(&text).unwrap().pfc_watchdog, Some(Read { value: false, at: here(14) }));
        // Without a state, NVUE's default: disabled.
        let text = ROCE_EXPLICIT
            .replace("          pfc-watchdog:\n            state: enable\n", "          pfc-watchdog: {}\n");
        assert_eq!(read_text(&text).unwrap().pfc_watchdog, Some(Read { value: false, at: here(14) }));
    }

    #[test]
    fn pfc_on_another_priority() {
        let config = read_text(&ROCE_EXPLICIT.replace("            3: {}", "            4: {}")).unwrap();
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![4], at: here(32) }));
    }

    #[test]
    fn explicit_values_override_the_roce_defaults() {
        let text = ROCE_DEFAULTS.replace(
            "      roce:\n",
            "      pfc:\n        default-global:\n          switch-priority:\n            2: {}\n      roce:\n",
        );
        let config = read_text(&text).unwrap();
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![2], at: here(25) }));
    }

    #[test]
    fn no_qos_tree_leaves_sections() {
        let config = read_text("- set:\n    interface:\n      swp1:\n        type: swp\n").unwrap();
        assert_eq!(config.trust, None);
        assert_eq!(config.pfc_priorities, None);
        for (name, line) in [("dscp_to_priority", 1), ("pfc", 1), ("ecn", 1), ("mtu", 2), ("pfc_watchdog", 2)] {
            assert_eq!(config.sections.get(name), Some(&here(line)), "{name}");
        }
    }

    #[test]
    fn yaml_syntax_errors_carry_their_line() {
        let err = read_text(&ROCE_EXPLICIT.replace("          trust: l3", "          trust: l3: x")).unwrap_err();
        assert_eq!((err.file.as_str(), err.line), ("nv.yaml", 24), "{err}");
        let err = read_text(&ROCE_DEFAULTS.replace("        mode: lossless", "       mode: lossless")).unwrap_err();
        assert_eq!(err.line, 25, "{err}");
    }

    #[test]
    fn bad_values_carry_their_line() {
        let err = read_text(&ROCE_EXPLICIT.replace("switch-priority: 3", "switch-priority: 9")).unwrap_err();
        assert_eq!(err.line, 27, "{err}");
        let err = read_text(&ROCE_EXPLICIT.replace("min-threshold: 150000", "min-threshold: lots")).unwrap_err();
        assert_eq!(err.line, 49, "{err}");
        let err = read_text(&ROCE_EXPLICIT.replace("trust: l3", "trust: l7")).unwrap_err();
        assert_eq!(err.line, 24, "{err}");
        let err = read_text("- header:\n    model: x\n").unwrap_err();
        assert_eq!(err.line, 1, "{err}");
    }

    #[test]
    fn recognises_nvue_only() {
        assert!(recognises(ROCE_DEFAULTS) && recognises(ROCE_EXPLICIT) && recognises(TWO_LOSSLESS));
        assert!(!recognises("{\"PORT\": {}}"));
        assert!(!recognises("! Command: show running-config\ninterface Ethernet1\n!\n"));
    }
}
