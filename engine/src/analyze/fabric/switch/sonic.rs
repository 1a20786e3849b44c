//! SONiC's `config_db.json` (`show runningconfiguration all`, or `/etc/sonic/config_db.json`).
//!
//! The tables read, as sonic-buildimage's `files/build_templates/qos_config.j2` writes them:
//! `DSCP_TO_TC_MAP` (map name → {"26": "3", ...}), `PORT_QOS_MAP` (per port, and a `global`
//! entry, binding `dscp_to_tc_map` / `dot1p_to_tc_map` by name, written `AZURE` or, in older
//! releases, `[DSCP_TO_TC_MAP|AZURE]`, and listing `pfc_enable` "3,4"), `WRED_PROFILE`
//! (`ecn` "ecn_all"/"ecn_none"/..., `green_min_threshold`, `green_max_threshold` in bytes,
//! `green_drop_probability` in percent), `QUEUE` ("Ethernet0|3" or "Ethernet0|3-4" →
//! `wred_profile`), `PFC_WD` (per port `detection_time`/`restoration_time`/`action`, and
//! `GLOBAL` → `POLL_INTERVAL`) and `PORT` (`mtu`).
//!
//! The model is per switch, so each per-port value is the ports' most common one. Priorities:
//! SONiC's templates map TC → queue (`TC_TO_QUEUE_MAP`) and PFC priority → queue
//! (`MAP_PFC_PRIORITY_TO_QUEUE`) as the identity, and `TC_TO_PRIORITY_GROUP_MAP` names buffer
//! groups, not priorities; so a traffic class, a queue index and a PFC priority are read as the
//! same number. A config_db with none of the QoS tables is "not configured": its QoS fields stay
//! `None` (SONiC then runs its platform defaults), though its MTU is still read.

use std::collections::BTreeMap;

use super::json;
use super::tree::{Entry, Node, at, error, most_common, parse_dscp, parse_priority};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig, EcnMarking, Read, Trust};

/// The tables whose presence means QoS was configured.
const QOS_TABLES: [&str; 6] = ["DSCP_TO_TC_MAP", "DOT1P_TO_TC_MAP", "PORT_QOS_MAP", "WRED_PROFILE", "QUEUE", "PFC_WD"];

/// Whether `text` looks like a config_db.json: a JSON object naming a table SONiC writes.
pub fn recognises(text: &str) -> bool {
    text.trim_start().starts_with('{')
        && ["\"DEVICE_METADATA\"", "\"PORT_QOS_MAP\"", "\"DSCP_TO_TC_MAP\"", "\"PORT\"", "\"WRED_PROFILE\""]
            .iter()
            .any(|table| text.contains(table))
}

/// Reads a config_db.json's QoS tables and ports' MTU into `config`.
pub fn read(file: &str, text: &str, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let root = json::parse(file, text)?;
    if !matches!(root.value, super::tree::Value::Map(_)) {
        return Err(error(file, root.line, "a config_db.json is a JSON object of tables"));
    }
    read_mtu(file, &root, config)?;
    if !QOS_TABLES.iter().any(|table| root.get(table).is_some()) {
        return Ok(());
    }
    read_dscp_map(file, &root, config)?;
    read_pfc(file, &root, config)?;
    read_ecn(file, &root, config)?;
    read_watchdog(file, &root, config);
    Ok(())
}

/// The line of a table's key, or of the document's start where the table is absent.
fn table_line(root: &Node, table: &str) -> usize {
    root.entry(table).map_or(root.line, |entry| entry.key_line)
}

/// A reference to another table's entry, `[TABLE|NAME]` or `NAME`, as the name.
fn referenced_name(reference: &str) -> &str {
    let inner = reference.trim().trim_start_matches('[').trim_end_matches(']');
    inner.rsplit('|').next().unwrap_or(inner)
}

/// Each `PORT_QOS_MAP` entry's `field`: its value and the line of the field.
fn port_qos_fields<'a>(root: &'a Node, field: &str) -> Vec<(&'a str, usize)> {
    let Some(ports) = root.get("PORT_QOS_MAP") else { return Vec::new() };
    ports
        .entries()
        .iter()
        .filter_map(|port| port.node.entry(field))
        .filter_map(|entry| Some((entry.node.scalar()?, entry.key_line)))
        .collect()
}

/// DSCP → TC of the `DSCP_TO_TC_MAP` the ports (and `global`) bind most often; where ports
/// bind different maps, the most used one stands for the switch. Trust follows the binding:
/// DSCP where a DSCP map is bound, else 802.1p where a `dot1p_to_tc_map` is.
fn read_dscp_map(file: &str, root: &Node, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let bindings: Vec<(&str, usize)> =
        port_qos_fields(root, "dscp_to_tc_map").into_iter().map(|(name, line)| (referenced_name(name), line)).collect();
    let Some((name, bound_at)) = most_common(&bindings) else {
        if let Some((_, line)) = port_qos_fields(root, "dot1p_to_tc_map").first() {
            config.trust = Some(Read { value: Trust::Pcp, at: at(file, *line) });
        }
        config.sections.insert("dscp_to_priority".into(), at(file, table_line(root, "PORT_QOS_MAP")));
        return Ok(());
    };
    config.trust = Some(Read { value: Trust::Dscp, at: at(file, bound_at) });
    let Some(map) = root.get("DSCP_TO_TC_MAP").and_then(|maps| maps.get(name)) else {
        // Bound but not defined: SONiC's orchestrator would refuse it; nothing to read.
        config.sections.insert("dscp_to_priority".into(), at(file, table_line(root, "DSCP_TO_TC_MAP")));
        return Ok(());
    };
    for entry in map.entries() {
        let dscp = parse_dscp(file, entry.key_line, &entry.key)?;
        let tc = entry.node.scalar().unwrap_or_default();
        let priority = parse_priority(file, entry.node.line, tc, "traffic class")?;
        config.dscp_to_priority.insert(dscp, Read { value: priority, at: at(file, entry.key_line) });
    }
    Ok(())
}

/// A priority list as `pfc_enable` writes it: "3,4" (or "" for none).
fn parse_priority_list(file: &str, line: usize, text: &str) -> Result<Vec<u8>, ConfigError> {
    let mut priorities = text
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| parse_priority(file, line, item, "PFC priority"))
        .collect::<Result<Vec<u8>, _>>()?;
    priorities.sort_unstable();
    priorities.dedup();
    Ok(priorities)
}

/// The ports' most common `pfc_enable`.
fn read_pfc(file: &str, root: &Node, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let mut seen = Vec::new();
    for (text, line) in port_qos_fields(root, "pfc_enable") {
        seen.push((parse_priority_list(file, line, text)?, line));
    }
    match most_common(&seen) {
        Some((priorities, line)) => config.pfc_priorities = Some(Read { value: priorities, at: at(file, line) }),
        None => {
            config.sections.insert("pfc".into(), at(file, table_line(root, "PORT_QOS_MAP")));
        }
    }
    Ok(())
}

/// A `QUEUE` key's queue indexes: "Ethernet0|3" → [3], "Ethernet0|3-4" → [3, 4].
fn queue_indexes(key: &str) -> Vec<u8> {
    let Some((_, queues)) = key.rsplit_once('|') else { return Vec::new() };
    let (first, last) = queues.split_once('-').unwrap_or((queues, queues));
    match (first.trim().parse::<u8>(), last.trim().parse::<u8>()) {
        (Ok(first), Ok(last)) if first <= last && last <= 7 => (first..=last).collect(),
        _ => Vec::new(),
    }
}

/// ECN per priority: the WRED profile most of the ports' queues of that index use.
fn read_ecn(file: &str, root: &Node, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let mut profiles_by_queue: BTreeMap<u8, Vec<(&str, usize)>> = BTreeMap::new();
    for queue in root.get("QUEUE").map(Node::entries).unwrap_or_default() {
        let Some(profile) = queue.node.get("wred_profile").and_then(Node::scalar) else { continue };
        for index in queue_indexes(&queue.key) {
            profiles_by_queue.entry(index).or_default().push((referenced_name(profile), queue.key_line));
        }
    }
    if profiles_by_queue.is_empty() {
        let section = if root.get("QUEUE").is_some() { "QUEUE" } else { "WRED_PROFILE" };
        config.sections.insert("ecn".into(), at(file, table_line(root, section)));
        return Ok(());
    }
    for (priority, profiles) in profiles_by_queue {
        let Some((name, queue_line)) = most_common(&profiles) else { continue };
        let profile = root.get("WRED_PROFILE").and_then(|profiles| profiles.entry(name));
        config.ecn.push(ecn_of_profile(file, priority, profile, queue_line)?);
    }
    Ok(())
}

/// The marking of a WRED profile (green thresholds: RoCE traffic is not policed into colours).
/// Marking is on for any `ecn` mode but `ecn_none` (SAI's ECN modes); a profile with no `ecn`
/// field only drops. Its line is that of `ecn`, else of the profile, else of the queue.
fn ecn_of_profile(
    file: &str,
    priority: u8,
    profile: Option<&Entry>,
    queue_line: usize,
) -> Result<EcnMarking, ConfigError> {
    let Some(profile) = profile else {
        return Ok(EcnMarking {
            priority,
            enabled: false,
            min_bytes: None,
            max_bytes: None,
            probability: None,
            at: at(file, queue_line),
        });
    };
    let ecn = profile.node.entry("ecn");
    let enabled = ecn.and_then(|entry| entry.node.scalar()).is_some_and(|mode| mode != "ecn_none");
    let number = |field: &str| -> Result<Option<u64>, ConfigError> {
        let Some(entry) = profile.node.entry(field) else { return Ok(None) };
        let text = entry.node.scalar().unwrap_or_default();
        text.trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| error(file, entry.key_line, format!("{field} `{text}` is not a number")))
    };
    let probability = match number("green_drop_probability")? {
        Some(percent) => match u8::try_from(percent).ok().filter(|percent| *percent <= 100) {
            Some(percent) => Some(percent),
            None => {
                let line =
                    profile.node.entry("green_drop_probability").map_or(profile.key_line, |entry| entry.key_line);
                return Err(error(file, line, format!("green_drop_probability {percent} is over 100 percent")));
            }
        },
        None => None,
    };
    Ok(EcnMarking {
        priority,
        enabled,
        min_bytes: number("green_min_threshold")?,
        max_bytes: number("green_max_threshold")?,
        probability,
        at: at(file, ecn.map_or(profile.key_line, |entry| entry.key_line)),
    })
}

/// The watchdog is on where `PFC_WD` configures a port (its `GLOBAL` entry only sets the poll
/// interval); a `PFC_WD` with ports none of which has a detection time is off. Without
/// `PFC_WD`, `DEVICE_METADATA|localhost`'s `default_pfcwd_status: enable` turns it on: the
/// switch starts the watchdog on every port at boot (`pfcwd start_default`), which a saved
/// `config_db.json` does not list.
fn read_watchdog(file: &str, root: &Node, config: &mut DeviceConfig) {
    let Some(table) = root.entry("PFC_WD") else {
        let default = root.entry_at(&["DEVICE_METADATA", "localhost", "default_pfcwd_status"]);
        match default.filter(|status| status.node.scalar() == Some("enable")) {
            Some(status) => config.pfc_watchdog = Some(Read { value: true, at: at(file, status.key_line) }),
            None => {
                config.sections.insert("pfc_watchdog".into(), at(file, root.line));
            }
        }
        return;
    };
    let ports: Vec<&Entry> = table.node.entries().iter().filter(|entry| entry.key != "GLOBAL").collect();
    match ports.iter().find(|port| port.node.get("detection_time").is_some()) {
        Some(port) => config.pfc_watchdog = Some(Read { value: true, at: at(file, port.key_line) }),
        None if !ports.is_empty() => config.pfc_watchdog = Some(Read { value: false, at: at(file, table.key_line) }),
        None => {
            config.sections.insert("pfc_watchdog".into(), at(file, table.key_line));
        }
    }
}

/// The ports' most common MTU.
fn read_mtu(file: &str, root: &Node, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let mut seen = Vec::new();
    for port in root.get("PORT").map(Node::entries).unwrap_or_default() {
        let Some(entry) = port.node.entry("mtu") else { continue };
        let text = entry.node.scalar().unwrap_or_default();
        let mtu = text
            .trim()
            .parse::<u32>()
            .map_err(|_| error(file, entry.key_line, format!("mtu `{text}` is not a number")))?;
        seen.push((mtu, entry.key_line));
    }
    match most_common(&seen) {
        Some((mtu, line)) => config.mtu = Some(Read { value: mtu, at: at(file, line) }),
        None => {
            config.sections.insert("mtu".into(), at(file, table_line(root, "PORT")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_watchdog_status_turns_it_on_without_a_pfc_wd_table() {
        let text = "{\n  \"DEVICE_METADATA\": {\n    \"localhost\": {\n      \"hostname\": \"leaf1\",\n      \"default_pfcwd_status\": \"enable\"\n    }\n  },\n  \"PORT_QOS_MAP\": {\n    \"Ethernet0\": { \"pfc_enable\": \"3,4\" }\n  }\n}\n";
        let mut config = DeviceConfig::default();
        read("config_db.json", text, &mut config).expect("read");
        let watchdog = config.pfc_watchdog.expect("a watchdog");
        assert_eq!((watchdog.value, watchdog.at.line), (true, 5));
        let mut disabled = DeviceConfig::default();
        read("config_db.json", &text.replace("\"enable\"", "\"disable\""), &mut disabled).expect("read");
        assert_eq!(disabled.pfc_watchdog, None);
        assert_eq!(disabled.sections.get("pfc_watchdog").map(|at| at.line), Some(1));
    }

    /// An NVIDIA-style RoCE fabric's leaf: DSCP 26 → TC 3 lossless with ECN, CNPs' DSCP 48 → 6,
    /// a PFC watchdog, MTU 9216; one port (Ethernet16) binds another map and more PFC.
    const ROCE: &str = include_str!("testdata/sonic_roce.json");
    /// SONiC's default QoS (sonic-buildimage's qos_config.j2): DSCP 3 and 4 lossless on TC 3
    /// and 4, WRED `AZURE_LOSSLESS` on queues 3-4, no PFC_WD table.
    const AZURE: &str = include_str!("testdata/sonic_azure.json");

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        let mut config = DeviceConfig::default();
        read("config_db.json", text, &mut config).map(|()| config)
    }

    fn here(line: usize) -> crate::analyze::fabric::model::At {
        at("config_db.json", line)
    }

    #[test]
    fn roce_fabric_reads_every_value_with_its_line() {
        let config = read_text(ROCE).unwrap();
        assert_eq!(config.trust, Some(Read { value: Trust::Dscp, at: here(30) }));
        let map: Vec<(u8, u8, usize)> =
            config.dscp_to_priority.iter().map(|(dscp, read)| (*dscp, read.value, read.at.line)).collect();
        assert_eq!(map, [(0, 0, 11), (24, 3, 12), (26, 3, 13), (46, 5, 14), (48, 6, 15)]);
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3], at: here(35) }));
        assert_eq!(
            config.ecn,
            [EcnMarking {
                priority: 3,
                enabled: true,
                min_bytes: Some(150_000),
                max_bytes: Some(1_500_000),
                probability: Some(100),
                at: here(51),
            }]
        );
        assert_eq!(config.pfc_watchdog, Some(Read { value: true, at: here(74) }));
        assert_eq!(config.mtu, Some(Read { value: 9216, at: here(84) }));
        assert!(config.sections.is_empty(), "{:?}", config.sections);
    }

    #[test]
    fn sonic_default_qos_reads_two_lossless_priorities() {
        let config = read_text(AZURE).unwrap();
        assert_eq!(config.trust, Some(Read { value: Trust::Dscp, at: here(14) }));
        assert_eq!(config.dscp_to_priority.len(), 6);
        assert_eq!(config.dscp_to_priority.get(&0), Some(&Read { value: 1, at: here(4) }));
        assert_eq!(config.dscp_to_priority.get(&3), Some(&Read { value: 3, at: here(5) }));
        assert_eq!(config.dscp_to_priority.get(&4), Some(&Read { value: 4, at: here(6) }));
        assert_eq!(config.dscp_to_priority.get(&48), Some(&Read { value: 6, at: here(9) }));
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3, 4], at: here(16) }));
        let marking = |priority| EcnMarking {
            priority,
            enabled: true,
            min_bytes: Some(1_048_576),
            max_bytes: Some(2_097_152),
            probability: Some(5),
            at: here(27),
        };
        assert_eq!(config.ecn, [marking(3), marking(4)]);
        assert_eq!(config.pfc_watchdog, None);
        assert_eq!(config.mtu, Some(Read { value: 9100, at: here(52) }));
        assert_eq!(config.sections.get("pfc_watchdog"), Some(&here(1)));
        assert_eq!(config.sections.len(), 1, "{:?}", config.sections);
    }

    #[test]
    fn ecn_none_on_the_roce_queue_is_marking_off() {
        let text = ROCE.replace("\"ecn\": \"ecn_all\"", "\"ecn\": \"ecn_none\"");
        let config = read_text(&text).unwrap();
        assert_eq!(config.ecn.len(), 1);
        let marking = &config.ecn[0];
        assert_eq!((marking.priority, marking.enabled, marking.at.line), (3, false, 51));
    }

    #[test]
    fn a_profile_without_ecn_only_drops() {
        let text = ROCE.replace("\"ecn\": \"ecn_all\",", "");
        let config = read_text(&text).unwrap();
        assert_eq!(
            config.ecn.iter().map(|marking| (marking.priority, marking.enabled)).collect::<Vec<_>>(),
            [(3, false)]
        );
        // Without `ecn`, the marking stands at the profile's line.
        assert_eq!(config.ecn[0].at, here(49));
    }

    #[test]
    fn no_pfc_watchdog_is_a_missing_value_at_the_document() {
        let start = ROCE.find("    \"PFC_WD\"").unwrap();
        let end = ROCE.find("    \"PORT\": {").unwrap();
        let text = format!("{}{}", &ROCE[..start], &ROCE[end..]);
        let config = read_text(&text).unwrap();
        assert_eq!(config.pfc_watchdog, None);
        assert_eq!(config.sections.get("pfc_watchdog"), Some(&here(1)));
    }

    #[test]
    fn a_pfc_wd_of_only_global_settings_is_missing_at_its_table() {
        let text = ROCE.replace("\"detection_time\": \"200\",", "");
        let config = read_text(&text).unwrap();
        assert_eq!(config.pfc_watchdog, Some(Read { value: false, at: here(70) }));
    }

    #[test]
    fn pfc_on_another_priority() {
        let text = ROCE.replace("\"pfc_enable\": \"3\"", "\"pfc_enable\": \"4\"");
        let config = read_text(&text).unwrap();
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![4], at: here(35) }));
    }

    #[test]
    fn the_most_bound_map_stands_for_the_switch() {
        // Three bindings of ROCE (global, Ethernet0, Ethernet8) against one of LEGACY.
        let config = read_text(ROCE).unwrap();
        assert_eq!(config.dscp_to_priority.get(&26).map(|read| read.value), Some(3));
        // Two to two: the first bound wins (`global` binds ROCE first).
        let text = ROCE.replace("\"dscp_to_tc_map\": \"[DSCP_TO_TC_MAP|ROCE]\"", "\"dscp_to_tc_map\": \"LEGACY\"");
        let config = read_text(&text).unwrap();
        assert_eq!(config.dscp_to_priority.get(&26).map(|read| read.value), Some(3));
        // LEGACY most bound: its single entry.
        let text = text.replace("\"dscp_to_tc_map\": \"ROCE\",", "\"dscp_to_tc_map\": \"LEGACY\",");
        let config = read_text(&text).unwrap();
        let map: Vec<(u8, u8, usize)> =
            config.dscp_to_priority.iter().map(|(dscp, read)| (*dscp, read.value, read.at.line)).collect();
        assert_eq!(map, [(26, 1, 18)]);
        assert_eq!(config.trust, Some(Read { value: Trust::Dscp, at: here(33) }));
    }

    #[test]
    fn no_qos_tables_is_not_configured() {
        let text = "{\n  \"DEVICE_METADATA\": {\"localhost\": {\"hostname\": \"s1\"}},\n  \"PORT\": {\n    \"Ethernet0\": {\"mtu\": \"9100\"}\n  }\n}\n";
        let config = read_text(text).unwrap();
        assert_eq!(config.trust, None);
        assert!(config.dscp_to_priority.is_empty());
        assert_eq!(config.pfc_priorities, None);
        assert!(config.ecn.is_empty());
        assert_eq!(config.pfc_watchdog, None);
        assert_eq!(config.mtu, Some(Read { value: 9100, at: here(4) }));
        assert!(config.sections.is_empty(), "{:?}", config.sections);
    }

    #[test]
    fn missing_pfc_and_mtu_have_their_sections() {
        let text = "{\n  \"PORT_QOS_MAP\": {\n    \"Ethernet0\": {\"dscp_to_tc_map\": \"X\"}\n  },\n  \"PORT\": {\n    \"Ethernet0\": {}\n  }\n}";
        let config = read_text(text).unwrap();
        assert_eq!(config.sections.get("pfc"), Some(&here(2)));
        assert_eq!(config.sections.get("mtu"), Some(&here(5)));
        assert_eq!(config.sections.get("dscp_to_priority"), Some(&here(1)));
        assert_eq!(config.sections.get("ecn"), Some(&here(1)));
        assert_eq!(config.trust, Some(Read { value: Trust::Dscp, at: here(3) }));
    }

    #[test]
    fn syntax_errors_carry_their_line() {
        let text = ROCE.replace("\"pfc_enable\": \"3\",\n", "\"pfc_enable\": \"3\"\n");
        let err = read_text(&text).unwrap_err();
        assert_eq!((err.file.as_str(), err.line), ("config_db.json", 36), "{err}");
        let err = read_text(&ROCE[..ROCE.len() - 3]).unwrap_err();
        assert_eq!(err.line, 94, "{err}");
    }

    #[test]
    fn bad_values_carry_their_line() {
        let err = read_text(&ROCE.replace("\"pfc_enable\": \"3,4\"", "\"pfc_enable\": \"3,9\"")).unwrap_err();
        assert_eq!(err.line, 45, "{err}");
        let err = read_text(&ROCE.replace("\"48\": \"6\"", "\"64\": \"6\"")).unwrap_err();
        assert_eq!(err.line, 15, "{err}");
        let err = read_text(&ROCE.replace("\"green_min_threshold\": \"150000\"", "\"green_min_threshold\": \"lots\""))
            .unwrap_err();
        assert_eq!(err.line, 52, "{err}");
        let err = read_text("[1, 2]").unwrap_err();
        assert_eq!(err.line, 1);
    }

    #[test]
    fn recognises_config_db_only() {
        assert!(recognises(ROCE) && recognises(AZURE));
        assert!(!recognises("{\"foo\": 1}"));
        assert!(!recognises("- set:\n    qos: {}\n"));
    }
}
