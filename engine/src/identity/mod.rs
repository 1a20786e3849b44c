//! QP identity's room: the hosts' own account of their QPs, to be joined with the flows of a
//! capture.
//!
//! - [`qp_table`]: `rdma resource show qp` (iproute2), every QP of a host with its device,
//!   port, type, state, PSNs and owning process;
//! - [`nccl_log`]: a NCCL log (`NCCL_DEBUG=INFO`), each process's communicators, the QPs it
//!   created, the network it chose and whether it fell back to sockets.
//!
//! The readers are pure functions of a file's text: reading the file is the caller's job.

pub mod nccl_log;
pub mod qp_table;
