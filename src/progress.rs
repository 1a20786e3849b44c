//! A progress bar on standard error while captures are read: bytes, throughput and time left
//! when the input's size is known (memory-mapped files), a spinner with the bytes read
//! otherwise (standard input, compressed files). Hidden when standard error is not a terminal
//! or with `--quiet`, so that scripts and logs never see it.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Frames between two updates of the bar (an update reads an atomic clock; this keeps it off
/// the per-frame path).
pub const UPDATE_EVERY: u64 = 1 << 14;

pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar for `total` bytes (a spinner when unknown), shown when `visible` and standard
    /// error is a terminal.
    pub fn new(total: Option<u64>, visible: bool) -> Progress {
        if !visible || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = match total {
            Some(total) => ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr()).with_style(
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(
                ProgressStyle::with_template("{spinner} {bytes} read, {bytes_per_sec}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress(Some(bar))
    }

    pub fn set(&self, bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.set_position(bytes);
        }
    }

    /// Removes the bar, so that what follows starts on a clean line.
    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
