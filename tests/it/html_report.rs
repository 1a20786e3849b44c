//! The HTML page: self-contained, with every section and chart, and — where Chromium is
//! installed (`.ci/run` installs it) — loading in headless Chromium without a console message,
//! with a screenshot saved under the target directory.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Writes the page of `sample` into `dir` and returns its path and text.
fn page(dir: &Path, name: &str) -> (PathBuf, String) {
    let path = dir.join(format!("{name}.html"));
    common::run_ok(&["analyze", "--html", path.to_str().unwrap(), &sample(&format!("{name}.pcap"))]);
    let text = std::fs::read_to_string(&path).expect("the page");
    (path, text)
}

/// The fabric charts every page has.
const FABRIC_CHARTS: [&str; 6] =
    ["chart-congestion", "chart-pfc", "chart-dscp", "chart-ecn", "chart-talkers", "chart-throughput"];

#[test]
fn the_page_is_self_contained_and_has_every_section() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, text) = page(dir.path(), "loss_go_back_n");
    for id in ["findings", "flows", "flow-table", "fabric", "flow-details", "flow-0", "chart-psn-0", "chart-ack-0"]
        .iter()
        .chain(&FABRIC_CHARTS)
    {
        assert!(text.contains(&format!("id=\"{id}\"")), "no #{id}");
    }
    assert!(text.contains("PSN_GAP") && text.contains("RETRANSMISSION"), "the findings");
    // no CE mark, CNP or pause frame: those two charts are one line each
    for (id, nothing) in [("chart-congestion", "no CE marks or CNPs"), ("chart-pfc", "no PFC or PAUSE frames pausing")]
    {
        let figure = text.split(&format!("id=\"{id}\"")).nth(1).and_then(|s| s.split("</figure>").next()).unwrap();
        assert!(!figure.contains("<svg") && figure.contains(&format!("Nothing to draw: {nothing}.")), "{figure}");
    }
    assert_eq!(
        text.matches("<svg").count(),
        FABRIC_CHARTS.len() - 2 + 2 + 2,
        "fabric charts with something to draw, 2 flows' throughput, 1 PSN graph, 1 ACK latency"
    );
    // nothing to fetch and nothing to run
    for needle in ["<script", " src=", "@import", "url(", "<link", "href=\"http"] {
        assert!(!text.contains(needle), "the page contains {needle}");
    }
    // the flow table links the troubled flow to its detail, and the finding links to the flow
    assert!(text.contains("href=\"#flow-0\""));
}

#[test]
fn storms_are_shaded_and_pause_priorities_drawn() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, text) = page(dir.path(), "pfc_storm");
    let pfc = text.split("id=\"chart-pfc\"").nth(1).and_then(|s| s.split("</figure>").next()).expect("PFC chart");
    assert!(pfc.contains("priority 3") && pfc.contains("priority 5") && pfc.contains("802.3x PAUSE"));
    // the one storm period, shaded in the storm colour, and its key in the legend
    assert_eq!(pfc.matches("opacity=\"0.15\" fill=\"#D55E00\"").count(), 2, "one shaded storm and its key");
    assert!(pfc.contains(">\nstorm\n<") || pfc.contains(">storm<"), "the legend names the storm shading");
    let (_, calm) = page(dir.path(), "loss_go_back_n");
    assert!(!calm.contains("opacity=\"0.15\" fill=\"#D55E00\""), "no storm, no shading");
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs headless Chromium on `page` with `extra` arguments; returns (stdout, stderr).
fn headless(browser: &Path, profile: &Path, page: &Path, extra: &[&str]) -> (String, String) {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_page_loads_in_chromium_without_console_messages() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: Chromium is not installed (apt-get install chromium; .ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot directory");
    for name in ["loss_go_back_n", "pfc_storm", "congestion_ecn_cnp"] {
        let (path, _) = page(dir.path(), name);
        let (dom, log) = headless(&browser, &dir.path().join("profile"), &path, &["--dump-dom"]);
        // every console message (a script error, a blocked request) is logged as ":CONSOLE"
        let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
        assert!(console.is_empty(), "{name}: console messages: {console:?}");
        assert!(dom.contains("RoCE capture report"), "{name}: the page did not load");
        for id in FABRIC_CHARTS.iter().chain(&["findings", "flow-table"]) {
            assert!(dom.contains(&format!("id=\"{id}\"")), "{name}: #{id} missing from the rendered page");
        }
        assert!(dom.matches("<svg").count() >= FABRIC_CHARTS.len(), "{name}: charts missing");
        let shot = shots.join(format!("{name}.png"));
        let _ = std::fs::remove_file(&shot);
        let arg = format!("--screenshot={}", shot.display());
        headless(&browser, &dir.path().join("profile"), &path, &[&arg, "--window-size=1280,2400"]);
        let png = std::fs::read(&shot).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "{name}: screenshot of {} bytes", png.len());
        eprintln!("screenshot: {}", shot.display());
    }
}

#[test]
fn the_congestion_section_charts_reactions_completion_times_and_fan_in() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, text) = page(dir.path(), "dcqcn_reaction");
    let figure = |text: &str, id: &str| {
        text.split(&format!("id=\"{id}\"")).nth(1).and_then(|s| s.split("</figure>").next()).map(str::to_string)
    };
    assert!(text.contains("id=\"congestion-control\"") && text.contains("Reactions to CNP bursts"));
    // the reacting flow's rate: five bursts, each with a window before (blue) and after (orange)
    let reaction = figure(&text, "chart-reaction-0").expect("the reaction chart of flow 0");
    assert_eq!(reaction.matches("opacity=\"0.15\" fill=\"#0072B2\"").count(), 5 + 1, "five windows before and a key");
    assert_eq!(reaction.matches("opacity=\"0.15\" fill=\"#D55E00\"").count(), 5 + 1, "five windows after and a key");
    assert!(figure(&text, "chart-fct").is_some_and(|f| f.contains("<svg")), "the completion-time distribution");
    let (_, incast) = page(dir.path(), "incast");
    let fan_in = figure(&incast, "chart-fan-in-10.0.0.20").expect("the receiver's fan-in");
    assert!(fan_in.contains("<svg") && (fan_in.contains(">incast<") || fan_in.contains(">\nincast\n<")));
}
