//! The names of UET's numbered values, as the open implementations agree on them
//! (../shared/uet-facts.md): `None` for a value not assigned.

/// PDS types (1 is the TSS header).
pub fn pds_type(value: u8) -> &'static str {
    const NAMES: [&str; 15] = [
        "reserved",
        "TSS",
        "RUD_REQ",
        "ROD_REQ",
        "RUDI_REQ",
        "RUDI_RESP",
        "UUD_REQ",
        "ACK",
        "ACK_CC",
        "ACK_CCX",
        "NACK",
        "CONTROL",
        "NACK_CCX",
        "RUD_CC_REQ",
        "ROD_CC_REQ",
    ];
    NAMES.get(usize::from(value)).copied().unwrap_or("unassigned")
}

/// The SES header a PDS `next_hdr` announces.
pub fn next_header(value: u8) -> Option<&'static str> {
    const NAMES: [&str; 7] = [
        "none",
        "request (small)",
        "request (medium)",
        "request (standard)",
        "response",
        "response with data",
        "response with data (small)",
    ];
    NAMES.get(usize::from(value)).copied()
}

/// NACK codes.
pub fn nack_code(value: u8) -> Option<&'static str> {
    const NAMES: [&str; 27] = [
        "reserved",
        "TRIMMED",
        "TRIMMED_LASTHOP",
        "TRIMMED_ACK",
        "NO_PDC_AVAIL",
        "NO_CCC_AVAIL",
        "NO_BITMAP",
        "NO_PKT_BUFFER",
        "NO_GTD_DEL_AVAIL",
        "NO_SES_MSG_AVAIL",
        "NO_RESOURCE",
        "PSN_OOR_WINDOW",
        "reserved",
        "ROD_OOO",
        "INV_DPDCID",
        "PDC_HDR_MISMATCH",
        "CLOSING",
        "CLOSING_IN_ERR",
        "PKT_NOT_RCVD",
        "GTD_DEL_RESP_UNAVAIL",
        "ACK_WITH_DATA",
        "INVALID_SYN",
        "PDC_MODE_MISMATCH",
        "NEW_START_PSN",
        "RCVD_SES_PROCG",
        "UNEXP_EVENT",
        "RCVR_INFER_LOSS",
    ];
    match value {
        0xFD => Some("EXP_NORMAL"),
        0xFE => Some("EXP_ERROR"),
        0xFF => Some("EXP_FATAL"),
        0 | 0x0C => None,
        _ => NAMES.get(usize::from(value)).copied(),
    }
}

/// Control packet types (9, NEGOTIATION, is the reference provider's and xdp2's; Wireshark
/// lacks it).
pub fn control_type(value: u8) -> Option<&'static str> {
    const NAMES: [&str; 10] =
        ["NOOP", "ACK_REQ", "CLEAR", "CLEAR_REQ", "CLOSE", "CLOSE_REQ", "PROBE", "CREDIT", "CREDIT_REQ", "NEGOTIATION"];
    NAMES.get(usize::from(value)).copied()
}

/// SES request opcodes.
pub fn request_opcode(value: u8) -> Option<&'static str> {
    const NAMES: [&str; 16] = [
        "UET_NO_OP",
        "UET_WRITE",
        "UET_READ",
        "UET_ATOMIC",
        "UET_FETCHING_ATOMIC",
        "UET_SEND",
        "UET_RENDEZVOUS_SEND",
        "UET_DATAGRAM_SEND",
        "UET_DEFERRABLE_SEND",
        "UET_TAGGED_SEND",
        "UET_RENDEZVOUS_TSEND",
        "UET_DEFERRABLE_TSEND",
        "UET_DEFERRABLE_RTR",
        "UET_TSEND_ATOMIC",
        "UET_TSEND_FETCH_ATOMIC",
        "UET_MSG_ERROR",
    ];
    NAMES.get(usize::from(value)).copied()
}

/// SES response opcodes.
pub fn response_opcode(value: u8) -> Option<&'static str> {
    const NAMES: [&str; 4] = ["UET_DEFAULT_RESPONSE", "UET_RESPONSE", "UET_RESPONSE_W_DATA", "UET_NO_RESPONSE"];
    NAMES.get(usize::from(value)).copied()
}

/// SES return codes.
pub fn return_code(value: u8) -> Option<&'static str> {
    const NAMES: [&str; 37] = [
        "RC_NULL",
        "RC_OK",
        "RC_BAD_GENERATION",
        "RC_DISABLED",
        "RC_DISABLED_GEN",
        "RC_NO_MATCH",
        "RC_UNSUPPORTED_OP",
        "RC_UNSUPPORTED_SIZE",
        "RC_AT_INVALID",
        "RC_AT_PERM",
        "RC_AT_ATS_ERROR",
        "RC_AT_NO_TRANS",
        "RC_AT_OUT_OF_RANGE",
        "RC_HOST_POISONED",
        "RC_HOST_UNSUCCESS_CMPL",
        "RC_AMO_UNSUPPORTED_OP",
        "RC_AMO_UNSUPPORTED_DT",
        "RC_AMO_UNSUPPORTED_SIZE",
        "RC_AMO_UNALIGNED",
        "RC_AMO_FP_NAN",
        "RC_AMO_FP_UNDERFLOW",
        "RC_AMO_FP_OVERFLOW",
        "RC_AMO_FP_INEXACT",
        "RC_PERM_VIOLATION",
        "RC_OP_VIOLATION",
        "RC_BAD_INDEX",
        "RC_BAD_PID",
        "RC_BAD_JOB_ID",
        "RC_BAD_MKEY",
        "RC_BAD_ADDR",
        "RC_CANCELLED",
        "RC_UNDELIVERABLE",
        "RC_UNCOR",
        "RC_UNCOR_TRNSNT",
        "RC_TOO_LONG",
        "RC_INITIATOR_ERROR",
        "RC_DROPPED",
    ];
    NAMES.get(usize::from(value)).copied()
}

/// Atomic operations.
pub fn amo_opcode(value: u8) -> Option<&'static str> {
    const NAMES: [&str; 21] = [
        "MIN", "MAX", "SUM", "DIFF", "PROD", "LOR", "LAND", "BOR", "BAND", "LXOR", "BXOR", "READ", "WRITE", "CSWAP",
        "CSWAP_NE", "CSWAP_LE", "CSWAP_LT", "CSWAP_GE", "CSWAP_GT", "MSWAP", "INVAL",
    ];
    NAMES.get(usize::from(value)).copied()
}

/// Atomic datatypes.
pub fn amo_datatype(value: u8) -> Option<&'static str> {
    const NAMES: [&str; 18] = [
        "INT8",
        "UINT8",
        "INT16",
        "UINT16",
        "INT32",
        "UINT32",
        "INT64",
        "UINT64",
        "INT128",
        "UINT128",
        "FLOAT",
        "DOUBLE",
        "FLOAT_COMPLEX",
        "DOUBLE_COMPLEX",
        "LONG_DOUBLE",
        "LONG_DOUBLE_COMPLEX",
        "BF16",
        "FP16",
    ];
    NAMES.get(usize::from(value)).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_values_by_name() {
        assert_eq!((pds_type(8), pds_type(14), pds_type(20)), ("ACK_CC", "ROD_CC_REQ", "unassigned"));
        assert_eq!(
            (nack_code(0x01), nack_code(0x0E), nack_code(0x1A), nack_code(0x0C)),
            (Some("TRIMMED"), Some("INV_DPDCID"), Some("RCVR_INFER_LOSS"), None)
        );
        assert_eq!((nack_code(0x1B), nack_code(0xFF)), (None, Some("EXP_FATAL")));
        assert_eq!((control_type(6), control_type(10)), (Some("PROBE"), None));
        assert_eq!((request_opcode(0x0C), request_opcode(0x10)), (Some("UET_DEFERRABLE_RTR"), None));
        assert_eq!((return_code(0x24), return_code(0x25)), (Some("RC_DROPPED"), None));
        assert_eq!(
            (amo_opcode(0x12), amo_datatype(0x11), response_opcode(2)),
            (Some("CSWAP_GT"), Some("FP16"), Some("UET_RESPONSE_W_DATA"))
        );
        assert_eq!(next_header(3), Some("request (standard)"));
    }
}
