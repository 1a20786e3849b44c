//! Congestion control seen from the wire (docs/analysis.md, "Congestion control"): whether
//! senders slow down after CNPs and recover ([`reaction`]), how long RC messages take to
//! complete ([`completion`]), and how many senders converge on one receiver ([`incast`]); what
//! the capture as a whole comes to ([`analysis`]).

pub mod analysis;
pub mod completion;
pub mod incast;
pub mod reaction;

/// The parameters of the congestion-control analysis, each an option of `analyze`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CongestionConfig {
    /// W (`--cc-window-us`): CNPs less than this apart are one burst; the rate windows' width.
    pub window_ns: i64,
    /// D (`--cc-delay-us`): how long after a burst's first CNP the rate after it is measured.
    pub delay_ns: i64,
    /// `--cc-recovery-us`: a median recovery slower than this is slow (DCQCN_SLOW_RECOVERY).
    pub recovery_ns: i64,
    /// `--fct-p99-us`: the p99 completion time of small messages above this is high.
    pub fct_p99_ns: i64,
    /// W_i (`--incast-window-us`): the window a receiver's fan-in counts senders in.
    pub incast_window_ns: i64,
    /// K (`--incast-senders`): the fan-in at which a receiver is in incast.
    pub incast_senders: usize,
}

impl Default for CongestionConfig {
    fn default() -> Self {
        CongestionConfig {
            window_ns: 100_000,
            delay_ns: 10_000,
            recovery_ns: 1_000_000,
            fct_p99_ns: 200_000,
            incast_window_ns: 100_000,
            incast_senders: 4,
        }
    }
}
