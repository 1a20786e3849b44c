//! `rocescope browse`: a terminal packet browser. The packet list, the selected frame's decode
//! tree (from the field registry) and its bytes, a display filter bar, and a status line in
//! Wireshark's form, over capture files that are indexed on a thread of their own while the
//! first screen is already shown (docs/browse.md).

pub mod app;
mod export;
pub mod index;
mod spool;
pub mod view;

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use ratatui::crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind};
use ratatui::crossterm::execute;

use crate::analyze::Config;
use crate::capture::Inputs;
use crate::cli::{BrowseArgs, report_unreadable};
use crate::commands::exit::{Failure, Outcome};
use crate::decode::Decoder;
use app::App;
use index::Index;
use spool::FrameStore;

/// How long the interface waits for a key before it redraws what the indexing added.
const TICK: Duration = Duration::from_millis(100);

pub fn run(args: &BrowseArgs) -> Outcome {
    if !std::io::stdout().is_terminal() {
        return Err(Failure::Usage("browse needs a terminal: its standard output is not one".into()));
    }
    let mut config = args.analysis.config().map_err(Failure::Usage)?;
    let decoder = args.analysis.ports.decoder();
    config.time_source = crate::commands::passes::choose(&args.files, args.times.time_source, &decoder)?;
    let decoder = decoder.with_time_source(config.time_source);
    let (mut app, indexing) = open(&args.files, decoder, config)?;
    if let Some(filter) = &args.display_filter {
        app.apply_filter(filter).map_err(Failure::Usage)?;
    }
    let mut terminal = ratatui::try_init().map_err(|e| Failure::Output(format!("cannot use the terminal: {e}")))?;
    let _ = execute!(std::io::stdout(), EnableMouseCapture);
    let result = run_loop(&mut terminal, app);
    let _ = execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
    indexing.stop();
    result.map_err(|e| Failure::Output(format!("cannot draw on the terminal: {e}")))
}

/// Opens the inputs and starts indexing them; the app, and the index to stop at the end.
pub fn open(files: &[std::path::PathBuf], decoder: Decoder, config: Config) -> Result<(App, Arc<Index>), Failure> {
    let (mut inputs, unreadable) = Inputs::open(files, false);
    report_unreadable(&unreadable);
    if inputs.readers().is_empty() {
        return Err(Failure::NoInput(String::new()));
    }
    let store = FrameStore::new(inputs.share_mappings())
        .map_err(|e| Failure::Output(format!("cannot make a spool for compressed or piped input: {e}")))?;
    let mappings = store.mappings();
    let name = inputs.readers().iter().map(|r| r.name()).collect::<Vec<_>>().join(", ");
    let index = Arc::new(Index::new(inputs.size()));
    let (building, indexer) = (Arc::clone(&index), decoder.clone());
    std::thread::spawn(move || building.build(inputs, store, &indexer, config));
    Ok((App::new(Arc::clone(&index), mappings, decoder, name, files.to_vec()), index))
}

fn run_loop(terminal: &mut ratatui::DefaultTerminal, mut app: App) -> std::io::Result<()> {
    while !app.quit {
        app.step();
        terminal.draw(|frame| view::draw(frame, &app))?;
        if event::poll(TICK)? {
            match event::read()? {
                Event::Key(key) if key.kind != KeyEventKind::Release => app.key(key),
                Event::Mouse(mouse) => app.mouse(mouse),
                _ => {}
            }
        }
    }
    Ok(())
}
