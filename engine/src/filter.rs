//! Display filters for `packets`: by QP, opcode, IP address and frame class.

use std::net::IpAddr;

use rocescope_parsers::cm::CmMessage;

use crate::decode::{Body, DecodedFrame, IcrcStatus, UetCrc};

/// Frame classes selectable with `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// RoCE packets (v1 and v2, CM included).
    Roce,
    /// PFC and 802.3x PAUSE frames.
    Pfc,
    /// RDMA CM messages.
    Cm,
    /// Malformed frames and RoCE packets whose ICRC is bad.
    Errors,
}

impl Only {
    pub const ALL: [Only; 4] = [Only::Roce, Only::Pfc, Only::Cm, Only::Errors];

    pub fn name(self) -> &'static str {
        match self {
            Only::Roce => "roce",
            Only::Pfc => "pfc",
            Only::Cm => "cm",
            Only::Errors => "errors",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Only::Roce => "RoCE packets (v1 and v2, CM included)",
            Only::Pfc => "PFC and 802.3x PAUSE frames",
            Only::Cm => "RDMA CM messages",
            Only::Errors => "Malformed frames, RoCE packets whose ICRC is bad and UET packets whose CRC is bad",
        }
    }
}

/// An opcode selector: a number, or part of an opcode name (case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpcodeSelector {
    Number(u8),
    Name(String),
}

impl std::str::FromStr for OpcodeSelector {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match parse_number(s) {
            Some(n) => u8::try_from(n).map(OpcodeSelector::Number).map_err(|_| format!("opcode {s} is above 0xff")),
            None if s.is_empty() => Err("empty opcode".into()),
            None => {
                let part = s.to_ascii_uppercase().replace([' ', '-'], "_");
                match opcode_names().any(|name| name.contains(part.as_str())) {
                    true => Ok(OpcodeSelector::Name(part)),
                    false => Err(unknown_opcode_name(&part)),
                }
            }
        }
    }
}

/// The names of every opcode a transport defines (IBA Table 38 and the vendor range).
fn opcode_names() -> impl Iterator<Item = &'static str> {
    (0..=u8::MAX).filter_map(|opcode| rocescope_parsers::opcode::info(opcode).map(|i| i.name))
}

/// Why no opcode is named by `part`: the nearest word of a name (a swap of two letters
/// counts as one edit), and every word.
fn unknown_opcode_name(part: &str) -> String {
    let mut words: Vec<&str> = opcode_names().flat_map(|name| name.split('_')).collect();
    words.sort_unstable();
    words.dedup();
    let nearest = words.iter().min_by_key(|w| strsim::osa_distance(part, w)).copied().unwrap_or_default();
    format!(
        "no opcode's name holds {part} (did you mean {nearest}?); an opcode is a number (0x0a) or part of its name, of the words {}",
        words.join(", ")
    )
}

/// Parses a decimal or `0x`-prefixed hexadecimal number.
pub fn parse_number(s: &str) -> Option<u32> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Parses a QP number (24 bits), decimal or hex.
pub fn parse_qpn(s: &str) -> Result<u32, String> {
    parse_number(s).filter(|n| *n <= 0xFF_FFFF).ok_or_else(|| format!("'{s}' is not a QP number (0 to 0xffffff)"))
}

/// All filters given; a frame is shown when it passes every one that was set.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub qps: Vec<u32>,
    pub opcodes: Vec<OpcodeSelector>,
    pub ips: Vec<IpAddr>,
    pub only: Option<Only>,
}

impl Filter {
    /// Does the filter match every frame (no option given)?
    pub fn matches_all(&self) -> bool {
        self.only.is_none() && self.qps.is_empty() && self.opcodes.is_empty() && self.ips.is_empty()
    }

    pub fn matches(&self, p: &DecodedFrame<'_>) -> bool {
        self.matches_only(p) && self.matches_qp(p) && self.matches_opcode(p) && self.matches_ip(p)
    }

    fn matches_only(&self, p: &DecodedFrame<'_>) -> bool {
        match self.only {
            None => true,
            Some(Only::Roce) => matches!(p.body, Body::Roce(_)),
            Some(Only::Pfc) => matches!(p.body, Body::MacControl(_)),
            Some(Only::Cm) => p.roce().is_some_and(|r| r.cm.is_some()),
            Some(Only::Errors) => match &p.body {
                Body::Malformed(_) => true,
                Body::Roce(r) => r.icrc == IcrcStatus::Bad,
                Body::Uet(u) => matches!(u.crc, UetCrc::NoVariant { .. }),
                _ => false,
            },
        }
    }

    /// A QP matches as BTH destination, DETH source, or a QPN named in a CM message.
    fn matches_qp(&self, p: &DecodedFrame<'_>) -> bool {
        if self.qps.is_empty() {
            return true;
        }
        let Some(roce) = p.roce() else { return false };
        let mut qpns = [Some(roce.ib.bth.dest_qp()), roce.ib.ext().and_then(|e| e.deth).map(|d| d.src_qp), None];
        if let Some(cm) = &roce.cm {
            qpns[2] = match &cm.message {
                CmMessage::Req(r) => Some(r.local_qpn()),
                CmMessage::Rep(r) => Some(r.local_qpn()),
                CmMessage::Dreq(r) => Some(r.remote_qpn()),
                _ => None,
            };
        }
        qpns.iter().flatten().any(|q| self.qps.contains(q))
    }

    fn matches_opcode(&self, p: &DecodedFrame<'_>) -> bool {
        if self.opcodes.is_empty() {
            return true;
        }
        let Some(roce) = p.roce() else { return false };
        let (opcode, name) = (roce.ib.bth.opcode(), roce.ib.info.name);
        self.opcodes.iter().any(|sel| match sel {
            OpcodeSelector::Number(n) => *n == opcode,
            OpcodeSelector::Name(part) => name.contains(part.as_str()),
        })
    }

    fn matches_ip(&self, p: &DecodedFrame<'_>) -> bool {
        self.ips.is_empty() || [p.src_ip(), p.dst_ip()].iter().flatten().any(|ip| self.ips.contains(ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_selectors() {
        assert_eq!(parse_number("0x12a"), Some(0x12a));
        assert_eq!(parse_number("298"), Some(298));
        assert_eq!(parse_number("zz"), None);
        assert_eq!(parse_qpn("0x1000000"), Err("'0x1000000' is not a QP number (0 to 0xffffff)".into()));
        assert_eq!("0x11".parse::<OpcodeSelector>(), Ok(OpcodeSelector::Number(0x11)));
        assert_eq!("rdma write".parse::<OpcodeSelector>(), Ok(OpcodeSelector::Name("RDMA_WRITE".into())));
        assert!("0x100".parse::<OpcodeSelector>().is_err());
        assert_eq!("rc_ack".parse::<OpcodeSelector>(), Ok(OpcodeSelector::Name("RC_ACK".into())));
        let unknown = "wirte".parse::<OpcodeSelector>().unwrap_err();
        assert!(unknown.starts_with("no opcode's name holds WIRTE (did you mean WRITE?); an opcode is a number"));
        assert!(unknown.ends_with("UC, UD, VENDOR, WITH, WRITE, XRC"), "{unknown}");
    }
}
