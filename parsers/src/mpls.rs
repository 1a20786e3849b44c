//! MPLS label stacks (RFC 3032 §2.1), over Ethernet (EtherType 0x8847 unicast, 0x8848
//! multicast) and inside GRE (protocol 0x8847: MPLS-over-GRE mirroring and DCI links).
//!
//! Each stack entry is 32 bits: label (20), traffic class (3, once "EXP"), bottom of stack S
//! (1), TTL (8). Nothing in the stack says what follows its bottom entry; as RFC 4928 and
//! RFC 4385 have it, the payload's first nibble does: 4 is IPv4, 6 is IPv6, 0 is a pseudowire
//! control word (RFC 4385 §3: 0000, flags, fragment, length, sequence number) before an
//! Ethernet frame. An Ethernet pseudowire without a control word is recognised by a known
//! EtherType where an Ethernet header would have it.

use crate::error::{Error, Layer, be16, be32, split_array};
use crate::ethernet::{ETHERTYPE_MPLS, ETHERTYPE_MPLS_MULTICAST, frame_starts_at};

/// Is `ethertype` (or a GRE protocol) one of MPLS's?
pub fn is_mpls(ethertype: u16) -> bool {
    matches!(ethertype, ETHERTYPE_MPLS | ETHERTYPE_MPLS_MULTICAST)
}

/// One label stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MplsLabel {
    pub label: u32,
    /// Traffic class (RFC 5462; the "experimental" bits before it).
    pub tc: u8,
    pub bottom: bool,
    pub ttl: u8,
}

impl MplsLabel {
    fn of(word: u32) -> MplsLabel {
        MplsLabel { label: word >> 12, tc: ((word >> 9) & 7) as u8, bottom: word & 0x100 != 0, ttl: word as u8 }
    }
}

/// What follows the bottom of the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MplsPayload {
    Ipv4,
    Ipv6,
    /// An Ethernet frame (an Ethernet pseudowire), after a control word or straight after the
    /// stack.
    Ethernet,
    /// Neither IP nor an Ethernet frame that can be recognised.
    Unknown,
}

/// A label stack view: its entries, to the one with the S bit, then a pseudowire control word
/// when one precedes an Ethernet payload.
#[derive(Debug, Clone, Copy)]
pub struct MplsStack<'a> {
    labels: &'a [u8],
    control_word: Option<&'a [u8; 4]>,
    pub payload: MplsPayload,
}

impl<'a> MplsStack<'a> {
    /// Parses the stack from the bytes after the EtherType (or GRE header) that announced it;
    /// the rest is the payload, after the control word if there is one.
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let mut rest = input;
        loop {
            let (entry, after) = split_array::<4>(rest, Layer::Mpls)
                .map_err(|_| Error::truncated(Layer::Mpls, input.len() - rest.len() + 4, input.len()))?;
            rest = after;
            if entry[2] & 0x01 != 0 {
                break;
            }
        }
        let labels = input.get(..input.len() - rest.len()).unwrap_or_default();
        let (payload, control_word) = Self::payload_of(rest);
        let rest = if control_word.is_some() { rest.get(4..).unwrap_or_default() } else { rest };
        Ok((MplsStack { labels, control_word, payload }, rest))
    }

    /// The payload's kind by its first nibble, and the control word before an Ethernet frame.
    fn payload_of(after_stack: &'a [u8]) -> (MplsPayload, Option<&'a [u8; 4]>) {
        let control_word = after_stack.get(..4).and_then(|cw| <&[u8; 4]>::try_from(cw).ok());
        match after_stack.first().map(|b| b >> 4) {
            Some(4) => (MplsPayload::Ipv4, None),
            Some(6) => (MplsPayload::Ipv6, None),
            Some(0) if frame_starts_at(after_stack, 4) => (MplsPayload::Ethernet, control_word),
            Some(_) if frame_starts_at(after_stack, 0) => (MplsPayload::Ethernet, None),
            _ => (MplsPayload::Unknown, None),
        }
    }

    /// The stack's bytes, the control word left out.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.labels
    }

    /// The entries, outermost first.
    pub fn labels(&self) -> impl Iterator<Item = MplsLabel> + 'a {
        self.labels.chunks_exact(4).map(|c| match *c {
            [a, b, c, d] => MplsLabel::of(be32([a, b, c, d])),
            _ => MplsLabel::of(0), // unreachable: chunks_exact yields 4 bytes
        })
    }

    /// The pseudowire control word's bytes.
    pub fn control_word(&self) -> Option<&'a [u8; 4]> {
        self.control_word
    }

    /// The control word's sequence number (RFC 4385 §3; 0 when not used).
    pub fn sequence_number(&self) -> Option<u16> {
        self.control_word.map(|cw| be16([cw[2], cw[3]]))
    }
}

impl MplsLabel {
    /// The 4-byte label stack entry (label 20 bits, TC 3 bits).
    pub fn emit(&self) -> [u8; 4] {
        let word = ((self.label & 0xF_FFFF) << 12)
            | (u32::from(self.tc & 0x07) << 9)
            | (u32::from(self.bottom) << 8)
            | u32::from(self.ttl);
        word.to_be_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet header with the IPv4 EtherType, then one byte of IPv4.
    const ETHERNET: [u8; 15] = [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45];

    #[test]
    fn a_two_label_stack_before_ipv4() {
        // label 16 TC 5 TTL 64, then label 0x12345 TC 0, bottom, TTL 1; then IPv4
        let bytes = [0x00, 0x01, 0x0A, 0x40, 0x12, 0x34, 0x51, 0x01, 0x45, 0x00];
        let (stack, rest) = MplsStack::parse(&bytes).unwrap();
        let labels: Vec<MplsLabel> = stack.labels().collect();
        assert_eq!(labels[0], MplsLabel { label: 16, tc: 5, bottom: false, ttl: 64 });
        assert_eq!(labels[1], MplsLabel { label: 0x12345, tc: 0, bottom: true, ttl: 1 });
        assert_eq!((stack.payload, stack.control_word(), rest), (MplsPayload::Ipv4, None, &[0x45, 0x00][..]));
        assert_eq!(stack.as_bytes().len(), 8);
    }

    #[test]
    fn an_ethernet_pseudowire_with_and_without_a_control_word() {
        let mut bytes = vec![0x00, 0x01, 0x01, 0xFF, 0x00, 0x00, 0x00, 0x07];
        bytes.extend_from_slice(&ETHERNET);
        let (stack, rest) = MplsStack::parse(&bytes).unwrap();
        assert_eq!((stack.payload, stack.sequence_number()), (MplsPayload::Ethernet, Some(7)));
        assert_eq!(rest, &ETHERNET[..]);
        let mut bytes = vec![0x00, 0x01, 0x01, 0xFF];
        bytes.extend_from_slice(&ETHERNET);
        let (stack, rest) = MplsStack::parse(&bytes).unwrap();
        assert_eq!((stack.payload, stack.control_word(), rest), (MplsPayload::Ethernet, None, &ETHERNET[..]));
    }

    #[test]
    fn unknown_payloads_and_cut_stacks() {
        let (stack, rest) = MplsStack::parse(&[0x00, 0x01, 0x01, 0xFF, 0x9A, 0xBC]).unwrap();
        assert_eq!((stack.payload, rest), (MplsPayload::Unknown, &[0x9A, 0xBC][..]));
        let (stack, _) = MplsStack::parse(&[0x00, 0x01, 0x01, 0xFF]).unwrap();
        assert_eq!(stack.payload, MplsPayload::Unknown);
        // no entry with the S bit: the stack runs past the input
        assert_eq!(MplsStack::parse(&[0, 1, 0, 64, 0, 2]).unwrap_err(), Error::truncated(Layer::Mpls, 8, 6));
        assert_eq!(MplsStack::parse(&[]).unwrap_err(), Error::truncated(Layer::Mpls, 4, 0));
    }
}
