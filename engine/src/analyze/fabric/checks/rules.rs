//! Each check's code, severity, cause and first action, in the field guide's words.

use crate::analyze::finding::{Kind, kinds};

/// A finding's kind (its code, usual severity, title), its most likely cause and the first
/// action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub kind: Kind,
    pub cause: &'static str,
    pub action: &'static str,
}

pub const DSCP_MAP_MISMATCH: Rule = Rule {
    kind: kinds::QOS_DSCP_MAP_MISMATCH,
    cause: "DSCP mismatch host vs switch: the RoCE DSCP lands in different priorities on different devices, so \
            PFC and ECN protect it on some hops only (a single flow runs at half line rate).",
    action: "Compare host marking (NCCL_IB_TC, trust mode, dscp2prio) with the switches' DSCP-to-priority map, \
             and map the RoCE DSCP to the same lossless priority everywhere.",
};

pub const LOSSY_ROCE: Rule = Rule {
    kind: kinds::QOS_LOSSY_ROCE,
    cause: "PFC mapped to the wrong priority: RoCE data is classified into a priority without PFC, so under load \
            packets drop, the transport collapses and AllReduce goes from milliseconds to seconds.",
    action: "Map the RoCE DSCP to the lossless priority (dscp2prio on the NICs, the DSCP-to-priority map on the \
             switches), or enable PFC on the priority it maps to.",
};

pub const PFC_MISMATCH: Rule = Rule {
    kind: kinds::QOS_PFC_MISMATCH,
    cause: "Hosts and switches enable PFC on different priorities: pauses are sent for priorities the peer does \
            not honour, or not sent where it expects them.",
    action: "Enable PFC on the same priorities on the NICs (mlnx_qos --pfc) and the switches (pfc_enable, \
             priority-flow-control priority N no-drop, nv set qos pfc).",
};

pub const ECN_OFF: Rule = Rule {
    kind: kinds::QOS_ECN_OFF,
    cause: "ECN not configured on the RoCE priority (ECN off at the ToR, or the NIC's notification or reaction \
            point off): senders never slow down, PFC does all the work and one slow host stalls others.",
    action: "Enable ECN/WRED marking on the RoCE queue of every switch, and ecn/roce_np/enable/N and \
             ecn/roce_rp/enable/N on every NIC for the RoCE priority.",
};

pub const ECN_THRESHOLDS: Rule = Rule {
    kind: kinds::QOS_ECN_THRESHOLDS,
    cause: "WRED/ECN thresholds wrong: too high and packets drop before they are marked, too low and over-marking \
            collapses throughput (shallow buffers about 100-150 KB min and 1-1.5 MB max, deep buffers about 1 MB \
            min and 10 MB max).",
    action: "Set the RoCE queue's minimum threshold below its maximum, a non-zero mark probability, and thresholds \
             in the range of the switch's buffer class.",
};

pub const CNP_CLASS: Rule = Rule {
    kind: kinds::QOS_CNP_CLASS,
    cause: "CNPs not in their own class: a CNP paused by PFC or queued behind the data it should slow arrives \
            late and DCQCN recovers too slowly; CNPs marked other than the NIC is set to mean its setting is not \
            the one in effect.",
    action: "Give CNPs (DSCP 48, priority 6 by convention) their own strict-priority queue without PFC, and check \
             the NICs' CNP_DSCP_P1 (mlxconfig) and ecn/roce_np/cnp_dscp.",
};

pub const NCCL_TC: Rule = Rule {
    kind: kinds::QOS_NCCL_TC,
    cause: "NCCL marks its traffic (NCCL_IB_TC / 4) with a DSCP the switches do not make lossless: its packets \
            drop under load.",
    action: "Set NCCL_IB_TC to the lossless DSCP x 4 (106 is DSCP 26 with ECT(0)).",
};

pub const GID_INDEX: Rule = Rule {
    kind: kinds::QOS_GID_INDEX,
    cause: "Wrong GID index (RoCE v1 vs v2, IPv4 vs IPv6): connections fail or NCCL falls back to sockets; \
            left unset, NCCL detects the GID at init, which can fail.",
    action: "Check show_gids; pin NCCL_IB_GID_INDEX to the RoCE v2 IPv4 entry (typically 3).",
};

pub const TRUST_MODE: Rule = Rule {
    kind: kinds::QOS_TRUST_MODE,
    cause: "Devices classify by different fields (PCP on some, DSCP on others): the priority a packet gets \
            depends on the hop, so PFC and ECN miss it where the field it is classified by is not set.",
    action: "Trust DSCP everywhere: mlnx_qos -i IF --trust dscp on the NICs, qos trust dscp (or the DSCP map) on \
             the switch ports.",
};

pub const MTU: Rule = Rule {
    kind: kinds::QOS_MTU,
    cause: "An MTU too small: a host's below what a 4096-byte RoCE MTU needs (the RoCE active MTU falls to 2048 \
            or less), or a switch's below a host's (jumbo frames dropped).",
    action: "Set 9000 or more on hosts and 9216 on switches (jumbo, with headroom for VXLAN), so that the RoCE \
             active MTU is 4096.",
};

pub const PFC_WATCHDOG_OFF: Rule = Rule {
    kind: kinds::QOS_PFC_WATCHDOG_OFF,
    cause: "PFC without a watchdog: a stuck pause (a PFC pause storm) takes a port out in seconds; the watchdog \
            breaks it in milliseconds.",
    action: "Enable the PFC watchdog (pfcwd start_default on SONiC, priority-flow-control pause watchdog on EOS, \
             nv set interface IF qos pfc-watchdog state enable on Cumulus); find the upstream congestion source.",
};

/// Every rule, in the order the checks run.
pub const RULES: [Rule; 11] = [
    DSCP_MAP_MISMATCH,
    LOSSY_ROCE,
    PFC_MISMATCH,
    ECN_OFF,
    ECN_THRESHOLDS,
    CNP_CLASS,
    NCCL_TC,
    GID_INDEX,
    TRUST_MODE,
    MTU,
    PFC_WATCHDOG_OFF,
];

/// The rule of a code.
pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|rule| rule.kind.code == code)
}
