//! What the analysis hands the congestion-control state ([`crate::analyze::congestion`]): data packets
//! and CNPs to the reaction of each data flow, request packets, ACKs and READ responses to
//! the message completions of each RC flow, and every frame incast looks at to the
//! capture-wide incast state (or, in a shard of a split analysis, to the list of events the
//! split merges in frame order).

use rocescope_parsers::opcode::{self, CNP, Transport};

use crate::analyze::Analyzer;
use crate::analyze::congestion::completion::{Completed, RequestPacket};
use crate::analyze::congestion::incast::{Incast, IncastEvent, Timed};
use crate::analyze::congestion::reaction::CnpBurst;
use crate::analyze::flow::id::FlowId;
use crate::analyze::frame::{Content, FrameSummary, RoceFacts};
use crate::analyze::histogram::FineHistogram;

/// CNP bursts whose details are kept; more are counted per flow only.
pub const MAX_BURSTS_KEPT: usize = 100_000;

/// The completion-time classes: their name in the report, as people read it, and the largest
/// message size they take (at most 4 KiB, 64 KiB, 1 MiB, and larger).
pub const SIZE_CLASSES: [(&str, &str, u64); 4] = [
    ("le_4k", "≤ 4 KiB", 4 << 10),
    ("le_64k", "≤ 64 KiB", 64 << 10),
    ("le_1m", "≤ 1 MiB", 1 << 20),
    ("gt_1m", "> 1 MiB", u64::MAX),
];

/// Completion times of every RC message of the capture, and by size class.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct FctTotals {
    pub all: FineHistogram,
    pub by_size: [FineHistogram; 4],
}

impl FctTotals {
    fn record(&mut self, m: Completed) {
        self.all.record(m.fct_ns);
        let class = SIZE_CLASSES.iter().position(|&(_, _, most)| m.bytes <= most).unwrap_or(3);
        self.by_size[class].record(m.fct_ns);
    }

    pub fn merge(&mut self, other: &FctTotals) {
        self.all.merge(&other.all);
        for (mine, theirs) in self.by_size.iter_mut().zip(&other.by_size) {
            mine.merge(theirs);
        }
    }
}

/// Where the frames incast looks at go.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum IncastSink {
    /// To the incast state itself.
    Track(Incast),
    /// To a list, for a split analysis to merge in frame order ([`Analyzer::take_incast_events`]).
    Record(Vec<Timed>),
}

impl Default for IncastSink {
    fn default() -> Self {
        IncastSink::Track(Incast::default())
    }
}

/// A data packet: a sequenced RC or UC packet with payload (READ responses included).
fn is_data(roce: &RoceFacts) -> bool {
    matches!(Transport::of(roce.opcode), Transport::Rc | Transport::Uc)
        && !opcode::is_unsequenced(roce.opcode)
        && roce.payload_len > 0
}

impl Analyzer {
    fn hand_to_incast(&mut self, frame: u64, ts_ns: i64, event: IncastEvent) {
        let timed = Timed { frame, ts_ns, event };
        match &mut self.incast {
            IncastSink::Track(incast) => incast.observe(timed, &self.config.congestion),
            IncastSink::Record(events) => events.push(timed),
        }
    }

    /// The incast events recorded since the last call (a shard of a split analysis).
    pub fn take_incast_events(&mut self) -> Vec<Timed> {
        match &mut self.incast {
            IncastSink::Record(events) => std::mem::take(events),
            IncastSink::Track(_) => Vec::new(),
        }
    }

    /// A RoCE packet of flow `fid`, not a mirror duplicate: a data packet's bytes for its
    /// flow's reaction and for incast, a congestion notification (a CNP, or a native
    /// InfiniBand packet with BECN) for its peer's reaction and for incast.
    pub(crate) fn observe_congestion(&mut self, fid: FlowId, s: &FrameSummary, roce: &RoceFacts) {
        let (src, dst) = s.endpoints();
        if roce.notifies_congestion() {
            self.cnp_to_peer(fid, s.number, s.ts_ns);
            self.hand_to_incast(s.number, s.ts_ns, IncastEvent::Cnp { from: src });
        }
        if roce.opcode == CNP || !is_data(roce) {
            return;
        }
        let config = self.config.congestion;
        let done = self.flows.flow_mut(fid).map(|f| {
            f.reaction.data(s.ts_ns, roce.payload_len as u32, &config);
            f.reaction.take_done()
        });
        self.keep_bursts(done.unwrap_or_default());
        let ce = s.congestion_marked(roce);
        let event = IncastEvent::Data { receiver: dst, source: src, ce, dst_mac: roce.dst_mac, src_mac: roce.src_mac };
        self.hand_to_incast(s.number, s.ts_ns, event);
    }

    /// A PFC frame pausing some priority, or a PAUSE frame pausing, for incast.
    pub(crate) fn observe_pause_for_incast(&mut self, s: &FrameSummary) {
        let pausing = match &s.content {
            Content::Pfc { src, pfc } => (0..8).any(|p| pfc.pause_quanta(p).is_some_and(|q| q > 0)).then_some(*src),
            Content::Pause { src, quanta } => (*quanta > 0).then_some(*src),
            _ => None,
        };
        if let Some(from) = pausing {
            self.hand_to_incast(s.number, s.ts_ns, IncastEvent::Pause { from });
        }
    }

    /// A CNP carried by flow `fid`: one of its peer data flow's.
    fn cnp_to_peer(&mut self, fid: FlowId, frame: u64, ts_ns: i64) {
        let config = self.config.congestion;
        let Some((data, _)) = self.flows.flow(fid).and_then(|f| f.peer) else { return };
        let done = self.flows.flow_mut(data).map(|d| {
            d.reaction.cnp(frame, ts_ns, data, &config);
            d.reaction.take_done()
        });
        self.keep_bursts(done.unwrap_or_default());
    }

    /// Lists bursts whose windows are over (the first [`MAX_BURSTS_KEPT`]).
    pub(crate) fn keep_bursts(&mut self, bursts: Vec<CnpBurst>) {
        for burst in bursts {
            if self.cnp_bursts.len() >= MAX_BURSTS_KEPT {
                self.cnp_bursts_not_kept += 1;
            } else {
                self.cnp_bursts.push(burst);
            }
        }
    }

    /// A request decided sent for the first time: an RC SEND, WRITE or READ request starts,
    /// grows or ends a message (atomics, FLUSH and ATOMIC WRITE are answered otherwise and
    /// are not messages here).
    pub(crate) fn request_for_completion(&mut self, fid: FlowId, frame: u64, ts_ns: i64, roce: &RoceFacts) {
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
            self.fct.record(done);
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
            self.fct.record(done);
        }
    }

    /// An ACK on the peer of the requests flow `requests`: the messages it completes.
    pub(crate) fn ack_for_completion(&mut self, requests: FlowId, psn: u32, ts_ns: i64, frame: u64) {
        let Some(r) = self.flows.flow_mut(requests) else { return };
        let fct = &mut self.fct;
        r.completions.ack(psn, ts_ns, frame, &mut |done| fct.record(done));
    }
}
