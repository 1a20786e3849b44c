//! The commands: each picks its sources and sinks from the engine and the output writers, and
//! turns what happened into an exit status.

#[cfg(feature = "tables")]
pub mod analyze;
pub mod annotate;
#[cfg(feature = "live")]
pub mod capture;
pub mod exit;
#[cfg(feature = "tables")]
pub mod export;
pub mod generate;
pub mod packets;
#[cfg(feature = "tables")]
pub mod saved_run;
pub mod time_source;
