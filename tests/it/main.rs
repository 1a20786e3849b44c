//! The integration tests, one binary: each module a file of tests of the built `rocescope`
//! binary or of the library (the helpers they share are in `common/`).

mod common;

mod analyze_choice;
mod analyze_definitions;
#[cfg(feature = "tables")]
mod analyze_output;
mod annotate;
mod browse;
mod capture_formats;
mod ce_answered;
mod cli_packets;
mod congestion_control;
mod counters;
mod counters_scenarios;
#[cfg(feature = "tables")]
mod dataset;
mod decode;
mod display_filters;
mod engine_embedding;
mod etherparse_crosscheck;
mod fabric;
mod field_positions;
mod hostile_input;
mod html_report;
mod install;
mod layering;
mod live_capture;
mod malformed;
mod merge;
mod mirror_formats;
mod native_infiniband;
mod path;
mod pipe_streaming;
mod plain_path;
mod production_patterns;
mod properties;
mod qp_identity;
mod real_captures;
mod real_traffic;
mod reference_analyze;
mod reference_decode;
mod report_schema;
mod reports;
mod resume;
mod samples;
mod saved_state;
mod sharding;
mod simulator;
mod simulator_properties;
#[cfg(feature = "tables")]
mod spark_example;
mod terminal;
mod threads;
mod trace_events;
mod tshark_json;
mod uet;
mod wireshark_fields;
mod wireshark_plugin;
