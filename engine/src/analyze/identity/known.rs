//! What the hosts' QP tables say of the flows' QPs, as the analysis looks it up while it reads:
//! which flow is the other direction of a connection, exactly, and which QP sends a flow.
//!
//! A flow is one direction of a QP connection, keyed by its source and destination addresses
//! and the QP it is sent to (the BTH's destination QP); the QP that sends it is not on the wire
//! (IBA §9.2: an RC or UC packet names its destination QP only). A table row of host H says
//! that H's QP `lqpn` is connected to the peer's QP `rqpn` (`rdma resource show qp`), so for a
//! flow F from S to D sent to QP Q:
//!
//! - D's table, row `lqpn Q rqpn R`: F is sent by the peer's QP R, and the other direction is
//!   the flow from D to S sent to QP R;
//! - S's table, a row `lqpn L rqpn Q`: F is sent by S's QP L, and the other direction is the
//!   flow from D to S sent to QP L. S may have several QPs connected to a QP numbered Q on
//!   different peers (QP numbers are each device's own): each is a candidate, and the flows
//!   the capture holds tell which (at most one of them comes from D).
//!
//! The table names neither the peer's address nor its device, so a pair needs both flows in
//! the capture; a table of one side is enough. UD and other unconnected QPs pair nothing. Only
//! rows that say what they are take part: an RC or UC QP past INIT (before RTR the kernel
//! prints `rqpn 0`: it is connected to nothing yet) or an unconnected one (UD, management,
//! raw); XRC and driver-defined QPs (DC) are left to the evidence. A host with several RDMA
//! devices numbers their QPs apart, so a QP number two devices of one host's tables both list
//! is left to the evidence too, unless the table is given for one device (`HOST@DEV=FILE`).

use rustc_hash::{FxHashMap, FxHashSet};

use crate::analyze::id::FlowKey;
use crate::analyze::identity::HostTable;
use crate::analyze::identity::qp_table::{QpRow, QpState, QpType};
use crate::decode::Endpoint;

/// The tables' QPs, by host and number.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KnownQps {
    /// Each tabled host's QPs: (host, QP number) → what its table says.
    qps: FxHashMap<(Endpoint, u32), KnownQp>,
    /// (host, a peer's QP number) → the host's connected QPs whose remote QP has that number.
    connected_to: FxHashMap<(Endpoint, u32), Vec<u32>>,
    /// QP numbers of a host that several of its devices list: which one a flow's is, is not known.
    shared: FxHashSet<(Endpoint, u32)>,
}

crate::holds_no_numbers!(KnownQps);

/// A QP as its host's table describes it: connected to the peer's QP `remote` (an RC or UC QP
/// past INIT), or unconnected (`None`: UD, management, raw).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct KnownQp {
    remote: Option<u32>,
}

impl KnownQp {
    /// What `row` says of its QP's connection, if it says anything.
    fn of(row: &QpRow) -> Option<KnownQp> {
        match row.qp_type {
            QpType::Rc | QpType::Uc => {
                let past_init = !matches!(row.state, QpState::Reset | QpState::Init);
                row.rqpn.filter(|&r| past_init && r != 0).map(|r| KnownQp { remote: Some(r) })
            }
            QpType::Ud | QpType::Gsi | QpType::Smi | QpType::RawPacket | QpType::RawIpv6 | QpType::RawEthertype => {
                Some(KnownQp { remote: None })
            }
            QpType::XrcIni | QpType::XrcTgt | QpType::Driver | QpType::Other(_) => None,
        }
    }
}

impl KnownQps {
    /// The QPs of `tables` (of each table's device alone where it names one).
    pub fn of(tables: &[HostTable]) -> KnownQps {
        let mut known = KnownQps::default();
        let mut devices: FxHashMap<(Endpoint, u32), &str> = FxHashMap::default();
        for table in tables {
            let host = Endpoint::Ip(table.host);
            for row in table.rows() {
                if devices.insert((host, row.lqpn), &row.device).is_some_and(|d| d != row.device) {
                    known.shared.insert((host, row.lqpn));
                }
                let Some(qp) = KnownQp::of(row) else { continue };
                known.qps.insert((host, row.lqpn), qp);
                if let Some(remote) = qp.remote {
                    let local = known.connected_to.entry((host, remote)).or_default();
                    if !local.contains(&row.lqpn) {
                        local.push(row.lqpn);
                    }
                }
            }
        }
        known.forget_shared();
        known
    }

    /// Leaves the QP numbers several devices of a host list to the evidence.
    fn forget_shared(&mut self) {
        for key in &self.shared {
            self.qps.remove(key);
        }
        let shared = &self.shared;
        self.connected_to.retain(|&(host, _), local| {
            local.retain(|&qp| !shared.contains(&(host, qp)));
            !local.is_empty()
        });
    }

    pub fn is_empty(&self) -> bool {
        self.qps.is_empty() && self.shared.is_empty()
    }

    /// The keys the other direction of flow `key` may have, by the tables; `None` when no table
    /// speaks of its QPs (the packets' evidence then decides), and none when a table says its
    /// QP is connected to nothing (a UD QP, or one not yet connected).
    pub fn other_direction(&self, key: &FlowKey) -> Option<Vec<FlowKey>> {
        if !self.names(key) {
            return None;
        }
        let back = |qp: u32| FlowKey { src: key.dst, dst: key.src, dst_qp: qp };
        let receiver = self.qps.get(&(key.dst, key.dst_qp));
        let senders = self.connected_to.get(&(key.src, key.dst_qp));
        let mut keys: Vec<FlowKey> = receiver.and_then(|q| q.remote).map(back).into_iter().collect();
        for &local in senders.into_iter().flatten() {
            if !keys.iter().any(|k| k.dst_qp == local) {
                keys.push(back(local));
            }
        }
        Some(keys)
    }

    /// Does a table speak of flow `key`'s QPs ([`KnownQps::other_direction`] is then some)?
    pub fn names(&self, key: &FlowKey) -> bool {
        let told =
            self.qps.contains_key(&(key.dst, key.dst_qp)) || self.connected_to.contains_key(&(key.src, key.dst_qp));
        told && !self.shared.contains(&(key.dst, key.dst_qp))
    }

    /// The QP that sends flow `key`, by the tables: the receiver's row names its remote QP, or
    /// the sender has one QP connected to a QP of that number.
    pub fn sender(&self, key: &FlowKey) -> Option<u32> {
        let by_receiver = self.qps.get(&(key.dst, key.dst_qp)).and_then(|q| q.remote);
        let by_sender = || match self.connected_to.get(&(key.src, key.dst_qp)).map(Vec::as_slice) {
            Some(&[only]) => Some(only),
            _ => None,
        };
        by_receiver.or_else(by_sender)
    }

    /// Where the tables of flow `key`'s two hosts disagree on its connection: the receiver's
    /// table connects its QP to a QP of the sender that the sender's table connects elsewhere,
    /// or the sender's table connects a QP to the receiver's QP that the receiver's table does
    /// not name. As a message.
    pub fn disagreement(&self, key: &FlowKey) -> Option<String> {
        let receiver_says = self.qps.get(&(key.dst, key.dst_qp)).and_then(|q| q.remote)?;
        let senders = self.connected_to.get(&(key.src, key.dst_qp)).map(Vec::as_slice).unwrap_or_default();
        let receiver = format!("{}'s table connects its QP {:#x} to QP {receiver_says:#x}", key.dst, key.dst_qp);
        if let Some(elsewhere) = self.qps.get(&(key.src, receiver_says)).and_then(|q| q.remote)
            && elsewhere != key.dst_qp
        {
            return Some(format!("{receiver}; {}'s connects QP {receiver_says:#x} to QP {elsewhere:#x}", key.src));
        }
        let other = senders.iter().find(|&&local| local != receiver_says)?;
        Some(format!("{receiver}; {}'s connects its QP {other:#x} to QP {:#x}", key.src, key.dst_qp))
    }

    /// Does `host`'s table call its QP `qpn` unconnected (UD, raw, management)?
    pub fn is_unconnected(&self, host: Endpoint, qpn: u32) -> bool {
        self.qps.get(&(host, qpn)).is_some_and(|q| q.remote.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::identity::qp_table;

    fn host(n: u8) -> std::net::IpAddr {
        std::net::IpAddr::from([10, 0, 0, n])
    }

    fn table(n: u8, text: &str) -> HostTable {
        HostTable {
            host: host(n),
            device: None,
            file: format!("h{n}.txt"),
            table: qp_table::parse("t", text).expect("a table"),
        }
    }

    fn key(src: u8, dst: u8, dst_qp: u32) -> FlowKey {
        FlowKey { src: Endpoint::Ip(host(src)), dst: Endpoint::Ip(host(dst)), dst_qp }
    }

    #[test]
    fn either_side_s_table_names_the_other_direction_and_the_sender() {
        // host 1's QP 0x101 (257) is connected to host 2's QP 0x201 (513)
        let one = table(1, "link mlx5_0/1 lqpn 257 rqpn 513 type RC state RTS sq-psn 0 pid 7 comm a\n");
        let two = table(2, "link mlx5_0/1 lqpn 513 rqpn 257 type RC state RTS sq-psn 0 pid 8 comm b\n");
        for tables in [vec![one.clone()], vec![two.clone()], vec![one, two]] {
            let known = KnownQps::of(&tables);
            assert_eq!(known.other_direction(&key(1, 2, 513)), Some(vec![key(2, 1, 257)]));
            assert_eq!(known.other_direction(&key(2, 1, 257)), Some(vec![key(1, 2, 513)]));
            assert_eq!((known.sender(&key(1, 2, 513)), known.sender(&key(2, 1, 257))), (Some(257), Some(513)));
            // a QP neither table lists: the evidence decides
            assert_eq!(known.other_direction(&key(1, 2, 600)), None);
        }
    }

    #[test]
    fn a_host_s_qps_connected_to_equal_numbers_on_two_peers_are_candidates() {
        // host 1's QPs 10 and 11 are connected to QP 20 of two different peers
        let one = table(
            1,
            "link mlx5_0/1 lqpn 10 rqpn 20 type RC state RTS\nlink mlx5_1/1 lqpn 11 rqpn 20 type RC state RTS\n",
        );
        let known = KnownQps::of(&[one]);
        assert_eq!(known.other_direction(&key(1, 3, 20)), Some(vec![key(3, 1, 10), key(3, 1, 11)]));
        assert_eq!(known.sender(&key(1, 3, 20)), None, "two QPs could send it");
    }

    #[test]
    fn tables_that_connect_a_qp_elsewhere_disagree() {
        let one = table(
            1,
            "link mlx5_0/1 lqpn 10 rqpn 21 type RC state RTS\nlink mlx5_0/1 lqpn 11 rqpn 21 type RC state RTS\n",
        );
        let two = table(
            2,
            "link mlx5_0/1 lqpn 20 rqpn 10 type RC state RTS\nlink mlx5_0/1 lqpn 21 rqpn 11 type RC state RTS\n",
        );
        let known = KnownQps::of(&[one, two]);
        // host 2 says its QP 20 hears host 1's QP 10, which host 1 connects to QP 21
        assert_eq!(
            known.disagreement(&key(1, 2, 20)).as_deref(),
            Some("10.0.0.2's table connects its QP 0x14 to QP 0xa; 10.0.0.1's connects QP 0xa to QP 0x15")
        );
        // host 1 connects its QPs 10 and 11 to QP 21; host 2 says QP 21 hears QP 11
        assert_eq!(
            known.disagreement(&key(1, 2, 21)).as_deref(),
            Some("10.0.0.2's table connects its QP 0x15 to QP 0xb; 10.0.0.1's connects its QP 0xa to QP 0x15")
        );
        let agreeing = KnownQps::of(&[
            table(1, "link m/1 lqpn 10 rqpn 20 type RC state RTS\n"),
            table(2, "link m/1 lqpn 20 rqpn 10 type RC state RTS\n"),
        ]);
        assert_eq!(agreeing.disagreement(&key(1, 2, 20)), None);
        assert_eq!(agreeing.disagreement(&key(2, 1, 10)), None);
    }

    #[test]
    fn an_unconnected_qp_pairs_nothing_and_one_not_yet_connected_says_nothing() {
        let rows = "link mlx5_0/1 lqpn 300 type UD state RTS\n\
                    link mlx5_0/1 lqpn 301 rqpn 0 type RC state INIT\n\
                    link mlx5_0/1 lqpn 302 rqpn 9 type RC state RESET\n\
                    link mlx5_0/1 lqpn 303 type XRC_TGT state RTS\n";
        let known = KnownQps::of(&[table(1, rows)]);
        assert_eq!(known.other_direction(&key(2, 1, 300)), Some(vec![]));
        assert!(known.is_unconnected(Endpoint::Ip(host(1)), 300));
        // before RTR the kernel prints rqpn 0 (or a stale one): the evidence pairs these
        for qp in [301, 302, 303] {
            assert_eq!(known.other_direction(&key(2, 1, qp)), None, "QP {qp}");
            assert!(!known.is_unconnected(Endpoint::Ip(host(1)), qp), "QP {qp}");
        }
        assert_eq!(known.other_direction(&key(1, 2, 0)), None, "no QP is connected to QP 0");
    }

    #[test]
    fn a_qp_number_two_devices_list_is_left_to_the_evidence_unless_the_device_is_named() {
        // rail 0 (mlx5_0) and rail 1 (mlx5_1) of host 1 both have a QP 267
        let rows = "link mlx5_0/1 lqpn 267 rqpn 300 type RC state RTS\n\
                    link mlx5_0/1 lqpn 280 rqpn 268 type RC state RTS\n\
                    link mlx5_1/1 lqpn 267 rqpn 268 type RC state RTS\n";
        let known = KnownQps::of(&[table(1, rows)]);
        assert_eq!(known.other_direction(&key(2, 1, 267)), None);
        assert_eq!(known.other_direction(&key(1, 2, 268)), Some(vec![key(2, 1, 280)]));
        assert_eq!(known.sender(&key(1, 2, 268)), Some(280));
        // the table given for the device that carries 10.0.0.1
        let rail0 = HostTable { device: Some("mlx5_0".into()), ..table(1, rows) };
        let known = KnownQps::of(&[rail0]);
        assert_eq!(known.other_direction(&key(2, 1, 267)), Some(vec![key(1, 2, 300)]));
    }
}
