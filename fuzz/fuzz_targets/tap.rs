//! `--tap NAME=FILE[,FILE…][#IFACE]`: the option's text (the input's first line) parsed as the
//! command parses it, and where it names an interface, that interface looked up in a capture
//! (the rest of the input) as `analyze --tap` looks it up before tracing. Either may be refused
//! with a message, never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::capture::interfaces::look_up_interface;
use rocescope::cli::parse_tap;

fuzz_target!(|data: &[u8]| {
    let (line, capture) = match data.iter().position(|&b| b == b'\n') {
        Some(end) => (&data[..end], &data[end + 1..]),
        None => (data, &[][..]),
    };
    let Ok(tap) = parse_tap(&String::from_utf8_lossy(line)) else { return };
    let Some(wanted) = &tap.interface else { return };
    let Ok(dir) = tempfile::tempdir() else { return };
    let file = dir.path().join("tap.pcapng");
    if std::fs::write(&file, capture).is_ok() {
        let _ = look_up_interface(&file, wanted);
    }
});
