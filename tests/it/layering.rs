//! The engine builds without the command line and without polars: a program can embed it, and
//! the engine's build does not wait for either (`engine/`, docs/architecture.md).

use std::process::Command;

#[test]
fn the_engine_depends_on_neither_clap_nor_polars() {
    let out = Command::new(env!("CARGO"))
        .args(["tree", "-p", "rocescope-engine", "-e", "normal", "--prefix", "none", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let crates: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(crates.iter().any(|c| c == "rocescope-parsers"), "{crates:?}");
    for forbidden in ["clap", "clap_builder", "polars", "polars-core", "indicatif", "maud", "plotters"] {
        assert!(!crates.iter().any(|c| c == forbidden), "the engine pulls in {forbidden}: {crates:?}");
    }
}
