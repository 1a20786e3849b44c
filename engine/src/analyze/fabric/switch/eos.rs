//! Arista EOS's `show running-config`: lines of commands, sub-modes indented by 3 spaces.
//!
//! Read (Arista EOS user manual, "Quality of Service" and "Priority Flow Control"):
//! - global `qos map dscp 26 [27 ...] to traffic-class 3`;
//! - `qos trust dscp|cos` (global or under an interface; `no qos trust` is untrusted);
//! - under `interface EthernetN` (and `Port-Channel`), or under a `qos profile NAME` that an
//!   interface applies with `service-profile NAME` (the interface's own lines win): `mtu 9214`, `priority-flow-control on`
//!   (`priority-flow-control mode on` in older releases), `priority-flow-control priority 3
//!   no-drop`, and `tx-queue 3` (`uc-tx-queue 3` on some platforms) sub-modes holding
//!   `random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes
//!   max-mark-probability 100` (units `bytes`, `kbytes`, `mbytes`; `segments` have no byte size
//!   and read as unknown);
//! - `priority-flow-control pause watchdog default timeout 0.2` (global; 0 is off) and the bare
//!   `priority-flow-control pause watchdog` under an interface turn the watchdog on, `no ...`
//!   turns it off; its other settings (`recovery-time`, `polling-interval`, `action`) only tune
//!   it and decide nothing.
//!
//! Priorities: EOS maps traffic class → tx-queue and traffic class ↔ CoS as the identity for
//! classes 2..=7 by default, and RoCE uses those; a traffic class, a tx-queue and a PFC priority
//! are read as the same number. The per-interface values stand for the switch by their most
//! common value. A line that starts like one of these commands but does not parse is an error.

use std::collections::BTreeMap;

use super::tree::{at, error, most_common, parse_dscp, parse_priority};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig, EcnMarking, Read, Trust};

/// Whether `text` looks like an EOS running-config.
pub fn recognises(text: &str) -> bool {
    let mut has_bang = false;
    let mut has_interface = false;
    for line in text.lines() {
        if line.starts_with("! Command: show running-config") || line.starts_with("qos map dscp ") {
            return true;
        }
        has_bang |= line.trim_end() == "!";
        has_interface |= line.starts_with("interface Ethernet");
    }
    has_bang && has_interface
}

/// An ECN marking as read, before it is compared across interfaces.
type Marking = (bool, Option<u64>, Option<u64>, Option<u8>);

/// What one interface, or one `qos profile`, says.
#[derive(Default, Clone)]
struct Interface {
    line: usize,
    /// The name of a `qos profile` block (`None` for an interface).
    profile_name: Option<String>,
    /// An interface's `service-profile` (the `qos profile` it applies).
    service_profile: Option<String>,
    pfc_on: Option<(bool, usize)>,
    no_drop: Vec<(u8, usize)>,
    mtu: Option<(u32, usize)>,
    trust: Option<(Option<Trust>, usize)>,
    /// tx-queue → its line and its marking (none where the queue has no `random-detect ecn`).
    queues: BTreeMap<u8, (usize, Option<(Marking, usize)>)>,
}

/// Where the reader stands.
struct State {
    interfaces: Vec<Interface>,
    in_interface: bool,
    queue: Option<u8>,
    dscp: BTreeMap<u8, (u8, usize)>,
    global_trust: Option<(Option<Trust>, usize)>,
    watchdog: Option<(bool, usize)>,
}

/// Reads the running-config's QoS commands into `config`.
pub fn read(file: &str, text: &str, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let mut state = State {
        interfaces: Vec::new(),
        in_interface: false,
        queue: None,
        dscp: BTreeMap::new(),
        global_trust: None,
        watchdog: None,
    };
    for (index, raw) in text.lines().enumerate() {
        read_line(file, index + 1, raw, &mut state)?;
    }
    let interfaces = applied(&state.interfaces);
    fill(file, &state, &interfaces, config);
    Ok(())
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn read_line(file: &str, line: usize, raw: &str, state: &mut State) -> Result<(), ConfigError> {
    let command = raw.trim();
    if command.is_empty() || command.starts_with('!') {
        return Ok(());
    }
    let indent = indent_of(raw);
    if indent == 0 {
        state.queue = None;
        state.in_interface = is_data_interface(command);
        if state.in_interface {
            state.interfaces.push(Interface { line, ..Interface::default() });
            return Ok(());
        }
        if let Some(name) = command.strip_prefix("qos profile ") {
            state.in_interface = true;
            let profile_name = Some(name.trim().to_string());
            state.interfaces.push(Interface { line, profile_name, ..Interface::default() });
            return Ok(());
        }
        return read_global(file, line, command, state);
    }
    if !state.in_interface {
        return Ok(());
    }
    let State { interfaces, queue, watchdog, .. } = state;
    let Some(interface) = interfaces.last_mut() else { return Ok(()) };
    if indent <= 3 {
        *queue = None;
        read_interface_command(file, line, command, interface, queue, watchdog)
    } else if let Some(queue) = *queue {
        read_queue_command(file, line, command, queue, interface)
    } else {
        Ok(())
    }
}

fn is_data_interface(command: &str) -> bool {
    command.starts_with("interface Ethernet") || command.starts_with("interface Port-Channel")
}

fn words(command: &str) -> Vec<&str> {
    command.split_whitespace().collect()
}

fn read_global(file: &str, line: usize, command: &str, state: &mut State) -> Result<(), ConfigError> {
    if command.starts_with("qos map dscp") {
        return read_dscp_map(file, line, command, state);
    }
    if let Some(trust) = parse_trust(file, line, command)? {
        state.global_trust = Some((trust, line));
    }
    if let Some(on) = parse_watchdog(file, line, command)? {
        note_watchdog(&mut state.watchdog, on, line);
    }
    Ok(())
}

/// `qos map dscp 26 27 to traffic-class 3`.
fn read_dscp_map(file: &str, line: usize, command: &str, state: &mut State) -> Result<(), ConfigError> {
    let words = words(command);
    let malformed =
        || error(file, line, format!("expected `qos map dscp <dscp>... to traffic-class <tc>`: `{command}`"));
    let Some(to) = words.iter().position(|word| *word == "to") else { return Err(malformed()) };
    let dscps = words.get(3..to).filter(|dscps| !dscps.is_empty()).ok_or_else(malformed)?;
    let (Some(&"traffic-class"), Some(class), None) = (words.get(to + 1), words.get(to + 2), words.get(to + 3)) else {
        return Err(malformed());
    };
    let class = parse_priority(file, line, class, "traffic class")?;
    for dscp in dscps {
        state.dscp.insert(parse_dscp(file, line, dscp)?, (class, line));
    }
    Ok(())
}

/// `qos trust dscp|cos`, `no qos trust`: `Some(trust)` where the line sets trust.
fn parse_trust(file: &str, line: usize, command: &str) -> Result<Option<Option<Trust>>, ConfigError> {
    if command.starts_with("no qos trust") {
        return Ok(Some(None));
    }
    if !command.starts_with("qos trust") {
        return Ok(None);
    }
    match words(command).as_slice() {
        ["qos", "trust", "dscp"] => Ok(Some(Some(Trust::Dscp))),
        ["qos", "trust", "cos"] => Ok(Some(Some(Trust::Pcp))),
        _ => Err(error(file, line, format!("expected `qos trust dscp` or `qos trust cos`: `{command}`"))),
    }
}

/// `priority-flow-control pause watchdog ...`: `Some(on)` where the line turns it on or off:
/// the bare command (under an interface), a `timeout` (0 is off) or `no ...`; the other
/// settings (`recovery-time`, `polling-interval`, `action`, ...) only tune it.
fn parse_watchdog(file: &str, line: usize, command: &str) -> Result<Option<bool>, ConfigError> {
    if command.starts_with("no priority-flow-control pause watchdog") {
        return Ok(Some(false));
    }
    if !command.starts_with("priority-flow-control pause watchdog") {
        return Ok(None);
    }
    let words = words(command);
    if words.len() == 3 {
        return Ok(Some(true));
    }
    let Some(at) = words.iter().position(|word| *word == "timeout") else { return Ok(None) };
    match words.get(at + 1).and_then(|value| value.parse::<f64>().ok()) {
        Some(seconds) => Ok(Some(seconds > 0.0)),
        None => Err(error(file, line, format!("expected a timeout in seconds: `{command}`"))),
    }
}

/// Keeps the first line that turned the watchdog on (or off), and any later change.
fn note_watchdog(watchdog: &mut Option<(bool, usize)>, on: bool, line: usize) {
    if watchdog.is_none_or(|(seen, _)| seen != on) {
        *watchdog = Some((on, line));
    }
}

fn read_interface_command(
    file: &str,
    line: usize,
    command: &str,
    interface: &mut Interface,
    queue: &mut Option<u8>,
    watchdog: &mut Option<(bool, usize)>,
) -> Result<(), ConfigError> {
    let words = words(command);
    match words.as_slice() {
        ["tx-queue" | "uc-tx-queue", index] => {
            let index = parse_priority(file, line, index, "tx-queue")?;
            interface.queues.entry(index).or_insert((line, None));
            *queue = Some(index);
        }
        ["service-profile", name] => interface.service_profile = Some((*name).to_string()),
        ["mtu", value] => {
            let mtu = value.parse::<u32>().map_err(|_| error(file, line, format!("mtu `{value}` is not a number")))?;
            interface.mtu = Some((mtu, line));
        }
        ["priority-flow-control", "on"] | ["priority-flow-control", "mode", "on"] => {
            interface.pfc_on = Some((true, line))
        }
        ["no", "priority-flow-control"]
        | ["priority-flow-control", "off"]
        | ["priority-flow-control", "mode", "off"] => interface.pfc_on = Some((false, line)),
        ["priority-flow-control", "priority", priority, "no-drop"] => {
            interface.no_drop.push((parse_priority(file, line, priority, "PFC priority")?, line));
        }
        ["priority-flow-control", "priority", ..] => {
            return Err(error(
                file,
                line,
                format!("expected `priority-flow-control priority <0-7> no-drop`: `{command}`"),
            ));
        }
        _ => {
            if let Some(trust) = parse_trust(file, line, command)? {
                interface.trust = Some((trust, line));
            }
            if let Some(on) = parse_watchdog(file, line, command)? {
                note_watchdog(watchdog, on, line);
            }
        }
    }
    Ok(())
}

fn read_queue_command(
    file: &str,
    line: usize,
    command: &str,
    queue: u8,
    interface: &mut Interface,
) -> Result<(), ConfigError> {
    let marking = if command.starts_with("random-detect ecn") {
        parse_ecn(file, line, command)?
    } else if command.starts_with("no random-detect ecn") {
        (false, None, None, None)
    } else {
        return Ok(());
    };
    if let Some(slot) = interface.queues.get_mut(&queue) {
        slot.1 = Some((marking, line));
    }
    Ok(())
}

/// `random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes
/// max-mark-probability 100 [weight N]`; `random-detect ecn count` (counters only) marks nothing
/// new and reads as on without thresholds.
fn parse_ecn(file: &str, line: usize, command: &str) -> Result<Marking, ConfigError> {
    let words = words(command);
    let malformed = |what: &str| error(file, line, format!("{what} in `{command}`"));
    let mut marking: Marking = (true, None, None, None);
    let mut rest = words.get(2..).unwrap_or_default();
    while let Some((keyword, tail)) = rest.split_first() {
        match *keyword {
            "minimum-threshold" | "maximum-threshold" => {
                let (Some(value), Some(unit)) = (tail.first(), tail.get(1)) else {
                    return Err(malformed("expected a threshold and its unit"));
                };
                let bytes = threshold_bytes(value, unit).ok_or_else(|| malformed("bad threshold"))?;
                if *keyword == "minimum-threshold" {
                    marking.1 = bytes
                } else {
                    marking.2 = bytes
                }
                rest = tail.get(2..).unwrap_or_default();
            }
            "max-mark-probability" => {
                let percent = tail.first().and_then(|value| value.parse::<u8>().ok()).filter(|percent| *percent <= 100);
                marking.3 = Some(percent.ok_or_else(|| malformed("expected a probability 0..=100"))?);
                rest = tail.get(1..).unwrap_or_default();
            }
            "weight" => rest = tail.get(1..).unwrap_or_default(),
            "count" => rest = tail,
            _ => return Err(malformed(&format!("unknown `{keyword}`"))),
        }
    }
    Ok(marking)
}

/// A threshold in bytes: `Some(None)` for `segments`, whose size the platform decides.
fn threshold_bytes(value: &str, unit: &str) -> Option<Option<u64>> {
    let number: u64 = value.parse().ok()?;
    let scale = match unit {
        "bytes" => 1,
        // kbytes and mbytes read as 1024-based, as EOS's buffer sizes are.
        "kbytes" => 1024,
        "mbytes" => 1024 * 1024,
        "segments" => return Some(None),
        _ => return None,
    };
    number.checked_mul(scale).map(Some)
}

/// The interfaces, each with what its `service-profile` adds where it says nothing itself.
fn applied(blocks: &[Interface]) -> Vec<Interface> {
    let profile = |name: &str| blocks.iter().find(|block| block.profile_name.as_deref() == Some(name));
    let mut interfaces = Vec::new();
    for block in blocks.iter().filter(|block| block.profile_name.is_none()) {
        let mut interface = block.clone();
        if let Some(profile) = block.service_profile.as_deref().and_then(profile) {
            interface.pfc_on = interface.pfc_on.or(profile.pfc_on);
            if interface.no_drop.is_empty() {
                interface.no_drop.clone_from(&profile.no_drop);
            }
            interface.mtu = interface.mtu.or(profile.mtu);
            interface.trust = interface.trust.or(profile.trust);
            for (queue, setting) in &profile.queues {
                interface.queues.entry(*queue).or_insert(*setting);
            }
        }
        interfaces.push(interface);
    }
    interfaces
}

fn fill(file: &str, state: &State, interfaces: &[Interface], config: &mut DeviceConfig) {
    let first_interface = interfaces.first().map_or(1, |interface| interface.line);
    for (dscp, (priority, line)) in &state.dscp {
        config.dscp_to_priority.insert(*dscp, Read { value: *priority, at: at(file, *line) });
    }
    if state.dscp.is_empty() {
        config.sections.insert("dscp_to_priority".into(), at(file, 1));
    }
    let trusts: Vec<(Option<Trust>, usize)> = interfaces.iter().filter_map(|interface| interface.trust).collect();
    let trust = state.global_trust.or_else(|| most_common_trust(&trusts));
    if let Some((Some(trust), line)) = trust {
        config.trust = Some(Read { value: trust, at: at(file, line) });
    }
    fill_pfc(file, interfaces, first_interface, config);
    fill_ecn(file, interfaces, first_interface, config);
    let mtus: Vec<(u32, usize)> = interfaces.iter().filter_map(|interface| interface.mtu).collect();
    match most_common(&mtus) {
        Some((mtu, line)) => config.mtu = Some(Read { value: mtu, at: at(file, line) }),
        None => {
            config.sections.insert("mtu".into(), at(file, first_interface));
        }
    }
    match state.watchdog {
        Some((on, line)) => config.pfc_watchdog = Some(Read { value: on, at: at(file, line) }),
        None => {
            config.sections.insert("pfc_watchdog".into(), at(file, first_interface));
        }
    }
}

fn most_common_trust(trusts: &[(Option<Trust>, usize)]) -> Option<(Option<Trust>, usize)> {
    let keyed: Vec<(u8, usize)> = trusts
        .iter()
        .map(|(trust, line)| (trust.map_or(0, |trust| if trust == Trust::Dscp { 1 } else { 2 }), *line))
        .collect();
    let (key, line) = most_common(&keyed)?;
    Some((
        match key {
            1 => Some(Trust::Dscp),
            2 => Some(Trust::Pcp),
            _ => None,
        },
        line,
    ))
}

/// The interfaces' most common PFC: the no-drop priorities of those with PFC on, none for
/// those with it off; interfaces that never mention PFC do not count.
fn fill_pfc(file: &str, interfaces: &[Interface], first_interface: usize, config: &mut DeviceConfig) {
    let mut seen: Vec<(Vec<u8>, usize)> = Vec::new();
    for interface in interfaces {
        let Some((on, on_line)) = interface.pfc_on else { continue };
        let mut priorities: Vec<u8> =
            if on { interface.no_drop.iter().map(|(priority, _)| *priority).collect() } else { Vec::new() };
        priorities.sort_unstable();
        priorities.dedup();
        let line = if on { interface.no_drop.first().map_or(on_line, |(_, line)| *line) } else { on_line };
        seen.push((priorities, line));
    }
    match most_common(&seen) {
        Some((priorities, line)) => config.pfc_priorities = Some(Read { value: priorities, at: at(file, line) }),
        None => {
            config.sections.insert("pfc".into(), at(file, first_interface));
        }
    }
}

/// Per tx-queue, the interfaces' most common marking; a queue configured without
/// `random-detect ecn` is marking off, at its `tx-queue` line.
fn fill_ecn(file: &str, interfaces: &[Interface], first_interface: usize, config: &mut DeviceConfig) {
    let mut by_queue: BTreeMap<u8, Vec<(Marking, usize)>> = BTreeMap::new();
    for interface in interfaces {
        for (queue, (queue_line, marking)) in &interface.queues {
            let seen = marking.unwrap_or(((false, None, None, None), *queue_line));
            by_queue.entry(*queue).or_default().push(seen);
        }
    }
    for (priority, seen) in by_queue {
        let Some(((enabled, min_bytes, max_bytes, probability), line)) = most_common(&seen) else { continue };
        config.ecn.push(EcnMarking { priority, enabled, min_bytes, max_bytes, probability, at: at(file, line) });
    }
    if config.ecn.is_empty() {
        config.sections.insert("ecn".into(), at(file, first_interface));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NVIDIA-style RoCE fabric's leaf: DSCP 26 → TC 3 no-drop with ECN, CNPs' DSCP 48 → 6
    /// (strict, no ECN), PFC watchdog, MTU 9214 on the data ports.
    const ROCE: &str = include_str!("testdata/eos_roce.txt");
    /// SONiC's default QoS written in EOS: DSCP 3 and 4 no-drop on traffic classes 3 and 4.
    const TWO_LOSSLESS: &str = "\
! Command: show running-config
! device: spine1 (DCS-7280CR3-32P4, EOS-4.29.3M)
!
hostname spine1
!
qos map dscp 3 to traffic-class 3
qos map dscp 4 to traffic-class 4
qos map dscp 46 to traffic-class 5
!
interface Ethernet1
   mtu 9100
   qos trust dscp
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   priority-flow-control priority 4 no-drop
   !
   tx-queue 3
      random-detect ecn minimum-threshold 1024 kbytes maximum-threshold 2 mbytes max-mark-probability 5
   !
   tx-queue 4
      random-detect ecn minimum-threshold 1048576 bytes maximum-threshold 2097152 bytes max-mark-probability 5
!
end
";

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        let mut config = DeviceConfig::default();
        read("leaf1.cfg", text, &mut config).map(|()| config)
    }

    fn here(line: usize) -> crate::analyze::fabric::model::At {
        at("leaf1.cfg", line)
    }

    /// RoCE's queue 3: 150 and 1500 kbytes (1024-based), probability 100.
    fn roce_marking(enabled: bool, line: usize) -> EcnMarking {
        EcnMarking {
            priority: 3,
            enabled,
            min_bytes: Some(150 * 1024),
            max_bytes: Some(1500 * 1024),
            probability: Some(100),
            at: here(line),
        }
    }

    fn unmarked(priority: u8, line: usize) -> EcnMarking {
        EcnMarking { priority, enabled: false, min_bytes: None, max_bytes: None, probability: None, at: here(line) }
    }

    #[test]
    fn roce_fabric_reads_every_value_with_its_line() {
        let config = read_text(ROCE).unwrap();
        let map: Vec<(u8, u8, usize)> =
            config.dscp_to_priority.iter().map(|(dscp, read)| (*dscp, read.value, read.at.line)).collect();
        assert_eq!(map, [(26, 3, 14), (48, 6, 15)]);
        assert_eq!(config.trust, Some(Read { value: Trust::Dscp, at: here(25) }));
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3], at: here(27) }));
        assert_eq!(config.ecn, [roce_marking(true, 30), unmarked(6, 32)]);
        // Management1's 1500 does not count: it carries no RoCE.
        assert_eq!(config.mtu, Some(Read { value: 9214, at: here(22) }));
        assert_eq!(config.pfc_watchdog, Some(Read { value: true, at: here(17) }));
        assert!(config.sections.is_empty(), "{:?}", config.sections);
    }

    #[test]
    fn two_lossless_priorities() {
        let config = read_text(TWO_LOSSLESS).unwrap();
        let map: Vec<(u8, u8, usize)> =
            config.dscp_to_priority.iter().map(|(dscp, read)| (*dscp, read.value, read.at.line)).collect();
        assert_eq!(map, [(3, 3, 6), (4, 4, 7), (46, 5, 8)]);
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3, 4], at: here(14) }));
        let azure = |priority, line| EcnMarking {
            priority,
            enabled: true,
            min_bytes: Some(1_048_576),
            max_bytes: Some(2_097_152),
            probability: Some(5),
            at: here(line),
        };
        assert_eq!(config.ecn, [azure(3, 18), azure(4, 21)]);
        assert_eq!(config.mtu, Some(Read { value: 9100, at: here(11) }));
        assert_eq!(config.pfc_watchdog, None);
        assert_eq!(config.sections.get("pfc_watchdog"), Some(&here(10)));
        assert_eq!(config.sections.len(), 1, "{:?}", config.sections);
    }

    #[test]
    fn no_ecn_on_the_roce_queue() {
        let text = ROCE.replace(
            "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100\n",
            "      bandwidth percent 50\n",
        );
        let config = read_text(&text).unwrap();
        assert_eq!(config.ecn, [unmarked(3, 29), unmarked(6, 32)]);
    }

    #[test]
    fn ecn_on_one_port_of_two_reads_the_first_seen() {
        let text = ROCE.replacen(
            "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100\n",
            "      no random-detect ecn\n",
            1,
        );
        let config = read_text(&text).unwrap();
        assert_eq!(config.ecn.first(), Some(&unmarked(3, 30)));
    }

    #[test]
    fn no_pfc_watchdog() {
        let text = ROCE.replace("priority-flow-control pause watchdog default", "! was watchdog");
        let config = read_text(&text).unwrap();
        assert_eq!(config.pfc_watchdog, None);
        assert_eq!(config.sections.get("pfc_watchdog"), Some(&here(20)));
        let text = ROCE.replace("default timeout 0.2", "default timeout 0");
        assert_eq!(read_text(&text).unwrap().pfc_watchdog, Some(Read { value: false, at: here(17) }));
    }

    #[test]
    fn pfc_on_another_priority() {
        let config = read_text(&ROCE.replace("priority 3 no-drop", "priority 4 no-drop")).unwrap();
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![4], at: here(27) }));
    }

    #[test]
    fn pfc_off() {
        let config =
            read_text(&ROCE.replace("   priority-flow-control on\n", "   no priority-flow-control\n")).unwrap();
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![], at: here(26) }));
        let text = ROCE
            .replace("   priority-flow-control on\n", "")
            .replace("   priority-flow-control priority 3 no-drop\n", "");
        let config = read_text(&text).unwrap();
        assert_eq!(config.pfc_priorities, None);
        assert_eq!(config.sections.get("pfc"), Some(&here(20)));
    }

    #[test]
    fn trust_cos() {
        let config = read_text(&ROCE.replace("qos trust dscp", "qos trust cos")).unwrap();
        assert_eq!(config.trust, Some(Read { value: Trust::Pcp, at: here(25) }));
    }

    #[test]
    fn a_qos_profile_applies_to_the_interfaces_naming_it() {
        let text = "\
! Command: show running-config
qos map dscp 26 to traffic-class 3
!
qos profile ROCE
   qos trust dscp
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   !
   tx-queue 3
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100
!
interface Ethernet1
   mtu 9214
   service-profile ROCE
!
interface Ethernet2
   mtu 9214
   service-profile ROCE
   priority-flow-control priority 4 no-drop
!
interface Ethernet3
   mtu 9214
   service-profile ROCE
!
";
        let config = read_text(text).unwrap();
        assert_eq!(config.trust, Some(Read { value: Trust::Dscp, at: here(5) }));
        // Ethernet1 and 3 take the profile's priority 3; Ethernet2 says 4 itself.
        assert_eq!(config.pfc_priorities, Some(Read { value: vec![3], at: here(7) }));
        assert_eq!(config.ecn, [roce_marking(true, 10)]);
        assert_eq!(config.mtu, Some(Read { value: 9214, at: here(13) }));
        // A profile no interface applies sets nothing.
        let config = read_text(&text.replace("   service-profile ROCE\n", "")).unwrap();
        assert_eq!(config.pfc_priorities, None);
        assert!(config.ecn.is_empty());
    }

    #[test]
    fn malformed_qos_lines_are_errors_at_their_line() {
        let cases = [
            ("qos map dscp 26 to traffic-class 3", "qos map dscp 26 traffic-class 3", 14),
            ("qos map dscp 26 to traffic-class 3", "qos map dscp to traffic-class 3", 14),
            ("qos map dscp 48 to traffic-class 6", "qos map dscp 48 to traffic-class 9", 15),
            ("qos map dscp 48 to traffic-class 6", "qos map dscp 64 to traffic-class 6", 15),
            ("priority-flow-control priority 3 no-drop", "priority-flow-control priority 3", 27),
            ("mtu 9214", "mtu jumbo", 22),
            ("qos trust dscp", "qos trust everything", 25),
            ("1500 kbytes max-mark", "1500 kilos max-mark", 30),
            ("max-mark-probability 100", "max-mark-probability 200", 30),
            ("default timeout 0.2", "default timeout soon", 17),
        ];
        for (from, to, line) in cases {
            let err = read_text(&ROCE.replacen(from, to, 1)).unwrap_err();
            assert_eq!((err.file.as_str(), err.line), ("leaf1.cfg", line), "{to}: {err}");
        }
    }

    #[test]
    fn recognises_eos_only() {
        assert!(recognises(ROCE) && recognises(TWO_LOSSLESS));
        assert!(recognises("!\ninterface Ethernet1\n   mtu 9214\n!\n"));
        assert!(!recognises("- set:\n    qos: {}\n"));
        assert!(!recognises("hello\n"));
    }
}
