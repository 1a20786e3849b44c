//! Drawing the browser: the packet list, the selected frame's decode tree and bytes, the status
//! line and the bottom line (a filter being typed, red while invalid, green once valid).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::app::{App, Drawn, Pane, Prompt, View};
use crate::analyze::finding::Severity;
use crate::analyze::id::FlowId;
use crate::analyze::roce::report::PauseReport;
use crate::decode::{DecodedFrame, FrameKind, IcrcStatus};
use crate::output::packet::{Clock, TimeFormat, hexdump, write_list_line, write_verdict_flag};
use crate::output::report::text::flows::{flow_header, flow_row};

/// The packet list's column titles, over the columns of `packets`.
const HEADER: &str = "    No.        Time          Source → Destination     Protocol  Length Info";

/// The keys, for the help overlay (docs/browse.md lists them too).
pub const KEYS: &[(&str, &str)] = &[
    ("↑ ↓  j k", "previous / next line of the pane"),
    ("PgUp PgDn", "a page up / down"),
    ("g G  Home End", "first / last"),
    ("Tab  Shift-Tab", "next / previous pane: list, decode, bytes"),
    ("Enter  Space", "in the decode: collapse or expand the section"),
    ("/", "display filter (Enter applies, Esc cancels, Tab completes a field name)"),
    ("m", "mark or unmark the selected frame"),
    ("w", "write the marked frames (or else the displayed ones) into a pcapng file"),
    ("c", "Flows: the QP flows, most troubled first (Enter filters the list to one and its peer)"),
    ("e", "Findings, Wireshark's Expert Info (Enter selects the first evidence frame)"),
    ("p", "PFC and PAUSE per source and priority (Enter selects the first storm frame)"),
    ("l", "Follow QP: the selected frame's flow (or, in Flows, the selected flow) and its peer as a ladder"),
    ("Esc", "from a view back to the packet list"),
    (":", "go to a frame number"),
    ("← →", "scroll the packet list sideways"),
    ("?", "this help"),
    ("wheel  click", "scroll the pane under the mouse; select the line clicked"),
    ("q  Ctrl-C", "quit"),
];

/// Draws the whole interface.
pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let [list, tree, bytes, status, bottom] = Layout::vertical([
        Constraint::Percentage(50),
        Constraint::Percentage(30),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(bottom_height(app, frame.area().width)),
    ])
    .areas(frame.area());
    let list_top = match app.view {
        View::Packets => draw_list(frame, app, list),
        View::Flows | View::Findings | View::Pauses => draw_view(frame, app, list),
        View::Ladder => draw_ladder(frame, app, list),
    };
    let tree_top = draw_lines(frame, " Decode ", &app.tree_lines(), app.tree_line, app.pane == Pane::Tree, tree);
    let bytes_top = draw_bytes(frame, app, bytes);
    // the list and the views have a border and a header row above their first line; the
    // decode and the bytes a border
    let panes = [(list, list.y + 2, list_top), (tree, tree.y + 1, tree_top), (bytes, bytes.y + 1, bytes_top)];
    app.drawn.set(Drawn { panes });
    frame.render_widget(Paragraph::new(app.status()).style(Style::new().add_modifier(Modifier::REVERSED)), status);
    frame.render_widget(bottom_line(app), bottom);
    if app.help {
        draw_help(frame);
    }
}

fn pane_block(title: &str, focused: bool) -> Block<'_> {
    let style = if focused { Style::new().fg(Color::Cyan) } else { Style::new() };
    Block::new().borders(Borders::TOP).title(title).border_style(style)
}

/// The packet list: the rows around the selected one, coloured like Wireshark's rules; the
/// first row shown.
fn draw_list(frame: &mut Frame<'_>, app: &App, area: Rect) -> usize {
    let rows = usize::from(area.height.saturating_sub(2));
    let top = app.selected.saturating_sub(rows.saturating_sub(1) / 2).min(app.displayed_len().saturating_sub(rows));
    let mut clock = Clock::new(TimeFormat::Relative);
    clock.start_at(app.first_ts_ns());
    let sideways = |text: &str| text.chars().skip(app.column).collect::<String>();
    let mut lines = vec![Line::styled(sideways(HEADER), Style::new().add_modifier(Modifier::BOLD))];
    for row in top..(top + rows).min(app.displayed_len()) {
        let Some(position) = app.position(row) else { break };
        let line = app.with_frame(position, |entry, packet| {
            let mut text = String::new();
            let mut scratch = [String::new(), String::new()];
            let _ = write_list_line(&mut text, &mut scratch, &mut clock, position as u64 + 1, packet);
            let _ = write_verdict_flag(&mut text, &entry.verdict);
            let mut style = colour(packet, &entry.verdict);
            if app.marked.contains(&(position as u32)) {
                style = Style::new().fg(Color::White).bg(Color::Black).add_modifier(Modifier::BOLD);
            }
            if row == app.selected {
                style = style.add_modifier(Modifier::REVERSED);
            }
            Line::styled(sideways(&text), style)
        });
        lines.extend(line);
    }
    let block = pane_block(" Packets ", app.pane == Pane::List);
    frame.render_widget(Paragraph::new(lines).block(block), area);
    top
}

/// The Flows, Findings or PFC view, from the analysis's report; the first row shown.
fn draw_view(frame: &mut Frame<'_>, app: &App, area: Rect) -> usize {
    let Some(report) = app.index.report() else { return 0 };
    let (title, header, rows): (&str, String, Vec<(String, Style)>) = match app.view {
        View::Flows => (
            " Flows, most troubled first (Enter: the list of a flow and its peer; Esc: back) ",
            flow_header(),
            report.roce.flows_by_trouble().into_iter().map(|f| (flow_row(f), Style::new())).collect(),
        ),
        View::Pauses => (
            " PFC and PAUSE, by source and priority (Enter: the first storm frame, or the first frame; Esc: back) ",
            format!(
                "{:<17} {:>8} {:>7} {:>6} {:>10} {:>11} {:>6} {:>11}",
                "source", "priority", "XOFF", "XON", "paused ms", "longest ms", "storms", "first frame"
            ),
            report.roce.pfc.iter().chain(&report.roce.pause).map(pause_row).collect(),
        ),
        View::Findings | View::Packets | View::Ladder => (
            " Findings (Enter: the first evidence frame; Esc: back) ",
            format!("{:<8} {:<28} message", "severity", "code"),
            report
                .findings
                .iter()
                .map(|f| (format!("{:<8} {:<28} {}", f.severity.name(), f.code, f.message), severity_style(f.severity)))
                .collect(),
        ),
    };
    let shown = usize::from(area.height.saturating_sub(2));
    let top = app.view_row.saturating_sub(shown.saturating_sub(1));
    let mut lines = vec![Line::styled(header, Style::new().add_modifier(Modifier::BOLD))];
    for (i, (text, style)) in rows.into_iter().enumerate().skip(top).take(shown) {
        let style = if i == app.view_row { style.add_modifier(Modifier::REVERSED) } else { style };
        lines.push(Line::styled(text, style));
    }
    frame.render_widget(Paragraph::new(lines).block(pane_block(title, true)), area);
    top
}

/// The Follow-QP view: the flow's frames going right, its peer's coming back, in time order;
/// the first row shown.
fn draw_ladder(frame: &mut Frame<'_>, app: &App, area: Rect) -> usize {
    let (Some(ladder), Some(report)) = (&app.ladder, app.index.report()) else { return 0 };
    let label =
        |id: Option<FlowId>| id.and_then(|i| report.roce.flows.get(i.index())).map_or("-".to_string(), |f| f.label());
    let title = format!(
        " Follow QP: {} ⇄ {} (Enter: the frame in the list; Esc: back) ",
        label(Some(ladder.flow)),
        label(ladder.peer)
    );
    let shown = usize::from(area.height.saturating_sub(2));
    let top = app.view_row.saturating_sub(shown.saturating_sub(1));
    let mut clock = Clock::new(TimeFormat::Relative);
    clock.start_at(app.first_ts_ns());
    let mut lines = vec![Line::styled(
        format!("{:>7} {:<12} {}", "frame", "time", "→ the flow · ← its peer"),
        Style::new().add_modifier(Modifier::BOLD),
    )];
    for (row, &position) in ladder.frames.iter().enumerate().skip(top).take(shown) {
        let line = app.with_frame(position as usize, |entry, packet| {
            let mut info = String::new();
            let _ = crate::output::packet::summary::write_info(&mut info, packet);
            let _ = write_verdict_flag(&mut info, &entry.verdict);
            let mut time = String::new();
            let _ = clock.write(&mut time, packet.ts_ns);
            let text = if entry.verdict.flow == Some(ladder.flow) {
                format!("{:>7} {time:<12} ──► {info}", position + 1)
            } else {
                format!("{:>7} {time:<12} {:>40} ◄── {info}", position + 1, "")
            };
            let style = colour(packet, &entry.verdict);
            Line::styled(text, if row == app.view_row { style.add_modifier(Modifier::REVERSED) } else { style })
        });
        lines.extend(line);
    }
    frame.render_widget(Paragraph::new(lines).block(pane_block(&title, true)), area);
    top
}

/// One row of the PFC view: a source and priority (or PAUSE), red when it stormed.
fn pause_row(p: &PauseReport) -> (String, Style) {
    let priority = p.priority.map_or("PAUSE".to_string(), |q| q.to_string());
    let s = &p.stats;
    let ms = |ns: u64| ns as f64 / 1e6;
    let text = format!(
        "{:<17} {priority:>8} {:>7} {:>6} {:>10.3} {:>11.3} {:>6} {:>11}",
        p.src_mac,
        s.xoff,
        s.xon,
        ms(s.paused_ns),
        ms(s.longest_pause_ns),
        s.storm_periods,
        s.first_frame
    );
    (text, if s.storm { Style::new().fg(Color::Red) } else { Style::new() })
}

fn severity_style(severity: Severity) -> Style {
    match severity {
        Severity::Error => Style::new().fg(Color::Red),
        Severity::Warning => Style::new().fg(Color::Yellow),
        Severity::Info => Style::new().fg(Color::Cyan),
    }
}

/// The colouring rules, in Wireshark's spirit: errors, then the analysis's flags, then
/// congestion and pause frames.
fn colour(packet: &DecodedFrame<'_>, verdict: &crate::analyze::Verdict) -> Style {
    use crate::analyze::seq_class::SeqClass;
    let roce = packet.roce();
    let ecn_ce = packet.net.and_then(|n| n.ecn()) == Some(3);
    if packet.kind() == FrameKind::Malformed || roce.is_some_and(|r| r.icrc == IcrcStatus::Bad) {
        Style::new().fg(Color::Yellow).bg(Color::Red)
    } else if matches!(verdict.seq, Some(SeqClass::Retransmission | SeqClass::Gap { .. })) || verdict.mirror_duplicate {
        Style::new().fg(Color::Red).bg(Color::Black)
    } else if matches!(verdict.seq, Some(SeqClass::LateArrival)) {
        Style::new().fg(Color::Yellow).bg(Color::Black)
    } else if roce.is_some_and(|r| r.ib.bth.opcode() == rocescope_parsers::opcode::CNP) {
        Style::new().fg(Color::Black).bg(Color::LightBlue)
    } else if ecn_ce {
        Style::new().fg(Color::Black).bg(Color::LightRed)
    } else if matches!(packet.kind(), FrameKind::Pfc | FrameKind::Pause) {
        Style::new().fg(Color::Black).bg(Color::LightYellow)
    } else {
        Style::new()
    }
}

/// A pane of text lines scrolled so that line `at` shows, highlighted when the pane has focus;
/// the first line shown.
fn draw_lines(frame: &mut Frame<'_>, title: &str, lines: &[String], at: usize, focused: bool, area: Rect) -> usize {
    let lines = lines.iter().map(|l| Line::raw(l.as_str())).collect();
    draw_styled(frame, title, lines, at, focused, area)
}

/// Draws `lines` in a pane: the rows up to the one at `at` (the cursor, reversed when the pane
/// is focused); the first row shown.
fn draw_styled(
    frame: &mut Frame<'_>,
    title: &str,
    lines: Vec<Line<'_>>,
    at: usize,
    focused: bool,
    area: Rect,
) -> usize {
    let rows = usize::from(area.height.saturating_sub(1));
    let top = at.saturating_sub(rows.saturating_sub(1));
    let shown: Vec<Line<'_>> = lines
        .into_iter()
        .enumerate()
        .skip(top)
        .take(rows)
        .map(|(i, l)| if focused && i == at { l.patch_style(Modifier::REVERSED) } else { l })
        .collect();
    frame.render_widget(Paragraph::new(shown).block(pane_block(title, focused)), area);
    top
}

/// How the bytes of the decode's selected line are shown in the bytes pane.
const HIGHLIGHT: Style = Style::new().fg(Color::White).bg(Color::Blue);

/// The bytes pane: the hex dump with the bytes of the decode's selected line highlighted
/// (scrolled to them unless the pane has the focus); the first row shown.
fn draw_bytes(frame: &mut Frame<'_>, app: &App, area: Rect) -> usize {
    let focused = app.pane == Pane::Bytes;
    let highlight = app.highlighted().unwrap_or(0..0);
    let lines: Vec<Line<'_>> =
        app.hex_lines().into_iter().enumerate().map(|(row, text)| highlighted_row(text, row, &highlight)).collect();
    let rows = usize::from(area.height.saturating_sub(1)).max(1);
    let at = match (focused, highlight.is_empty()) {
        (false, false) => ((highlight.end - 1) / 16).min(highlight.start / 16 + rows - 1),
        _ => app.bytes_top,
    };
    draw_styled(frame, " Bytes ", lines, at, focused, area)
}

/// A hex dump row (of the frame's bytes from `row × 16`) with the bytes in `highlight`
/// highlighted, in the hex and the character columns.
fn highlighted_row(text: String, row: usize, highlight: &std::ops::Range<usize>) -> Line<'static> {
    let mut lit = vec![false; text.len()];
    for i in (0..16).filter(|i| highlight.contains(&(row * 16 + i))) {
        let hex = hexdump::hex_column(i);
        lit.get_mut(hex..hex + 2).into_iter().flatten().for_each(|c| *c = true);
        if let Some(c) = lit.get_mut(hexdump::char_column(i)) {
            *c = true;
        }
    }
    let mut spans = Vec::new();
    let mut start = 0;
    for end in 1..=text.len() {
        if end == text.len() || lit[end] != lit[start] {
            let style = if lit[start] { HIGHLIGHT } else { Style::new() };
            spans.push(Span::styled(text.get(start..end).unwrap_or_default().to_string(), style));
            start = end;
        }
    }
    Line::from(spans)
}

/// The bottom lines: one, or as many as a filter's error needs to show whole (its "did you
/// mean" included) on a terminal `width` columns wide, three at most.
fn bottom_height(app: &App, width: u16) -> u16 {
    let Some(Err(message)) = app.prompt_check() else { return 1 };
    let text = match &app.prompt {
        Some(Prompt::Filter(text)) => text.chars().count(),
        _ => 0,
    };
    let columns = "Filter: ".len() + text + 2 + message.chars().count();
    u16::try_from(columns.div_ceil(usize::from(width.max(1)))).unwrap_or(3).clamp(1, 3)
}

/// The bottom line: what is being typed, or the applied filter and a hint.
fn bottom_line(app: &App) -> Paragraph<'static> {
    match &app.prompt {
        Some(Prompt::Filter(text)) => {
            let (style, note) = match app.prompt_check() {
                Some(Err(message)) => (Style::new().fg(Color::White).bg(Color::Red), format!("  {message}")),
                _ => (Style::new().fg(Color::Black).bg(Color::Green), String::new()),
            };
            Paragraph::new(Line::from(vec![Span::raw("Filter: "), Span::styled(format!("{text}{note}"), style)]))
                .wrap(Wrap { trim: false })
        }
        Some(Prompt::GoTo(text)) => Paragraph::new(format!("Go to frame: {text}")),
        Some(Prompt::Write(text)) => {
            let which = if app.marked.is_empty() { "the displayed frames" } else { "the marked frames" };
            Paragraph::new(format!("Write {which} to (pcapng): {text}"))
        }
        None => {
            let applied = app.filter_text().map_or(String::new(), |f| format!("Filter: {f}   "));
            let hint = app
                .note
                .clone()
                .unwrap_or_else(|| "? keys  / filter  : go to  c flows  e findings  p PFC  q quit".into());
            Paragraph::new(format!("{applied}{hint}"))
        }
    }
}

/// The keys' column of the help, and the space before their descriptions.
const KEY_COLUMN: usize = 18;

/// The help over the middle of the screen, as wide as its longest line where the screen is,
/// else with the descriptions wrapped under themselves.
fn draw_help(frame: &mut Frame<'_>) {
    let area = frame.area();
    let longest = KEYS.iter().map(|(_, what)| KEY_COLUMN + what.chars().count()).max().unwrap_or(0);
    let width = area.width.min(u16::try_from(longest + 2).unwrap_or(u16::MAX));
    let lines = help_lines(usize::from(width.saturating_sub(2)));
    let height = area.height.min(u16::try_from(lines.len() + 2).unwrap_or(u16::MAX));
    let popup = Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height };
    frame.render_widget(Clear, popup);
    let lines: Vec<Line<'_>> = lines.into_iter().map(Line::from).collect();
    frame.render_widget(Paragraph::new(lines).block(Block::bordered().title(" Keys (any key closes) ")), popup);
}

/// The help's lines at `width` columns: each key, its description wrapped at word boundaries.
pub fn help_lines(width: usize) -> Vec<String> {
    let room = width.saturating_sub(KEY_COLUMN).max(16);
    let mut lines = Vec::new();
    for (keys, what) in KEYS {
        let mut line = format!(" {keys:<16} ");
        let mut used = 0;
        for word in what.split(' ') {
            let len = word.chars().count();
            if used > 0 && used + 1 + len > room {
                lines.push(std::mem::replace(&mut line, " ".repeat(KEY_COLUMN)));
                used = 0;
            }
            if used > 0 {
                line.push(' ');
                used += 1;
            }
            line.push_str(word);
            used += len;
        }
        lines.push(line);
    }
    lines
}
