//! The analysis's rooms stand on floors (docs/architecture.md, "The analysis's rooms"): a
//! module names only modules of its own room or of a floor below, so no import runs back up
//! and no two rooms use each other. `analyze/mod.rs` is the face: it declares the rooms and
//! hands their names on, and no room imports through it.

use std::fs;
use std::path::Path;

/// The rooms of `engine/src/analyze/`, each with its floor (1 is the ground).
const FLOORS: &[(&str, u32)] = &[
    ("names", 1),
    ("counts", 2),
    ("histogram", 2),
    ("later", 2),
    ("frame", 2),
    ("partition", 2),
    ("renumber", 2),
    ("id", 2),
    ("wide", 3),
    ("congestion", 4),
    ("uet", 6),
    ("flow", 5),
    ("config", 6),
    ("analyzer", 7),
    ("report", 8),
    ("saved", 9),
    ("rules", 9),
    ("combine", 10),
    ("assemble", 10),
];

fn floor(room: &str) -> Option<u32> {
    FLOORS.iter().find(|(name, _)| *name == room).map(|&(_, floor)| floor)
}

/// Every `crate::analyze::…` path a line of code names: the name after `analyze::`.
fn rooms_named(line: &str) -> Vec<String> {
    line.match_indices("crate::analyze::")
        .map(|(at, prefix)| {
            let rest = &line[at + prefix.len()..];
            rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
        })
        .collect()
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/analyze");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&root).expect("under analyze/");
        let room = relative.components().next().and_then(|c| c.as_os_str().to_str()).unwrap_or_default();
        let room = room.trim_end_matches(".rs");
        if room == "mod" {
            continue;
        }
        let own = floor(room).unwrap_or_else(|| panic!("{room} has no floor in FLOORS: give it one"));
        let text = fs::read_to_string(&file).expect("a source file");
        for (n, line) in code_lines(&text) {
            for named in rooms_named(line) {
                match floor(&named) {
                    _ if named == room => {}
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
    let line = "use crate::analyze::analyzer::Analyzer; // and crate::analyze::Config";
    assert_eq!(rooms_named(line), ["analyzer", "Config"]);
    assert!(floor("analyzer") > floor("flow"));
    assert_eq!(floor("Config"), None, "a name handed on by the face is no room");
    let text = "use a;\n// crate::analyze::x\n#[cfg(test)]\nuse crate::analyze::analyzer;";
    assert_eq!(code_lines(text).collect::<Vec<_>>(), [(1, "use a;")]);
}
