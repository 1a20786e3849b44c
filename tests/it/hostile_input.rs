//! Inputs and outputs that are not ordinary files: output targets that are devices, FIFOs or
//! links (written straight through, never replaced), taps that cannot be read twice, a tap's
//! interface that its file does not have.

use crate::common;

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SAMPLE: &str = "samples/loss_go_back_n.pcap";
const PCAPNG_MAGIC: [u8; 4] = [0x0A, 0x0D, 0x0D, 0x0A];

fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success())
}

/// Reads the FIFO `path` to its end on a thread of its own.
fn drain(path: PathBuf) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::fs::File::open(path).expect("open the FIFO").read_to_end(&mut bytes).expect("read the FIFO");
        bytes
    })
}

/// Waits for `child` at most `limit`; kills it and fails if it is still running.
fn finished(mut child: Child, limit: Duration) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn is_fifo(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

fn is_char_device(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

#[test]
fn a_fifo_gets_the_page_and_the_annotated_capture_and_stays_a_fifo() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("out");
    if !mkfifo(&fifo) {
        eprintln!("SKIPPED: mkfifo failed");
        return;
    }
    let reader = drain(fifo.clone());
    common::run_ok(&["analyze", "-q", "--html", fifo.to_str().expect("UTF-8"), SAMPLE]);
    let page = String::from_utf8(reader.join().expect("reader")).expect("UTF-8 page");
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"), "the whole page");
    assert!(is_fifo(&fifo), "--html kept the FIFO");

    let reader = drain(fifo.clone());
    common::run_ok(&["annotate", "-o", fifo.to_str().expect("UTF-8"), SAMPLE]);
    let capture = reader.join().expect("reader");
    assert_eq!(capture.get(..4), Some(&PCAPNG_MAGIC[..]), "a pcapng file came through");
    assert!(is_fifo(&fifo), "annotate -o kept the FIFO");
    let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("out")], "no scratch or temporary file beside it");
}

#[test]
fn dev_stdout_is_written_through_standard_output_before_the_summary() {
    let out = common::run(&["analyze", "-q", "--html", "/dev/stdout", SAMPLE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(text.starts_with("<!DOCTYPE html>"), "the page first");
    let summary = text.find("</html>").map(|end| &text[end..]).expect("the page ends");
    assert!(summary.contains("Flows (2"), "then the summary: {summary}");
    assert!(std::fs::symlink_metadata("/dev/stdout").is_ok_and(|m| m.file_type().is_symlink()), "still a link");
}

#[test]
fn a_link_to_a_regular_file_keeps_the_link_and_replaces_its_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (page, link) = (dir.path().join("page.html"), dir.path().join("link.html"));
    std::fs::write(&page, "old").expect("write");
    std::os::unix::fs::symlink(&page, &link).expect("symlink");
    common::run_ok(&["analyze", "-q", "--html", link.to_str().expect("UTF-8"), SAMPLE]);
    assert!(std::fs::symlink_metadata(&link).expect("link").file_type().is_symlink(), "the link is kept");
    assert!(std::fs::read_to_string(&page).expect("page").starts_with("<!DOCTYPE html>"));
}

/// Character devices made in a temporary directory (never a real /dev node): a full device
/// fails every writer with exit status 3 and stays a device; a null device takes them all.
#[test]
fn character_devices_are_written_through_and_never_replaced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (full, null) = (dir.path().join("full"), dir.path().join("null"));
    let made = |path: &Path, minor: &str| {
        Command::new("mknod").arg(path).args(["c", "1", minor]).status().is_ok_and(|s| s.success())
    };
    if !made(&full, "7") || !made(&null, "3") || std::fs::write(&null, b"x").is_err() {
        eprintln!("SKIPPED: character devices cannot be made here (not root, or a nodev mount)");
        return;
    }
    let full_path = full.to_str().expect("UTF-8");
    let writers: [Vec<&str>; 3] = [
        vec!["analyze", "-q", "--html", full_path, SAMPLE],
        vec!["annotate", "-o", full_path, SAMPLE],
        vec!["analyze", "-q", "--state", full_path, SAMPLE],
    ];
    for args in &writers {
        let out = common::run(args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("No space left on device"), "{args:?}: {}", stderr(&out));
        assert!(is_char_device(&full), "{args:?} kept the device");
        let left = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(left, 2, "{args:?}: nothing written beside the devices");
    }
    let null_path = null.to_str().expect("UTF-8");
    let writers: [&[&str]; 2] =
        [&["analyze", "-q", "--html", null_path, SAMPLE], &["annotate", "-o", null_path, SAMPLE]];
    for args in writers {
        common::run_ok(args);
        assert!(is_char_device(&null), "{args:?} kept the device");
    }
}

/// The taps of a path generated for the tests, two of its files.
fn two_taps(dir: &Path) -> (PathBuf, PathBuf) {
    use rocescope::generate::path::{Plan, path_set};
    let set = path_set(&Plan::three_taps(), &["a.pcapng", "switch.pcapng", "b.pcapng"]);
    for capture in &set.captures {
        rocescope::generate::write_scenario(dir, capture).expect("write a tap");
    }
    (dir.join("a.pcapng"), dir.join("b.pcapng"))
}

#[test]
fn a_tap_that_cannot_be_read_twice_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, b) = two_taps(dir.path());
    let tap_b = format!("b={}", b.display());
    let fifo = dir.path().join("a.fifo");
    if mkfifo(&fifo) {
        let tap_a = format!("a={}", fifo.display());
        let child = common::rocescope()
            .args(["analyze", "--tap", &tap_a, "--tap", &tap_b])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let out = finished(child, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(&format!("--tap {tap_a}: a tap is read twice")), "{}", stderr(&out));
        assert!(stderr(&out).lines().count() == 1, "one line: {}", stderr(&out));
    }
    let mut child = common::rocescope()
        .args(["analyze", "--tap", "a=-", "--tap", &tap_b])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdin = child.stdin.take().expect("stdin");
    let out = finished(child, Duration::from_secs(30));
    drop(stdin);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--tap a=-: a tap is read twice"), "{}", stderr(&out));
}

#[test]
fn a_file_named_twice_in_one_tap_is_read_once_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b) = two_taps(dir.path());
    let json = |tap_a: &str| {
        let tap_b = format!("b={}", b.display());
        let out = common::run(&["analyze", "--json", "--tap", tap_a, "--tap", &tap_b]);
        assert!(out.status.success(), "{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (report, stderr(&out))
    };
    let (once, quiet) = json(&format!("a={}", a.display()));
    let (twice, warned) = json(&format!("a={},{}", a.display(), a.display()));
    assert!(!quiet.contains("named twice"));
    assert!(warned.contains(&format!("warning: --tap a: {} is named twice; it is read once", a.display())));
    assert_eq!(twice["path"], once["path"]);
    assert_eq!(twice["totals"], once["totals"]);
}

#[test]
fn an_interface_a_tap_s_file_does_not_have_is_refused_naming_those_it_has() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b) = two_taps(dir.path());
    let tap_b = format!("b={}", b.display());
    let out = common::run(&["analyze", "--tap", &format!("a={}#eth9", a.display()), "--tap", &tap_b]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains(&format!("{} has no interface \"eth9\"; its interfaces: 0", a.display())), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    // by index: the generated file's one interface is 0
    let out = common::run(&["analyze", "--json", "--tap", &format!("a={}#0", a.display()), "--tap", &tap_b]);
    assert!(out.status.success(), "{}", stderr(&out));

    // a file whose name holds '#': named with a '#' after it; without, the error says how
    let hashed = dir.path().join("run#3.pcapng");
    std::fs::copy(&a, &hashed).expect("copy");
    let out = common::run(&["analyze", "--json", "--tap", &format!("a={}#", hashed.display()), "--tap", &tap_b]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = common::run(&["analyze", "--tap", &format!("a={}", hashed.display()), "--tap", &tap_b]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("end the tap with '#': a={}#", hashed.display())), "{}", stderr(&out));
}
