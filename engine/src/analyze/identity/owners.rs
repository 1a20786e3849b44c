//! Who owns each QP, as the hosts tell it: a table row names its QP's device and owning process
//! (`pid`, `comm`), a NCCL log the QPs each process created and, where the process has one
//! communicator, its rank among how many and the communicator's id. Both are joined by host and
//! QP number (a container's pid may differ from the host's, a QP number does not); the table's
//! keys come first, the log's fill those it lacks.

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::analyze::identity::nccl_log::NcclProcess;
use crate::analyze::identity::{HostAccounts, HostLog, HostTable};
use crate::decode::Endpoint;

/// A QP's owner; a key nothing told is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Owner {
    /// The host as given (`--qps HOST=…`, `--nccl-log HOST=…`): the address its packets carry.
    pub host: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The owning process's command (`comm`), or the kernel module owning a kernel QP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
    /// Its NCCL rank, the ranks of its communicator and the communicator's id (`commId`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nranks: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm_id: Option<String>,
}

impl Owner {
    /// Each key of `other` this owner lacks.
    fn fill(&mut self, other: Owner) {
        self.device = self.device.take().or(other.device);
        self.pid = self.pid.or(other.pid);
        self.comm = self.comm.take().or(other.comm);
        self.rank = self.rank.or(other.rank);
        self.nranks = self.nranks.or(other.nranks);
        self.comm_id = self.comm_id.take().or(other.comm_id);
    }

    /// The keys `other` holds alike.
    fn agreeing(&self, other: &Owner) -> Owner {
        fn same<T: PartialEq + Clone>(a: &Option<T>, b: &Option<T>) -> Option<T> {
            a.clone().filter(|a| b.as_ref() == Some(a))
        }
        Owner {
            host: self.host.clone(),
            device: same(&self.device, &other.device),
            pid: same(&self.pid, &other.pid),
            comm: same(&self.comm, &other.comm),
            rank: same(&self.rank, &other.rank),
            nranks: same(&self.nranks, &other.nranks),
            comm_id: same(&self.comm_id, &other.comm_id),
        }
    }

    /// As the text report names it: `rank 3/8 python3[4321]`, what is known of it.
    pub fn label(&self) -> String {
        let rank = self.rank.map(|r| format!("rank {r}{}", self.nranks.map(|n| format!("/{n}")).unwrap_or_default()));
        let process = match (&self.comm, self.pid) {
            (Some(comm), Some(pid)) => Some(format!("{comm}[{pid}]")),
            (Some(comm), None) => Some(comm.clone()),
            (None, Some(pid)) => Some(format!("pid {pid}")),
            (None, None) => None,
        };
        let parts: Vec<String> = rank.into_iter().chain(process).collect();
        if parts.is_empty() { self.host.clone() } else { parts.join(" ") }
    }
}

impl crate::analyze::exemplar::Exemplar for Owner {
    fn exemplar() -> Self {
        let some = Some(String::new());
        Owner {
            host: String::new(),
            device: some.clone(),
            pid: Some(0),
            comm: some.clone(),
            rank: Some(0),
            nranks: Some(0),
            comm_id: some,
        }
    }
}

/// The owners of the QPs the hosts told of, by host and QP number.
#[derive(Debug, Clone, Default)]
pub struct Owners {
    by_qp: FxHashMap<(Endpoint, u32), Owner>,
}

impl Owners {
    /// The owners `accounts` name.
    pub fn of(accounts: &HostAccounts) -> Owners {
        let mut owners = Owners::default();
        accounts.tables.iter().for_each(|t| owners.add_table(t));
        accounts.logs.iter().for_each(|l| owners.add_log(l));
        owners
    }

    /// The owner of `host`'s QP `qpn`, if anything told of it.
    pub fn of_qp(&self, host: Endpoint, qpn: u32) -> Option<&Owner> {
        self.by_qp.get(&(host, qpn))
    }

    fn add_table(&mut self, table: &HostTable) {
        for row in table.rows() {
            let owner = Owner {
                host: table.host.to_string(),
                device: Some(row.device.clone()),
                pid: row.pid,
                comm: row.comm.clone(),
                ..Owner::default()
            };
            self.add_row(Endpoint::Ip(table.host), row.lqpn, owner);
        }
    }

    /// A table row's owner: where another device of the host has a QP of the same number, only
    /// what the two rows agree on (which one a flow's QP is, is not known).
    fn add_row(&mut self, host: Endpoint, qpn: u32, owner: Owner) {
        match self.by_qp.get_mut(&(host, qpn)) {
            Some(known) if known.device != owner.device => *known = known.agreeing(&owner),
            _ => self.add(host, qpn, owner),
        }
    }

    fn add_log(&mut self, log: &HostLog) {
        for process in &log.log.processes {
            for qp in &process.qps {
                let owner = Owner { host: log.host.to_string(), device: qp.device.clone(), ..of_process(process) };
                self.add(Endpoint::Ip(log.host), qp.qpn, owner);
            }
        }
    }

    fn add(&mut self, host: Endpoint, qpn: u32, owner: Owner) {
        match self.by_qp.get_mut(&(host, qpn)) {
            Some(known) => known.fill(owner),
            None => {
                self.by_qp.insert((host, qpn), owner);
            }
        }
    }
}

/// What a NCCL process tells of the QPs it created: its pid and, with one communicator, its
/// rank (a process with several communicators does not say which one a QP serves).
fn of_process(process: &NcclProcess) -> Owner {
    let only = match process.communicators.as_slice() {
        [only] => Some(only),
        _ => None,
    };
    Owner {
        pid: Some(process.pid),
        rank: only.map(|c| c.rank),
        nranks: only.map(|c| c.nranks),
        comm_id: only.and_then(|c| c.comm_id).map(|id| format!("{id:#x}")),
        ..Owner::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::identity::{nccl_log, qp_table};

    const HOST: [u8; 4] = [10, 0, 0, 1];

    fn accounts(table: &str, log: &str) -> HostAccounts {
        let host = std::net::IpAddr::from(HOST);
        HostAccounts {
            tables: vec![HostTable {
                host,
                device: None,
                file: "t".into(),
                table: qp_table::parse("t", table).expect("a table"),
            }],
            logs: vec![HostLog { host, file: "l".into(), log: nccl_log::parse("l", log) }],
        }
    }

    #[test]
    fn a_table_names_the_process_and_a_log_its_rank() {
        let table = "link mlx5_0/1 lqpn 257 rqpn 513 type RC state RTS sq-psn 0 pid 4321 comm python3 \n\
                     link mlx5_0/1 lqpn 1 type GSI state RTS sq-psn 0 comm [ib_core] \n";
        let log = "h1:4321:4400 [0] NCCL INFO comm 0x55d5c8a0 rank 3 nranks 8 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x7a3f9c0011223344 - Init COMPLETE\n\
                   h1:4321:4410 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 257 mtu 5 GID 3 (0/10000A0AFFFF0000)\n\
                   h1:4321:4410 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 258 mtu 5 GID 3 (0/10000A0AFFFF0000)\n";
        let owners = Owners::of(&accounts(table, log));
        let host = Endpoint::Ip(std::net::IpAddr::from(HOST));
        let both = owners.of_qp(host, 257).expect("QP 257");
        assert_eq!(
            both,
            &Owner {
                host: "10.0.0.1".into(),
                device: Some("mlx5_0".into()),
                pid: Some(4321),
                comm: Some("python3".into()),
                rank: Some(3),
                nranks: Some(8),
                comm_id: Some("0x7a3f9c0011223344".into()),
            }
        );
        assert_eq!(both.label(), "rank 3/8 python3[4321]");
        // the log alone: no command, no device (the log names none without `NET/IB : Using`)
        let only_log = owners.of_qp(host, 258).expect("QP 258");
        assert_eq!((only_log.pid, only_log.rank, &only_log.comm), (Some(4321), Some(3), &None));
        let kernel = owners.of_qp(host, 1).expect("QP 1");
        assert_eq!((kernel.pid, kernel.comm.as_deref(), kernel.label()), (None, Some("ib_core"), "ib_core".into()));
        assert_eq!(owners.of_qp(host, 999), None);
    }

    #[test]
    fn a_process_with_several_communicators_names_no_rank() {
        let log = "h1:9:9 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE\n\
                   h1:9:9 [0] NCCL INFO comm 0x2 rank 1 nranks 4 cudaDev 0 busId 1b000 - Init COMPLETE\n\
                   h1:9:9 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 70 mtu 5 GID 3 (0/0)\n";
        let owners = Owners::of(&accounts("", log));
        let owner = owners.of_qp(Endpoint::Ip(std::net::IpAddr::from(HOST)), 70).expect("QP 70");
        assert_eq!((owner.pid, owner.rank, owner.nranks), (Some(9), None, None));
    }
}
