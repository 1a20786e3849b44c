//! docs/report-schema.md documents the report as it is: every key the report has for the
//! capture and for a flow is in the schema's tables, and every key the tables list is in the
//! report, checked on every sample's report in reports/.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The keys a table of the schema documents: the backticked names of its rows' first cells
/// (`inputs[]` and `flows[]` name arrays; `{…}` shapes and values are not keys).
fn documented(schema: &str, section: &str) -> BTreeSet<String> {
    let start = schema.find(section).unwrap_or_else(|| panic!("no section {section}"));
    let table = schema[start..].lines().skip_while(|l| !l.starts_with("| key")).skip(2);
    let mut keys = BTreeSet::new();
    for row in table.take_while(|l| l.starts_with('|')) {
        let cell = row.split('|').nth(1).unwrap_or_default();
        for key in cell.split('`').skip(1).step_by(2).filter(|k| !k.contains(['{', ' ', '/'])) {
            keys.insert(key.trim_end_matches("[]").to_string());
        }
    }
    keys
}

fn keys(object: &Value) -> BTreeSet<String> {
    object.as_object().expect("an object").keys().cloned().collect()
}

#[test]
fn the_schema_documents_every_key_of_the_report_and_of_a_flow() {
    let schema = std::fs::read_to_string(root().join("docs/report-schema.md")).expect("docs/report-schema.md");
    let (top, flow) = (documented(&schema, "# `analyze --json` report schema"), documented(&schema, "## `flows[]`"));
    let (mut top_seen, mut flow_seen) = (BTreeSet::new(), BTreeSet::new());
    for entry in std::fs::read_dir(root().join("reports")).expect("reports/") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("report")).expect("JSON");
        let report_keys = keys(&report);
        let undocumented: Vec<_> = report_keys.difference(&top).collect();
        assert!(undocumented.is_empty(), "{}: keys not in the schema: {undocumented:?}", path.display());
        top_seen.extend(report_keys);
        for f in report["flows"].as_array().expect("flows") {
            let flow_keys = keys(f);
            let undocumented: Vec<_> = flow_keys.difference(&flow).collect();
            assert!(undocumented.is_empty(), "{}: flow keys not in the schema: {undocumented:?}", path.display());
            flow_seen.extend(flow_keys);
        }
    }
    let stale: Vec<_> = top.difference(&top_seen).chain(flow.difference(&flow_seen)).collect();
    assert!(stale.is_empty(), "the schema documents keys no report has: {stale:?}");
}

/// The backticked names in the second cell of the row of `key` in the table after `section`.
fn documented_members(schema: &str, section: &str, key: &str) -> BTreeSet<String> {
    let start = schema.find(section).unwrap_or_else(|| panic!("no section {section}"));
    let row = schema[start..].lines().find(|l| l.starts_with(&format!("| `{key}` |"))).expect("the key's row");
    let cell = row.split('|').nth(2).unwrap_or_default();
    cell.split('`').skip(1).step_by(2).filter(|k| !k.contains(['{', ' ', '/', '"'])).map(str::to_string).collect()
}

#[test]
fn the_schema_documents_every_key_of_the_path() {
    let schema = std::fs::read_to_string(root().join("docs/report-schema.md")).expect("docs/report-schema.md");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("reports/path.json")).expect("reports/path.json"))
            .expect("JSON");
    let path = &report["path"];
    assert_eq!(keys(path), documented(&schema, "## `path`"));
    for member in ["taps", "hops", "losses"] {
        let first = &path[member][0];
        assert_eq!(keys(first), documented_members(&schema, "## `path`", &format!("{member}[]")), "{member}[]");
    }
}

#[test]
fn a_findings_evidence_names_each_flow_once() {
    for entry in std::fs::read_dir(root().join("reports")).expect("reports/") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("report")).expect("JSON");
        for finding in report["findings"].as_array().expect("findings") {
            let flows: Vec<u64> =
                finding["evidence"]["flows"].as_array().expect("flows").iter().filter_map(Value::as_u64).collect();
            let distinct: BTreeSet<u64> = flows.iter().copied().collect();
            assert_eq!(distinct.len(), flows.len(), "{}: {}: {flows:?}", path.display(), finding["code"]);
        }
    }
}

#[test]
fn the_schema_documents_every_key_of_the_counters() {
    let schema = std::fs::read_to_string(root().join("docs/report-schema.md")).expect("docs/report-schema.md");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("reports/counters.json")).expect("reports/counters.json"),
    )
    .expect("JSON");
    let host = &report["counters"][0];
    assert_eq!(keys(host), documented(&schema, "## `counters[]`"));
    assert_eq!(keys(&host["rows"][0]), documented_members(&schema, "## `counters[]`", "rows[]"));
    assert_eq!(keys(&host["window"]), documented_members(&schema, "## `counters[]`", "window"));
}
