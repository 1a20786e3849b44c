//! RDMA CM connection tracking (IBA §12.6; protocol-facts §12.4): a ConnectRequest from the
//! active side gives its QPN and starting PSN, the ConnectReply that answers it (its remote
//! communication ID is the request's local one) gives the passive side's. The two directions
//! of the connection are then known exactly: active → passive packets carry the passive QPN,
//! passive → active packets the active QPN.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::analyze::frame::CmFacts;
use crate::decode::Endpoint;

/// A connection set up by CM in the capture.
#[derive(Debug, Clone, Serialize, serde::Deserialize, Renumber)]
pub struct Connection {
    pub active_ip: Endpoint,
    pub passive_ip: Endpoint,
    pub active_qpn: u32,
    pub passive_qpn: Option<u32>,
    pub active_start_psn: u32,
    pub passive_start_psn: Option<u32>,
    pub path_mtu: Option<u32>,
    pub retry_count: u8,
    pub rnr_retry_count: u8,
    /// Local ACK timeout exponent: 4.096 µs × 2^value.
    pub local_ack_timeout: u8,
    pub request_frame: FrameNumber,
    pub reply_frame: Option<FrameNumber>,
    pub ready_frame: Option<FrameNumber>,
    pub reject_reason: Option<u16>,
    pub disconnect_frame: Option<FrameNumber>,
}

/// What a CM message changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CmEvent {
    /// The reply completed connection `index`: both QPNs are known.
    Established(usize),
    Other,
}

/// CM connections remembered at most; later ConnectRequests are counted in `not_kept` only.
pub const MAX_CONNECTIONS: usize = 100_000;

#[derive(Debug, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct CmTracker {
    pub connections: Vec<Connection>,
    /// ConnectRequests beyond [`MAX_CONNECTIONS`].
    pub not_kept: u64,
    /// Connections by (active IP, passive IP, active communication ID). Every message of a
    /// connection travels between its two hosts, so a message is matched only with requests
    /// between the same two (which keeps the tracker of one host pair apart from the others').
    by_active: FxHashMap<(Endpoint, Endpoint, u32), usize>,
    /// Replied connections by (passive IP, active IP, passive communication ID), the latest
    /// of each.
    by_passive: FxHashMap<(Endpoint, Endpoint, u32), usize>,
}

impl CmTracker {
    pub fn observe(&mut self, frame: FrameNumber, src: Endpoint, dst: Endpoint, message: &CmFacts) -> CmEvent {
        match *message {
            CmFacts::Req { .. } => {
                self.request(frame, src, dst, message);
                CmEvent::Other
            }
            CmFacts::Rep { local_comm_id, remote_comm_id, local_qpn, starting_psn } => {
                let Some(index) = self.active_index(dst, src, remote_comm_id) else { return CmEvent::Other };
                if let Some(c) = self.connections.get_mut(index) {
                    c.passive_qpn = Some(local_qpn);
                    c.passive_start_psn = Some(starting_psn);
                    c.reply_frame = Some(frame);
                    self.by_passive.insert((src, dst, local_comm_id), index);
                }
                CmEvent::Established(index)
            }
            CmFacts::Rtu { local_comm_id } => {
                if let Some(c) = self.active_index(src, dst, local_comm_id).and_then(|i| self.connections.get_mut(i)) {
                    c.ready_frame.get_or_insert(frame);
                }
                CmEvent::Other
            }
            CmFacts::Rej { remote_comm_id, reason } => {
                // A reject answers a request: the rejecting side names it as its remote ID.
                if let Some(c) = self.active_index(dst, src, remote_comm_id).and_then(|i| self.connections.get_mut(i)) {
                    c.reject_reason = Some(reason);
                }
                CmEvent::Other
            }
            CmFacts::Dreq { local_comm_id } => {
                // Either side may disconnect.
                let index =
                    self.active_index(src, dst, local_comm_id).or_else(|| self.passive_index(src, dst, local_comm_id));
                if let Some(c) = index.and_then(|i| self.connections.get_mut(i)) {
                    c.disconnect_frame.get_or_insert(frame);
                }
                CmEvent::Other
            }
            CmFacts::Other => CmEvent::Other,
        }
    }

    /// A ConnectRequest from `src` to `dst` opens a connection (beyond [`MAX_CONNECTIONS`],
    /// it is counted only).
    fn request(&mut self, frame: FrameNumber, src: Endpoint, dst: Endpoint, message: &CmFacts) {
        let CmFacts::Req {
            local_comm_id,
            local_qpn,
            starting_psn,
            path_mtu,
            retry_count,
            rnr_retry_count,
            local_ack_timeout,
        } = *message
        else {
            return;
        };
        let index = self.connections.len();
        if index >= MAX_CONNECTIONS {
            self.not_kept += 1;
            return;
        }
        self.connections.push(Connection {
            active_ip: src,
            passive_ip: dst,
            active_qpn: local_qpn,
            passive_qpn: None,
            active_start_psn: starting_psn,
            passive_start_psn: None,
            path_mtu,
            retry_count,
            rnr_retry_count,
            local_ack_timeout,
            request_frame: frame,
            reply_frame: None,
            ready_frame: None,
            reject_reason: None,
            disconnect_frame: None,
        });
        self.by_active.insert((src, dst, local_comm_id), index);
    }

    fn active_index(&self, active_ip: Endpoint, passive_ip: Endpoint, active_comm_id: u32) -> Option<usize> {
        self.by_active.get(&(active_ip, passive_ip, active_comm_id)).copied()
    }

    fn passive_index(&self, passive_ip: Endpoint, active_ip: Endpoint, passive_comm_id: u32) -> Option<usize> {
        self.by_passive.get(&(passive_ip, active_ip, passive_comm_id)).copied()
    }
}

/// Added, a shard's connections (put in order of their requests after) and those not kept (its
/// exchanges under way are not: shards are joined finished). Grafted, nothing
/// changes: a merge refuses a part with CM packets after its kept frames
/// ([`crate::analyze::roce::wide::CaptureWide::agrees`]), so this tracker, which analysed the
/// same kept frames, stands where the part's does.
impl Combine for CmTracker {
    fn add(&mut self, shard: &CmTracker) -> Result<(), Refused> {
        self.connections.extend(shard.connections.iter().cloned());
        self.not_kept += shard.not_kept;
        Ok(())
    }

    fn graft(&mut self, _: &CmTracker, _: CmTracker, _: &Seam) -> Result<(), Refused> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_beyond_the_limit_are_counted_only() {
        let mut t = CmTracker::default();
        let (a, b) =
            (Endpoint::Ip(std::net::IpAddr::from([10, 0, 0, 1])), Endpoint::Ip(std::net::IpAddr::from([10, 0, 0, 2])));
        for i in 0..(MAX_CONNECTIONS as u32 + 2) {
            let req = CmFacts::Req {
                local_comm_id: i,
                local_qpn: i & 0xFF_FFFF,
                starting_psn: 0,
                path_mtu: None,
                retry_count: 7,
                rnr_retry_count: 7,
                local_ack_timeout: 14,
            };
            t.observe(FrameNumber::new(u64::from(i)), a, b, &req);
        }
        assert_eq!((t.connections.len(), t.not_kept), (MAX_CONNECTIONS, 2));
    }

    #[test]
    fn a_reply_completes_only_a_request_between_the_same_two_hosts() {
        let mut t = CmTracker::default();
        let [a, b, c] = [1, 2, 3].map(|h| Endpoint::Ip(std::net::IpAddr::from([10, 0, 0, h])));
        let req = CmFacts::Req {
            local_comm_id: 7,
            local_qpn: 0x11,
            starting_psn: 0,
            path_mtu: None,
            retry_count: 7,
            rnr_retry_count: 7,
            local_ack_timeout: 14,
        };
        let rep = CmFacts::Rep { local_comm_id: 9, remote_comm_id: 7, local_qpn: 0x22, starting_psn: 0 };
        t.observe(FrameNumber::new(1), a, b, &req);
        assert!(matches!(t.observe(FrameNumber::new(2), c, a, &rep), CmEvent::Other), "a third host's reply");
        assert!(matches!(t.observe(FrameNumber::new(3), b, a, &rep), CmEvent::Established(0)));
        assert_eq!(t.connections[0].reply_frame.map(FrameNumber::get), Some(3));
    }
}
