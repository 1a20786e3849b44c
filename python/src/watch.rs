//! What Python's caller learns while rocescope reads: the warnings the command prints on
//! standard error (inputs that cannot be read, damage, link layers not decoded), kept to be
//! raised as Python warnings, and the bytes read, given to an optional progress callback.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use rocescope::analyze::roce::wide::facts::UndecodedLinkFrames;
use rocescope::capture::CaptureError;
use rocescope::cli::{damage_warning, undecoded_warning};
use rocescope::commands::analyze::Watch;

/// The callback is called at most once per this many bytes read (and at the end).
const CALL_EVERY_BYTES: u64 = 8 << 20;

pub struct PythonWatch {
    progress: Option<Py<PyAny>>,
    total: Mutex<Option<u64>>,
    last_call: AtomicU64,
    /// The warnings, in the order they came.
    pub warnings: Mutex<Vec<String>>,
    /// The first error the callback raised: it is not called again, and the error is raised
    /// once the reading ends.
    pub callback_error: Mutex<Option<PyErr>>,
}

impl PythonWatch {
    pub fn new(progress: Option<Py<PyAny>>) -> PythonWatch {
        PythonWatch {
            progress,
            total: Mutex::new(None),
            last_call: AtomicU64::new(0),
            warnings: Mutex::new(Vec::new()),
            callback_error: Mutex::new(None),
        }
    }

    pub fn warn(&self, message: String) {
        if let Ok(mut warnings) = self.warnings.lock() {
            warnings.push(message);
        }
    }

    /// Calls the progress callback with (bytes read, total bytes or None).
    fn call(&self, bytes: u64) {
        let Some(callback) = &self.progress else { return };
        let Ok(mut failed) = self.callback_error.lock() else { return };
        if failed.is_some() {
            return;
        }
        let total = self.total.lock().ok().and_then(|t| *t);
        Python::attach(|py| {
            if let Err(e) = callback.call1(py, (bytes, total)) {
                *failed = Some(e);
            }
        });
    }

    /// The warnings, taken.
    pub fn take_warnings(&self) -> Vec<String> {
        self.warnings.lock().map(|mut w| std::mem::take(&mut *w)).unwrap_or_default()
    }

    /// The callback's error, if it raised one.
    pub fn take_callback_error(&self) -> Option<PyErr> {
        self.callback_error.lock().ok().and_then(|mut e| e.take())
    }
}

impl Watch for PythonWatch {
    fn unreadable(&self, errors: &[CaptureError]) {
        errors.iter().for_each(|e| self.warn(e.to_string()));
    }

    fn reading(&self, total: Option<u64>) {
        if let Ok(mut t) = self.total.lock() {
            *t = total;
        }
    }

    fn read(&self, bytes: u64) {
        let last = self.last_call.load(Ordering::Relaxed);
        if bytes >= last.saturating_add(CALL_EVERY_BYTES) {
            self.last_call.store(bytes, Ordering::Relaxed);
            self.call(bytes);
        }
    }

    fn ended(&self, damage: &[CaptureError], undecoded: &[UndecodedLinkFrames]) {
        let total = self.total.lock().ok().and_then(|t| *t);
        self.call(total.unwrap_or_else(|| self.last_call.load(Ordering::Relaxed)));
        damage.iter().for_each(|e| self.warn(damage_warning(e)));
        undecoded.iter().for_each(|l| self.warn(undecoded_warning(l)));
    }
}
