//! What the fuzz targets share: running frames through the decoder, every writer and the
//! analysis, the way the `packets` and `analyze` commands do.

use std::fmt::Write as _;

use rocescope::analyze::Analyzer;
use rocescope::analyze::frame::FrameSummary;
use rocescope::capture::Record;
use rocescope::decode::{Decoder, IcrcStatus};
use rocescope::fields::Frame;
use rocescope::output::packet::jsonl::FrameJson;
use rocescope::output::packet::{hexdump, summary, tree};

/// Decodes one record with `decoder`, writes it with every packet writer, and feeds its
/// summary to `analyzer` (settling a deferred ICRC from the record's bytes, as the analysis
/// thread does); an analyzer made `with_verdicts` has its final verdicts written too.
pub fn decode_and_observe(decoder: &Decoder, analyzer: &mut Analyzer, number: u64, record: &Record<'_>) {
    let packet = decoder.decode(record);
    let mut text = String::new();
    let frame = Frame::alone(number, &packet);
    let _ = tree::write_tree(&mut text, &frame);
    let _ = summary::write_info(&mut text, &packet);
    let (mut src, mut dst) = (String::new(), String::new());
    let _ = summary::write_endpoints(&mut src, &mut dst, &packet);
    let _ = write!(text, "{}", summary::protocol(&packet));
    let _ = hexdump::write_hexdump(&mut text, record.data);
    let mut summary = FrameSummary::of(number, &packet);
    if let Some(roce) = summary.roce_mut()
        && let Some(job) = roce.deferred_icrc
    {
        match job.compute(record.data) {
            Some((status, computed)) => roce.settle_icrc(status, computed),
            None => roce.settle_icrc(IcrcStatus::Unverifiable, 0),
        }
    }
    analyzer.observe(&summary);
    // verdicts leave in frame order once final: write each with this packet
    while let Some((_, verdict)) = analyzer.next_verdict() {
        let mut json = Vec::new();
        let _ = FrameJson { number, packet: &packet, verdict: &verdict }.write_to(&mut json);
    }
}
