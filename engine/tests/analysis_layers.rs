//! The analysis's rooms stand on floors (docs/architecture.md, "The analysis's rooms"): each
//! entry of `engine/src/analyze/` (a folder or a file) is one room, and a module names only
//! its own room or rooms on floors below, so no import runs back up and no two rooms use each
//! other. The RoCE room's parts (`roce/flow`, `roce/report`, …) stand on floors of their own
//! inside it, by the same rule. `analyze/mod.rs` is the face: it declares the rooms and hands
//! their names on, and no room imports through it.

use std::fs;
use std::path::Path;

/// The rooms of `engine/src/analyze/`, each with its floor (1 is the ground).
const FLOORS: &[(&str, u32)] = &[
    ("names", 1),
    ("renumber", 1),
    ("combining", 1),
    ("exemplar", 1),
    ("partition", 1),
    ("rfc3339", 1),
    ("id", 2),
    ("counts", 2),
    ("histogram", 2),
    ("frame", 2),
    ("seq_class", 2),
    ("timeline", 2),
    ("trace", 3),
    ("finding", 3),
    ("rules", 4),
    ("uet", 5),
    ("identity", 5),
    ("path", 5),
    ("roce", 6),
    ("counters", 7),
    ("fabric", 7),
    ("report", 8),
    ("saved", 9),
    ("assemble", 9),
    ("combine", 10),
];

/// The parts of the RoCE room, each with its floor inside the room.
const ROCE_PARTS: &[(&str, u32)] =
    &[("wide", 1), ("congestion", 2), ("flow", 3), ("config", 4), ("analyzer", 5), ("report", 6), ("rules", 7)];

fn floor(table: &[(&str, u32)], name: &str) -> Option<u32> {
    table.iter().find(|(n, _)| *n == name).map(|&(_, floor)| floor)
}

/// Where a module stands: its room, and inside the RoCE room its part.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    room: String,
    part: Option<String>,
}

/// The places that a line of code names by a `crate::analyze::…` path.
fn places_named(line: &str) -> Vec<Place> {
    let word = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut named = Vec::new();
    for (at, _) in line.match_indices("crate::analyze::") {
        let rest = &line[at + "crate::analyze::".len()..];
        let room = word(rest);
        let part = (room == "roce").then(|| rest[room.len()..].strip_prefix("::").map(word)).flatten();
        named.push(Place { room, part });
    }
    named
}

/// The lines of a source file that are code outside its tests: comments and the
/// `#[cfg(test)]` module are not imports of the module. Each with its line number.
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

/// What is wrong with module `at` naming `named`, if anything.
fn wrong(at: &Place, named: &Place) -> Option<String> {
    let Some(theirs) = floor(FLOORS, &named.room) else {
        return Some(format!("names {} through analyze/mod.rs", named.room));
    };
    let mine = floor(FLOORS, &at.room).unwrap_or_else(|| panic!("{} has no floor in FLOORS: give it one", at.room));
    if named.room != at.room {
        return (theirs >= mine).then(|| format!("{} (floor {mine}) names {} (floor {theirs})", at.room, named.room));
    }
    let (Some(mine), Some(theirs)) = (&at.part, &named.part) else { return None };
    let floor_of = |part: &str| floor(ROCE_PARTS, part);
    match (floor_of(mine), floor_of(theirs)) {
        _ if mine == theirs => None,
        (Some(m), Some(t)) if t < m => None,
        (Some(m), Some(t)) => Some(format!("roce/{mine} (floor {m}) names roce/{theirs} (floor {t})")),
        (None, _) => panic!("roce/{mine} has no floor in ROCE_PARTS: give it one"),
        (_, None) => Some(format!("roce/{mine} names roce::{theirs} through roce/mod.rs")),
    }
}

#[test]
fn no_room_of_the_analysis_imports_one_above_it_or_through_its_face() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join("analyze");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under analyze/");
        let mut names = relative.iter().filter_map(|c| c.to_str()).map(|c| c.trim_end_matches(".rs"));
        let room = names.next().unwrap_or_default().to_string();
        let part = names.next().filter(|_| room == "roce").map(str::to_string);
        if room == "mod" || part.as_deref() == Some("mod") {
            continue;
        }
        let at = Place { room, part };
        let text = fs::read_to_string(&file).expect("a source file");
        for (n, line) in code_lines(&text) {
            for named in places_named(line) {
                if let Some(what) = wrong(&at, &named) {
                    found.push(format!("analyze/{}:{n}: {what}", relative.display()));
                }
            }
        }
    }
    assert!(found.is_empty(), "imports against the floors:\n{}", found.join("\n"));
}

#[test]
fn the_rule_sees_an_import_that_runs_back_up() {
    let place = |room: &str, part: Option<&str>| Place { room: room.into(), part: part.map(Into::into) };
    let line = "use crate::analyze::roce::analyzer::Analyzer; // and crate::analyze::Config";
    assert_eq!(places_named(line), [place("roce", Some("analyzer")), place("Config", None)]);
    assert_eq!(places_named("use crate::analyze::uet::report::UetReport;"), [place("uet", None)]);
    assert_eq!(places_named("use crate::capture::Inputs;"), []);
    // a room below names one above it; a room names itself
    assert!(wrong(&place("uet", None), &place("report", None)).is_some());
    assert!(wrong(&place("report", None), &place("uet", None)).is_none());
    assert!(wrong(&place("uet", None), &place("uet", None)).is_none());
    // the RoCE room's parts, by their own floors
    assert!(wrong(&place("roce", Some("flow")), &place("roce", Some("report"))).is_some());
    assert!(wrong(&place("roce", Some("report")), &place("roce", Some("flow"))).is_none());
    assert!(wrong(&place("roce", Some("flow")), &place("roce", None)).is_none());
    assert_eq!(
        wrong(&place("path", None), &place("Config", None)).as_deref(),
        Some("names Config through analyze/mod.rs"),
        "a name handed on by the face is no room"
    );
    let text = "use a;\n// crate::analyze::x\n#[cfg(test)]\nuse crate::analyze::roce;";
    assert_eq!(code_lines(text).collect::<Vec<_>>(), [(1, "use a;")]);
}
