//! The browser's state and what each key does to it; the interface draws it (`view.rs`).

use std::collections::BTreeSet;
use std::sync::Arc;

use memmap2::Mmap;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::index::{Entry, Index};
use crate::analyze::id::FlowId;
use crate::decode::{DecodedFrame, Decoder};
use crate::display_filter::DisplayFilter;
use crate::fields::{self, Frame};
use crate::output::packet::tree::{self, LineKind, TreeLine};

/// The panes, in the order Tab moves through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    List,
    Tree,
    Bytes,
}

/// What the top pane shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Packets,
    /// The QP flows, most troubled first (Wireshark's Conversations).
    Flows,
    /// The findings (Wireshark's Expert Info).
    Findings,
    /// PFC per source and priority, and PAUSE per source.
    Pauses,
    /// The frames of one flow and its peer in time order, as a ladder (Follow QP).
    Ladder,
}

/// What is being typed on the bottom line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// `/`: a display filter.
    Filter(String),
    /// `:`: a frame number to go to.
    GoTo(String),
    /// `w`: the file to write the marked (or else the displayed) frames into.
    Write(String),
}

/// Where the last drawing put the panes and their first lines, for the mouse: the top pane
/// (list or view), the decode and the bytes, each with the row of its first line and the index
/// of that line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Drawn {
    pub panes: [(Rect, u16, usize); 3],
}

/// Lines a turn of the mouse wheel scrolls.
const WHEEL: isize = 3;

/// The frames a filter keeps: positions in the index, and how far the index was filtered.
struct Displayed {
    filter: DisplayFilter,
    positions: Vec<u32>,
    filtered_to: usize,
}

/// Columns the packet list moves by a press of ← or →, and the furthest it goes.
const SIDEWAYS: usize = 8;
const MAX_COLUMN: usize = 512;

/// Frames filtered per step of the interface's loop (the rest on the next steps, so that keys
/// are answered meanwhile).
const FILTERED_PER_STEP: usize = 50_000;

pub struct App {
    pub index: Arc<Index>,
    mappings: Vec<Arc<Mmap>>,
    decoder: Decoder,
    /// The inputs' names, for the status line, and their paths (never written over).
    pub name: String,
    inputs: Vec<std::path::PathBuf>,
    /// Marked frames (positions in the index).
    pub marked: BTreeSet<u32>,
    displayed: Option<Displayed>,
    /// The selected row: a position among the displayed frames.
    pub selected: usize,
    pub pane: Pane,
    pub view: View,
    /// The selected row of the Flows or Findings view.
    pub view_row: usize,
    /// A one-line note for the bottom line (a view not ready yet).
    pub note: Option<String>,
    /// The Follow-QP view's flows (the flow, and its peer) and their frames (index positions).
    pub ladder: Option<Ladder>,
    pub prompt: Option<Prompt>,
    pub help: bool,
    /// The decode tree's cursor (a line), and its collapsed sections (by heading).
    pub tree_line: usize,
    pub collapsed: BTreeSet<String>,
    pub bytes_top: usize,
    /// The first column of the packet list shown (← and → scroll it sideways).
    pub column: usize,
    pub quit: bool,
    /// Set by each drawing (see [`Drawn`]).
    pub drawn: std::cell::Cell<Drawn>,
}

impl App {
    pub fn new(
        index: Arc<Index>,
        mappings: Vec<Arc<Mmap>>,
        decoder: Decoder,
        name: String,
        inputs: Vec<std::path::PathBuf>,
    ) -> Self {
        App {
            index,
            mappings,
            decoder,
            name,
            inputs,
            marked: BTreeSet::new(),
            displayed: None,
            selected: 0,
            pane: Pane::List,
            view: View::Packets,
            view_row: 0,
            note: None,
            ladder: None,
            prompt: None,
            help: false,
            tree_line: 0,
            collapsed: BTreeSet::new(),
            bytes_top: 0,
            column: 0,
            quit: false,
            drawn: std::cell::Cell::new(Drawn::default()),
        }
    }

    /// Frames displayed so far.
    pub fn displayed_len(&self) -> usize {
        self.displayed.as_ref().map_or(self.index.len(), |d| d.positions.len())
    }

    /// The index position of the `row`-th displayed frame.
    pub fn position(&self, row: usize) -> Option<usize> {
        match &self.displayed {
            Some(d) => d.positions.get(row).map(|&p| p as usize),
            None => (row < self.index.len()).then_some(row),
        }
    }

    /// The applied filter's text.
    pub fn filter_text(&self) -> Option<&str> {
        self.displayed.as_ref().map(|d| d.filter.text())
    }

    /// Decodes the frame at index position `position` and hands it to `show`.
    pub fn with_frame<T>(&self, position: usize, show: impl FnOnce(&Entry, &DecodedFrame<'_>) -> T) -> Option<T> {
        let entry = self.index.entry(position)?;
        let packet = self.decoder.decode(&entry.location.record(&self.mappings));
        Some(show(&entry, &packet))
    }

    /// When the capture's first frame was captured (its decoded time: an ERF record's own).
    pub fn first_ts_ns(&self) -> i64 {
        self.index.entry(0).map_or(0, |e| self.decoder.decode(&e.location.record(&self.mappings)).ts_ns)
    }

    /// Filters the frames indexed since the last step (some of them).
    pub fn step(&mut self) {
        let Some(d) = &self.displayed else { return };
        let from = d.filtered_to;
        let entries = self.index.entries_from(from, FILTERED_PER_STEP);
        let first_ts_ns = self.first_ts_ns();
        let time_of = |position: usize| self.with_frame(position, |_, packet| packet.ts_ns);
        let mut previous_ts_ns = from.checked_sub(1).and_then(time_of);
        let mut previous_shown_ts_ns = d.positions.last().and_then(|&p| time_of(p as usize));
        let kept: Vec<u32> = entries
            .iter()
            .enumerate()
            .filter(|(i, e)| {
                let packet = self.decoder.decode(&e.location.record(&self.mappings));
                let frame = Frame {
                    number: (from + i + 1) as u64,
                    packet: &packet,
                    first_ts_ns,
                    previous_ts_ns: previous_ts_ns.replace(packet.ts_ns),
                    previous_shown_ts_ns,
                    verdict: Some(&e.verdict),
                };
                let kept = d.filter.matches(&frame);
                if kept {
                    previous_shown_ts_ns = Some(packet.ts_ns);
                }
                kept
            })
            .map(|(i, _)| (from + i) as u32)
            .collect();
        if let Some(d) = &mut self.displayed {
            d.positions.extend(kept);
            d.filtered_to = from + entries.len();
        }
    }

    /// Has the applied filter been asked about every frame indexed?
    pub fn filtered_all(&self) -> bool {
        self.displayed.as_ref().is_none_or(|d| d.filtered_to >= self.index.len())
    }

    /// Applies a filter (the empty text shows every frame); the error names the column.
    pub fn apply_filter(&mut self, text: &str) -> Result<(), String> {
        let selected = self.position(self.selected);
        self.displayed = match text.trim() {
            "" => None,
            text => Some(Displayed { filter: DisplayFilter::compile(text)?, positions: Vec::new(), filtered_to: 0 }),
        };
        while !self.filtered_all() && self.displayed.as_ref().is_some_and(|d| d.filtered_to < FILTERED_PER_STEP) {
            self.step();
        }
        self.selected = selected.and_then(|p| self.row_at_or_after(p)).unwrap_or(0);
        Ok(())
    }

    /// The first displayed row whose frame is at or after index position `position`.
    fn row_at_or_after(&self, position: usize) -> Option<usize> {
        match &self.displayed {
            Some(d) => Some(d.positions.partition_point(|&p| (p as usize) < position)),
            None => Some(position),
        }
    }

    /// Takes one key.
    pub fn key(&mut self, key: KeyEvent) {
        self.note = None;
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            self.quit = true;
        } else if self.prompt.is_some() {
            self.prompt_key(key);
        } else if self.help {
            self.help = false;
        } else if self.view != View::Packets {
            self.view_key(key);
        } else {
            self.browse_key(key);
        }
    }

    /// Takes a mouse event: the wheel scrolls the pane under the pointer, a click focuses the
    /// pane and selects the line under it.
    pub fn mouse(&mut self, event: MouseEvent) {
        let at = Position { x: event.column, y: event.row };
        let panes = self.drawn.get().panes;
        let Some(pane) = (0..3).find(|&i| panes[i].0.contains(at)) else { return };
        let (_, first_row, first_line) = panes[pane];
        let target = [Pane::List, Pane::Tree, Pane::Bytes][pane];
        let step = match event.kind {
            MouseEventKind::ScrollDown => WHEEL,
            MouseEventKind::ScrollUp => -WHEEL,
            MouseEventKind::Down(MouseButton::Left) if at.y >= first_row => {
                self.pane = target;
                self.select_line(target, first_line + usize::from(at.y - first_row));
                return;
            }
            _ => return,
        };
        let current = self.pane;
        self.pane = target;
        self.move_lines(step);
        self.pane = current;
    }

    /// Selects line `line` of `pane` (a row of the list or of the view shown there).
    fn select_line(&mut self, pane: Pane, line: usize) {
        match (pane, self.view) {
            (Pane::List, View::Packets) if line < self.displayed_len() => {
                self.selected = line;
                (self.tree_line, self.bytes_top) = (0, 0);
            }
            (Pane::List, View::Packets) => {}
            (Pane::List, _) => self.view_row = line.min(self.view_len().saturating_sub(1)),
            (Pane::Tree, _) => self.tree_line = line.min(self.tree_lines().len().saturating_sub(1)),
            (Pane::Bytes, _) => self.bytes_top = line.min(self.hex_lines().len().saturating_sub(1)),
        }
    }

    /// Opens a view of the report, once the analysis has one.
    fn open_view(&mut self, view: View) {
        match self.index.report() {
            Some(_) => (self.view, self.view_row, self.pane) = (view, 0, Pane::List),
            None => self.note = Some("the analysis is not finished: the views open once every frame is indexed".into()),
        }
    }

    /// The number of rows of the view shown.
    pub fn view_len(&self) -> usize {
        let Some(report) = self.index.report() else { return 0 };
        match self.view {
            View::Flows => report.roce.flows.len(),
            View::Findings => report.findings.len(),
            View::Pauses => report.roce.pfc.len() + report.roce.pause.len(),
            View::Ladder => self.ladder.as_ref().map_or(0, |l| l.frames.len()),
            View::Packets => 0,
        }
    }

    fn view_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Esc => self.view = View::Packets,
            KeyCode::Char('c') => self.open_view(View::Flows),
            KeyCode::Char('e') => self.open_view(View::Findings),
            KeyCode::Char('p') => self.open_view(View::Pauses),
            KeyCode::Char('l') if self.view == View::Flows => self.follow_selected_flow(),
            KeyCode::Char('?') => self.help = true,
            KeyCode::Enter => self.choose(),
            code => {
                if let Some(step) = step_of(code) {
                    self.view_row = moved(self.view_row, step, self.view_len());
                }
            }
        }
    }

    /// Enter in a view: a flow filters the list to it and its peer; a finding selects its
    /// first evidence frame.
    fn choose(&mut self) {
        let Some(report) = self.index.report() else { return };
        match self.view {
            View::Flows => {
                if let Some(f) = report.roce.flows_by_trouble().get(self.view_row) {
                    let filter = match f.peer {
                        Some(peer) => format!("rocescope.analysis.flow in {{{}, {peer}}}", f.id),
                        None => format!("rocescope.analysis.flow == {}", f.id),
                    };
                    let _ = self.apply_filter(&filter);
                }
            }
            View::Findings => {
                if let Some(&frame) = report.findings.get(self.view_row).and_then(|f| f.evidence.frames.first()) {
                    self.go_to(frame.get() as usize);
                }
            }
            View::Pauses => {
                if let Some(p) = report.roce.pfc.iter().chain(&report.roce.pause).nth(self.view_row) {
                    self.go_to(p.stats.first_storm_frame.unwrap_or(p.stats.first_frame).get() as usize);
                }
            }
            View::Ladder => {
                if let Some(&position) = self.ladder.as_ref().and_then(|l| l.frames.get(self.view_row)) {
                    self.go_to(position as usize + 1);
                }
            }
            View::Packets => return,
        }
        self.view = View::Packets;
    }

    /// Selects frame `number`, or the first displayed frame after it.
    fn go_to(&mut self, number: usize) {
        self.selected = self.row_at_or_after(number.saturating_sub(1)).unwrap_or(0);
        self.selected = self.selected.min(self.displayed_len().saturating_sub(1));
        (self.tree_line, self.bytes_top) = (0, 0);
    }

    fn browse_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('?') => self.help = true,
            KeyCode::Char('/') => self.prompt = Some(Prompt::Filter(self.filter_text().unwrap_or_default().into())),
            KeyCode::Char(':') => self.prompt = Some(Prompt::GoTo(String::new())),
            KeyCode::Char('c') => self.open_view(View::Flows),
            KeyCode::Char('e') => self.open_view(View::Findings),
            KeyCode::Char('p') => self.open_view(View::Pauses),
            KeyCode::Char('l') => self.follow_selected_frame(),
            KeyCode::Char('m') => self.toggle_mark(),
            KeyCode::Char('w') => self.prompt = Some(Prompt::Write("frames.pcapng".into())),
            KeyCode::Tab => self.pane = next_pane(self.pane),
            KeyCode::BackTab => self.pane = next_pane(next_pane(self.pane)),
            KeyCode::Enter | KeyCode::Char(' ') if self.pane == Pane::Tree => self.toggle_section(),
            KeyCode::Left => self.column = self.column.saturating_sub(SIDEWAYS),
            KeyCode::Right => self.column = (self.column + SIDEWAYS).min(MAX_COLUMN),
            code => self.move_by(code),
        }
    }

    /// A movement key, in the current pane.
    fn move_by(&mut self, code: KeyCode) {
        if let Some(step) = step_of(code) {
            self.move_lines(step);
        }
    }

    /// Moves the current pane's line by `step`.
    fn move_lines(&mut self, step: isize) {
        if self.pane == Pane::List && self.view != View::Packets {
            self.view_row = moved(self.view_row, step, self.view_len());
            return;
        }
        match self.pane {
            Pane::List => {
                self.selected = moved(self.selected, step, self.displayed_len());
                (self.tree_line, self.bytes_top) = (0, 0);
            }
            Pane::Tree => self.tree_line = moved(self.tree_line, step, self.tree_lines().len()),
            Pane::Bytes => self.bytes_top = moved(self.bytes_top, step, self.hex_lines().len()),
        }
    }

    fn prompt_key(&mut self, key: KeyEvent) {
        let Some(prompt) = &mut self.prompt else { return };
        let is_filter = matches!(prompt, Prompt::Filter(_));
        let text = match prompt {
            Prompt::Filter(text) | Prompt::GoTo(text) | Prompt::Write(text) => text,
        };
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => self.prompt = None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Tab if is_filter => complete_field(text),
            // as a shell's line: Ctrl-U clears it, Ctrl-W takes back its last word
            KeyCode::Char('u') if control => text.clear(),
            KeyCode::Char('w') if control => {
                let kept = text.trim_end().rfind(' ').map_or(0, |space| space + 1);
                text.truncate(kept);
            }
            KeyCode::Char(_) if control => {}
            KeyCode::Char(c) => text.push(c),
            KeyCode::Enter => self.submit(),
            _ => {}
        }
    }

    /// Enter on the bottom line: applies the filter (when it compiles) or goes to the frame.
    fn submit(&mut self) {
        match self.prompt.clone() {
            Some(Prompt::Filter(text)) => {
                // a filter that does not compile stays on the bottom line, with its error
                let applied = self.apply_filter(&text);
                if applied.is_ok() {
                    self.prompt = None;
                }
            }
            Some(Prompt::GoTo(text)) => {
                if let Ok(number) = text.trim().parse::<usize>() {
                    self.go_to(number);
                }
                self.prompt = None;
            }
            Some(Prompt::Write(path)) => {
                self.note = Some(self.write_frames(std::path::Path::new(path.trim())));
                self.prompt = None;
            }
            None => {}
        }
    }

    /// `l` in the list: follows the selected frame's flow.
    fn follow_selected_frame(&mut self) {
        let flow = self.position(self.selected).and_then(|p| self.index.entry(p)).and_then(|e| e.verdict.flow);
        match flow {
            Some(flow) => self.follow(flow),
            None => self.note = Some("the selected frame belongs to no flow".into()),
        }
    }

    /// `l` in the Flows view: follows the selected flow.
    fn follow_selected_flow(&mut self) {
        let flow = self.index.report().and_then(|r| r.roce.flows_by_trouble().get(self.view_row).map(|f| f.id));
        if let Some(flow) = flow {
            self.follow(flow);
        }
    }

    /// Opens the Follow-QP view of `flow` and its peer.
    fn follow(&mut self, flow: FlowId) {
        let Some(report) = self.index.report() else {
            self.note = Some("the analysis is not finished: the views open once every frame is indexed".into());
            return;
        };
        let peer = report.roce.flows.get(flow.index()).and_then(|f| f.peer);
        let frames = self.index.positions_where(|e| e.verdict.flow.is_some_and(|f| f == flow || Some(f) == peer));
        self.ladder = Some(Ladder { flow, peer, frames });
        (self.view, self.view_row, self.pane) = (View::Ladder, 0, Pane::List);
    }

    /// `m`: marks the selected frame, or unmarks it.
    fn toggle_mark(&mut self) {
        if let Some(position) = self.position(self.selected).map(|p| p as u32)
            && !self.marked.remove(&position)
        {
            self.marked.insert(position);
        }
    }

    /// Writes the marked frames, or else the displayed ones, into a pcapng file at `path`; what
    /// came of it, for the bottom line.
    fn write_frames(&self, path: &std::path::Path) -> String {
        let target = std::fs::canonicalize(path).ok();
        if target.is_some() && self.inputs.iter().any(|i| std::fs::canonicalize(i).ok() == target) {
            return format!("refusing to write over the input {}", path.display());
        }
        let positions: Vec<usize> = if self.marked.is_empty() {
            (0..self.displayed_len()).filter_map(|row| self.position(row)).collect()
        } else {
            self.marked.iter().map(|&p| p as usize).collect()
        };
        let frames: Vec<_> = positions.into_iter().filter_map(|p| self.index.entry(p)).map(|e| e.location).collect();
        match super::export::write_pcapng(path, &frames, &self.mappings) {
            Ok(n) => format!("wrote {n} frames to {}", path.display()),
            Err(e) => format!("cannot write {}: {e}", path.display()),
        }
    }

    /// Is the filter being typed valid? `Err` carries the compiler's message.
    pub fn prompt_check(&self) -> Option<Result<(), String>> {
        match &self.prompt {
            Some(Prompt::Filter(text)) if text.trim().is_empty() => Some(Ok(())),
            Some(Prompt::Filter(text)) => Some(DisplayFilter::compile(text).map(|_| ())),
            _ => None,
        }
    }

    /// The selected frame's decode tree as shown: each line with its text (headings marked
    /// `▾`, or `▸` when collapsed; the lines of collapsed sections are left out).
    fn shown_tree(&self) -> Vec<(String, TreeLine)> {
        let Some(position) = self.position(self.selected) else { return Vec::new() };
        let first_ts_ns = self.first_ts_ns();
        let time_of = |position: usize| self.with_frame(position, |_, packet| packet.ts_ns);
        let previous_ts_ns = position.checked_sub(1).and_then(time_of);
        let previous_shown_ts_ns = self.selected.checked_sub(1).and_then(|row| self.position(row)).and_then(time_of);
        let tree = self
            .with_frame(position, |entry, packet| {
                let frame = Frame {
                    number: position as u64 + 1,
                    packet,
                    first_ts_ns,
                    previous_ts_ns,
                    previous_shown_ts_ns,
                    verdict: Some(&entry.verdict),
                };
                tree::tree(&frame)
            })
            .unwrap_or_default();
        let mut lines = Vec::new();
        let mut hidden = false;
        for line in tree {
            let text = match line.kind {
                LineKind::Heading => {
                    hidden = self.collapsed.contains(&line.text);
                    format!("{} {}", if hidden { '▸' } else { '▾' }, line.text)
                }
                _ if hidden => continue,
                LineKind::Field(_) | LineKind::More => format!("      {}", line.text),
            };
            lines.push((text, line));
        }
        lines
    }

    /// The selected frame's decode tree, as shown.
    pub fn tree_lines(&self) -> Vec<String> {
        self.shown_tree().into_iter().map(|(text, _)| text).collect()
    }

    /// The bytes the decode's selected line stands for, to highlight: a section's layer, or
    /// where a field's value lies ([`fields::position`]).
    pub fn highlighted(&self) -> Option<std::ops::Range<usize>> {
        let (_, line) = self.shown_tree().into_iter().nth(self.tree_line)?;
        match line.kind {
            LineKind::Heading => Some(line.span),
            LineKind::More => None,
            LineKind::Field(field) => {
                let entry = self.index.entry(self.position(self.selected)?)?;
                let record = entry.location.record(&self.mappings);
                fields::position::field_bytes(&self.decoder, &record, field, line.layer, line.occurrence)
            }
        }
    }

    /// Enter on a section heading of the tree collapses or expands it.
    fn toggle_section(&mut self) {
        let lines = self.shown_tree();
        let upto = lines.get(..=self.tree_line.min(lines.len().saturating_sub(1))).unwrap_or_default();
        let heading = upto.iter().rev().find(|(_, l)| matches!(l.kind, LineKind::Heading));
        if let Some((_, heading)) = heading
            && !self.collapsed.remove(&heading.text)
        {
            self.collapsed.insert(heading.text.clone());
        }
    }

    /// The selected frame's bytes, as hex dump lines.
    pub fn hex_lines(&self) -> Vec<String> {
        let Some(position) = self.position(self.selected) else { return Vec::new() };
        let mut text = String::new();
        self.with_frame(position, |_, packet| crate::output::packet::hexdump::write_hexdump(&mut text, packet.data));
        text.lines().map(str::to_string).collect()
    }

    /// The status line, in Wireshark's form.
    pub fn status(&self) -> String {
        let total = self.index.len();
        let shown = self.displayed_len();
        let percent = if total == 0 { 100.0 } else { shown as f64 * 100.0 / total as f64 };
        let mut status = format!("Packets: {total} · Displayed: {shown} ({percent:.1}%) · {}", self.name);
        if let Some(position) = self.position(self.selected) {
            status.push_str(&format!(" · Frame {}", position + 1));
        }
        if let Some(damage) = self.index.damage().first() {
            status.push_str(&format!(" · {damage}"));
        }
        if !self.index.is_done() {
            match self.index.progress() {
                Some(part) => status.push_str(&format!(" · indexing {:.0}%", part * 100.0)),
                None => status.push_str(" · indexing"),
            }
        } else if !self.filtered_all() {
            status.push_str(" · filtering");
        }
        status
    }
}

/// The Follow-QP view: a flow, its peer, and their frames in capture order.
pub struct Ladder {
    pub flow: FlowId,
    pub peer: Option<FlowId>,
    pub frames: Vec<u32>,
}

/// How far a movement key moves: a line, a page, or to either end.
fn step_of(code: KeyCode) -> Option<isize> {
    const PAGE: isize = 20;
    Some(match code {
        KeyCode::Up | KeyCode::Char('k') => -1,
        KeyCode::Down | KeyCode::Char('j') => 1,
        KeyCode::PageUp => -PAGE,
        KeyCode::PageDown => PAGE,
        KeyCode::Home | KeyCode::Char('g') => isize::MIN / 2,
        KeyCode::End | KeyCode::Char('G') => isize::MAX / 2,
        _ => return None,
    })
}

/// `at` moved by `step` within `len` rows.
fn moved(at: usize, step: isize, len: usize) -> usize {
    at.saturating_add_signed(step).min(len.saturating_sub(1))
}

fn next_pane(pane: Pane) -> Pane {
    match pane {
        Pane::List => Pane::Tree,
        Pane::Tree => Pane::Bytes,
        Pane::Bytes => Pane::List,
    }
}

/// Completes the field name being typed at the end of `text` to the longest prefix every
/// registry name that starts with it shares.
fn complete_field(text: &mut String) {
    let start = text.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_')).map_or(0, |i| i + 1);
    let typed = text.get(start..).unwrap_or_default().to_string();
    if typed.is_empty() {
        return;
    }
    let mut names = fields::all().map(|f| f.name).filter(|n| n.starts_with(typed.as_str()));
    let Some(first) = names.next() else { return };
    let common = names.fold(first.to_string(), |common, name| {
        common.chars().zip(name.chars()).take_while(|(a, b)| a == b).map(|(a, _)| a).collect()
    });
    text.truncate(start);
    text.push_str(&common);
}
