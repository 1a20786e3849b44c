//! The counters section of the HTML page (`analyze --counters`): per host, each paired counter's
//! delta beside the capture's count as two bars, with its verdict, then the other counters that
//! grew.

use maud::{Markup, html};

use crate::analyze::counters::report::{CounterRow, HostCounters, Source};

/// Other counters that grew, listed at most per host; the JSON report has every row.
const GROWN_SHOWN: usize = 40;

pub fn section(hosts: &[HostCounters]) -> Markup {
    if hosts.is_empty() {
        return html! {};
    }
    html! {
        h2 id="counters" { "Counters beside the capture" }
        @for host in hosts {
            h3 { @if host.source == Source::Switch { "switch " } (host.host) @if let Some(s) = host.window.seconds { " · snapshots " (format!("{s:.1}")) " s apart" } }
            table {
                tr { th.l { "counter" } th { "delta" } th { "capture" } th.l { "" } th.l { "verdict" } }
                @for row in host.rows.iter().filter(|r| r.capture.is_some()) {
                    tr {
                        td.l { (row.counter) }
                        td { (number(row.delta)) }
                        td { (number(row.capture)) }
                        td.l { (bars(row)) }
                        td.l { (row.verdict.label()) }
                    }
                }
            }
            @let grown: Vec<&CounterRow> = host.rows.iter().filter(|r| r.capture.is_none() && r.delta.is_some_and(|d| d > 0)).take(GROWN_SHOWN).collect();
            @if !grown.is_empty() {
                p.muted { "Counters the capture cannot see, that grew:" }
                table {
                    tr { th.l { "counter" } th { "before" } th { "after" } th { "delta" } }
                    @for row in grown {
                        tr { td.l { (row.counter) } td { (number(row.before)) } td { (number(row.after)) } td { (number(row.delta)) } }
                    }
                }
            }
        }
    }
}

/// A value, or "–" where there is none.
pub(super) fn number<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

/// The delta (dark) and the capture's count (light) as two bars of one scale.
fn bars(row: &CounterRow) -> Markup {
    let (delta, capture) = (row.delta.unwrap_or(0), row.capture.unwrap_or(0));
    let most = delta.max(capture).max(1) as f64;
    let width = |v: u64| format!("width:{:.0}px;height:6px;margin:1px 0", 160.0 * v as f64 / most);
    html! {
        div style={ (width(delta)) ";background:#0072b2" } {}
        div style={ (width(capture)) ";background:#56b4e9" } {}
    }
}
