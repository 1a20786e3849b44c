//! The text of a protocol's item, which tshark 4.0's `-T fields` prints for a protocol field
//! (`-e ip`): what the protocol's dissector writes in its item (`Internet Protocol Version 4,
//! Src: 10.0.0.1, Dst: 10.0.0.2`, the decode tree's heading), or, where the dissector writes
//! none (`packet-infiniband.c`, `packet-macctrl.c`, `packet-erf.c`, `packet-vxlan.c`…), the
//! protocol's abbreviation (`infiniband`). A protocol a frame has twice (the outer and the
//! inner IPv4 header of a mirror) has a text for each.

use std::fmt::Write;

use rocescope_parsers::port_tag::PortTagKind;

use super::{Field, Frame, Value, by_name, write_tshark};

/// A heading made of a title and some of its fields' values: `title, Label: value, …`.
pub struct Summary {
    pub title: &'static str,
    /// Each part's label and the name of the field whose value follows it.
    pub parts: &'static [(&'static str, &'static str)],
}

/// How a value of a summary's part is written (tshark's `-T fields` or the decode tree's way).
pub type WriteValue<'w> = &'w mut dyn FnMut(&mut String, &'static Field, &Value<'_>);

impl Summary {
    /// Writes the summary of the `occurrence`-th instance of its protocol in `frame` (0: the
    /// outermost); a part the frame has no value for is left empty.
    pub fn write(&self, out: &mut String, frame: &Frame<'_, '_>, occurrence: usize, value: WriteValue<'_>) {
        out.push_str(self.title);
        for (label, name) in self.parts {
            let _ = write!(out, ", {label}: ");
            if let Some((field, v)) = by_name(name).and_then(|f| Some((f, f.nth(frame, occurrence)?))) {
                value(out, field, &v);
            }
        }
    }
}

/// `packet-vlan.c`'s item.
pub const VLAN: Summary =
    Summary { title: "802.1Q Virtual LAN", parts: &[("PRI", "vlan.priority"), ("DEI", "vlan.dei"), ("ID", "vlan.id")] };

/// `packet-mpls.c`'s item: one for each entry of the label stack.
pub const MPLS: Summary = Summary {
    title: "MultiProtocol Label Switching Header",
    parts: &[("Label", "mpls.label"), ("Exp", "mpls.exp"), ("S", "mpls.bottom"), ("TTL", "mpls.ttl")],
};

/// `packet-ip.c`'s item.
pub const IPV4: Summary =
    Summary { title: "Internet Protocol Version 4", parts: &[("Src", "ip.src"), ("Dst", "ip.dst")] };

/// `packet-ipv6.c`'s item.
pub const IPV6: Summary =
    Summary { title: "Internet Protocol Version 6", parts: &[("Src", "ipv6.src"), ("Dst", "ipv6.dst")] };

/// `packet-udp.c`'s item.
pub const UDP: Summary =
    Summary { title: "User Datagram Protocol", parts: &[("Src Port", "udp.srcport"), ("Dst Port", "udp.dstport")] };

/// Writes the item of the `occurrence`-th instance of `protocol` in `frame` as tshark's
/// `-T fields` prints it.
pub fn write(out: &mut String, frame: &Frame<'_, '_>, protocol: &Field, occurrence: usize) {
    let mut as_tshark = |out: &mut String, field: &'static Field, value: &Value<'_>| {
        write_tshark(out, frame, field, value);
    };
    match protocol.name {
        "frame" => write_frame(out, frame),
        "eth" => write_ethernet(out, frame, occurrence),
        "vlan" => VLAN.write(out, frame, occurrence, &mut as_tshark),
        "mpls" => MPLS.write(out, frame, occurrence, &mut as_tshark),
        "ip" => IPV4.write(out, frame, occurrence, &mut as_tshark),
        "ipv6" => IPV6.write(out, frame, occurrence, &mut as_tshark),
        "udp" => UDP.write(out, frame, occurrence, &mut as_tshark),
        "gre" => write_gre(out, frame, occurrence),
        "erspan" => write_erspan(out, frame, occurrence),
        "etag" => write_etag(out, frame),
        name => out.push_str(name),
    }
}

/// `packet-frame.c`'s item (a pcapng or ERF record's interface, which tshark adds, is not
/// kept): `1 byte` but `2 bytes`, as tshark has it.
fn write_frame(out: &mut String, frame: &Frame<'_, '_>) {
    let (wire, captured) = (u64::from(frame.packet.orig_len), frame.packet.data.len() as u64);
    let bytes = |n: u64| if n == 1 { "byte" } else { "bytes" };
    let _ = write!(
        out,
        "Frame {}: {wire} {} on wire ({} bits), {captured} {} captured ({} bits)",
        frame.number,
        bytes(wire),
        wire * 8,
        bytes(captured),
        captured * 8
    );
}

/// `packet-eth.c`'s item: each address, then again in parentheses (where tshark would put a
/// vendor's or a well-known address's name first, rocescope repeats the address).
fn write_ethernet(out: &mut String, frame: &Frame<'_, '_>, occurrence: usize) {
    let mut n = 0;
    frame.ethernets(&mut |eth| {
        if n == occurrence {
            let (src, dst) = (eth.header.source(), eth.header.destination());
            let _ = write!(out, "Ethernet II, Src: {src} ({src}), Dst: {dst} ({dst})");
        }
        n += 1;
    });
}

/// `packet-gre.c`'s item: the protocol type's name in parentheses.
fn write_gre(out: &mut String, frame: &Frame<'_, '_>, occurrence: usize) {
    let Some(protocol) = by_name("gre.proto").and_then(|f| f.nth(frame, occurrence)?.as_uint()) else { return };
    let _ = match gre_protocol_name(protocol) {
        Some(name) => write!(out, "Generic Routing Encapsulation ({name})"),
        None => write!(out, "Generic Routing Encapsulation (0x{protocol:04x} - unknown)"),
    };
}

/// Wireshark's `gre_typevals`, for the protocol types rocescope follows.
fn gre_protocol_name(protocol: u64) -> Option<&'static str> {
    Some(match protocol {
        0x0800 => "IP",
        0x86dd => "IPv6",
        0x6558 => "Transparent Ethernet bridging",
        0x8847 => "MPLS label switched packet",
        0x88be => "ERSPAN",
        0x22eb => "ERSPAN III",
        _ => return None,
    })
}

/// `packet-erspan.c`'s item: the header's type.
fn write_erspan(out: &mut String, frame: &Frame<'_, '_>, occurrence: usize) {
    let mut n = 0;
    frame.encaps(&mut |kind| {
        let version = match kind {
            crate::decode::EncapKind::Erspan1 => "I",
            crate::decode::EncapKind::Erspan2(_) => "II",
            crate::decode::EncapKind::Erspan3(_) => "III",
            _ => return,
        };
        if n == occurrence {
            let _ = write!(out, "Encapsulated Remote Switch Packet ANalysis Type {version}");
        }
        n += 1;
    });
}

/// `packet-etag.c`'s item: the tag's control information in hex, then its two channel ids
/// (base and extension together).
fn write_etag(out: &mut String, frame: &Frame<'_, '_>) {
    let Some((ingress, channel, ingress_ext, channel_ext)) = frame.port_tag(PortTagKind::ETag).map(|t| t.etag_words())
    else {
        return;
    };
    let ingress_ecid = u32::from(ingress_ext) << 12 | u32::from(ingress & 0x0fff);
    let ecid = u32::from(channel_ext) << 12 | u32::from(channel & 0x0fff);
    let _ = write!(
        out,
        "802.1BR E-Tag, TCI: 0x{ingress:04x}{channel:04x}{ingress_ext:02x}{channel_ext:02x} Ingress_E-CID: {ingress_ecid} E-CID: {ecid}"
    );
}
