//! A NCCL log (`NCCL_DEBUG=INFO`, best with `NCCL_DEBUG_SUBSYS=INIT,NET`): for each process, its
//! communicators, the QPs it created with their device, port, MTU and GID index, the network it
//! chose, its RDMA and socket devices, and the transports of its channels. The log may
//! interleave many processes and other programs' output; lines that are not NCCL's, or are
//! NCCL's but of no interest here, are skipped.
//!
//! Formats read from NCCL's sources (NVIDIA/nccl, v2.4.8 to v2.30.7):
//!
//! - the prefix (`src/debug.cc`): `[TIMESTAMP ]HOST:PID:TID [CUDADEV] NCCL INFO MESSAGE`, and
//!   `HOST:PID:TID [CUDADEV] FILE:LINE[ (FUNC)] NCCL WARN MESSAGE` after an empty line; HOST is
//!   the host name up to its first `.`; the optional timestamp (`NCCL_DEBUG_TIMESTAMP_LEVELS`)
//!   is free-form, and launchers may put a label first (`[1,0]<stdout>:`), so the prefix is
//!   found as the `HOST:PID:TID [N]` pair nearest the marker;
//! - `Init COMPLETE` (`src/init.cc`): `comm %p rank %d nranks %d cudaDev %d nvmlDev %d -`
//!   (2.4), `… cudaDev %d busId %x -` (2.7 to 2.16), `… busId %lx commId 0x%llx -` (2.17),
//!   `… nvmlDev %d busId %lx commId 0x%llx -` (2.18, 2.19), then preceded by the function's name
//!   (`ncclCommInitRank comm …`, 2.21 on) and, for a split, `parent %p [splitCount|childCount] %d
//!   color %d key %d` (no `commId` from 2.23);
//! - the QPs a connection created (`src/transport/net_ib.cc`, from 2.30
//!   `src/transport/net_ib/connect.cc`): `NET/IB: Dev %d Port %d qpn %d mtu %d GID %ld (…)` or
//!   `… LID %d` (2.4 to 2.19, with `query_ece={…}` before `GID` in 2.19), `NET/IB: NCCL Dev %d
//!   IbDev %d Port %d qpn %d mtu %d [query_ece={…}] GID %ld (…) fifoRkey=…` (2.20 to 2.28,
//!   `NCCL MergedDev` for a merged device), `NET/IB: FUNC: NCCL Dev %d IbDev %d Port %d qp_num %d
//!   mtu %d GID %ld (…) ctsFifoRkey=…` (2.29.7 on) and `NET/IB: FUNC: [Flush ]QP created:
//!   port=%d dev=%d devName=%s … qp_num=%u …` (2.29.7 on, both sides of a connection); the
//!   lines of one QP are merged;
//! - `Using network %s` (`src/init.cc`, 2.7 on), `NET/IB : Using [0]mlx5_0:1/RoCE … ; OOB
//!   IF:ADDR` and `NET/IB : No device found.` (`net_ib.cc`, `net_ib/init.cc`), `NET/Socket : Using
//!   [0]eth0:10.0.0.1<0> …` (`net_socket.cc`);
//! - channels (`src/transport/*.cc`): `Channel %02d/%d : %d[%d] -> %d[%d] [send] via
//!   NET/%s/%d…`, `… via P2P/…`, `… via SHM/…` or `… via direct shared memory`; `Ring %02d : …`
//!   before 2.7.
//!
//! A NCCL INFO line whose known phrase cannot be read is a warning, never a failure.

use std::collections::HashMap;
use std::fmt;

/// At most this many bytes of log are read; the rest is skipped with a warning.
pub const MAX_TEXT_BYTES: usize = 16 << 20;
/// Lines longer than this are skipped with a warning (NCCL's own lines are under 1 KiB).
pub const MAX_LINE_BYTES: usize = 16 << 10;
/// At most this many processes are kept; later ones are skipped with a warning.
pub const MAX_PROCESSES: usize = 4096;
/// At most this many communicators, QPs, devices or channel transports are kept per process.
pub const MAX_ITEMS_PER_PROCESS: usize = 65_536;
/// At most this many warnings are kept; a last one counts the others.
pub const MAX_WARNINGS: usize = 1000;
/// The largest QP number: QPNs are 24 bits wide.
const MAX_QPN: u32 = 0x00FF_FFFF;
/// At most this many bytes of a line are quoted in a warning.
const QUOTED_BYTES: usize = 120;

/// What a NCCL log tells of its processes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NcclLog {
    /// The processes in the order of their first line.
    pub processes: Vec<NcclProcess>,
    /// NCCL lines that could not be read, and the caps reached.
    pub warnings: Vec<LogWarning>,
}

/// One process (host and pid) of the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NcclProcess {
    /// The host's name as NCCL prints it (up to its first `.`).
    pub hostname: String,
    pub pid: u32,
    /// Its communicators, from their `Init COMPLETE` lines.
    pub communicators: Vec<Communicator>,
    /// The QPs it created, one entry a QP (its several lines merged).
    pub qps: Vec<CreatedQp>,
    /// The networks it chose (`Using network IB`), each once, with the line it was first named.
    pub networks: Vec<Named>,
    /// The RDMA devices NET/IB found (`NET/IB : Using [0]mlx5_0:1/RoCE …`).
    pub ib_devices: Vec<IbDevice>,
    /// The line of `NET/IB : No device found.`, if it printed one.
    pub ib_no_device_line: Option<usize>,
    /// The interfaces NET/Socket found (`NET/Socket : Using [0]eth0:…`).
    pub socket_devices: Vec<String>,
    /// The transports its channels go through (`NET/IB`, `NET/Socket`, `P2P`, `SHM`…), each
    /// once, with the line it was first named.
    pub channels_via: Vec<Named>,
}

/// A name with the line (from 1) where it was first seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub line: usize,
}

/// A communicator, from its `Init COMPLETE` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Communicator {
    /// Its address in the process (`comm 0x…`).
    pub comm: u64,
    pub rank: u32,
    pub nranks: u32,
    /// The hash of its unique id, shared by every rank (`commId 0x…`, 2.17 on; not printed for
    /// a split from 2.23).
    pub comm_id: Option<u64>,
    pub cuda_dev: Option<u32>,
    pub nvml_dev: Option<u32>,
    /// The GPU's PCI bus id (`busId 1b000`, hexadecimal).
    pub bus_id: Option<u64>,
    /// The communicator it was split from, if it was.
    pub parent: Option<u64>,
    pub line: usize,
}

/// A QP the process created, from NET/IB's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedQp {
    pub qpn: u32,
    /// The index of its device in NET/IB's list (`IbDev N`; `Dev N` before 2.20).
    pub ib_dev: Option<u32>,
    /// The device's name (`devName=`, or the list's name at `ib_dev`).
    pub device: Option<String>,
    pub port: Option<u32>,
    /// The path MTU in bytes, decoded from the verbs enum NCCL prints (1 = 256, 2 = 512,
    /// 3 = 1024, 4 = 2048, 5 = 4096).
    pub mtu: Option<u32>,
    /// The local GID index (RoCE lines only; `GID -1`, "automatic", is none).
    pub gid_index: Option<u32>,
    /// The first line naming it.
    pub line: usize,
}

/// One RDMA device of `NET/IB : Using`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IbDevice {
    /// Its index, `[N]`.
    pub index: u32,
    pub name: String,
    pub port: Option<u32>,
    /// `IB` or `RoCE`, as printed after the `/`.
    pub link_layer: Option<String>,
}

/// A line of the log that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogWarning {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for LogWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: line {}: {}", self.file, self.line, self.message)
    }
}

/// A process that used sockets where RDMA was to be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    pub hostname: String,
    pub pid: u32,
    /// The first line showing its use of sockets.
    pub line: usize,
    pub reason: String,
}

impl NcclProcess {
    /// Whether it uses NET/IB (`Using network IB`, an `IBext` plugin, or a channel via it).
    pub fn uses_ib(&self) -> bool {
        self.networks.iter().any(|network| is_ib(&network.name))
            || self.channels_via.iter().any(|via| via.name.strip_prefix("NET/").is_some_and(is_ib))
    }

    /// The first line showing it uses sockets (`Using network Socket` or a channel via
    /// `NET/Socket`), if any.
    pub fn socket_use_line(&self) -> Option<usize> {
        let network = self.networks.iter().filter(|n| n.name == "Socket").map(|n| n.line);
        let channel = self.channels_via.iter().filter(|via| via.name == "NET/Socket").map(|via| via.line);
        network.chain(channel).min()
    }
}

/// Whether a network's name is NCCL's IB transport or its external plugin (`IBext`, `IBext_v8`).
fn is_ib(name: &str) -> bool {
    name == "IB" || name.starts_with("IBext")
}

impl NcclLog {
    /// The processes that used sockets although RDMA was to be had: those that listed RDMA
    /// devices themselves, or, with none (`NET/IB : No device found.`), when another process of
    /// the log uses IB.
    pub fn socket_fallbacks(&self) -> Vec<Fallback> {
        self.socket_fallbacks_among(&self.ib_users())
    }

    /// Its processes that use IB.
    pub fn ib_users(&self) -> Vec<&NcclProcess> {
        self.processes.iter().filter(|p| p.uses_ib()).collect()
    }

    /// [`NcclLog::socket_fallbacks`], where the processes that use IB are `ib_users` (those of
    /// every log of a job).
    pub fn socket_fallbacks_among(&self, ib_users: &[&NcclProcess]) -> Vec<Fallback> {
        self.processes
            .iter()
            .filter_map(|process| {
                let line = process.socket_use_line()?;
                let reason = fallback_reason(process, ib_users)?;
                Some(Fallback { hostname: process.hostname.clone(), pid: process.pid, line, reason })
            })
            .collect()
    }
}

/// Why a process using sockets fell back, if it did.
fn fallback_reason(process: &NcclProcess, ib_users: &[&NcclProcess]) -> Option<String> {
    if !process.ib_devices.is_empty() {
        let names: Vec<&str> = process.ib_devices.iter().map(|device| device.name.as_str()).collect();
        return Some(format!("uses sockets although NET/IB listed RDMA devices ({})", names.join(", ")));
    }
    let other = ib_users.iter().find(|other| other.hostname != process.hostname || other.pid != process.pid)?;
    let found = match process.ib_no_device_line {
        Some(line) => format!("NET/IB found no device (line {line})"),
        None => "it listed no RDMA device".to_string(),
    };
    Some(format!("uses sockets ({found}) while {}:{} uses network IB", other.hostname, other.pid))
}

/// Reads the NCCL log `text`, the contents of `file`.
pub fn parse(file: &str, text: &str) -> NcclLog {
    let mut reader =
        Reader { file, log: NcclLog::default(), index: HashMap::new(), processes_capped: false, dropped_warnings: 0 };
    let readable = crate::quoting::prefix(text, MAX_TEXT_BYTES);
    for (index, line) in readable.lines().enumerate() {
        reader.line(index + 1, line);
    }
    if readable.len() < text.len() {
        let lines = readable.lines().count().max(1);
        reader.warn(lines, format!("the log has {} bytes: only the first {MAX_TEXT_BYTES} were read", text.len()));
    }
    reader.finish()
}

/// The state of one reading.
struct Reader<'a> {
    file: &'a str,
    log: NcclLog,
    /// Each process's place in `log.processes`.
    index: HashMap<(String, u32), usize>,
    /// Whether a process past [`MAX_PROCESSES`] was met (and warned of).
    processes_capped: bool,
    dropped_warnings: usize,
}

/// The host and pid of a NCCL line, its level and its message.
struct NcclLine<'a> {
    hostname: &'a str,
    pid: u32,
    info: bool,
    message: &'a str,
}

impl Reader<'_> {
    /// Reads line `number` of the log.
    fn line(&mut self, number: usize, line: &str) {
        if !line.contains("NCCL INFO") && !line.contains("NCCL WARN") {
            return;
        }
        if line.len() > MAX_LINE_BYTES {
            return self.warn(number, format!("a NCCL line of {} bytes, skipped", line.len()));
        }
        let Some(nccl) = nccl_line(line) else {
            return self.warn(number, format!("a NCCL line without its HOST:PID:TID [DEV] prefix: {}", quoted(line)));
        };
        let Some(at) = self.process(nccl.hostname, nccl.pid, number) else { return };
        if !nccl.info {
            return;
        }
        if let Err(message) = self.message(at, number, nccl.message) {
            self.warn(number, format!("{message}: {}", quoted(nccl.message)));
        }
    }

    /// Reads an INFO message of the process at `at`: a phrase of interest, or nothing.
    fn message(&mut self, at: usize, number: usize, message: &str) -> Result<(), String> {
        let Some(process) = self.log.processes.get_mut(at) else { return Ok(()) };
        if message.trim_end().ends_with("Init COMPLETE") {
            let communicator = communicator(message, number)?;
            return push_capped(&mut process.communicators, communicator, "communicators");
        }
        if message.starts_with("NET/IB") {
            return ib_message(process, message, number);
        }
        if let Some(list) = message.strip_prefix("NET/Socket : Using") {
            return socket_devices(process, list);
        }
        if let Some(name) =
            message.strip_prefix("Using network").filter(|rest| rest.is_empty() || rest.starts_with(' '))
        {
            let name = name.trim();
            if name.is_empty() {
                return Err("`Using network` names no network".to_string());
            }
            return add_named(&mut process.networks, name, number);
        }
        if (message.starts_with("Channel ") || message.starts_with("Ring ")) && message.contains(" via ") {
            let transport = channel_transport(message)?;
            return add_named(&mut process.channels_via, &transport, number);
        }
        Ok(())
    }

    /// The place of the process `hostname`:`pid`, added at its first line; `None` past the cap.
    fn process(&mut self, hostname: &str, pid: u32, number: usize) -> Option<usize> {
        let key = (hostname.to_string(), pid);
        if let Some(&at) = self.index.get(&key) {
            return Some(at);
        }
        let count = self.log.processes.len();
        if count >= MAX_PROCESSES {
            if !self.processes_capped {
                self.processes_capped = true;
                self.warn(number, format!("more than {MAX_PROCESSES} processes: the others are skipped"));
            }
            return None;
        }
        self.index.insert(key, count);
        self.log.processes.push(NcclProcess { hostname: hostname.to_string(), pid, ..NcclProcess::default() });
        Some(count)
    }

    /// Keeps a warning, or counts it past [`MAX_WARNINGS`].
    fn warn(&mut self, line: usize, message: String) {
        if self.log.warnings.len() < MAX_WARNINGS {
            self.log.warnings.push(LogWarning { file: self.file.to_string(), line, message });
        } else {
            self.dropped_warnings += 1;
        }
    }

    /// The log, each QP's device named from its process's list, the dropped warnings counted.
    fn finish(mut self) -> NcclLog {
        for process in &mut self.log.processes {
            name_qp_devices(process);
        }
        if self.dropped_warnings > 0 {
            let line = self.log.warnings.last().map_or(1, |warning| warning.line);
            let message = format!("{} more warnings after these were not kept", self.dropped_warnings);
            self.log.warnings.push(LogWarning { file: self.file.to_string(), line, message });
        }
        self.log
    }
}

/// The parts of a NCCL line, if its prefix can be read.
fn nccl_line(line: &str) -> Option<NcclLine<'_>> {
    let (prefix, info, message) = match (line.find("NCCL INFO"), line.find("NCCL WARN")) {
        (Some(at), warn) if warn.is_none_or(|warn| at < warn) => (line.get(..at)?, true, line.get(at + 9..)?),
        (_, Some(at)) => (line.get(..at)?, false, line.get(at + 9..)?),
        _ => return None,
    };
    let (hostname, pid) = prefix_owner(prefix)?;
    Some(NcclLine { hostname, pid, info, message: message.trim() })
}

/// The host and pid of a prefix: the last `HOST:PID:TID` word followed by a `[N]` word.
fn prefix_owner(prefix: &str) -> Option<(&str, u32)> {
    let words: Vec<&str> = prefix.split_whitespace().collect();
    words.windows(2).rev().find_map(|pair| match pair {
        [owner, device] if is_cuda_dev(device) => host_pid(owner),
        _ => None,
    })
}

/// Whether `word` is `[N]` (the CUDA device; `[-1]` accepted).
fn is_cuda_dev(word: &str) -> bool {
    let inner = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')).unwrap_or_default();
    let digits = inner.strip_prefix('-').unwrap_or(inner);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `HOST:PID:TID` (anything before HOST and a `:` is a launcher's label) as the host and pid.
fn host_pid(word: &str) -> Option<(&str, u32)> {
    let mut parts = word.rsplitn(3, ':');
    let tid = parts.next()?;
    let pid = parts.next()?.parse::<u32>().ok()?;
    let hostname = parts.next()?.rsplit(':').next()?;
    (tid.parse::<u32>().is_ok() && !hostname.is_empty()).then_some((hostname, pid))
}

/// The value after `key` in a message: the word after a word `key`, or the part after `key=`
/// in a word; trailing `,`, `)` and `}` are dropped.
fn value_of<'a>(words: &[&'a str], key: &str) -> Option<&'a str> {
    let found = words.iter().enumerate().find_map(|(at, word)| {
        if *word == key {
            return words.get(at + 1).copied();
        }
        word.strip_prefix(key).and_then(|rest| rest.strip_prefix('='))
    })?;
    Some(found.trim_end_matches([',', ')', '}']))
}

/// A hexadecimal number, with or without `0x`.
fn hex(value: &str) -> Option<u64> {
    let digits = value.strip_prefix("0x").or_else(|| value.strip_prefix("0X")).unwrap_or(value);
    u64::from_str_radix(digits, 16).ok()
}

/// The value after `key`, read by `read`: `None` if absent, an error if unreadable.
fn optional<'a, T>(words: &[&'a str], key: &str, read: impl Fn(&'a str) -> Option<T>) -> Result<Option<T>, String> {
    match value_of(words, key) {
        None => Ok(None),
        Some(value) => read(value).map(Some).ok_or_else(|| format!("{key} {value:?} cannot be read")),
    }
}

/// The value after `key`, which must be there and readable.
fn required<'a, T>(words: &[&'a str], key: &str, read: impl Fn(&'a str) -> Option<T>) -> Result<T, String> {
    optional(words, key, read)?.ok_or_else(|| format!("no {key}"))
}

/// The value after the first of `keys` the message has, read by `read`.
fn first_of<'a, T>(words: &[&'a str], keys: &[&str], read: impl Fn(&'a str) -> Option<T>) -> Result<Option<T>, String> {
    for key in keys {
        if let Some(value) = optional(words, key, &read)? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// A decimal number of 32 bits.
fn decimal(value: &str) -> Option<u32> {
    value.parse().ok()
}

/// A communicator from its `Init COMPLETE` message.
fn communicator(message: &str, line: usize) -> Result<Communicator, String> {
    let words: Vec<&str> = message.split_whitespace().collect();
    let words = words.as_slice();
    Ok(Communicator {
        comm: required(words, "comm", hex)?,
        rank: required(words, "rank", decimal)?,
        nranks: required(words, "nranks", decimal)?,
        comm_id: optional(words, "commId", hex)?,
        cuda_dev: optional(words, "cudaDev", decimal)?,
        nvml_dev: optional(words, "nvmlDev", decimal)?,
        bus_id: optional(words, "busId", hex)?,
        parent: optional(words, "parent", hex)?,
        line,
    })
}

/// A `NET/IB` message: its device list, its lack of device, or a QP it created.
fn ib_message(process: &mut NcclProcess, message: &str, line: usize) -> Result<(), String> {
    if message.contains("No device found") {
        process.ib_no_device_line.get_or_insert(line);
        return Ok(());
    }
    if let Some(list) = message.strip_prefix("NET/IB : Using") {
        return ib_devices(process, list);
    }
    let words: Vec<&str> = message.split_whitespace().collect();
    let names_qpn = value_of(&words, "qpn").or_else(|| value_of(&words, "qp_num")).is_some();
    if names_qpn && (words.contains(&"mtu") || message.contains("QP created:")) {
        let qp = created_qp(&words, line)?;
        return merge_qp(process, qp);
    }
    Ok(())
}

/// A QP from the words of its NET/IB line.
fn created_qp(words: &[&str], line: usize) -> Result<CreatedQp, String> {
    let qpn_key = if value_of(words, "qpn").is_some() { "qpn" } else { "qp_num" };
    let qpn = required(words, qpn_key, decimal)?;
    if qpn > MAX_QPN {
        return Err(format!("{qpn_key} {qpn} is more than 24 bits"));
    }
    // `IbDev` (2.20 on) is the index in NET/IB's list; before, `Dev` was that same index.
    let ib_dev = first_of(words, &["IbDev", "dev", "Dev"], decimal)?;
    Ok(CreatedQp {
        qpn,
        ib_dev,
        device: value_of(words, "devName").map(str::to_string),
        port: first_of(words, &["Port", "port"], decimal)?,
        mtu: optional(words, "mtu", mtu_bytes)?,
        gid_index: optional(words, "GID", |value| value.parse::<i64>().ok())?.and_then(|gid| u32::try_from(gid).ok()),
        line,
    })
}

/// The bytes of a verbs MTU enum (`enum ibv_mtu`: 1 = 256 … 5 = 4096).
fn mtu_bytes(value: &str) -> Option<u32> {
    match value.parse::<u32>().ok()? {
        code @ 1..=5 => Some(128 << code),
        _ => None,
    }
}

/// Adds `qp`, or fills in what an earlier line of the same QP left out.
fn merge_qp(process: &mut NcclProcess, qp: CreatedQp) -> Result<(), String> {
    let same = |known: &CreatedQp| {
        known.qpn == qp.qpn && (known.ib_dev.is_none() || qp.ib_dev.is_none() || known.ib_dev == qp.ib_dev)
    };
    match process.qps.iter_mut().find(|known| same(known)) {
        Some(known) => {
            known.ib_dev = known.ib_dev.or(qp.ib_dev);
            known.device = known.device.take().or(qp.device);
            known.port = known.port.or(qp.port);
            known.mtu = known.mtu.or(qp.mtu);
            known.gid_index = known.gid_index.or(qp.gid_index);
            Ok(())
        }
        None => push_capped(&mut process.qps, qp, "QPs"),
    }
}

/// Names each QP's device from the process's device list, where its line gave only an index.
fn name_qp_devices(process: &mut NcclProcess) {
    for qp in &mut process.qps {
        if qp.device.is_none() {
            let listed = process.ib_devices.iter().find(|device| Some(device.index) == qp.ib_dev);
            qp.device = listed.map(|device| device.name.clone());
        }
    }
}

/// The entries `[N]REST` of a `Using` list (up to `; OOB`), `[RO]` and the like skipped.
fn list_entries(list: &str) -> impl Iterator<Item = (u32, &str)> {
    let list = list.split(';').next().unwrap_or_default();
    list.split_whitespace().filter_map(|word| {
        let (index, rest) = word.strip_prefix('[')?.split_once(']')?;
        Some((index.parse::<u32>().ok()?, rest))
    })
}

/// The devices of `NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1:0/IB …; OOB …` (a rail or a plane
/// may follow the port, `net_ib/init.cc`).
fn ib_devices(process: &mut NcclProcess, list: &str) -> Result<(), String> {
    for (index, entry) in list_entries(list) {
        let (name, rest) = entry.split_once(':').ok_or_else(|| format!("device [{index}] has no port"))?;
        let port_text = rest.split([':', '/']).next().unwrap_or_default();
        let port =
            port_text.parse::<u32>().map_err(|_| format!("device [{index}]'s port {port_text:?} cannot be read"))?;
        let link_layer = rest.rsplit_once('/').map(|(_, link)| link.to_string());
        let device = IbDevice { index, name: name.to_string(), port: Some(port), link_layer };
        if !process.ib_devices.contains(&device) {
            push_capped(&mut process.ib_devices, device, "RDMA devices")?;
        }
    }
    Ok(())
}

/// The interfaces of `NET/Socket : Using [0]eth0:10.0.0.1<0> …`.
fn socket_devices(process: &mut NcclProcess, list: &str) -> Result<(), String> {
    for (index, entry) in list_entries(list) {
        let name = entry.split(':').next().unwrap_or_default();
        if name.is_empty() {
            return Err(format!("interface [{index}] has no name"));
        }
        if !process.socket_devices.iter().any(|known| known == name) {
            push_capped(&mut process.socket_devices, name.to_string(), "socket interfaces")?;
        }
    }
    Ok(())
}

/// The transport of a channel line: `NET/NAME` (the name may hold spaces, `NET/AWS
/// Libfabric/0`), `COLLNET/NAME`, or the first part of the rest (`P2P`, `SHM`).
fn channel_transport(message: &str) -> Result<String, String> {
    let (_, via) = message.split_once(" via ").ok_or("no `via`")?;
    for family in ["NET/", "COLLNET/"] {
        if let Some(rest) = via.strip_prefix(family) {
            let end = rest
                .char_indices()
                .find(|&(at, c)| {
                    c == '/' && rest.get(at + 1..).is_some_and(|after| after.starts_with(|d: char| d.is_ascii_digit()))
                })
                .map(|(at, _)| at)
                .ok_or_else(|| format!("the {family} transport has no device number"))?;
            return Ok(format!("{family}{}", rest.get(..end).unwrap_or_default()));
        }
    }
    if via.starts_with("direct shared memory") {
        return Ok("SHM".to_string()); // the SHM transport's wording before 2.19
    }
    let first = via.split(['/', ' ']).next().unwrap_or_default();
    if first.is_empty() {
        return Err("no transport after `via`".to_string());
    }
    Ok(first.to_string())
}

/// Adds `name` seen at `line` unless already there.
fn add_named(list: &mut Vec<Named>, name: &str, line: usize) -> Result<(), String> {
    if list.iter().any(|known| known.name == name) {
        return Ok(());
    }
    push_capped(list, Named { name: name.to_string(), line }, "names")
}

/// Pushes `item` unless `list` holds [`MAX_ITEMS_PER_PROCESS`] already.
fn push_capped<T>(list: &mut Vec<T>, item: T, what: &str) -> Result<(), String> {
    if list.len() >= MAX_ITEMS_PER_PROCESS {
        return Err(format!("more than {MAX_ITEMS_PER_PROCESS} {what} in one process: this one is not kept"));
    }
    list.push(item);
    Ok(())
}

/// `text` quoted for a warning, cut to [`QUOTED_BYTES`] on a character's boundary.
fn quoted(text: &str) -> String {
    crate::quoting::quoted(text, QUOTED_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process<'a>(log: &'a NcclLog, hostname: &str, pid: u32) -> &'a NcclProcess {
        log.processes.iter().find(|p| p.hostname == hostname && p.pid == pid).expect("process")
    }

    fn named(name: &str, line: usize) -> Named {
        Named { name: name.to_string(), line }
    }

    fn roce(index: u32, name: &str) -> IbDevice {
        IbDevice { index, name: name.to_string(), port: Some(1), link_layer: Some("RoCE".to_string()) }
    }

    /// Four processes on two hosts, NCCL 2.18 on node-a and 2.21 on node-b, interleaved with
    /// other subsystems' lines, a WARN, the program's own output and a launcher's labels; pid
    /// 5003 on node-b fell back to sockets.
    const LOG: &str = "\
Epoch 1: starting
node-a:4001:4001 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>
node-a:4001:4001 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>
node-a:4001:4001 [0] NCCL INFO Using network IB
node-a:4002:4002 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>
node-a:4002:4002 [1] NCCL INFO Using network IB
node-a:4001:4001 [0] NCCL INFO comm 0x55d4c8a0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x8f2e4a1c5b6d7e80 - Init START
node-a:4001:4001 [0] NCCL INFO Channel 00/02 :    0   1   2   3
node-a:4001:4001 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC
node-a:4001:4090 [0] NCCL INFO Channel 00/0 : 3[1] -> 0[0] [receive] via NET/IB/0/GDRDMA
node-a:4001:4090 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 4660 mtu 5 query_ece={supported=1, vendor_id=0x15b3, options=0x30000002, comp_mask=0x0} GID 3 (0/A0001FFFF0000)
[1,2]<stdout>:node-b:5001:5001 [0] NCCL INFO Using network IB
node-b:5001:5001 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0:10.0.0.2<0>
node-b:5001:5077 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 291 mtu 4 query_ece={supported=0, vendor_id=0x0, options=0x0, comp_mask=0x0} GID 3 (0/A0002FFFF0000) fifoRkey=0x1fb4 fifoLkey=0x1fb4
node-b:5003:5003 [0] NCCL INFO NET/IB : No device found.
node-b:5003:5003 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0> [1]eth1:fe80::1%eth1<0>
node-b:5003:5003 [0] NCCL INFO Using network Socket
loss=0.25
node-a:4001:4090 [0] NCCL INFO NET/IB: Dev 1 Port 1 qpn 12x mtu 5 GID 3 (0/A0001FFFF0000)

node-a:4002:4002 [1] transport/net_ib.cc:1000 NCCL WARN NET/IB : Got async event : port error
node-b:5003:5003 [0] NCCL INFO Channel 01/0 : 2[0] -> 3[0] [send] via NET/Socket/1
node-a:4001:4001 [0] NCCL INFO comm 0x55d4c8a0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x8f2e4a1c5b6d7e80 - Init COMPLETE
node-b:5001:5001 [0] NCCL INFO ncclCommInitRank comm 0x7f00aa10 rank 2 nranks 4 cudaDev 0 nvmlDev 3 busId 3d000 commId 0x8f2e4a1c5b6d7e80 - Init COMPLETE
node-b:5003:5003 [0] NCCL INFO ncclCommSplit comm 0x7f00bb20 rank 3 nranks 4 cudaDev 0 nvmlDev 0 busId 1b000 parent 0x7f00cc30 splitCount 1 color 7 key 3 - Init COMPLETE
node-a:4002:4002 [1] NCCL INFO comm 0x5601 rank 1 nranks 4 cudaDev 1 busId 1c000 - Init COMPLETE
done
";

    #[test]
    fn processes_are_kept_in_order_of_first_line() {
        let log = parse("run.log", LOG);
        let owners: Vec<_> = log.processes.iter().map(|p| (p.hostname.as_str(), p.pid)).collect();
        assert_eq!(owners, vec![("node-a", 4001), ("node-a", 4002), ("node-b", 5001), ("node-b", 5003)]);
    }

    #[test]
    fn communicators_of_several_versions_are_read() {
        let log = parse("run.log", LOG);
        let a = process(&log, "node-a", 4001);
        assert_eq!(
            a.communicators,
            vec![Communicator {
                comm: 0x55d4c8a0,
                rank: 0,
                nranks: 4,
                comm_id: Some(0x8f2e4a1c5b6d7e80),
                cuda_dev: Some(0),
                nvml_dev: Some(0),
                bus_id: Some(0x1b000),
                parent: None,
                line: 23,
            }]
        );
        let b = process(&log, "node-b", 5001);
        assert_eq!(
            (b.communicators[0].comm, b.communicators[0].rank, b.communicators[0].nvml_dev),
            (0x7f00aa10, 2, Some(3))
        );
        let split = &process(&log, "node-b", 5003).communicators[0];
        assert_eq!(
            (split.comm, split.rank, split.comm_id, split.parent, split.line),
            (0x7f00bb20, 3, None, Some(0x7f00cc30), 25)
        );
        let old = &process(&log, "node-a", 4002).communicators[0];
        assert_eq!(
            (old.comm, old.rank, old.nranks, old.cuda_dev, old.nvml_dev, old.bus_id),
            (0x5601, 1, 4, Some(1), None, Some(0x1c000))
        );
    }

    #[test]
    fn created_qps_of_two_wordings_are_read() {
        let log = parse("run.log", LOG);
        let a = process(&log, "node-a", 4001);
        assert_eq!(
            a.qps,
            vec![CreatedQp {
                qpn: 4660,
                ib_dev: Some(0),
                device: Some("mlx5_0".to_string()),
                port: Some(1),
                mtu: Some(4096),
                gid_index: Some(3),
                line: 11,
            }]
        );
        let b = process(&log, "node-b", 5001);
        assert_eq!(
            b.qps,
            vec![CreatedQp {
                qpn: 291,
                ib_dev: Some(0),
                device: Some("mlx5_0".to_string()),
                port: Some(1),
                mtu: Some(2048),
                gid_index: Some(3),
                line: 14,
            }]
        );
    }

    #[test]
    fn networks_devices_and_channels_are_read() {
        let log = parse("run.log", LOG);
        let a = process(&log, "node-a", 4001);
        assert_eq!(a.networks, vec![named("IB", 4)]);
        assert_eq!(a.ib_devices, vec![roce(0, "mlx5_0"), roce(1, "mlx5_1")]);
        assert_eq!(a.channels_via, vec![named("P2P", 9), named("NET/IB", 10)]);
        assert_eq!(a.ib_no_device_line, None);
        let socket = process(&log, "node-b", 5003);
        assert_eq!(socket.networks, vec![named("Socket", 17)]);
        assert_eq!(socket.socket_devices, vec!["eth0".to_string(), "eth1".to_string()]);
        assert_eq!(socket.ib_devices, vec![]);
        assert_eq!(socket.ib_no_device_line, Some(15));
        assert_eq!(socket.channels_via, vec![named("NET/Socket", 22)]);
        assert!(!socket.uses_ib());
        assert_eq!(socket.socket_use_line(), Some(17));
    }

    #[test]
    fn a_malformed_qpn_is_a_warning_with_its_line() {
        let log = parse("run.log", LOG);
        assert_eq!(log.warnings.len(), 1, "{:?}", log.warnings);
        let warning = &log.warnings[0];
        assert_eq!((warning.file.as_str(), warning.line), ("run.log", 19));
        assert!(warning.message.starts_with("qpn \"12x\" cannot be read: \"NET/IB: Dev 1 Port 1"), "{warning}");
        assert!(warning.to_string().starts_with("run.log: line 19: qpn"));
    }

    #[test]
    fn no_device_with_other_ib_processes_is_a_fallback() {
        let log = parse("run.log", LOG);
        let fallbacks = log.socket_fallbacks();
        assert_eq!(
            fallbacks,
            vec![Fallback {
                hostname: "node-b".to_string(),
                pid: 5003,
                line: 17,
                reason: "uses sockets (NET/IB found no device (line 15)) while node-a:4001 uses network IB".to_string(),
            }]
        );
    }

    #[test]
    fn no_device_alone_is_no_fallback() {
        let text = "\
host-x:77:77 [0] NCCL INFO NET/IB : No device found.
host-x:77:77 [0] NCCL INFO NET/Socket : Using [0]eth0:192.168.1.5<0>
host-x:77:77 [0] NCCL INFO Using network Socket
host-x:77:77 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0
host-y:88:88 [0] NCCL INFO Using network Socket
";
        let log = parse("solo.log", text);
        assert_eq!(log.processes.len(), 2);
        assert_eq!(process(&log, "host-x", 77).socket_use_line(), Some(3));
        assert_eq!(log.socket_fallbacks(), vec![]);
        assert_eq!(log.warnings, vec![]);
    }

    #[test]
    fn sockets_with_listed_rdma_devices_is_a_fallback() {
        let text = "\
gpu7:900:900 [3] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE [1]mlx5_3:1/RoCE ; OOB bond0:10.1.1.7<0>
gpu7:900:900 [3] NCCL INFO Channel 00/0 : 0[3] -> 1[3] [send] via NET/Socket/0
";
        let fallbacks = parse("f.log", text).socket_fallbacks();
        assert_eq!(
            fallbacks,
            vec![Fallback {
                hostname: "gpu7".to_string(),
                pid: 900,
                line: 2,
                reason: "uses sockets although NET/IB listed RDMA devices (mlx5_2, mlx5_3)".to_string(),
            }]
        );
    }

    /// NCCL 2.29.7 and later: `QP created` names the device; the connection's line adds the MTU
    /// and GID of the same QP (merged); a flush QP; ECE lines are not QPs of their own.
    #[test]
    fn newest_wordings_are_merged_per_qp() {
        let text = "\
[2026-12-05 10:00:00] h1:10:11 [2] NCCL INFO NET/IB: ncclIbConnect: QP created: port=1 dev=1 devName=mlx5_1 ndevs=1 nmdevs=2 qp_num=1001 pkey=0 pd=0x5555 oooRq=0
h1:10:11 [2] NCCL INFO NET/IB: ncclIbConnect: IbDev 1 Port 1 qp_num 1001 query_ece={supported=1, vendor_id=0x15b3, options=0x30000002, comp_mask=0x0}
h1:10:11 [2] NCCL INFO NET/IB: ncclIbConnect: NCCL Dev 0 IbDev 1 Port 1 qp_num 1001 mtu 3 GID 5 (0/A0001FFFF0000) ctsFifoRkey=0x1 ctsFifoLkey=0x1
h1:10:11 [2] NCCL INFO NET/IB: ncclIbAccept: Flush QP created: port=1 dev=1 devName=mlx5_1 ndevs=1 nmdevs=2 qp_num=1002 pkey=0 pd=0x5555
h1:10:11 [2] NCCL INFO NET/IB: ncclIbAccept: Pre-posting 8 Receive WQEs on QP (qp_num=1001, comm=0x7f)
h1:10:11 [2] NCCL INFO NET/IB: IbDev 1 Port 1 qpn 1001 set_ece={supported=1, vendor_id=0x15b3, options=0x30000002, comp_mask=0x0}
";
        let log = parse("new.log", text);
        assert_eq!(log.warnings, vec![]);
        let qps = &process(&log, "h1", 10).qps;
        assert_eq!(
            qps,
            &vec![
                CreatedQp {
                    qpn: 1001,
                    ib_dev: Some(1),
                    device: Some("mlx5_1".to_string()),
                    port: Some(1),
                    mtu: Some(1024),
                    gid_index: Some(5),
                    line: 1,
                },
                CreatedQp {
                    qpn: 1002,
                    ib_dev: Some(1),
                    device: Some("mlx5_1".to_string()),
                    port: Some(1),
                    mtu: None,
                    gid_index: None,
                    line: 4
                },
            ]
        );
    }

    /// NCCL 2.4's IB (LID, no GID) line, its `Ring` channels, an automatic GID index and an
    /// external plugin's network name with spaces.
    #[test]
    fn older_and_plugin_wordings_are_read() {
        let text = "\
old:1:2 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 77 mtu 5 LID 12
old:1:2 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 78 mtu 5 GID -1 (0/0)
old:1:2 [0] NCCL INFO Ring 00 : 0 -> 1 [send] via NET/IB/0
old:1:2 [0] NCCL INFO Ring 01 : 0[0] -> 1[1] via direct shared memory
aws:3:3 [0] NCCL INFO Using network AWS Libfabric
aws:3:3 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/AWS Libfabric/0/GDRDMA/Shared
";
        let log = parse("o.log", text);
        assert_eq!(log.warnings, vec![]);
        let old = process(&log, "old", 1);
        let qps: Vec<_> = old.qps.iter().map(|q| (q.qpn, q.ib_dev, q.mtu, q.gid_index, q.device.clone())).collect();
        assert_eq!(qps, vec![(77, Some(0), Some(4096), None, None), (78, Some(0), Some(4096), None, None)]);
        assert_eq!(old.channels_via, vec![named("NET/IB", 3), named("SHM", 4)]);
        assert!(old.uses_ib());
        let aws = process(&log, "aws", 3);
        assert_eq!(aws.networks, vec![named("AWS Libfabric", 5)]);
        assert_eq!(aws.channels_via, vec![named("NET/AWS Libfabric", 6)]);
        assert!(!aws.uses_ib());
    }

    #[test]
    fn unreadable_known_phrases_are_warnings() {
        let text = "\
h:1:1 [0] NCCL INFO comm 0xzz rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE
h:1:1 [0] NCCL INFO comm 0x10 nranks 2 - Init COMPLETE
h:1:1 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 16777216 mtu 5 GID 0 (0/0)
h:1:1 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 5 mtu 9 GID 0 (0/0)
h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0/RoCE ; OOB eth0:1.2.3.4<0>
h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB
h:1:1 [0] NCCL INFO Using network 
grep 'NCCL INFO' run.log
";
        let log = parse("w.log", text);
        let lines: Vec<usize> = log.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, vec![1, 2, 3, 4, 5, 6, 7, 8]);
        let messages: Vec<&str> = log.warnings.iter().map(|w| w.message.as_str()).collect();
        assert!(messages[0].starts_with("comm \"0xzz\" cannot be read"), "{}", messages[0]);
        assert!(messages[1].starts_with("no rank"), "{}", messages[1]);
        assert!(messages[2].starts_with("qpn 16777216 is more than 24 bits"), "{}", messages[2]);
        assert!(messages[3].starts_with("mtu \"9\" cannot be read"), "{}", messages[3]);
        assert!(messages[4].starts_with("device [0] has no port"), "{}", messages[4]);
        assert!(messages[5].starts_with("the NET/ transport has no device number"), "{}", messages[5]);
        assert!(messages[6].starts_with("`Using network` names no network"), "{}", messages[6]);
        assert!(messages[7].starts_with("a NCCL line without its HOST:PID:TID [DEV] prefix"), "{}", messages[7]);
        let h = process(&log, "h", 1);
        assert_eq!((h.communicators.len(), h.qps.len(), h.ib_devices.len(), h.networks.len()), (0, 0, 0, 0));
    }

    #[test]
    fn warnings_are_capped_and_counted() {
        let text = "h:1:1 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn x mtu 5\n".repeat(MAX_WARNINGS + 5);
        let log = parse("many.log", &text);
        assert_eq!(log.warnings.len(), MAX_WARNINGS + 1);
        let last = log.warnings.last().unwrap();
        assert_eq!((last.line, last.message.as_str()), (MAX_WARNINGS, "5 more warnings after these were not kept"));
    }

    #[test]
    fn odd_input_does_not_panic() {
        for text in [
            "NCCL INFO",
            "NCCL WARN",
            ":::: [0] NCCL INFO x",
            "a:1:1 [0] NCCL INFO comm",
            "é:1:1 [0] NCCL INFOé",
            "x:1:1 [0] NCCL INFO Channel 0 via NET/\u{1F600}/",
        ] {
            let _ = parse("odd", text).socket_fallbacks();
        }
        let long = format!("h:1:1 [0] NCCL INFO {}\n", "x".repeat(MAX_LINE_BYTES));
        assert_eq!(parse("long", &long).warnings.len(), 1);
    }
}
