//! The rocescope engine: everything below the command line, without clap and without polars,
//! so that a program can embed it. Data flows one way, down this list:
//!
//! - [`capture`]: capture files (pcap, pcapng, compressed, several merged by time) as records;
//! - [`decode`]: each record as a [`decode::DecodedFrame`] view, link layer to RoCE;
//! - [`fields`]: the field registry, every field with its Wireshark name, read from a packet;
//! - [`display_filter`] and [`filter`]: which frames to keep;
//! - [`analyze`]: the analyses, each in a room of its own (the RoCE transport, UET, the path
//!   over several taps, the counters beside a capture, who owns each QP, the fabric's QoS
//!   configuration), the report model and its findings;
//! - [`ordered`]: frames handed on in order with their final verdicts;
//! - [`pipeline`]: the reading loop and the thread layout every command runs;
//! - [`prefetch`]: cache hints, and [`quoting`]: a user's text quoted in a message, for any of them.

pub mod analyze;
pub mod capture;
pub mod decode;
pub mod display_filter;
pub mod fields;
pub mod filter;
pub mod ordered;
pub mod pipeline;
pub mod prefetch;
pub mod quoting;
