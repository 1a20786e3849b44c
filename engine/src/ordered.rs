//! Frames handed on in capture order with their final verdicts: the analysis decides some
//! verdicts only when a reorder window has passed, so a frame whose verdict is still open is
//! kept (its bytes copied) and decoded again once it is decided. `packets` writes the frames
//! it is handed, `annotate` writes them into a capture file.

use std::collections::VecDeque;
use std::io;

use crate::analyze::{Analyzer, Verdict};
use crate::capture::{Frame as InputFrame, LinkType, Record};
use crate::decode::{DecodedFrame, Decoder};
use crate::display_filter::DisplayFilter;
use crate::fields::Frame;

/// A frame whose verdict is final.
pub struct Decided<'p, 'a> {
    pub number: u64,
    /// Which input file it came from.
    pub file: usize,
    pub record: &'p Record<'a>,
    pub packet: &'p DecodedFrame<'a>,
    pub verdict: &'p Verdict,
    /// The time of the capture's first frame (Wireshark's relative times count from it).
    pub first_ts_ns: i64,
    /// The time of the frame captured before it (`None` for the first).
    pub previous_ts_ns: Option<i64>,
    /// The time of the frame handed on before it (`None` for the first).
    pub previous_shown_ts_ns: Option<i64>,
}

impl<'p, 'a> Decided<'p, 'a> {
    /// The frame as the field registry reads it, with its verdict.
    pub fn frame(&self) -> Frame<'p, 'a> {
        Frame {
            number: self.number,
            packet: self.packet,
            first_ts_ns: self.first_ts_ns,
            previous_ts_ns: self.previous_ts_ns,
            previous_shown_ts_ns: self.previous_shown_ts_ns,
            verdict: Some(self.verdict),
        }
    }
}

/// Where decided frames go.
pub trait FrameSink {
    fn write(&mut self, frame: Decided<'_, '_>) -> io::Result<()>;
}

/// A frame kept until its verdict is final, with its own copy of the bytes when it is to be
/// handed on.
struct Waiting {
    number: u64,
    file: usize,
    ts_ns: i64,
    /// The time of the frame captured before it.
    previous_ts_ns: Option<i64>,
    orig_len: u32,
    link_type: LinkType,
    offset: u64,
    /// The captured bytes; `None` for a frame the filters hide.
    data: Option<Vec<u8>>,
}

impl Waiting {
    fn record(&self) -> Option<Record<'_>> {
        let data = self.data.as_deref()?;
        Some(Record {
            ts_ns: self.ts_ns,
            orig_len: self.orig_len,
            data,
            link_type: self.link_type,
            offset: self.offset,
        })
    }
}

/// Hands frames to a sink in capture order, once the analysis (which sees every frame, shown
/// or not, so that verdicts are right) has decided their verdicts.
pub struct InOrder<S: FrameSink> {
    pub sink: S,
    /// `-Y`: a frame is handed on only when it matches.
    display: Option<DisplayFilter>,
    first_ts_ns: Option<i64>,
    /// The time of the last frame taken, and of the last handed on.
    last_ts_ns: Option<i64>,
    last_shown_ts_ns: Option<i64>,
    /// The time of the last frame the display filter passed, before its verdict was final:
    /// the previous displayed frame of `frame.time_delta_displayed` in a filter.
    last_passed_ts_ns: Option<i64>,
    waiting: VecDeque<Waiting>,
    /// Byte buffers of frames handed on, for reuse.
    spare: Vec<Vec<u8>>,
    shown: u64,
    limit: Option<u64>,
}

impl<S: FrameSink> InOrder<S> {
    /// Hands on the frames `display` matches (all without one), `limit` of them at most.
    pub fn new(sink: S, display: Option<DisplayFilter>, limit: Option<u64>) -> Self {
        InOrder {
            sink,
            display,
            first_ts_ns: None,
            last_ts_ns: None,
            last_shown_ts_ns: None,
            last_passed_ts_ns: None,
            waiting: VecDeque::new(),
            spare: Vec::new(),
            shown: 0,
            limit,
        }
    }

    /// Have `limit` frames been handed on?
    pub fn is_full(&self) -> bool {
        self.limit.is_some_and(|c| self.shown >= c)
    }

    /// Takes the frame `analyzer` just observed (`shown`: the other filters let it through):
    /// handed on at once when its verdict is already final and no frame waits before it, else
    /// kept.
    pub fn take(
        &mut self,
        analyzer: &mut Analyzer,
        frame: &InputFrame<'_>,
        packet: &DecodedFrame<'_>,
        shown: bool,
        decoder: &Decoder,
    ) -> io::Result<()> {
        let InputFrame { number, file, ref record } = *frame;
        self.first_ts_ns.get_or_insert(packet.ts_ns);
        let previous_ts_ns = self.last_ts_ns.replace(packet.ts_ns);
        // a filter on the analysis's verdicts waits for them; any other is decided now
        let shown = shown && (self.filters_on_verdicts() || self.passes(number, packet, previous_ts_ns, None));
        if shown && !self.filters_on_verdicts() {
            self.last_passed_ts_ns = Some(packet.ts_ns);
        }
        if self.waiting.is_empty() {
            match analyzer.next_verdict() {
                Some((n, verdict)) if n == number => {
                    let frame = (number, file, previous_ts_ns);
                    return if shown { self.show(frame, record, packet, &verdict) } else { Ok(()) };
                }
                _ => {}
            }
        }
        let data = shown.then(|| {
            let mut bytes = self.spare.pop().unwrap_or_default();
            bytes.clear();
            bytes.extend_from_slice(record.data);
            bytes
        });
        let (ts_ns, orig_len, link_type, offset) = (record.ts_ns, record.orig_len, record.link_type, record.offset);
        self.waiting.push_back(Waiting { number, file, ts_ns, previous_ts_ns, orig_len, link_type, offset, data });
        self.write_decided(analyzer, decoder)
    }

    /// Hands on the waiting frames whose verdicts are final.
    fn write_decided(&mut self, analyzer: &mut Analyzer, decoder: &Decoder) -> io::Result<()> {
        while let Some((number, verdict)) = analyzer.next_verdict() {
            while let Some(w) = self.waiting.pop_front() {
                if w.number != number {
                    continue;
                }
                if let Some(record) = w.record()
                    && !self.is_full()
                {
                    self.show((number, w.file, w.previous_ts_ns), &record, &decoder.decode(&record), &verdict)?;
                }
                self.spare.extend(w.data);
                break;
            }
        }
        Ok(())
    }

    fn filters_on_verdicts(&self) -> bool {
        self.display.as_ref().is_some_and(DisplayFilter::uses_analysis)
    }

    /// Does the frame match the display filter (with its verdict when the filter reads it)?
    fn passes(
        &self,
        number: u64,
        packet: &DecodedFrame<'_>,
        previous_ts_ns: Option<i64>,
        verdict: Option<&Verdict>,
    ) -> bool {
        let Some(display) = &self.display else { return true };
        let first_ts_ns = self.first_ts_ns.unwrap_or(packet.ts_ns);
        let previous_shown_ts_ns = if verdict.is_some() { self.last_shown_ts_ns } else { self.last_passed_ts_ns };
        display.matches(&Frame { number, packet, first_ts_ns, previous_ts_ns, previous_shown_ts_ns, verdict })
    }

    /// Hands on a frame the other filters let through, once the display filter on its verdict
    /// (if any) agrees. `frame`: its number, input file and the time of the frame captured
    /// before it.
    fn show(
        &mut self,
        frame: (u64, usize, Option<i64>),
        record: &Record<'_>,
        packet: &DecodedFrame<'_>,
        verdict: &Verdict,
    ) -> io::Result<()> {
        let (number, file, previous_ts_ns) = frame;
        if self.filters_on_verdicts() && !self.passes(number, packet, previous_ts_ns, Some(verdict)) {
            return Ok(());
        }
        self.shown += 1;
        let first_ts_ns = self.first_ts_ns.unwrap_or(packet.ts_ns);
        let previous_shown_ts_ns = self.last_shown_ts_ns.replace(packet.ts_ns);
        self.sink.write(Decided {
            number,
            file,
            record,
            packet,
            verdict,
            first_ts_ns,
            previous_ts_ns,
            previous_shown_ts_ns,
        })
    }

    /// The end of the input: ends the analysis, so that every verdict is decided, and hands
    /// on every frame.
    pub fn finish(&mut self, analyzer: &mut Analyzer, decoder: &Decoder) -> io::Result<()> {
        analyzer.finish();
        self.write_decided(analyzer, decoder)
    }
}
