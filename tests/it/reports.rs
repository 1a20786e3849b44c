//! `reports/` holds the analysis of every sample (`NAME.json` from `analyze --json`, `NAME.txt`
//! the terminal summary, `NAME.html` the page of `analyze --html`). This test fails when they
//! are out of date; regenerate them with `UPDATE_REPORTS=1 cargo test --test it reports::`.

use crate::common;

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn reports_are_up_to_date_with_the_samples() {
    let update = std::env::var_os("UPDATE_REPORTS").is_some();
    let mut samples: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pcap") || n.ends_with(".pcapng"))
        .collect();
    samples.sort();
    let mut stale = Vec::new();
    let scratch = tempfile::tempdir().expect("temp dir");
    for name in &samples {
        let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
        let input = format!("samples/{name}");
        let page = scratch.path().join(format!("{stem}.html"));
        let page_arg = page.to_str().expect("UTF-8").to_owned();
        for (ext, args) in [
            ("json", vec!["analyze", "--json", &input]),
            ("txt", vec!["analyze", &input]),
            ("html", vec!["analyze", "--json", "--html", &page_arg, &input]),
        ] {
            let out = common::rocescope().current_dir(root()).args(&args).output().expect("rocescope runs");
            assert!(out.status.success(), "{args:?}");
            let produced = if ext == "html" { std::fs::read(&page).expect("the page") } else { out.stdout };
            let path = root().join("reports").join(format!("{stem}.{ext}"));
            if update {
                std::fs::write(&path, &produced).expect("write report");
            } else if std::fs::read(&path).ok().as_deref() != Some(produced.as_slice()) {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "out of date (regenerate with UPDATE_REPORTS=1 cargo test --test it reports::): {stale:?}"
    );
}
