//! A part's analysis moved to where a merge puts it: its frames numbered on after the parts
//! before it, and its flows numbered as the merged analysis numbers them ([`Renumbering`]).
//!
//! Every frame number the analysis holds is a [`FrameNumber`] and every flow number a
//! [`FlowId`] (declared here, beside how they move, and named by `analyze::id`; on the
//! ground floor, so that every other module of the analysis can implement [`Renumber`]), and
//! every type of its state implements [`Renumber`]: by `#[derive(Renumber)]`,
//! which renumbers each field, or as a no-op for the types that hold no number
//! ([`holds_no_numbers!`]). A field added to the state is therefore renumbered with no other
//! edit, and one of a type that does not say what it holds does not compile.
//! `tests::every_frame_number_moves_on` checks the whole on every sample.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::BuildHasher;

pub use rocescope_derive::Renumber;

/// A flow's number: its place in the flow table, in order of appearance. Saved and written
/// as the bare number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct FlowId(u32);

impl FlowId {
    /// The flow numbered `number`.
    pub const fn new(number: u32) -> FlowId {
        FlowId(number)
    }

    /// The flow at `index` in the flow table (which holds fewer than `u32::MAX` flows).
    pub fn at(index: usize) -> FlowId {
        FlowId(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// The bare number.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Its place in the flow table.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for FlowId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A frame's number in the capture, from 1 at its first frame. Saved and written as the bare
/// number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct FrameNumber(u64);

impl FrameNumber {
    /// The frame numbered `number`.
    pub const fn new(number: u64) -> FrameNumber {
        FrameNumber(number)
    }

    /// The bare number.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The frame `frames` frames after this one (the last number where that overflows).
    pub const fn after(self, frames: u64) -> FrameNumber {
        FrameNumber(self.0.saturating_add(frames))
    }
}

impl std::fmt::Display for FrameNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// How a part's numbers become the merged analysis's.
pub struct Renumbering {
    /// Frames of the parts before: added to every frame number.
    pub frames: u64,
    /// The merged number of each of the part's flows, by its own number (the same where
    /// missing).
    pub flows: Vec<FlowId>,
}

/// A value that holds frame or flow numbers, moved as a [`Renumbering`] says.
///
/// A map's keys are kept as they are, so a map keyed by frame or flow numbers does not
/// renumber through the maps' impls (it must be keyed again, by an impl of its own):
///
/// ```compile_fail,E0277
/// use rocescope_engine::analyze::renumber::{FlowId, Renumber, Renumbering};
/// let mut by_flow: std::collections::HashMap<FlowId, u64> = Default::default();
/// by_flow.renumber(&Renumbering { frames: 0, flows: Vec::new() });
/// ```
pub trait Renumber {
    /// Moves every frame and flow number the value holds.
    fn renumber(&mut self, r: &Renumbering);
}

/// A type that holds no frame or flow number: its values may key a map that is renumbered
/// (its values moved, its keys kept).
pub trait HoldsNoNumbers {}

/// Declares types that hold no frame or flow number: their [`Renumber`] does nothing, and they
/// may key a renumbered map ([`HoldsNoNumbers`]).
#[macro_export]
macro_rules! holds_no_numbers {
    ($($ty:ty),* $(,)?) => {
        $(
            impl $crate::analyze::renumber::HoldsNoNumbers for $ty {}
            impl $crate::analyze::renumber::Renumber for $ty {
                fn renumber(&mut self, _: &$crate::analyze::renumber::Renumbering) {}
            }
        )*
    };
}

holds_no_numbers!(
    bool,
    u8,
    u16,
    u32,
    u64,
    usize,
    i32,
    i64,
    f64,
    String,
    &'static str,
    rocescope_parsers::ethernet::MacAddr,
    crate::decode::Endpoint,
    crate::decode::Marks,
    crate::decode::IcrcStatus,
    crate::decode::DeferredIcrc,
    rocescope_parsers::ext::Aeth,
    rocescope_parsers::ext::Deth,
    rocescope_parsers::ext::Reth,
    rocescope_parsers::uet::crc::Variant,
    rocescope_parsers::Error,
    rocescope_parsers::mac_control::Pfc,
    rocescope_parsers::opcode::Transport,
);

impl Renumber for FrameNumber {
    fn renumber(&mut self, r: &Renumbering) {
        *self = self.after(r.frames);
    }
}

impl Renumber for FlowId {
    fn renumber(&mut self, r: &Renumbering) {
        *self = r.flows.get(self.index()).copied().unwrap_or(*self);
    }
}

impl<T: Renumber> Renumber for Option<T> {
    fn renumber(&mut self, r: &Renumbering) {
        if let Some(value) = self {
            value.renumber(r);
        }
    }
}

impl<T: Renumber + ?Sized> Renumber for Box<T> {
    fn renumber(&mut self, r: &Renumbering) {
        self.as_mut().renumber(r);
    }
}

impl<T: Renumber> Renumber for [T] {
    fn renumber(&mut self, r: &Renumbering) {
        self.iter_mut().for_each(|value| value.renumber(r));
    }
}

impl<T: Renumber, const N: usize> Renumber for [T; N] {
    fn renumber(&mut self, r: &Renumbering) {
        self.as_mut_slice().renumber(r);
    }
}

impl<T: Renumber> Renumber for Vec<T> {
    fn renumber(&mut self, r: &Renumbering) {
        self.as_mut_slice().renumber(r);
    }
}

impl<T: Renumber> Renumber for VecDeque<T> {
    fn renumber(&mut self, r: &Renumbering) {
        self.iter_mut().for_each(|value| value.renumber(r));
    }
}

/// A map's values are moved; its keys, which hold no numbers, stay (a map keyed by frame or
/// flow numbers must be keyed again: its own impl).
impl<K: HoldsNoNumbers, V: Renumber, S: BuildHasher> Renumber for HashMap<K, V, S> {
    fn renumber(&mut self, r: &Renumbering) {
        self.values_mut().for_each(|value| value.renumber(r));
    }
}

/// As for [`HashMap`]: the values moved, the keys kept.
impl<K: HoldsNoNumbers, V: Renumber> Renumber for BTreeMap<K, V> {
    fn renumber(&mut self, r: &Renumbering) {
        self.values_mut().for_each(|value| value.renumber(r));
    }
}

/// A set of values that hold no numbers: nothing to move.
impl<K: HoldsNoNumbers, S: BuildHasher> Renumber for HashSet<K, S> {
    fn renumber(&mut self, _: &Renumbering) {}
}

/// Tuples, each element renumbered; one of values that hold no numbers holds none.
macro_rules! tuples {
    ($(($($name:ident),+))*) => {
        $(
            impl<$($name: HoldsNoNumbers),+> HoldsNoNumbers for ($($name,)+) {}

            impl<$($name: Renumber),+> Renumber for ($($name,)+) {
                #[allow(non_snake_case)]
                fn renumber(&mut self, r: &Renumbering) {
                    let ($($name,)+) = self;
                    $($name.renumber(r);)+
                }
            }
        )*
    };
}

tuples!((A)(A, B)(A, B, C)(A, B, C, D));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::frame::FrameSummary;
    use crate::analyze::roce::analyzer::Analyzer;
    use crate::analyze::roce::config::Config;
    use crate::capture::Inputs;
    use crate::decode::Decoder;

    /// Every frame of a sample, summarised, numbered from `first`.
    fn summaries(name: &str, first: u64) -> Vec<FrameSummary> {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples").join(name);
        let (mut inputs, errors) = Inputs::open(&[path], false);
        assert!(errors.is_empty(), "{errors:?}");
        inputs.number_from(first);
        let decoder = Decoder::new(&[]);
        let mut out = Vec::new();
        while let Some(frame) = inputs.next_frame() {
            let packet = decoder.decode(&frame.record);
            let mut s = FrameSummary::of(frame.number, &packet);
            if let Some(roce) = s.roce_mut()
                && let Some(job) = roce.deferred_icrc
                && let Some((status, computed)) = job.compute(frame.record.data)
            {
                roce.settle_icrc(status, computed);
            }
            out.push(s);
        }
        out
    }

    fn analysed(frames: &[FrameSummary], upto: usize) -> Analyzer {
        let mut analyzer = Analyzer::new(Config::default());
        frames.iter().take(upto).for_each(|f| analyzer.observe(f));
        analyzer
    }

    fn saved(analyzer: &Analyzer) -> Vec<u8> {
        postcard::to_stdvec(analyzer).expect("encoded")
    }

    #[derive(Debug, PartialEq, Renumber)]
    struct Kept {
        frame: FrameNumber,
        count: u64,
    }

    #[derive(Debug, PartialEq, Renumber)]
    struct Held {
        first: FrameNumber,
        reply: Option<FrameNumber>,
        kept: Vec<Kept>,
        flow: FlowId,
        peers: std::collections::BTreeMap<String, (FlowId, FrameNumber)>,
        // never moved, whatever it holds: what the attribute is for
        #[renumber(skip)]
        own: FrameNumber,
    }

    #[derive(Debug, PartialEq, Renumber)]
    struct Pair(FlowId, #[renumber(skip)] FlowId);

    #[derive(Debug, PartialEq, Renumber)]
    enum Event {
        Frame(FrameNumber),
        Flow { flow: FlowId, at: FrameNumber },
        Nothing,
    }

    #[test]
    fn the_derive_moves_every_field() {
        let frame = FrameNumber::new;
        let r = Renumbering { frames: 100, flows: vec![FlowId::new(5), FlowId::new(4)] };
        let mut held = Held {
            first: frame(1),
            reply: Some(frame(2)),
            kept: vec![Kept { frame: frame(3), count: 7 }],
            flow: FlowId::new(1),
            peers: [("a".to_string(), (FlowId::new(0), frame(4)))].into(),
            own: frame(9),
        };
        held.renumber(&r);
        let moved = Held {
            first: frame(101),
            reply: Some(frame(102)),
            kept: vec![Kept { frame: frame(103), count: 7 }],
            flow: FlowId::new(4),
            peers: [("a".to_string(), (FlowId::new(5), frame(104)))].into(),
            own: frame(9),
        };
        assert_eq!(held, moved);
        // a flow the renumbering does not name keeps its number
        let mut pair = Pair(FlowId::new(7), FlowId::new(0));
        pair.renumber(&r);
        assert_eq!(pair, Pair(FlowId::new(7), FlowId::new(0)));
        let mut events = [Event::Frame(frame(1)), Event::Flow { flow: FlowId::new(0), at: frame(2) }, Event::Nothing];
        events.renumber(&r);
        assert_eq!(
            events,
            [Event::Frame(frame(101)), Event::Flow { flow: FlowId::new(5), at: frame(102) }, Event::Nothing]
        );
        // frame numbers saturate
        let mut last = frame(u64::MAX - 1);
        last.renumber(&r);
        assert_eq!(last, frame(u64::MAX));
    }

    #[test]
    fn numbers_are_saved_and_written_bare() {
        let numbers = (FrameNumber::new(42), FlowId::new(7));
        assert_eq!(serde_json::to_string(&numbers).expect("json"), "[42,7]");
        assert_eq!(
            postcard::to_stdvec(&numbers).expect("postcard"),
            postcard::to_stdvec(&(42u64, 7u32)).expect("bare")
        );
        assert_eq!(format!("{} {}", numbers.0, numbers.1), "42 7");
    }

    #[test]
    fn every_frame_number_moves_on() {
        const ON: u64 = 1 << 40;
        let samples = std::fs::read_dir(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples"))
            .expect("samples")
            .map(|e| e.expect("entry"))
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned());
        for name in samples {
            let (numbered, numbered_on) = (summaries(&name, 1), summaries(&name, 1 + ON));
            // at every tenth of the capture, unfinished (held frames, open windows), and at its end
            for upto in (1..=10).map(|t| numbered.len() * t / 10) {
                let mut moved = analysed(&numbered, upto);
                moved.renumber(&Renumbering { frames: ON, flows: Vec::new() });
                let expected = analysed(&numbered_on, upto);
                assert!(saved(&moved) == saved(&expected), "{name}, after {upto} frames");
            }
            let (mut moved, mut expected) = (analysed(&numbered, usize::MAX), analysed(&numbered_on, usize::MAX));
            moved.finish();
            expected.finish();
            moved.renumber(&Renumbering { frames: ON, flows: Vec::new() });
            assert!(saved(&moved) == saved(&expected), "{name}, finished");
        }
    }
}
