//! The interface as a frame source: libpcap opened non-blocking, so that the run sees Ctrl-C,
//! `--duration` and the summary interval in time whatever the traffic.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use pcap::{Active, Capture, PacketHeader, Precision};

use crate::analyze::roce::report::inputs::LiveReport;
use crate::capture::{Frame, LinkType, Record};
use crate::cli::CaptureArgs;
use crate::pipeline::{FrameSource, Next};

/// libpcap's buffer timeout: frames reach the loop at most this late.
const READ_TIMEOUT_MS: i32 = 10;
/// The kernel buffer for frames not yet read.
const BUFFER_BYTES: i32 = 64 << 20;
/// The pause of the (non-blocking) read loop when no frame is waiting.
const IDLE_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

/// Frames handed on between two pauses under load (each pause lets the summaries run).
const FRAMES_BETWEEN_PAUSES: u32 = 4096;
/// How often libpcap's counters are read for the summaries.
const STATS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// A live interface: its frames, numbered from 1, and libpcap's counters.
pub struct Interface {
    cap: Capture<Active>,
    nanos: bool,
    pub link_type: LinkType,
    name: String,
    number: u64,
    since_pause: u32,
    stats_read: Instant,
    /// libpcap's counters, at most [`STATS_EVERY`] old.
    pub stats: Rc<Cell<LiveReport>>,
    /// Why the capture stopped, when it failed.
    pub failure: Option<String>,
}

impl Interface {
    /// Opens the interface of `args` with the BPF filter `filter`.
    pub fn open(args: &CaptureArgs, filter: &str) -> Result<Interface, OpenError> {
        let (mut cap, nanos) = open(args).map_err(OpenError::Device)?;
        cap.filter(filter, true).map_err(|e| OpenError::Filter(format!("the filter '{filter}' is not valid: {e}")))?;
        let link_type = LinkType(u32::try_from(cap.get_datalink().0).unwrap_or(0));
        Ok(Interface {
            cap,
            nanos,
            link_type,
            name: args.interface.clone(),
            number: 0,
            since_pause: 0,
            stats_read: Instant::now(),
            stats: Rc::new(Cell::new(LiveReport::default())),
            failure: None,
        })
    }

    /// Are the timestamps in nanoseconds (else microseconds)?
    pub fn nanos(&self) -> bool {
        self.nanos
    }

    /// libpcap's counters now.
    pub fn read_stats(&mut self) -> LiveReport {
        self.cap.stats().map_or(LiveReport::default(), |s| LiveReport {
            interface_received: u64::from(s.received),
            kernel_dropped: u64::from(s.dropped),
            interface_dropped: u64::from(s.if_dropped),
        })
    }
}

/// Why an interface could not be opened.
pub enum OpenError {
    Device(String),
    Filter(String),
}

impl FrameSource for Interface {
    /// The next frame; a pause when none is waiting, and every [`FRAMES_BETWEEN_PAUSES`] frames.
    fn next(&mut self) -> Next<'_> {
        if self.stats_read.elapsed() >= STATS_EVERY {
            let stats = self.read_stats();
            self.stats.set(stats);
            self.stats_read = Instant::now();
        }
        if self.since_pause >= FRAMES_BETWEEN_PAUSES {
            self.since_pause = 0;
            return Next::Idle;
        }
        match self.cap.next_packet() {
            Ok(packet) => {
                self.number += 1;
                self.since_pause += 1;
                let record = Record {
                    ts_ns: timestamp_ns(packet.header, self.nanos),
                    orig_len: packet.header.len,
                    data: packet.data,
                    link_type: self.link_type,
                    offset: 0,
                };
                Next::Frame(Frame { number: self.number, file: 0, record })
            }
            Err(pcap::Error::TimeoutExpired) => {
                std::thread::sleep(IDLE_PAUSE);
                Next::Idle
            }
            Err(e) => {
                self.failure = Some(format!("capture on {} failed: {e}", self.name));
                Next::End
            }
        }
    }
}

/// Opens the interface, with nanosecond timestamps where the system has them.
fn open(args: &CaptureArgs) -> Result<(Capture<Active>, bool), String> {
    let attempt = |nanos: bool| {
        let inactive = Capture::from_device(args.interface.as_str())?
            .promisc(!args.no_promisc)
            .snaplen(i32::try_from(args.snaplen).unwrap_or(i32::MAX))
            .timeout(READ_TIMEOUT_MS)
            .buffer_size(BUFFER_BYTES);
        let inactive = if nanos { inactive.precision(Precision::Nano) } else { inactive };
        // non-blocking, so that the loop sees Ctrl-C, --duration and the summary interval in
        // time whatever the traffic
        inactive.open()?.setnonblock()
    };
    match attempt(true).map(|c| (c, true)).or_else(|_| attempt(false).map(|c| (c, false))) {
        Ok(opened) => Ok(opened),
        Err(e) => Err(open_error(&args.interface, &e)),
    }
}

/// A one-line explanation of why an interface cannot be opened.
fn open_error(interface: &str, e: &pcap::Error) -> String {
    let text = e.to_string();
    let lower = text.to_lowercase();
    if lower.contains("permission") || lower.contains("not permitted") {
        format!(
            "cannot capture on {interface}: permission denied; run as root or give rocescope the CAP_NET_RAW and \
             CAP_NET_ADMIN capabilities (setcap cap_net_raw,cap_net_admin=eip $(command -v rocescope))"
        )
    } else if lower.contains("no such device") || lower.contains("doesn't exist") || lower.contains("not found") {
        format!("cannot capture on {interface}: no such interface (see `ip link`)")
    } else {
        format!("cannot capture on {interface}: {text}")
    }
}

/// A libpcap timestamp in nanoseconds; the fraction is in nanoseconds when the capture was
/// opened with nanosecond precision, else in microseconds.
// time_t and suseconds_t are not i64 on every target
#[allow(clippy::useless_conversion)]
fn timestamp_ns(header: &PacketHeader, nanos: bool) -> i64 {
    let (sec, frac) = (i64::from(header.ts.tv_sec), i64::from(header.ts.tv_usec));
    sec.saturating_mul(1_000_000_000).saturating_add(if nanos { frac } else { frac.saturating_mul(1_000) })
}
