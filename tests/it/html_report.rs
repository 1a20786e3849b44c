//! The HTML page: self-contained, with every section and chart, and — where Chromium is
//! installed (`.ci/run` installs it) — loading in headless Chromium without a console message,
//! with a screenshot saved under the target directory.

use crate::common;
use crate::common::capture::Capture;

use std::path::{Path, PathBuf};
use std::process::Command;

use rocescope::generate::encode;
use rocescope_engine::analyze::roce::wide::pfc::PAUSE_CHANNEL;
use rocescope_engine::analyze::timeline::Timeline;
use rocescope_engine::analyze::{Analyzer, Config, assemble};
use rocescope_engine::capture::Inputs;
use rocescope_engine::decode::Decoder;
use rocescope_engine::display_filter::Selection;
use rocescope_engine::pipeline::{self, Analyse, sharded};

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
fn a_troubleshooting_entry_is_shown_once_and_linked_from_each_finding_it_explains() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, text) = page(dir.path(), "loss_go_back_n");
    // three findings explained by one entry: its cause once, a link from each finding
    assert_eq!(text.matches("ECN under-tuning").count(), 1);
    assert_eq!(text.matches(r##"See troubleshooting <a href="#troubleshooting-1">[1]</a>."##).count(), 3);
    assert_eq!(text.matches(r#"id="troubleshooting-1""#).count(), 1);
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

/// The y axis's labels of the chart `id`.
fn y_labels(text: &str, id: &str) -> Vec<f64> {
    let chart = text.split(&format!("id=\"{id}\"")).nth(1).and_then(|s| s.split("</figure>").next()).expect(id);
    let labels = chart.split("text-anchor=\"end\"").skip(1);
    labels.filter_map(|l| l.split('>').nth(1)?.split('<').next()?.trim().parse().ok()).collect()
}

struct Whole(Analyzer);

impl Analyse for Whole {
    fn analyzer(&mut self) -> &mut Analyzer {
        &mut self.0
    }
}

/// The paused time per priority over time of `path`, analysed on one thread, and split over
/// two by host pair where the shards join.
fn paused_time(path: &Path) -> (Timeline, Option<Timeline>) {
    let chart = |a: &Analyzer, inputs: &Inputs| {
        assemble::report_of_files(a, inputs.readers(), &[]).roce.charts.paused().clone()
    };
    let (mut inputs, errors) = Inputs::open(&[path.to_path_buf()], false);
    assert!(errors.is_empty());
    let mut whole = Whole(Analyzer::new(Config::default()));
    let ran =
        pipeline::analyse(&mut inputs, &Decoder::default(), &mut Selection::new(None).unwrap(), &mut whole, 1, &|_| {});
    ran.result.unwrap();
    whole.0.finish();
    let one = chart(&whole.0, &inputs);
    let (mut inputs, _) = Inputs::open(&[path.to_path_buf()], false);
    let mut split = Whole(Analyzer::new(Config::default()));
    let joined =
        sharded::analyse(&mut inputs, &Decoder::default(), &Selection::new(None).unwrap(), &mut split, 2, &|_| {});
    (one, joined.map(|_| chart(&split.0, &inputs)))
}

#[test]
fn a_priority_paused_by_overlapping_sources_and_refreshes_is_charted_as_their_union() {
    // at 100 Gb/s a quantum lasts 5.12 ns: 3,125 quanta 16 µs, 6,250 32 µs, 1,250 6.4 µs
    const T: i64 = 1_700_000_000_000_000_000;
    let (a, b) = ([2, 0, 0, 0, 0, 0xa], [2, 0, 0, 0, 0, 0xb]);
    let mut c = Capture::new();
    for (at, src, quanta) in [
        (0, a, 3_125),      // a pauses priority 3 until 16 µs,
        (10_000, a, 3_125), // refreshes it until 26 µs,
        (20_000, b, 6_250), // b pauses it until 52 µs,
        (24_000, a, 3_125), // a refreshes until 40 µs,
        (30_000, a, 0),     // and resumes at 30 µs
        (70_000, a, 1_250), // a pause until 76.4 µs
    ] {
        c.add_bytes(T + at, encode::pfc_frame(src, 1 << 3, [0, 0, 0, quanta, 0, 0, 0, 0]));
    }
    let path = c.write();
    let report = common::capture::analyze_file(&path, &[]);
    let paused_ns: Vec<u64> =
        report["pfc"].as_array().unwrap().iter().map(|s| s["paused_ns"].as_u64().unwrap()).collect();
    assert_eq!(paused_ns, [36_400, 32_000], "each source's own periods");
    // paused from 0 to 52 µs and from 70 to 76.4 µs: the union, in 1 µs bins, never more
    let mut union = vec![1_000; 52];
    union.extend([0; 18].into_iter().chain([1_000; 6]).chain([400]));
    let (one, joined) = paused_time(&path);
    assert_eq!((one.start_ns(), one.width_ns()), (Some(T), 1_000));
    assert_eq!(one.series(3).into_iter().map(|(_, ns)| ns).collect::<Vec<_>>(), union);
    if let Some(joined) = joined {
        assert_eq!(joined, one, "split over two threads");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let html = dir.path().join("page.html");
    common::run_ok(&["analyze", "--html", html.to_str().unwrap(), path.to_str().unwrap()]);
    let text = std::fs::read_to_string(&html).expect("the page");
    assert_eq!(y_labels(&text, "chart-pfc").last(), Some(&100.0), "at most 100 %");
}

#[test]
fn the_pfc_storms_chart_is_paused_at_most_all_of_the_time() {
    // it said 600 %: the time paused before the chart's first bin was counted in it
    let (one, joined) = paused_time(Path::new(&sample("pfc_storm.pcap")));
    for channel in 0..=PAUSE_CHANNEL {
        for (start, ns) in one.series(channel) {
            assert!(ns <= one.width_ns() as u64, "channel {channel} paused {ns} ns in the bin at {start}");
        }
    }
    // the storm: priority 3 paused from the capture's start for 120 ms
    let storm: u64 = one
        .series(3)
        .iter()
        .take_while(|(start, _)| *start < one.start_ns().unwrap() + 120_000_000)
        .map(|(_, ns)| ns)
        .sum();
    assert!(storm >= 120_000_000, "{storm} ns");
    if let Some(joined) = joined {
        assert_eq!(joined, one, "split over two threads");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, text) = page(dir.path(), "pfc_storm");
    let most = y_labels(&text, "chart-pfc").into_iter().fold(0.0, f64::max);
    assert_eq!(most, 100.0, "the storm is paused all of the time, and no more");
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
