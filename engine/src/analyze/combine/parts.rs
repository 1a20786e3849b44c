//! Merging the states of the parts of a capture analysed apart (`rocescope merge`): files that
//! are consecutive time slices of one capture (rotated files, or a capture cut at any frame),
//! each analysed on its own with `analyze --state`, give the report one run over every file
//! gives, whatever the order the states are named in; the merged state merges again.
//!
//! A part analysed alone classified its first packets without what came before it: a PSN
//! that continues the part before looked like a flow's first, a resend like a new packet, an
//! ACK answered nothing. Its state keeps its first frames (its head, [`head::HEAD_FRAMES`] by
//! default), and the merge analyses them again after the part before it, which goes on as one
//! run of both would. A part with more frames is then grafted on ([`graft`]): what its own
//! analysis did after its kept frames is added, where the two analyses have met by then; the
//! merge is refused where they have not.
//!
//! Parts are taken in the order of their first frames' times, then of their last frames'
//! (a part whose frames all share the time the next part starts at comes first), then of
//! their first files' names. Parts that overlap in time (captures of several taps taken at the
//! same time) are analysed again from the first frame, their frames interleaved by time as
//! one run over their files interleaves them, when each kept every frame.

use crate::analyze::combine::graft;
use crate::analyze::frame::FrameSummary;
use crate::analyze::id::FrameNumber;
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::analyzer::head;
use crate::analyze::saved::state::SavedRun;

/// One part's saved analysis, and the name to give it in messages (its file's).
pub struct Part {
    pub name: String,
    pub run: SavedRun,
}

/// Why parts were not merged: a state could not be read (the loader's error), or the parts
/// cannot make one analysis (a message naming the part and saying why).
#[derive(Debug)]
pub enum MergeError<E> {
    Unreadable(E),
    Refused(String),
}

/// What a merge needs to know of a part before its turn comes (its analysis is read again
/// then, so that a merge of many parts holds two analyses at a time, not all of them).
struct Facts {
    name: String,
    /// When its first frame and its last frame analysed were captured.
    first_ts_ns: Option<i64>,
    last_ts_ns: Option<i64>,
    config: crate::analyze::roce::config::Config,
    known_qps: crate::analyze::identity::known::KnownQps,
    display_filter: Option<String>,
    files: Vec<String>,
    exported: bool,
}

impl Facts {
    fn of(name: String, run: &SavedRun) -> Facts {
        Facts {
            name,
            first_ts_ns: run.first_ts_ns,
            last_ts_ns: run.analyzer.last_ts_ns(),
            config: run.analyzer.config(),
            known_qps: run.analyzer.known_qps().clone(),
            display_filter: run.display_filter.clone(),
            files: run.inputs.iter().map(|i| i.file.clone()).collect(),
            exported: !run.output.is_empty(),
        }
    }

    /// Where the part falls among the others.
    fn order(&self) -> (i64, Option<i64>, Option<&str>) {
        let first = self.first_ts_ns.or(self.last_ts_ns).unwrap_or(i64::MAX);
        (first, self.last_ts_ns, self.files.first().map(String::as_str))
    }
}

/// The analysis of the parts, in order, as one run would have made it, unfinished. Each
/// part is a name (for messages) and where its state is; `load` reads a state, twice for
/// each part: once to learn where the part falls, once when its turn comes. `positional`
/// tells whether a display filter reads frame numbers or times relative to the first frame
/// (or cannot be read), which each part counts from its own.
pub fn merge<S, E>(
    parts: Vec<(String, S)>,
    mut load: impl FnMut(&S) -> Result<SavedRun, E>,
    positional: impl Fn(&str) -> bool,
) -> Result<SavedRun, MergeError<E>> {
    let mut facts = Vec::with_capacity(parts.len());
    for (name, source) in parts {
        let known = Facts::of(name, &load(&source).map_err(MergeError::Unreadable)?);
        facts.push((source, known));
    }
    check_alike(facts.iter().map(|(_, f)| f), positional).map_err(MergeError::Refused)?;
    facts.sort_by(|(_, a), (_, b)| a.order().cmp(&b.order()));
    let mut turn = |(source, facts): (S, Facts)| load(&source).map(|run| Part { name: facts.name, run });
    if let Some(overlap) = overlapping(facts.iter().map(|(_, f)| f)) {
        let parts = facts.into_iter().map(&mut turn).collect::<Result<Vec<_>, _>>().map_err(MergeError::Unreadable)?;
        return interleaved(parts, overlap).map_err(MergeError::Refused);
    }
    let mut facts = facts.into_iter();
    let Some(first) = facts.next() else { return Err(MergeError::Refused("no saved analysis to merge".to_string())) };
    let mut merged = turn(first).map_err(MergeError::Unreadable)?.run;
    for next in facts {
        merged = append(merged, turn(next).map_err(MergeError::Unreadable)?).map_err(MergeError::Refused)?;
    }
    Ok(merged)
}

/// The first part, in order, that starts before the parts before it end, if one does: its
/// index.
fn overlapping<'a>(parts: impl Iterator<Item = &'a Facts>) -> Option<usize> {
    let mut ends: Option<i64> = None;
    for (i, part) in parts.enumerate() {
        if let (Some(starts), Some(before_end)) = (part.first_ts_ns, ends)
            && starts < before_end
        {
            return Some(i);
        }
        ends = ends.max(part.last_ts_ns);
    }
    None
}

/// The analysis of parts taken at the same time (captures of several taps), their frames
/// interleaved by time as one run over their files interleaves them (the earlier part first
/// where times are equal): every part must keep every frame it read, the analysis starting
/// again from the first. `overlap` is the first part that overlaps those before it.
fn interleaved(parts: Vec<Part>, overlap: usize) -> Result<SavedRun, String> {
    let name = |i: usize| parts.get(i).map_or(String::new(), |p| p.name.clone());
    let (first, overlapping) = (name(0), name(overlap));
    if parts.first().is_some_and(|p| p.run.display_filter.is_some()) {
        return Err(format!(
            "{overlapping} starts before {first} ends, and they were saved with -Y: the frames it left out cannot be put among the others' (analyse the files together, or merge parts that follow one another in time)"
        ));
    }
    let Some(first_analyzer) = parts.first().map(|p| &p.run.analyzer) else {
        return Err("no saved analysis to merge".to_string());
    };
    let (config, known_qps) = (first_analyzer.config(), first_analyzer.known_qps().clone());
    let mut frames = Vec::with_capacity(parts.len());
    let mut merged = SavedRun {
        analyzer: Analyzer::new(config).with_known_qps(known_qps).keeping_head(head::MAX_HEAD_FRAMES),
        frames_read: 0,
        first_ts_ns: None,
        display_filter: None,
        inputs: Vec::new(),
        output: Vec::new(),
    };
    for Part { name, mut run } in parts {
        match kept_frames(&name, &mut run)? {
            (kept, 0) if kept.len() as u64 == run.frames_read => frames.push(kept.into_iter().peekable()),
            _ => {
                return Err(format!(
                    "{name} overlaps in time with {first}: parts taken at the same time (several taps) merge only when each kept every frame it read; analyse their files together"
                ));
            }
        }
        merged.first_ts_ns = merged.first_ts_ns.or(run.first_ts_ns);
        merged.inputs.append(&mut run.inputs);
    }
    // the part whose next frame is the earliest, the earlier part on equal times
    while let Some((_, next)) = frames.iter_mut().enumerate().filter_map(|(i, f)| f.peek().map(|f| (f.ts_ns, i))).min()
    {
        if let Some(mut frame) = frames.get_mut(next).and_then(Iterator::next) {
            merged.frames_read += 1;
            frame.number = FrameNumber::new(merged.frames_read);
            merged.analyzer.observe(&frame);
        }
    }
    Ok(merged)
}

/// Every part was saved by `analyze` with the same options and display filter, one that does
/// not depend on where a frame falls in the capture, and no file was analysed by two parts.
fn check_alike<'a>(
    mut parts: impl Iterator<Item = &'a Facts>,
    positional: impl Fn(&str) -> bool,
) -> Result<(), String> {
    let Some(first) = parts.next() else { return Ok(()) };
    if let Some(filter) = first.display_filter.as_ref().filter(|f| positional(f)) {
        return Err(format!(
            "{} was saved with the display filter \"{filter}\", which reads frame numbers or times relative to the first frame: each part counts them from its own",
            first.name
        ));
    }
    let mut files: Vec<(&str, &str)> = Vec::new();
    for part in std::iter::once(first).chain(parts) {
        for file in part.files.iter().filter(|f| *f != "-") {
            if let Some((_, other)) = files.iter().find(|(seen, _)| seen == file) {
                return Err(format!("{other} and {} both analysed {file}", part.name));
            }
            files.push((file, &part.name));
        }
        if part.exported {
            return Err(format!("{} was saved by export: merge takes states saved by analyze", part.name));
        }
        if part.config != first.config {
            return Err(format!(
                "{} and {} were saved with other analysis options ({}): the parts of one capture are analysed alike",
                first.name,
                part.name,
                crate::analyze::combine::differences::describe(&first.config, &part.config)
            ));
        }
        if part.known_qps != first.known_qps {
            return Err(format!(
                "{} and {} were saved with other QP tables (--qps): the parts of one capture are analysed alike",
                first.name, part.name
            ));
        }
        if part.display_filter != first.display_filter {
            return Err(format!("{} and {} were saved with other display filters", first.name, part.name));
        }
    }
    Ok(())
}

/// `merged`, the analysis of the parts before `part`, going on with `part`'s frames.
fn append(mut merged: SavedRun, part: Part) -> Result<SavedRun, String> {
    let Part { name, mut run } = part;
    let (frames, unkept) = kept_frames(&name, &mut run)?;
    if unkept == 0 {
        replay(&mut merged.analyzer, frames, merged.frames_read);
    } else {
        graft::after(&mut merged.analyzer, frames, run.analyzer, merged.frames_read).map_err(|why| {
            format!(
                "{name} analysed more frames than its state keeps, and its analysis cannot go on exactly from the parts before it: {why} (analyse its files with analyze --resume from the merged state of the parts before it)"
            )
        })?;
        merged.analyzer.skip_in_head(unkept);
    }
    merged.frames_read = merged.frames_read.saturating_add(run.frames_read);
    merged.first_ts_ns = merged.first_ts_ns.or(run.first_ts_ns);
    merged.inputs.append(&mut run.inputs);
    Ok(merged)
}

/// The frames the part `run` kept from its first, and how many more it analysed; an error if
/// it keeps none (it went on from an export's state) or their encoding is damaged.
fn kept_frames(name: &str, run: &mut SavedRun) -> Result<(Vec<FrameSummary>, u64), String> {
    let Some(head) = run.analyzer.take_head() else {
        return Err(format!(
            "{name} does not keep its first frames (it went on from a state export saved): it can only come first"
        ));
    };
    let frames = head.frames().map_err(|e| format!("{name}: its kept frames are damaged: {e}"))?;
    Ok((frames, head.unkept()))
}

/// Analyses a part's frames after the `frames_before` frames of the parts before it.
fn replay(analyzer: &mut Analyzer, frames: Vec<FrameSummary>, frames_before: u64) {
    for mut frame in frames {
        frame.number = frame.number.after(frames_before);
        analyzer.observe(&frame);
    }
}
