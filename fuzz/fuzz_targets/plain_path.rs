//! One Ethernet frame of arbitrary bytes through the fast path for plain RoCEv2 frames
//! (`Decoder::plain_roce`, `FrameSummary::of_plain`) and through the general decoder: a frame
//! the fast path takes has the summary the general decoder gives it, field for field, and the
//! hosts read at their offsets (`Decoder::plain_hosts`) are the decoded frame's. The
//! first byte picks the decoder (bit 0: UDP port 4792 is RoCE too) and how much of the frame
//! was not captured (bits 1 to 7).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::analyze::frame::FrameSummary;
use rocescope::capture::{LinkType, Record};
use rocescope::decode::Decoder;

fuzz_target!(|data: &[u8]| {
    let Some((selector, frame)) = data.split_first() else { return };
    let decoder = if selector & 1 != 0 { Decoder::new(&[4792]) } else { Decoder::new(&[]) };
    let orig_len = (frame.len() as u32).saturating_add(u32::from(selector >> 1));
    let record = Record { ts_ns: 1000, orig_len, data: frame, link_type: LinkType::ETHERNET, offset: 0 };
    let decoded = decoder.decode(&record);
    if let Some((src, dst)) = decoder.plain_hosts(&record) {
        assert_eq!((decoded.src_ip(), decoded.dst_ip()), (Some(src), Some(dst)));
    }
    if let Some(plain) = decoder.plain_roce(&record) {
        let fast = FrameSummary::of_plain(1, &record, &plain);
        let general = FrameSummary::of(1, &decoded);
        assert_eq!(format!("{fast:?}"), format!("{general:?}"));
    }
    assert!(decoder.clone().deferring_icrc().plain_roce(&record).is_none());
});
