//! What one packet adds to its flow's counters, tallies and first frames: every packet's bytes,
//! marking and checksums; a response's ACK or NAK; a CNP; a congestion mark; a new packet's
//! message and ACK bookkeeping. The analysis calls these; what spans flows (pairing, the peer
//! a response answers) stays with it.

use rocescope_parsers::ext::{AethKind, NakCode};
use rocescope_parsers::opcode::{self, CNP, Position, Transport};

use crate::analyze::frame::{FrameSummary, RoceFacts};
use crate::analyze::id::FrameNumber;
use crate::analyze::roce::flow::runtime::NakEvent;
use crate::analyze::roce::flow::sequence::PMTUS;
use crate::analyze::roce::flow::table::Flow;
use crate::analyze::roce::wide::policy::{Class, Policy};
use crate::analyze::trace::{Event, EventKind};
use crate::decode::IcrcStatus;

/// What a response said, as far as the flow it answers is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    /// A PSN-sequence-error NAK: the responder expects the PSN it names.
    PsnNak,
    /// An ACK packet.
    Ack,
    /// A READ response or ATOMIC ACK whose AETH acknowledges: the requests up to its PSN are
    /// answered, though no ACK packet was sent.
    AethAck,
    /// Anything else (an RNR NAK, another NAK).
    Other,
}

impl Flow {
    /// Counts a packet of the flow: bytes, opcode, marking, checksums, the sending QP.
    pub fn count_packet(&mut self, s: &FrameSummary, roce: &RoceFacts, policy: &Policy) {
        let frame = s.number;
        self.counts.packets += 1;
        self.counts.bytes += u64::from(s.orig_len);
        if let Some(t) = &mut self.trace {
            t.bytes.add(s.ts_ns, 0, u64::from(s.orig_len));
        }
        self.counts.payload_bytes += roce.payload_len as u64;
        self.last_ts_ns = self.last_ts_ns.max(s.ts_ns);
        self.last_frame = frame;
        self.opcodes.add(roce.opcode);
        if self.transport == Transport::Cnp && roce.opcode != CNP {
            // A flow that started with a CNP takes the transport of its first other packet.
            self.transport = Transport::of(roce.opcode);
        }
        if let Some(sport) = roce.udp_sport {
            self.udp_sports.add(sport);
        }
        if let Some((dscp, ecn)) = s.qos() {
            self.dscp.add(dscp);
            self.ecn.count_with_outer(ecn, s.outer_ce);
            if let Some(pcp) = roce.pcp {
                self.pcp.add(pcp);
            }
            let class = Class::of(roce.opcode, roce.dest_qp);
            self.policy.check(policy, frame, class, dscp, ecn, roce.pcp);
            self.dscps_seen.note(class, dscp, frame);
        }
        match roce.icrc {
            IcrcStatus::Bad => {
                self.counts.icrc_bad += 1;
                self.first_icrc_bad_frame.get_or_insert(frame);
            }
            IcrcStatus::Unverifiable => self.counts.icrc_unverifiable += 1,
            IcrcStatus::Ok => {}
        }
        if let Some(deth) = roce.deth {
            self.src_qp.get_or_insert(deth.src_qp);
            self.src_qps.add(deth.src_qp);
        }
        if let Some(vcrc) = roce.vcrc {
            self.count_native_marks(frame, roce, vcrc);
        }
    }

    /// A native InfiniBand packet's FECN and BECN bits and its VCRC.
    fn count_native_marks(&mut self, frame: FrameNumber, roce: &RoceFacts, vcrc: IcrcStatus) {
        self.counts.fecn += u64::from(roce.fecn);
        self.counts.becn += u64::from(roce.becn);
        if vcrc == IcrcStatus::Bad {
            self.counts.vcrc_bad += 1;
            self.first_frames.vcrc_bad.get_or_insert(frame);
        }
    }

    /// Counts an AETH-carrying response (ACK, NAK, ATOMIC ACK, READ response) of `opcode`
    /// naming `psn`, remembering its NAK for the peer's resends; what it says of the flow it
    /// answers.
    pub fn count_response(
        &mut self,
        frame: FrameNumber,
        ts_ns: i64,
        opcode: u8,
        psn: u32,
        aeth: AethKind,
    ) -> ResponseKind {
        if opcode::is_atomic_acknowledge(opcode) {
            self.counts.atomic_acks += 1;
        }
        if !opcode::is_acknowledge(opcode) {
            return if matches!(aeth, AethKind::Ack { .. }) { ResponseKind::AethAck } else { ResponseKind::Other };
        }
        if let (AethKind::RnrNak { .. } | AethKind::Nak(_) | AethKind::Reserved, Some(t)) = (aeth, &mut self.trace) {
            t.event(Event { ts_ns, psn, kind: EventKind::Nak { rnr: matches!(aeth, AethKind::RnrNak { .. }) } });
        }
        let nak = |rnr_delay_us: Option<u32>| NakEvent {
            rnr: rnr_delay_us.is_some(),
            psn,
            ts_ns,
            frame,
            rnr_delay_us,
            acknowledged_ns: None,
        };
        match aeth {
            AethKind::Ack { .. } => {
                self.counts.acks += 1;
                self.run.naks.acknowledged(psn, ts_ns);
                return ResponseKind::Ack;
            }
            AethKind::RnrNak { delay_us, .. } => {
                self.counts.rnr_naks += 1;
                self.first_frames.rnr_nak.get_or_insert(frame);
                self.remember_nak(nak(Some(delay_us)));
            }
            AethKind::Nak(NakCode::PsnSequenceError) => {
                self.counts.naks_psn_seq_err += 1;
                self.first_frames.nak_psn_seq_err.get_or_insert(frame);
                self.remember_nak(nak(None));
                return ResponseKind::PsnNak;
            }
            AethKind::Nak(_) | AethKind::Reserved => {
                self.counts.naks_other += 1;
                self.first_frames.nak_other.get_or_insert(frame);
            }
        }
        ResponseKind::Other
    }

    /// Counts a CNP at `ts_ns` and its spacing from the previous one.
    pub fn count_cnp(&mut self, ts_ns: i64) {
        self.counts.cnps += 1;
        self.cnp_at(ts_ns);
    }

    /// A CE-marked (RoCE) or FECN-marked (native) packet: its first frame, and the mark
    /// awaiting the peer's notification.
    pub fn count_congestion_mark(&mut self, frame: FrameNumber, ts_ns: i64, native: bool) {
        self.congestion_mark_at(ts_ns);
        let first = if native { &mut self.first_frames.fecn } else { &mut self.first_frames.ce };
        first.get_or_insert(frame);
    }

    /// Bookkeeping of a packet sent for the first time: a request awaiting an ACK, message
    /// reassembly, a READ request; the flow's path MTU, when its size reveals it first.
    pub fn count_new_packet(&mut self, ts_ns: i64, roce: &RoceFacts, read_request: bool) {
        if roce.ack_req && self.transport == Transport::Rc {
            self.await_ack(roce.psn, ts_ns);
        }
        let Some(info) = roce.info() else { return };
        let payload = roce.payload_len as u64;
        self.count_message_part(info.position, info.payload, payload);
        if read_request {
            self.counts.read_requests += 1;
        }
        // a FIRST or MIDDLE packet carries a whole path MTU of payload, a LAST or ONLY one at
        // most a path MTU (the responder's length check, IBA chapter 9): more than 2048 bytes
        // says 4096, the only larger one
        let inferred = match info.position {
            Position::First | Position::Middle => Some(payload as u32).filter(|m| PMTUS.contains(m)),
            Position::Last | Position::Only if payload > 2048 => Some(4096),
            _ => None,
        };
        if self.pmtu.is_none() && inferred.is_some() {
            self.pmtu = inferred;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::id::FlowKey;
    use crate::decode::Endpoint;

    fn flow() -> Flow {
        let host = |last| Endpoint::Ip(std::net::IpAddr::from([10, 0, 0, last]));
        Flow::new(FlowKey { src: host(1), dst: host(2), dst_qp: 0x11 }, 2, Transport::Rc, FrameNumber::new(1), 0)
    }

    const ACKNOWLEDGE: u8 = 0x11;
    const READ_RESPONSE_ONLY: u8 = 0x10;

    #[test]
    fn an_ack_gives_the_latency_of_every_request_up_to_its_psn_and_no_later_one() {
        let mut f = flow();
        for (psn, ts) in [(1, 1_000), (3, 3_000), (2, 2_000), (4, 4_000)] {
            f.await_ack(psn, ts); // PSN 2 came late: it takes its place before 3
        }
        f.acknowledged(3, 10_000);
        assert_eq!((f.ack_latency.count(), f.ack_latency.min(), f.ack_latency.max()), (3, Some(7_000), Some(9_000)));
        f.acknowledged(4, 10_500);
        assert_eq!((f.ack_latency.count(), f.ack_latency.min()), (4, Some(6_500)));
    }

    #[test]
    fn a_message_is_counted_at_its_last_packet_with_the_bytes_of_all_its_packets() {
        let mut f = flow();
        f.count_message_part(Position::First, true, 1024);
        f.count_message_part(Position::Middle, true, 1024);
        assert_eq!(f.counts.messages, 0);
        f.count_message_part(Position::Last, true, 100);
        f.count_message_part(Position::Only, false, 0); // an ACK-less SEND ONLY of nothing
        f.count_message_part(Position::Only, true, 8);
        assert_eq!((f.counts.messages, f.message_bytes.max(), f.message_bytes.min()), (2, Some(2148), Some(8)));
    }

    #[test]
    fn a_nak_is_counted_and_kept_for_the_resend_that_answers_it() {
        let mut f = flow();
        let psn_nak = AethKind::Nak(NakCode::PsnSequenceError);
        assert_eq!(f.count_response(FrameNumber::new(7), 700, ACKNOWLEDGE, 5, psn_nak), ResponseKind::PsnNak);
        let rnr = AethKind::RnrNak { timer_code: 1, delay_us: 10 };
        assert_eq!(f.count_response(FrameNumber::new(8), 800, ACKNOWLEDGE, 9, rnr), ResponseKind::Other);
        assert_eq!((f.counts.naks_psn_seq_err, f.counts.rnr_naks), (1, 1));
        assert_eq!(
            (f.first_frames.nak_psn_seq_err.map(FrameNumber::get), f.first_frames.rnr_nak.map(FrameNumber::get)),
            (Some(7), Some(8))
        );
        assert_eq!(f.answer_nak(5, 0).map(|n| (n.frame.get(), n.rnr)), Some((7, false)));
        assert_eq!(f.answer_nak(9, 0).map(|n| (n.frame.get(), n.rnr_delay_us)), Some((8, Some(10))));
        assert_eq!(f.answer_nak(9, 0), None);
    }

    #[test]
    fn a_read_responses_aeth_acknowledges_without_counting_an_ack() {
        let mut f = flow();
        let ack = AethKind::Ack { credit_code: 0x1F, credits: None };
        assert_eq!(f.count_response(FrameNumber::new(3), 300, READ_RESPONSE_ONLY, 2, ack), ResponseKind::AethAck);
        assert_eq!(f.count_response(FrameNumber::new(4), 400, ACKNOWLEDGE, 2, ack), ResponseKind::Ack);
        assert_eq!(f.counts.acks, 1);
    }

    #[test]
    fn a_notification_answers_the_first_mark_waiting_for_one() {
        let mut f = flow();
        f.count_congestion_mark(FrameNumber::new(5), 1_000, false);
        f.count_congestion_mark(FrameNumber::new(6), 1_500, false);
        f.notified_at(4_000);
        f.notified_at(5_000); // nothing waits
        assert_eq!(
            (f.ce_to_cnp.count(), f.ce_to_cnp.max(), f.first_frames.ce.map(FrameNumber::get)),
            (1, Some(3_000), Some(5))
        );
        f.count_cnp(10_000);
        f.count_cnp(12_500);
        assert_eq!((f.counts.cnps, f.cnp_spacing.max()), (2, Some(2_500)));
    }
}
