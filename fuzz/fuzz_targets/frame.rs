//! One frame of arbitrary bytes through the decoder, every packet writer and the analysis.
//! The first byte picks the link type and whether the ICRC is deferred.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::analyze::Analyzer;
use rocescope::capture::{LinkType, Record};
use rocescope::decode::Decoder;

/// By the selector's low 3 bits: seeds are Ethernet (0), LINKTYPE_INFINIBAND (1) or ERF (7).
const LINKS: [LinkType; 8] = [
    LinkType::ETHERNET,
    LinkType::INFINIBAND,
    LinkType::LINUX_SLL,
    LinkType::LINUX_SLL2,
    LinkType::RAW,
    LinkType::IPV6,
    LinkType(147),
    LinkType::ERF,
];

fuzz_target!(|data: &[u8]| {
    let Some((selector, frame)) = data.split_first() else { return };
    let link_type = LINKS[usize::from(selector & 7)];
    let decoder = if selector & 0x80 != 0 { Decoder::new(&[]).deferring_icrc() } else { Decoder::new(&[]) };
    let mut analyzer = Analyzer::with_verdicts(Default::default());
    // the same bytes twice: the second copy exercises the per-flow state the first created
    for (number, orig_len) in [(1, frame.len() as u32), (2, (frame.len() as u32).saturating_add(u32::from(*selector)))]
    {
        let record = Record { ts_ns: number as i64 * 1000, orig_len, data: frame, link_type, offset: 0 };
        rocescope_fuzz::decode_and_observe(&decoder, &mut analyzer, number, &record);
    }
    analyzer.finish();
});
