//! The analysis's settings, each default declared once: the command line's options are filled
//! from [`Config::default`].

use crate::analyze::roce::congestion::CongestionConfig;
use crate::analyze::roce::flow::sequence::ReorderConfig;
use crate::analyze::roce::wide::policy::Policy;
use crate::decode::TimeSource;

/// Analysis settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// Link speed for PFC quanta, Gb/s.
    pub link_gbps: u64,
    pub pfc_storm_ns: i64,
    pub mirror_window_ns: i64,
    pub policy: Policy,
    /// Flows tracked at most (see [`crate::analyze::roce::flow::table::FlowTable`]).
    pub max_flows: usize,
    pub reorder: ReorderConfig,
    /// In a doubled mirror: how far apart a frame and its byte-identical copy may be.
    pub span_window_ns: i64,
    /// A flow idle this long whose next PSN cannot be a retransmission is a new connection.
    pub qp_reuse_idle_ns: i64,
    /// The shortest silence before a resend with no NAK that is a timeout.
    pub min_ack_timeout_ns: i64,
    pub congestion: CongestionConfig,
    /// Which times the frames have (the decoder's choice, reported).
    pub time_source: TimeSource,
}

/// The default of [`Config::max_flows`].
pub const DEFAULT_MAX_FLOWS: usize = 100_000;

impl Default for Config {
    fn default() -> Self {
        Config {
            link_gbps: 100,
            pfc_storm_ns: 100_000_000,
            mirror_window_ns: 1_000_000,
            policy: Policy::default(),
            max_flows: DEFAULT_MAX_FLOWS,
            reorder: ReorderConfig::default(),
            span_window_ns: 50_000,
            qp_reuse_idle_ns: 10_000_000,
            min_ack_timeout_ns: 200_000,
            congestion: CongestionConfig::default(),
            time_source: TimeSource::Capture,
        }
    }
}

// the analysis options
crate::holds_no_numbers!(Config);
