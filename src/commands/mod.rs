//! The commands: each picks its sources and sinks from the engine and the output writers, and
//! turns what happened into an exit status.

pub mod accounts;
pub mod analyze;
pub mod annotate;
#[cfg(feature = "live")]
pub mod capture;
pub mod exit;
#[cfg(feature = "tables")]
pub mod export;
pub mod fabric;
pub mod generate;
pub mod merge;
pub mod packets;
pub mod passes;
pub mod reporting;
pub mod saved_run;

/// An error when `target` is one of the input `files`, which `what` would overwrite.
fn refuse_input(target: &std::path::Path, files: &[std::path::PathBuf], what: &str) -> Result<(), String> {
    let existing = std::fs::canonicalize(target).ok();
    if existing.is_some_and(|e| files.iter().any(|f| std::fs::canonicalize(f).is_ok_and(|i| i == e))) {
        return Err(format!("refusing to overwrite the input {} with {what}", target.display()));
    }
    Ok(())
}
