//! The analysis's rooms stand on floors (docs/architecture.md, "The analysis's rooms"): a
//! module names only modules of its own room or of a floor below, so no import runs back up
//! and no two rooms use each other. `analyze/mod.rs` is the face: it declares the rooms and
//! hands their names on, and no room imports through it. The analyses beside it, the path
//! over several taps (`path/`), the counters beside a capture (`counters/`) and the hosts' QP
//! tables and NCCL logs (`identity/`), are rooms on
//! the same floors.

use std::fs;
use std::path::Path;

/// The rooms of `engine/src/analyze/`, and `path`, `counters` and `identity`, each with its floor (1 is the
/// ground). An analysis's room may hold parts on other floors than its state: its report
/// section (`uet/report`), its rules (`uet/rules`), named `room/part`.
const FLOORS: &[(&str, u32)] = &[
    ("counters", 2),
    ("fabric", 2),
    ("names", 1),
    ("renumber", 1),
    ("combining", 1),
    ("counts", 2),
    ("histogram", 2),
    ("frame", 2),
    ("partition", 2),
    ("id", 2),
    ("exemplar", 2),
    ("roce/wide", 3),
    ("identity", 3),
    ("roce/congestion", 4),
    ("roce/flow", 5),
    ("uet", 6),
    ("config", 6),
    ("analyzer", 7),
    ("path/report", 7),
    ("uet/report", 8),
    ("roce/report", 8),
    ("path", 8),
    ("counters/report", 8),
    ("identity/report", 8),
    ("report", 9),
    ("saved", 10),
    ("rules", 10),
    ("counters/reconcile", 10),
    ("identity/join", 10),
    ("uet/rules", 11),
    ("roce/rules", 11),
    ("roce", 11),
    ("path/rules", 11),
    ("counters/rules", 11),
    ("identity/rules", 11),
    ("combine", 12),
    ("assemble", 12),
];

fn floor(room: &str) -> Option<u32> {
    FLOORS.iter().find(|(name, _)| *name == room).map(|&(_, floor)| floor)
}

/// The room, or the part of a room, that `room` and the module `part` in it are: `uet/report`
/// where that part has a floor of its own, else `uet`.
fn part_of(room: &str, part: Option<&str>) -> String {
    match part.map(|p| format!("{room}/{p}")) {
        Some(key) if floor(&key).is_some() => key,
        _ => room.to_string(),
    }
}

/// The rooms that a line of code names by a `crate::analyze::…`, `crate::analyze::path::…` or
/// `crate::analyze::counters::…` path: the room, or its part where that has a floor of its own.
fn rooms_named(line: &str) -> Vec<String> {
    let word = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut named = Vec::new();
    for (at, _) in line.match_indices("crate::") {
        let rest = &line[at + "crate::".len()..];
        let first = word(rest);
        let after = |s: &str| s.strip_prefix("::").map(word);
        let (room, part) = match first.as_str() {
            "analyze" => {
                let Some(room) = after(&rest[first.len()..]) else { continue };
                let part = after(&rest[first.len() + 2 + room.len()..]);
                (room, part)
            }
            _ => continue,
        };
        named.push(part_of(&room, part.as_deref()));
    }
    named
}

/// The lines of a source file that are code outside its tests: comments and the
/// `#[cfg(test)]` module are not imports of the module.
/// Each with its line number.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(n, l)| (n + 1, l))
        .take_while(|(_, l)| !l.trim_start().starts_with("#[cfg(test)]"))
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
}

fn sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("the analysis's sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_room_of_the_analysis_imports_one_above_it_or_through_its_face() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src.join("analyze"), &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src/");
        let mut names = relative.iter().filter_map(|c| c.to_str()).map(|c| c.trim_end_matches(".rs"));
        let room = match names.next() {
            // analyze/ is the face of its rooms; path/, counters/ and identity/ are rooms
            Some("analyze") => names.next().unwrap_or_default(),
            other => other.unwrap_or_default(),
        };
        if room == "mod" {
            continue;
        }
        let room = &part_of(room, names.next());
        let own = floor(room).unwrap_or_else(|| panic!("{room} has no floor in FLOORS: give it one"));
        let text = fs::read_to_string(&file).expect("a source file");
        for (n, line) in code_lines(&text) {
            for named in rooms_named(line) {
                match floor(&named) {
                    _ if named == *room => {}
                    Some(f) if f < own => {}
                    Some(f) => wrong.push(format!(
                        "{}:{}: {room} (floor {own}) names {named} (floor {f})",
                        relative.display(),
                        n
                    )),
                    None => {
                        wrong.push(format!("{}:{}: {room} names {named} through analyze/mod.rs", relative.display(), n))
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the floors:\n{}", wrong.join("\n"));
}

#[test]
fn the_rule_sees_an_import_that_runs_back_up() {
    let line = "use crate::analyze::roce::analyzer::Analyzer; // and crate::analyze::Config";
    assert_eq!(rooms_named(line), ["analyzer", "Config"]);
    assert_eq!(rooms_named("use crate::analyze::uet::report::UetReport;"), ["uet/report"]);
    assert_eq!(rooms_named("use crate::analyze::uet::pdc::Pdc;"), ["uet"]);
    assert!(floor("uet/report") > floor("uet") && floor("uet/rules") > floor("rules"));
    assert_eq!(
        rooms_named("use crate::analyze::path::report::HopReport; crate::analyze::counters::{self, X}"),
        ["path/report", "counters"]
    );
    assert_eq!(rooms_named("use crate::capture::Inputs;"), Vec::<String>::new());
    assert!(floor("analyzer") > floor("roce/flow"));
    assert_eq!(rooms_named("use crate::analyze::roce::flow::table::Flow;"), ["roce/flow"]);
    assert_eq!(floor("Config"), None, "a name handed on by the face is no room");
    let text = "use a;\n// crate::analyze::x\n#[cfg(test)]\nuse crate::analyze::roce::analyzer;";
    assert_eq!(code_lines(text).collect::<Vec<_>>(), [(1, "use a;")]);
}
