//! One InfiniBand transport packet as carried by RoCE: BTH, extended headers, payload, pad
//! bytes and the 4-byte ICRC (IBA §9, A16 for RoCEv1, A17 for RoCEv2).
//!
//! Lengths come from the enclosing header (UDP length − 8 for RoCEv2, GRH PayLen for RoCEv1),
//! never from the captured frame, which may carry an Ethernet FCS or padding after the ICRC or
//! may be cut short by the snap length:
//! `payload = length − 12 − extended headers − PadCnt − 4`.

use crate::bth::{BTH_LEN, Bth};
use crate::error::{Error, Layer};
use crate::ext::ExtHeaders;
use crate::opcode::OpcodeInfo;

pub const ICRC_LEN: usize = 4;

/// A decoded transport packet.
#[derive(Debug, Clone, Copy)]
pub struct IbPacket<'a> {
    pub bth: Bth<'a>,
    pub info: OpcodeInfo,
    /// The captured bytes of the extended headers (fewer than the opcode calls for when the
    /// capture ends inside them); decoded by [`IbPacket::ext`].
    pub ext_bytes: &'a [u8],
    /// Payload length per the length fields.
    pub payload_len: usize,
    /// The captured part of the payload (shorter than `payload_len` when cut by the snap length).
    pub payload: &'a [u8],
    /// The captured bytes of the packet, BTH onwards (at most the declared length).
    pub bytes: &'a [u8],
    /// The bytes the ICRC covers after the IP/UDP or GRH headers (BTH through pad), when the
    /// whole packet was captured.
    pub icrc_covered: Option<&'a [u8]>,
}

impl<'a> IbPacket<'a> {
    /// Decodes a packet whose length per the enclosing header is `declared_len`, from the
    /// `captured` bytes starting at the BTH (which may be fewer, or more, than declared).
    pub fn parse(captured: &'a [u8], declared_len: usize) -> Result<Self, Error> {
        let (bth, after_bth) = Bth::parse(captured)?;
        if declared_len < BTH_LEN {
            return Err(Error::invalid(Layer::Bth, "length field shorter than a BTH"));
        }
        let info = bth.opcode_info().ok_or(Error::invalid(Layer::Bth, "reserved opcode"))?;
        let headers_len = BTH_LEN + info.ext.len();
        let pad = usize::from(bth.pad_count());
        let payload_len = declared_len
            .checked_sub(headers_len + ICRC_LEN)
            .ok_or(Error::invalid(Layer::Bth, "length shorter than the opcode's headers and ICRC"))?
            .checked_sub(pad)
            .ok_or(Error::invalid(Layer::Bth, "PadCnt larger than the payload"))?;
        if !info.payload && payload_len != 0 {
            return Err(Error::invalid(Layer::Bth, "payload on an opcode that carries none"));
        }
        let ext_bytes = after_bth.get(..info.ext.len()).unwrap_or(after_bth);
        let payload_start = headers_len.min(captured.len());
        let payload_end = (headers_len + payload_len).min(captured.len());
        let payload = captured.get(payload_start..payload_end).unwrap_or_default();
        let bytes = captured.get(..declared_len).unwrap_or(captured);
        // The ICRC bytes themselves are read only when asked for ([`IbPacket::icrc`]): a caller
        // that leaves the ICRC to another thread never touches the end of the packet.
        let icrc_covered = (bytes.len() == declared_len).then(|| bytes.get(..declared_len - ICRC_LEN)).flatten();
        Ok(IbPacket { bth, info, ext_bytes, payload_len, payload, bytes, icrc_covered })
    }

    /// The extended headers the opcode calls for; `None` when the capture ends inside them.
    pub fn ext(&self) -> Option<ExtHeaders> {
        ExtHeaders::parse(self.info.ext, self.ext_bytes).ok().map(|(ext, _)| ext)
    }

    /// The AETH, when the opcode has one and it was captured.
    pub fn aeth(&self) -> Option<crate::ext::Aeth> {
        crate::ext::single::aeth(self.info.ext, self.ext_bytes)
    }

    /// The RETH, when the opcode has one and it was captured.
    pub fn reth(&self) -> Option<crate::ext::Reth> {
        crate::ext::single::reth(self.info.ext, self.ext_bytes)
    }

    /// The DETH, when the opcode has one and it was captured.
    pub fn deth(&self) -> Option<crate::ext::Deth> {
        crate::ext::single::deth(self.info.ext, self.ext_bytes)
    }

    /// The ICRC as on the wire, when captured.
    pub fn icrc(&self) -> Option<[u8; 4]> {
        self.icrc_covered?;
        self.bytes.last_chunk::<ICRC_LEN>().copied()
    }

    /// Has the capture kept every byte of the packet?
    pub fn fully_captured(&self) -> bool {
        self.icrc_covered.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RC SEND ONLY, PadCnt 3, DestQP 0x12, PSN 7, 5-byte payload, 3 pad bytes, ICRC.
    fn send_only_pad3() -> Vec<u8> {
        let mut b = vec![0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00, 0x07];
        b.extend_from_slice(b"hello");
        b.extend_from_slice(&[0, 0, 0]);
        b.extend_from_slice(&[0xaa, 0xbb, 0xcc, 0xdd]);
        b
    }

    #[test]
    fn payload_length_excludes_pad_and_icrc() {
        let b = send_only_pad3();
        let p = IbPacket::parse(&b, b.len()).unwrap();
        assert_eq!(p.payload_len, 5);
        assert_eq!(p.payload, b"hello");
        assert_eq!(p.icrc(), Some([0xaa, 0xbb, 0xcc, 0xdd]));
        assert_eq!(p.icrc_covered.map(<[u8]>::len), Some(20));
        assert_eq!(p.bytes.len(), 24);
        assert_eq!(p.info.name, "RC_SEND_ONLY");
        assert!(p.fully_captured());
    }

    #[test]
    fn trailing_bytes_after_the_icrc_are_ignored() {
        let mut b = send_only_pad3();
        let declared = b.len();
        b.extend_from_slice(&[1, 2, 3, 4]); // an Ethernet FCS
        let p = IbPacket::parse(&b, declared).unwrap();
        assert_eq!(p.icrc(), Some([0xaa, 0xbb, 0xcc, 0xdd]));
        assert_eq!(p.bytes.len(), declared);
        assert_eq!(p.payload_len, 5);
    }

    #[test]
    fn snap_length_cut_keeps_headers_and_drops_icrc() {
        let b = send_only_pad3();
        let p = IbPacket::parse(&b[..14], b.len()).unwrap();
        assert_eq!(p.payload_len, 5);
        assert_eq!(p.payload, b"he");
        assert_eq!((p.icrc(), p.icrc_covered), (None, None));
        assert!(!p.fully_captured());
    }

    #[test]
    fn extended_headers_cut_by_snap_length_are_absent() {
        let mut b = vec![0x06, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1];
        b.extend_from_slice(&[0; 10]);
        let p = IbPacket::parse(&b, 12 + 16 + 1024 + 4).unwrap();
        assert!(p.ext().is_none());
        assert_eq!(p.payload_len, 1024);
        assert!(p.payload.is_empty());
    }

    #[test]
    fn cnp_has_no_payload() {
        let mut b = vec![0x81, 0, 0xff, 0xff, 0x40, 0, 0, 0xc1, 0, 0, 0, 0];
        b.extend_from_slice(&[0; 16 + 4]);
        let p = IbPacket::parse(&b, 32).unwrap();
        assert_eq!(p.payload_len, 0);
        assert_eq!(p.info.name, "CNP");
    }

    #[test]
    fn malformed_packets() {
        let b = send_only_pad3();
        assert_eq!(IbPacket::parse(&b[..11], 24).unwrap_err(), Error::truncated(Layer::Bth, 12, 11));
        assert_eq!(
            IbPacket::parse(&b, 15).unwrap_err(),
            Error::invalid(Layer::Bth, "length shorter than the opcode's headers and ICRC")
        );
        assert_eq!(IbPacket::parse(&b, 11).unwrap_err(), Error::invalid(Layer::Bth, "length field shorter than a BTH"));
        // PadCnt 3 with a 2-byte payload region: pad does not fit
        assert_eq!(IbPacket::parse(&b, 18).unwrap_err(), Error::invalid(Layer::Bth, "PadCnt larger than the payload"));
        let mut reserved = b.clone();
        reserved[0] = 0x15;
        assert_eq!(IbPacket::parse(&reserved, 24).unwrap_err(), Error::invalid(Layer::Bth, "reserved opcode"));
        // an ACK that claims a payload
        let mut ack = vec![0x11, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1, 0x1f, 0, 0, 1];
        ack.extend_from_slice(&[0; 8]);
        assert_eq!(
            IbPacket::parse(&ack, 24).unwrap_err(),
            Error::invalid(Layer::Bth, "payload on an opcode that carries none")
        );
    }
}
