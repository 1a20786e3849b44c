//! The rocescope engine: everything below the command line, without clap and without polars,
//! so that a program can embed it. Data flows one way, down this list:
//!
//! - [`capture`]: capture files (pcap, pcapng, compressed, several merged by time) as records;
//! - [`mod@counters`]: counter snapshots taken beside a capture (`ethtool -S`, `hw_counters`),
//!   their report section, reconciled with the report, and their rules;
//! - [`decode`]: each record as a [`decode::DecodedFrame`] view, link layer to RoCE;
//! - [`fields`]: the field registry, every field with its Wireshark name, read from a packet;
//! - [`display_filter`] and [`filter`]: which frames to keep;
//! - [`fabric`]: the QoS configuration of the fabric's hosts and switches, read into one model;
//! - [`analyze`]: the streaming analysis, its report model and findings;
//! - [`identity`]: who owns each QP, as the hosts tell it (`rdma resource show qp`, NCCL logs);
//! - [`path`]: several taps of one path: where each packet was lost, marked or delayed, its
//!   report section and rules;
//! - [`ordered`]: frames handed on in order with their final verdicts;
//! - [`pipeline`]: the reading loop and the thread layout every command runs;
//! - [`prefetch`]: cache hints, and [`quoting`]: a user's text quoted in a message, for any of them.

pub mod analyze;
pub mod capture;
pub mod counters;
pub mod decode;
pub mod display_filter;
pub mod fabric;
pub mod fields;
pub mod filter;
pub mod identity;
pub mod ordered;
pub mod path;
pub mod pipeline;
pub mod prefetch;
pub mod quoting;
