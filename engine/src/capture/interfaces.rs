//! What a capture file is as an input: whether it can be read more than once, and which pcapng
//! interfaces it has (`--tap NAME=FILE#IFACE` names one).

use std::path::Path;

use super::{CaptureError, CaptureReader, Container, MAX_INTERFACE_NAMES};

/// Can `path` be read only once? Standard input (`-`), a FIFO, a character device or a socket
/// gives what one pass read to nobody else: a second pass would find nothing, or wait for a
/// writer that never comes. A path that does not exist is not said to be one (its opening
/// reports it).
pub fn read_once_only(path: &Path) -> bool {
    path.as_os_str() == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Does `wanted` (an interface's name, `if_name`, or its index) name the interface `index`
/// called `name`?
pub fn names_interface(wanted: &str, index: u32, name: Option<&str>) -> bool {
    name == Some(wanted) || wanted.parse() == Ok(index)
}

/// What a capture file has of the interface asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterfaceLookup {
    Found,
    /// Not among the interfaces the file describes, listed as `INDEX` or `INDEX (NAME)`.
    Missing {
        has: Vec<String>,
    },
}

/// Looks for the interface `wanted` in the capture `path`, reading it until the interface is
/// described (a pcapng file describes an interface before its first packet, most often at
/// its start) or the file ends. A classic pcap file has one interface, 0, with no name.
pub fn look_up_interface(path: &Path, wanted: &str) -> Result<InterfaceLookup, CaptureError> {
    let mut reader = CaptureReader::open(path, false)?;
    loop {
        if let Some(found) = lookup(&reader, wanted) {
            return Ok(found);
        }
        // a file damaged before the interface is described is read up to the damage
        if !reader.advance().unwrap_or(false) {
            break;
        }
    }
    Ok(lookup(&reader, wanted).unwrap_or_else(|| InterfaceLookup::Missing { has: described(&reader) }))
}

/// `Found` once `wanted` is described; `Missing` where the file can have no other interface;
/// `None` while a pcapng file may still describe it.
fn lookup(reader: &CaptureReader, wanted: &str) -> Option<InterfaceLookup> {
    let info = reader.info();
    if info.container == Container::Pcap {
        return Some(match names_interface(wanted, 0, None) {
            true => InterfaceLookup::Found,
            false => InterfaceLookup::Missing { has: described(reader) },
        });
    }
    let named = info.interfaces.iter().zip(0u32..).any(|(name, index)| names_interface(wanted, index, Some(name)));
    // past the names kept, an index cannot be told missing
    let beyond_kept = info.interfaces.len() >= MAX_INTERFACE_NAMES && wanted.parse::<u32>().is_ok();
    (named || beyond_kept).then_some(InterfaceLookup::Found)
}

/// The interfaces `reader` has described, as `INDEX` or `INDEX (NAME)`.
fn described(reader: &CaptureReader) -> Vec<String> {
    let info = reader.info();
    if info.container == Container::Pcap {
        return vec!["0 (a pcap file's only interface)".into()];
    }
    let shown = |(index, name): (usize, &String)| match name.is_empty() {
        true => index.to_string(),
        false => format!("{index} ({name})"),
    };
    info.interfaces.iter().enumerate().map(shown).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interface_is_named_by_its_name_or_its_index() {
        assert!(names_interface("eth1", 3, Some("eth1")));
        assert!(names_interface("3", 3, Some("eth1")));
        assert!(!names_interface("eth2", 3, Some("eth1")));
        assert!(!names_interface("4", 3, None));
    }

    #[test]
    fn standard_input_and_fifos_are_read_once_and_files_again() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a.pcap");
        std::fs::write(&file, b"x").expect("write");
        assert!(read_once_only(Path::new("-")));
        assert!(read_once_only(Path::new("/dev/null")));
        assert!(!read_once_only(&file));
        assert!(!read_once_only(&dir.path().join("absent.pcap")));
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(read_once_only(&fifo));
        }
    }
}
