//! Arbitrary text as counter snapshots (`analyze --counters`, `--switch-counters`): read by the
//! host parser (`ethtool -S`, hw_counters) and by SONiC's tables' parser, each either read or
//! refused with a short message naming the line, never a panic. What both halves of the input
//! give is put in order, as a host's BEFORE and AFTER are, and reconciled as a switch's rows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::analyze::counters::report::HostCounters;
use rocescope::analyze::counters::{self, Snapshot, SnapshotError, SwitchSnapshots};

/// A refusal quotes at most 200 bytes of a line twice (a name and a value), each character
/// escaped in at most 10 bytes, beside the file's name and the line's number.
const MESSAGE_BOUND: usize = 2 * 10 * 200 + 200;

/// Both parsers' reading of `text`, checked: every counter found by its name, a refusal short.
fn read(text: &str) -> [Result<Snapshot, SnapshotError>; 2] {
    let read = [counters::parse("fuzz", text), counters::sonic::parse("fuzz", text)];
    for result in &read {
        match result {
            Ok(snapshot) => {
                for (name, value) in &snapshot.counters {
                    assert_eq!(snapshot.get(name), Some(*value), "{name} is found by its name");
                }
            }
            Err(e) => assert!(e.to_string().len() < MESSAGE_BOUND, "a refusal of {} bytes", e.to_string().len()),
        }
    }
    let _ = counters::sonic::has_table(text);
    read
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = read(&text);
    let (first, second) = data.split_at(data.len() / 2);
    let halves = read(&String::from_utf8_lossy(first)).into_iter().zip(read(&String::from_utf8_lossy(second)));
    for (before, after) in halves {
        let (Ok(before), Ok(after)) = (before, after) else { continue };
        let (before, after, order) = counters::in_order(before, after);
        let _ = order.warning("fuzz");
        let rows = HostCounters::of_switch(&SwitchSnapshots { name: "fuzz".into(), before, after }).rows;
        assert!(rows.windows(2).all(|pair| pair[0].counter != pair[1].counter) || rows.len() < 2);
    }
});
