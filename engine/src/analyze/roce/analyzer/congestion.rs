//! What the analysis hands the congestion-control state ([`crate::analyze::roce::congestion`]): data
//! packets and CNPs to the reaction of each data flow, request packets, ACKs and READ responses
//! to the message completions of each RC flow, and every frame incast looks at to the
//! capture-wide congestion analysis; and each congestion notification to the flow whose CE
//! mark it answers, by its addressing.

use rocescope_parsers::opcode::{self, CNP, Transport};

use crate::analyze::frame::{Content, FrameSummary, RoceFacts};
use crate::analyze::id::FlowId;
use crate::analyze::id::FrameNumber;
use crate::analyze::roce::analyzer::{Analyzer, MAX_PAIRING_CANDIDATES};
use crate::analyze::roce::congestion::completion::RequestPacket;
use crate::analyze::roce::congestion::incast::IncastEvent;
use crate::analyze::roce::flow::table::Flow;

/// A data packet: a sequenced RC or UC packet with payload (READ responses included).
fn is_data(roce: &RoceFacts) -> bool {
    matches!(Transport::of(roce.opcode), Transport::Rc | Transport::Uc)
        && !opcode::is_unsequenced(roce.opcode)
        && roce.payload_len > 0
}

impl Analyzer {
    /// A RoCE packet of flow `fid`, not a mirror duplicate: a data packet's bytes for its
    /// flow's reaction and for incast, a congestion notification (a CNP, or a native
    /// InfiniBand packet with BECN) for its peer's reaction and for incast.
    pub(crate) fn observe_congestion(&mut self, fid: FlowId, s: &FrameSummary, roce: &RoceFacts) {
        let (src, dst) = s.endpoints();
        if roce.notifies_congestion() {
            self.cnp_to_peer(fid, s.number, s.ts_ns);
            self.congestion.to_incast(s.number, s.ts_ns, IncastEvent::Cnp { from: src }, &self.config.congestion);
        }
        if roce.opcode == CNP || !is_data(roce) {
            return;
        }
        let config = self.config.congestion;
        let done = self.flows.flow_mut(fid).map(|f| {
            f.reaction.data(s.ts_ns, roce.payload_len as u32, &config);
            f.reaction.take_done()
        });
        self.congestion.keep_bursts(done.unwrap_or_default());
        let ce = s.congestion_marked(roce);
        let event = IncastEvent::Data { receiver: dst, source: src, ce, dst_mac: roce.dst_mac, src_mac: roce.src_mac };
        self.congestion.to_incast(s.number, s.ts_ns, event, &self.config.congestion);
    }

    /// A PFC frame pausing some priority, or a PAUSE frame pausing, for incast.
    pub(crate) fn observe_pause_for_incast(&mut self, s: &FrameSummary) {
        let pausing = match &s.content {
            Content::Pfc { src, pfc } => (0..8).any(|p| pfc.pause_quanta(p).is_some_and(|q| q > 0)).then_some(*src),
            Content::Pause { src, quanta } => (*quanta > 0).then_some(*src),
            _ => None,
        };
        if let Some(from) = pausing {
            self.congestion.to_incast(s.number, s.ts_ns, IncastEvent::Pause { from }, &self.config.congestion);
        }
    }

    /// A congestion notification (a CNP, or a native InfiniBand packet with BECN) on flow
    /// `fid`: it answers the first waiting mark of the flow it is addressed to, whose delay
    /// it measures (`ce_to_cnp_ns`); where that flow is not known, `fid` keeps it until it is
    /// paired.
    pub(super) fn answer_congestion_mark(&mut self, fid: FlowId, ts_ns: i64) {
        match self.addressed_flow(fid) {
            Some(data) => {
                if let Some(d) = self.flows.flow_mut(data) {
                    d.notified_at(ts_ns);
                }
            }
            // the flow it answers is told once `fid` is paired
            None => {
                if let Some(carrier) = self.flows.flow_mut(fid).filter(|f| f.peer.is_none()) {
                    carrier.carried_unaddressed_notification(ts_ns);
                }
            }
        }
    }

    /// The flow whose mark a notification on flow `fid` (from host D to host S, to QP X: its
    /// key) answers, from its own addressing and what is known of the senders' QPs when it
    /// comes (docs/analysis.md, "Which marks a CNP answers"): the peer of a paired `fid`;
    /// else, of the flows from S to D sent by QP X (their DETHs name it, or a host's QP table
    /// says so), the one whose waiting mark came first (the earlier flow on equal times). None
    /// where no flow is known to be sent by X: which of the flows from S to D (or a QP the
    /// capture lacks) X sends is a guess, and no delay is measured from a guess. Not looked for
    /// between two hosts with more than [`MAX_PAIRING_CANDIDATES`] flows from S to D.
    fn addressed_flow(&self, fid: FlowId) -> Option<FlowId> {
        let notification = self.flows.flow(fid)?;
        if let Some((data, _)) = notification.peer {
            return Some(data);
        }
        let (senders, qp) = (self.flows.between(notification.key.dst, notification.key.src), notification.key.dst_qp);
        if senders.len() > MAX_PAIRING_CANDIDATES {
            return None;
        }
        let sent_by_qp = |f: &Flow| f.src_qp == Some(qp) || f.src_qps.entries.iter().any(|&(q, _)| q == qp);
        senders
            .iter()
            .filter_map(|&id| self.flows.flow(id).map(|f| (id, f)))
            .filter(|(_, f)| sent_by_qp(f))
            .filter_map(|(id, f)| f.waiting_mark().map(|ts| (ts, id)))
            .min()
            .map(|(_, id)| id)
    }

    /// A CNP carried by flow `fid`: one of its peer data flow's.
    fn cnp_to_peer(&mut self, fid: FlowId, frame: FrameNumber, ts_ns: i64) {
        let config = self.config.congestion;
        let Some((data, _)) = self.flows.flow(fid).and_then(|f| f.peer) else { return };
        let done = self.flows.flow_mut(data).map(|d| {
            d.reaction.cnp(frame, ts_ns, data, &config);
            d.reaction.take_done()
        });
        self.congestion.keep_bursts(done.unwrap_or_default());
    }

    /// A request decided sent for the first time: an RC SEND, WRITE or READ request starts,
    /// grows or ends a message (atomics, FLUSH and ATOMIC WRITE are answered otherwise and
    /// are not messages here).
    pub(crate) fn request_for_completion(&mut self, fid: FlowId, frame: FrameNumber, ts_ns: i64, roce: &RoceFacts) {
        if !matches!(roce.opcode, 0x00..=0x0C | 0x16 | 0x17) {
            return;
        }
        let (Some(f), Some(info)) = (self.flows.flow_mut(fid), roce.info()) else { return };
        let read = opcode::is_read_request(roce.opcode).then(|| roce.reth.map_or(0, |r| r.dma_len));
        let packet = RequestPacket {
            frame,
            ts_ns,
            psn: roce.psn,
            position: info.position,
            payload: roce.payload_len as u64,
            read,
        };
        if let Some(done) = f.completions.request(packet) {
            self.congestion.completed(done);
        }
    }

    /// A READ response of flow `fid` decided sent for the first time: the last of a READ's
    /// completes it on the peer, the requester.
    pub(crate) fn response_for_completion(&mut self, fid: FlowId, ts_ns: i64, roce: &RoceFacts) {
        // RC RDMA READ Response LAST and ONLY
        let last = matches!(roce.opcode, 0x0F | 0x10);
        let Some((requester, _)) = self.flows.flow(fid).and_then(|f| f.peer).filter(|_| last) else { return };
        if let Some(done) =
            self.flows.flow_mut(requester).and_then(|r| r.completions.read_response_end(roce.psn, ts_ns))
        {
            self.congestion.completed(done);
        }
    }

    /// An ACK on the peer of the requests flow `requests`: the messages it completes.
    pub(crate) fn ack_for_completion(&mut self, requests: FlowId, psn: u32, ts_ns: i64, frame: FrameNumber) {
        let Some(r) = self.flows.flow_mut(requests) else { return };
        let congestion = &mut self.congestion;
        r.completions.ack(psn, ts_ns, frame, &mut |done| congestion.completed(done));
    }
}
