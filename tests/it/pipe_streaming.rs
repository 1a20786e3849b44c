//! A capture read from a pipe streams: `tcpdump -w - | rocescope packets -l -` prints each frame
//! as it arrives, before the writer closes the pipe, as tshark's `-l` does; on a terminal it
//! does so without `-l`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common;

/// The sample's pcap header and its first `n` records, each as written.
fn header_and_records(n: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let data = std::fs::read("samples/rc_write_healthy.pcap").expect("the sample");
    let mut records = Vec::new();
    let mut at = 24;
    while records.len() < n {
        let len = u32::from_le_bytes(data[at + 8..at + 12].try_into().unwrap()) as usize;
        records.push(data[at..at + 16 + len].to_vec());
        at += 16 + len;
    }
    (data[..24].to_vec(), records)
}

#[test]
fn with_l_each_frame_is_printed_before_the_pipe_closes() {
    let (header, records) = header_and_records(3);
    let mut child = common::rocescope()
        .args(["packets", "-l", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("rocescope");
    let mut stdin = child.stdin.take().expect("stdin");
    let (lines, got) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    stdin.write_all(&header).unwrap();
    for (i, record) in records.iter().enumerate() {
        stdin.write_all(record).unwrap();
        stdin.flush().unwrap();
        // the frame's line comes while the pipe is still open
        let line = got.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("frame {} not printed", i + 1));
        assert!(line.trim_start().starts_with(&format!("{} ", i + 1)), "{line}");
    }
    drop(stdin);
    assert!(child.wait().expect("exit").success());
}

#[test]
fn on_a_terminal_frames_from_a_pipe_are_printed_as_they_come() {
    if Command::new("script").arg("--version").output().is_err()
        || Command::new("mkfifo").arg("--version").output().is_err()
    {
        eprintln!("skipped: `script` and `mkfifo` are needed to give rocescope a terminal and a pipe");
        return;
    }
    let (header, records) = header_and_records(2);
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("capture.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    // standard output a terminal (script's), standard input the pipe
    let binary = env!("CARGO_BIN_EXE_rocescope");
    let command = format!("{binary} packets - < {}", fifo.display());
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script");
    let (lines, got) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).expect("the pipe");
    pipe.write_all(&header).unwrap();
    pipe.write_all(&records[0]).unwrap();
    pipe.flush().unwrap();
    let first = loop {
        let line = got.recv_timeout(Duration::from_secs(20)).expect("the first frame, before the pipe closes");
        if line.contains("10.0.0.1") {
            break line;
        }
    };
    assert!(first.trim_start().starts_with("1 "), "{first}");
    pipe.write_all(&records[1]).unwrap();
    drop(pipe);
    assert!(child.wait().expect("exit").success());
}
