//! The terminal browser, driven headless: keys into its state, the screen drawn on ratatui's
//! test backend, and what the panes and the status line say held to `packets`.
#![cfg(feature = "browse")]

use crate::common;

use std::path::PathBuf;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use rocescope::browse::{self, app::App, view};
use rocescope_engine::analyze::Config;
use rocescope_engine::decode::Decoder;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

/// The browser over `file`, once it is indexed.
fn opened(file: &PathBuf) -> App {
    let (app, index) = browse::open(std::slice::from_ref(file), Decoder::default(), Config::default()).expect("opens");
    while !index.is_done() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    app
}

/// The interface drawn on a 150 × 50 test terminal, once every frame is filtered.
fn drawn(app: &mut App) -> ratatui::buffer::Buffer {
    drawn_on(app, 150, 50)
}

/// The interface drawn on a test terminal of `width` × `height`, once every frame is filtered.
fn drawn_on(app: &mut App, width: u16, height: u16) -> ratatui::buffer::Buffer {
    while !app.filtered_all() {
        app.step();
    }
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal.draw(|frame| view::draw(frame, app)).expect("draws");
    terminal.backend().buffer().clone()
}

/// The screen as text, one line per row.
fn screen(app: &mut App) -> String {
    text_of(&drawn(app))
}

/// A drawn screen as text, one line per row.
fn text_of(buffer: &ratatui::buffer::Buffer) -> String {
    let width = usize::from(buffer.area.width);
    let symbols: Vec<&str> = buffer.content.iter().map(|c| c.symbol()).collect();
    symbols.chunks(width).map(|row| row.concat().trim_end().to_string()).collect::<Vec<_>>().join("\n")
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
}

fn key(app: &mut App, code: KeyCode) {
    app.key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// The status line (the second row from the bottom).
fn status(screen: &str) -> String {
    screen.lines().rev().nth(1).unwrap_or_default().to_string()
}

#[test]
fn the_first_screen_lists_what_packets_lists_and_decodes_the_selected_frame() {
    let file = sample("loss_go_back_n.pcap");
    let listed = common::run_ok(&["packets", file.to_str().unwrap()]);
    let mut app = opened(&file);
    let shown = screen(&mut app);
    let frames = listed.lines().count();
    assert!(
        status(&shown).starts_with(&format!("Packets: {frames} · Displayed: {frames} (100.0%) · ")),
        "{}",
        status(&shown)
    );
    assert!(status(&shown).contains("Frame 1"));
    // the list's rows are the lines `packets` prints, the analysis's flags included
    for line in listed.lines().take(10) {
        assert!(shown.lines().any(|row| row.trim_end() == line.trim_end()), "missing row {line:?}\n{shown}");
    }
    // the decode pane shows the start of the frame's tree, which holds every registry field
    assert!(shown.contains("Frame Number: 1 [frame.number]"), "{shown}");
    let tree = app.tree_lines();
    assert!(tree.iter().any(|l| l.contains("Packet Sequence Number: 16777200 [infiniband.bth.psn]")), "{tree:#?}");
    assert!(shown.contains("0000  "), "the bytes pane\n{shown}");
}

#[test]
fn a_filter_is_red_while_invalid_and_displays_what_packets_keeps_once_applied() {
    let file = sample("loss_go_back_n.pcap");
    let filter = "rocescope.analysis.retransmission";
    let kept = common::run_ok(&["packets", "-Y", filter, file.to_str().unwrap()]).lines().count();
    assert!(kept > 0);
    let mut app = opened(&file);
    press(&mut app, "/infiniband.bth.psn ==");
    let shown = screen(&mut app);
    assert!(
        shown.lines().last().is_some_and(|l| l.starts_with("Filter: infiniband.bth.psn ==") && l.contains("column"))
    );
    assert!(app.prompt_check().is_some_and(|c| c.is_err()));
    for _ in 0.."infiniband.bth.psn ==".len() {
        key(&mut app, KeyCode::Backspace);
    }
    press(&mut app, "rocescope.analysis.retr");
    key(&mut app, KeyCode::Tab);
    assert!(app.prompt_check().is_some_and(|c| c.is_ok()), "Tab completed the field name");
    key(&mut app, KeyCode::Enter);
    let shown = screen(&mut app);
    assert!(status(&shown).contains(&format!("Displayed: {kept} (")), "{}", status(&shown));
    assert!(shown.lines().last().is_some_and(|l| l.starts_with(&format!("Filter: {filter}"))));
    assert!(shown.contains("[retransmission]"));
}

#[test]
fn a_filters_error_shows_whole_on_80_columns_and_ctrl_u_and_ctrl_w_edit_the_line() {
    let mut app = opened(&sample("loss_go_back_n.pcap"));
    let control = |app: &mut App, c: char| app.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    press(&mut app, "/ip.src == 10.0.0.1 && junk");
    control(&mut app, 'w');
    assert!(app.prompt_check().is_some_and(|c| c.is_err()), "`&&` is left, with nothing after it");
    control(&mut app, 'u');
    assert_eq!(app.prompt_check(), Some(Ok(())), "Ctrl-U cleared the line, and inserted no `u`");
    press(&mut app, "infiniband.bth.pns == 5");
    let Some(Err(message)) = app.prompt_check() else { panic!("a misspelled field") };
    assert!(message.contains("did you mean infiniband.bth.psn"), "{message}");
    let shown = text_of(&drawn_on(&mut app, 80, 30));
    let bottom: String = shown.lines().skip_while(|l| !l.starts_with("Filter: ")).collect::<Vec<_>>().concat();
    assert!(bottom.contains("infiniband.bth.psn"), "the suggestion is on screen:\n{shown}");
}

#[test]
fn a_filter_nested_too_deep_is_refused_in_the_bar_and_the_browser_stays_up() {
    let file = sample("loss_go_back_n.pcap");
    let mut app = opened(&file);
    let deep = format!("{}eth{}", "(".repeat(10_000), ")".repeat(10_000));
    let refused = app.apply_filter(&deep).expect_err("refused");
    assert!(refused.ends_with("column 129: parentheses and \"not\" nest more than 128 deep, rocescope's limit"));
    press(&mut app, &format!("/{}", "(".repeat(5_000)));
    assert!(app.prompt_check().is_some_and(|c| c.is_err_and(|e| e.contains("column 129"))));
    key(&mut app, KeyCode::Esc);
    press(&mut app, "/infiniband.bth.opcode == 17");
    key(&mut app, KeyCode::Enter);
    let shown = screen(&mut app);
    assert!(status(&shown).contains("Displayed: "), "{}", status(&shown));
    assert!(shown.lines().last().is_some_and(|l| l.starts_with("Filter: infiniband.bth.opcode == 17")));
}

#[test]
fn keys_move_through_the_frames_the_panes_and_the_decode_tree() {
    let file = sample("loss_go_back_n.pcap");
    let mut app = opened(&file);
    let frames = app.displayed_len();
    press(&mut app, "G");
    assert!(status(&screen(&mut app)).contains(&format!("Frame {frames}")));
    press(&mut app, "gjj");
    assert!(status(&screen(&mut app)).contains("Frame 3"));
    press(&mut app, ":5");
    key(&mut app, KeyCode::Enter);
    assert!(status(&screen(&mut app)).contains("Frame 5"));
    // the decode tree: its first section collapses and expands
    key(&mut app, KeyCode::Tab);
    let open = app.tree_lines();
    key(&mut app, KeyCode::Enter);
    let closed = app.tree_lines();
    assert!(closed.len() < open.len() && closed[0].starts_with('▸') && open[0].starts_with('▾'));
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.tree_lines(), open);
    press(&mut app, "?");
    assert!(screen(&mut app).contains("Keys (any key closes)"));
    press(&mut app, "x");
    assert!(!app.help);
    press(&mut app, "q");
    assert!(app.quit);
}

#[test]
fn the_flows_and_findings_views_lead_into_the_packet_list() {
    let file = sample("loss_go_back_n.pcap");
    let name = file.to_str().unwrap();
    let summary = common::run_ok(&["analyze", name]);
    let report: serde_json::Value = serde_json::from_str(&common::run_ok(&["analyze", "--json", name])).unwrap();
    let mut app = opened(&file);
    press(&mut app, "c");
    let shown = screen(&mut app);
    assert!(shown.contains("Flows, most troubled first"), "{shown}");
    // the rows are the summary's flows table, most troubled first
    let rows: Vec<&str> = summary.lines().skip_while(|l| !l.starts_with("Flows (")).skip(2).take(2).collect();
    for row in &rows {
        assert!(shown.lines().any(|l| l.trim() == row.trim()), "missing {row:?}\n{shown}");
    }
    // Enter: the list of the first flow and its peer
    let id: u64 = rows[0].split_whitespace().next().unwrap().parse().unwrap();
    let peer = report["flows"][id as usize]["peer"].as_u64().expect("a paired flow");
    let filter = format!("rocescope.analysis.flow in {{{id}, {peer}}}");
    let kept = common::run_ok(&["packets", "-Y", &filter, name]).lines().count();
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.filter_text(), Some(filter.as_str()));
    assert!(status(&screen(&mut app)).contains(&format!("Displayed: {kept} (")));
    // the findings, and Enter on the first: its first evidence frame
    press(&mut app, "/");
    key(&mut app, KeyCode::Backspace);
    for _ in 0..filter.len() {
        key(&mut app, KeyCode::Backspace);
    }
    key(&mut app, KeyCode::Enter);
    press(&mut app, "e");
    let shown = screen(&mut app);
    let first = &report["findings"][0];
    assert!(shown.contains(first["code"].as_str().unwrap()), "{shown}");
    key(&mut app, KeyCode::Enter);
    let frame = first["evidence"]["frames"][0].as_u64().unwrap();
    assert!(status(&screen(&mut app)).contains(&format!("Frame {frame}")));
    press(&mut app, "c");
    key(&mut app, KeyCode::Esc);
    assert!(status(&screen(&mut app)).contains(&format!("Frame {frame}")), "Esc returns to the list as it was");
}

/// `w`, the proposed file name replaced by `path`, and Enter.
fn write_to(app: &mut App, path: &std::path::Path) {
    press(app, "w");
    for _ in 0.."frames.pcapng".len() {
        key(app, KeyCode::Backspace);
    }
    press(app, path.to_str().unwrap());
    key(app, KeyCode::Enter);
}

#[test]
fn marked_or_displayed_frames_are_written_into_a_pcapng_file_unchanged() {
    let file = sample("loss_go_back_n.pcap");
    let dir = tempfile::tempdir().unwrap();
    let mut app = opened(&file);
    press(&mut app, "jmjjm");
    let marked = dir.path().join("marked.pcapng");
    write_to(&mut app, &marked);
    assert!(screen(&mut app).contains("wrote 2 frames to"));
    let hex = |path: &std::path::Path, filter: &str| {
        let out = common::run_ok(&["packets", "-x", "-Y", filter, path.to_str().unwrap()]);
        out.lines().filter(|l| l.starts_with("00")).map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(hex(&marked, "frame.number >= 1"), hex(&file, "frame.number in {2, 4}"));
    // none marked: the displayed frames
    press(&mut app, "m"); // frame 4, selected still: unmarked
    press(&mut app, "kkm"); // and frame 2
    assert!(app.marked.is_empty());
    press(&mut app, "/rocescope.analysis.retransmission");
    key(&mut app, KeyCode::Enter);
    let displayed = dir.path().join("displayed.pcapng");
    write_to(&mut app, &displayed);
    assert_eq!(hex(&displayed, "frame.number >= 1"), hex(&file, "rocescope.analysis.retransmission"));
    // never over an input
    write_to(&mut app, &file);
    assert!(screen(&mut app).contains("refusing to write over the input"));
}

#[test]
fn the_pfc_view_lists_sources_and_priorities_and_leads_to_the_storm() {
    let file = sample("pfc_storm.pcap");
    let report: serde_json::Value =
        serde_json::from_str(&common::run_ok(&["analyze", "--json", file.to_str().unwrap()])).unwrap();
    let mut app = opened(&file);
    press(&mut app, "p");
    let shown = screen(&mut app);
    let first = &report["pfc"][0];
    let number = |key: &str| first[key].as_u64().unwrap();
    let row = format!("{:<17} {:>8} {:>7}", first["src_mac"].as_str().unwrap(), number("priority"), number("xoff"));
    assert!(shown.contains(&row), "{row:?}\n{shown}");
    key(&mut app, KeyCode::Enter);
    let frame = first["first_storm_frame"].as_u64().or(first["first_frame"].as_u64()).unwrap();
    assert!(status(&screen(&mut app)).contains(&format!("Frame {frame}")));
}

#[test]
fn follow_qp_shows_a_flow_and_its_peer_as_a_ladder() {
    let file = sample("loss_go_back_n.pcap");
    let name = file.to_str().unwrap();
    let report: serde_json::Value = serde_json::from_str(&common::run_ok(&["analyze", "--json", name])).unwrap();
    let mut app = opened(&file);
    press(&mut app, "l"); // the first frame's flow
    let flow = report["flows"].as_array().unwrap().iter().find(|f| f["first_frame"] == 1).unwrap();
    let (id, peer) = (flow["id"].as_u64().unwrap(), flow["peer"].as_u64().unwrap());
    let kept = common::run_ok(&["packets", "-Y", &format!("rocescope.analysis.flow in {{{id}, {peer}}}"), name]);
    let frames = app.ladder.as_ref().expect("the ladder").frames.clone();
    assert_eq!(frames.len(), kept.lines().count());
    let shown = screen(&mut app);
    assert!(shown.contains("Follow QP: "), "{shown}");
    assert!(shown.lines().any(|l| l.contains(" ──► ") && l.contains("RDMA WRITE")), "{shown}");
    assert!(shown.lines().any(|l| l.contains(" ◄── ") && l.contains("ACK")), "{shown}");
    // the peer's NAK, in its place in time, and Enter: that frame in the list
    let nak: usize = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "NAK_PSN_SEQUENCE")
        .and_then(|f| f["evidence"]["frames"][0].as_u64())
        .unwrap() as usize;
    let row = frames.iter().position(|&p| p as usize + 1 == nak).unwrap();
    for _ in 0..row {
        key(&mut app, KeyCode::Down);
    }
    assert!(screen(&mut app).lines().any(|l| l.trim_start().starts_with(&format!("{nak} ")) && l.contains("◄── NAK")));
    key(&mut app, KeyCode::Enter);
    assert!(status(&screen(&mut app)).contains(&format!("Frame {nak}")));
}

/// The cells of the bytes pane drawn highlighted, as (frame byte, hex digits or character).
fn highlighted_cells(app: &mut App) -> Vec<(usize, &'static str)> {
    use rocescope::output::packet::hexdump::{char_column, hex_column};
    let buffer = drawn(app);
    let width = usize::from(buffer.area.width);
    let mut cells = Vec::new();
    for (y, row) in buffer.content.chunks(width).enumerate() {
        let text: String = row.iter().map(|c| c.symbol()).collect();
        let Some(offset) = text.get(..4).and_then(|o| usize::from_str_radix(o, 16).ok()) else { continue };
        if text.get(4..6).is_none_or(|gap| gap != "  ") {
            continue;
        }
        for i in 0..16 {
            let lit = |x: usize| buffer.content[y * width + x].bg == ratatui::style::Color::Blue;
            if lit(hex_column(i)) && lit(hex_column(i) + 1) {
                cells.push((offset + i, "hex"));
            }
            if lit(char_column(i)) {
                cells.push((offset + i, "char"));
            }
        }
    }
    cells
}

/// Moves the decode's cursor to the first line containing `text`.
fn tree_cursor_to(app: &mut App, text: &str) {
    app.tree_line = app.tree_lines().iter().position(|l| l.contains(text)).expect("the line is in the tree");
}

#[test]
fn the_bytes_of_the_selected_field_or_section_are_highlighted() {
    let mut app = opened(&sample("loss_go_back_n.pcap"));
    key(&mut app, KeyCode::Tab);
    let both = |bytes: std::ops::Range<usize>| bytes.flat_map(|b| [(b, "char"), (b, "hex")]).collect::<Vec<_>>();
    // Ethernet 0..14, IPv4 14..34, UDP 34..42, the BTH from 42: its PSN is bytes 9..12
    tree_cursor_to(&mut app, "[infiniband.bth.psn]");
    assert_eq!(sorted(highlighted_cells(&mut app)), both(51..54));
    tree_cursor_to(&mut app, "User Datagram Protocol");
    assert_eq!(sorted(highlighted_cells(&mut app)), both(34..42));
    tree_cursor_to(&mut app, "[ip.src]");
    assert_eq!(sorted(highlighted_cells(&mut app)), both(26..30));
    // a bit field takes its container: the solicited-event bit, the BTH's second byte
    tree_cursor_to(&mut app, "[infiniband.bth.se]");
    assert_eq!(sorted(highlighted_cells(&mut app)), both(43..44));
    // the frame's own fields are of the record
    tree_cursor_to(&mut app, "[frame.number]");
    assert!(highlighted_cells(&mut app).is_empty());
}

fn sorted(mut cells: Vec<(usize, &'static str)>) -> Vec<(usize, &'static str)> {
    cells.sort();
    cells
}

#[test]
fn the_wheel_scrolls_the_pane_under_the_mouse_and_a_click_selects_a_line() {
    let file = sample("loss_go_back_n.pcap");
    let mut app = opened(&file);
    let mouse = |app: &mut App, kind, column, row| {
        app.mouse(MouseEvent { kind, column, row, modifiers: KeyModifiers::NONE });
    };
    let shown = screen(&mut app);
    // a click on the row that shows frame 7 selects it
    let row = shown.lines().position(|l| l.trim_start().starts_with("7 0.")).unwrap() as u16;
    mouse(&mut app, MouseEventKind::Down(MouseButton::Left), 10, row);
    assert!(status(&screen(&mut app)).contains("Frame 7"));
    mouse(&mut app, MouseEventKind::ScrollDown, 10, row);
    assert!(status(&screen(&mut app)).contains("Frame 10"), "the wheel moves three frames");
    // over the decode: it scrolls there, and the list keeps its frame and its focus
    let decode = shown.lines().position(|l| l.starts_with(" Decode ")).unwrap() as u16;
    mouse(&mut app, MouseEventKind::ScrollDown, 10, decode + 2);
    assert_eq!((app.tree_line, app.pane), (3, rocescope::browse::app::Pane::List));
    mouse(&mut app, MouseEventKind::Down(MouseButton::Left), 10, decode + 2);
    assert_eq!((app.tree_line, app.pane), (1, rocescope::browse::app::Pane::Tree));
    assert!(status(&screen(&mut app)).contains("Frame 10"));
}

/// A tmux session running `command` in a 150×45 terminal, read by polling its screen.
struct Tmux {
    session: String,
}

impl Tmux {
    /// `None` (with a note) where tmux is not installed.
    fn start(command: &str) -> Option<Tmux> {
        if std::process::Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("SKIPPED: tmux is not installed");
            return None;
        }
        static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmux = Tmux { session: format!("rocescope-browse-{}-{n}", std::process::id()) };
        tmux.run(&["new-session", "-d", "-s", &tmux.session.clone(), "-x", "150", "-y", "45", command]);
        Some(tmux)
    }

    fn run(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("tmux").args(args).output().expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// The screen once `what` holds of it (or after five seconds).
    fn until(&self, what: &dyn Fn(&str) -> bool) -> String {
        for _ in 0..200 {
            let shown = self.run(&["capture-pane", "-p", "-t", &self.session]);
            if what(&shown) {
                return shown;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        self.run(&["capture-pane", "-p", "-t", &self.session])
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.send(&["q"]);
        self.run(&["kill-session", "-t", &self.session]);
    }
}

/// The real binary in a terminal (tmux): the first screen, a filter typed, the status line and
/// the selected frame's decode read from the screen.
#[test]
fn in_a_terminal_a_typed_filter_shows_its_frames_and_their_decode() {
    let file = sample("bidirectional_read_write.pcap");
    let Some(tmux) = Tmux::start(&format!("{} browse {}", env!("CARGO_BIN_EXE_rocescope"), file.display())) else {
        return;
    };
    let filter = "infiniband.bth.opcode == 12";
    let kept = common::run_ok(&["packets", "-Y", filter, file.to_str().unwrap()]).lines().count();
    let first = tmux.until(&|s| s.contains("Packets: ") && !s.contains("indexing"));
    tmux.send(&["/", filter, "Enter"]);
    let filtered = tmux.until(&|s| s.contains(&format!("Displayed: {kept} (")));
    assert!(first.contains("Displayed: ") && first.contains("Frame 1"), "{first}");
    assert!(filtered.contains(&format!("Displayed: {kept} (")), "{filtered}");
    let first_kept =
        common::run_ok(&["packets", "-Y", filter, "-T", "fields", "-e", "frame.number", file.to_str().unwrap()]);
    let number = first_kept.lines().next().unwrap_or_default().trim().to_string();
    assert!(filtered.contains("RDMA READ Request"), "{filtered}");
    assert!(
        filtered.contains(&format!("Frame Number: {number} [frame.number]")),
        "the decode of frame {number}\n{filtered}"
    );
}

/// A compressed capture is browsed as the plain one is: its frames kept in the spool.
#[test]
fn a_compressed_capture_is_browsed_like_the_plain_one() {
    use std::io::Write;
    let file = sample("loss_go_back_n.pcap");
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("loss_go_back_n.pcap.gz");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    enc.write_all(&std::fs::read(&file).unwrap()).unwrap();
    enc.finish().unwrap();
    let (mut plain, mut compressed) = (opened(&file), opened(&gz));
    press(&mut plain, "GkKk");
    press(&mut compressed, "GkKk");
    let (plain_screen, compressed_screen) = (screen(&mut plain), screen(&mut compressed));
    assert_eq!(plain_screen.replace(&file.display().to_string(), &gz.display().to_string()), compressed_screen);
    assert!(status(&compressed_screen).contains("Frame "), "{compressed_screen}");
    assert_eq!(plain.tree_lines(), compressed.tree_lines());
    assert_eq!(plain.hex_lines(), compressed.hex_lines());
}

/// Piped input: the frames read from standard input, the keys from the terminal.
#[test]
fn piped_input_is_browsed_with_keys_from_the_terminal() {
    let file = sample("loss_go_back_n.pcap");
    let frames = common::run_ok(&["packets", file.to_str().unwrap()]).lines().count();
    let command = format!("cat {} | {} browse -", file.display(), env!("CARGO_BIN_EXE_rocescope"));
    let Some(tmux) = Tmux::start(&command) else { return };
    let first = tmux.until(&|s| s.contains("Packets: ") && !s.contains("indexing"));
    assert!(first.contains(&format!("Packets: {frames} · Displayed: {frames} (100.0%)")), "{first}");
    tmux.send(&["G"]);
    let last = tmux.until(&|s| s.contains(&format!("Frame {frames}")));
    assert!(last.contains(&format!("Frame Number: {frames} [frame.number]")), "{last}");
}

/// An 80-column terminal cuts the packet list's Info column; → brings it into view, ← back.
#[test]
fn the_packet_list_scrolls_sideways() {
    let mut app = opened(&sample("rc_write_healthy.pcap"));
    let list = common::run_ok(&["packets", "-c", "4", sample("rc_write_healthy.pcap").to_str().unwrap()]);
    let info = list.lines().last().and_then(|l| l.split("RoCEv2").nth(1)).expect("an Info column");
    let info = info.trim().to_string();
    let narrow = text_of(&drawn_on(&mut app, 80, 24));
    assert!(!narrow.contains(&info), "{narrow}");
    for _ in 0..6 {
        key(&mut app, KeyCode::Right);
    }
    let scrolled = text_of(&drawn_on(&mut app, 80, 24));
    assert!(scrolled.contains(&info), "{info:?} in\n{scrolled}");
    assert_eq!(app.column, 48);
    for _ in 0..7 {
        key(&mut app, KeyCode::Left);
    }
    assert_eq!(app.column, 0);
    assert_eq!(text_of(&drawn_on(&mut app, 80, 24)), narrow);
}

/// The help shows every key with its whole description: on one line where the screen is wide
/// enough, wrapped under itself where it is not.
#[test]
fn the_help_fits_the_screen() {
    let mut app = opened(&sample("rc_write_healthy.pcap"));
    press(&mut app, "?");
    let wide = text_of(&drawn_on(&mut app, 200, 50));
    for (keys, what) in view::KEYS {
        assert!(wide.contains(&format!(" {keys:<16} {what}")), "{keys}: {what}\n{wide}");
    }
    let narrow = text_of(&drawn_on(&mut app, 80, 40));
    let lines = view::help_lines(78);
    assert!(lines.len() > view::KEYS.len(), "some descriptions wrap at 80 columns");
    for line in &lines {
        assert!(line.chars().count() <= 78, "{line:?}");
        assert!(narrow.contains(line.trim_end()), "{line:?}\n{narrow}");
    }
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let joined = words(&lines.join(" "));
    for (keys, what) in view::KEYS {
        assert!(joined.contains(&words(&format!("{keys} {what}"))), "{keys}: {what}");
    }
}

/// `browse -Y` opens with the filter applied; a filter that does not compile is refused.
#[test]
fn a_display_filter_given_on_the_command_line_is_applied_at_the_start() {
    let file = sample("bidirectional_read_write.pcap");
    let filter = "infiniband.bth.opcode == 12";
    let kept = common::run_ok(&["packets", "-Y", filter, file.to_str().unwrap()]).lines().count();
    let command = format!("{} browse -Y '{filter}' {}", env!("CARGO_BIN_EXE_rocescope"), file.display());
    let Some(tmux) = Tmux::start(&command) else { return };
    let shown = tmux.until(&|s| s.contains(&format!("Displayed: {kept} (")));
    assert!(shown.contains(&format!("Displayed: {kept} (")), "{shown}");
    assert!(shown.contains(filter), "{shown}");
    let command =
        format!("{} browse -Y 'infiniband.bth.opcode ==' {}; sleep 5", env!("CARGO_BIN_EXE_rocescope"), file.display());
    let Some(tmux) = Tmux::start(&command) else { return };
    let refused = tmux.until(&|s| s.contains("column"));
    assert!(refused.contains("display filter"), "{refused}");
}

#[test]
fn without_a_terminal_browse_says_so_and_exits_with_status_2() {
    let out = common::run(&["browse", sample("loss_go_back_n.pcap").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("needs a terminal"));
}

#[test]
fn docs_browse_md_lists_every_key_of_the_help() {
    let doc = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/browse.md")).unwrap();
    for (keys, what) in view::KEYS {
        assert!(doc.contains(&format!("| `{keys}` | {what} |")), "docs/browse.md lacks {keys:?}");
    }
}

#[test]
fn the_filter_bar_selects_uet_packets() {
    let file = sample("uet.pcap");
    let filter = "uet.pds.type == 7";
    let kept = common::run_ok(&["packets", "-Y", filter, file.to_str().unwrap()]).lines().count();
    assert_eq!(kept, 5, "the sample's plain ACKs");
    let mut app = opened(&file);
    press(&mut app, &format!("/{filter}"));
    key(&mut app, KeyCode::Enter);
    let shown = screen(&mut app);
    assert!(status(&shown).contains(&format!("Displayed: {kept} (")), "{}", status(&shown));
    assert!(shown.contains("ACK CACK_PSN=1000"), "{shown}");
}
