//! `rocescope.packets`: the rows `packets -Y FILTER -T fields -e …` prints, as typed columns
//! (the per-packet table's: unsigned integers, booleans, addresses as tshark prints them, times
//! in nanoseconds), built a batch of rows at a time.

use std::io;

use polars::prelude::DataFrame;
use rocescope::capture::Inputs;
use rocescope::cli::PacketsArgs;
use rocescope::commands::analyze::Watch;
use rocescope::commands::exit::Failure;
use rocescope::commands::packets::Listing;
use rocescope::commands::passes;
use rocescope::display_filter::DisplayFilter;
use rocescope::fields::Field;
use rocescope::ordered::{Decided, FrameSink};
use rocescope::output::packet::columns::{FrameColumns, Style};
use rocescope::pipeline;

/// Rows per batch: a batch's columns are built, then handed on whole.
const BATCH_ROWS: usize = 1 << 16;

/// The frames `args` choose, `fields` of each: the batches (one empty batch when no frame is
/// chosen: it gives the columns).
pub fn packet_batches(
    args: &PacketsArgs,
    fields: &[&'static Field],
    watch: &dyn Watch,
) -> Result<Vec<DataFrame>, Failure> {
    let decoder = args.ports.decoder();
    let decoder = decoder.clone().with_time_source(passes::choose(&args.files, args.times.time_source, &decoder)?);
    let display = args.display_filter.as_deref().map(DisplayFilter::compile).transpose().map_err(Failure::Usage)?;
    let (mut inputs, unreadable) = Inputs::open(&args.files, args.threads > 1);
    watch.unreadable(&unreadable);
    let batches = Batches { columns: FrameColumns::new(fields, Style::Table, BATCH_ROWS), done: Vec::new() };
    let mut listing = Listing::new(batches, display, args);
    watch.reading(inputs.size());
    let ran = pipeline::run(&mut inputs, &decoder, &mut listing, &|bytes| watch.read(bytes));
    watch.ended(&ran.damage, listing.analyzer.undecoded_links());
    if ran.frames == 0 && (!unreadable.is_empty() || !ran.damage.is_empty()) {
        return Err(Failure::NoInput(String::new()));
    }
    let batches = &mut listing.list.sink;
    ran.result.and_then(|()| batches.finish()).map_err(|e| Failure::Output(format!("cannot build the table: {e}")))?;
    Ok(std::mem::take(&mut batches.done))
}

/// The chosen frames' rows, a batch at a time.
struct Batches {
    columns: FrameColumns,
    done: Vec<DataFrame>,
}

impl Batches {
    fn take(&mut self) -> io::Result<()> {
        self.done.push(self.columns.take().map_err(io::Error::other)?);
        Ok(())
    }

    /// Takes the rows not in a batch yet, if any (an empty batch when there are none at all).
    fn finish(&mut self) -> io::Result<()> {
        if self.columns.rows() > 0 || self.done.is_empty() { self.take() } else { Ok(()) }
    }
}

impl FrameSink for Batches {
    fn write(&mut self, decided: Decided<'_, '_>) -> io::Result<()> {
        self.columns.push(&decided.frame());
        if self.columns.rows() >= BATCH_ROWS { self.take() } else { Ok(()) }
    }
}
