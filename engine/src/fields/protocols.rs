//! A frame's protocols as Wireshark names them: the chain `frame.protocols` shows
//! (`eth:ethertype:ip:udp:infiniband:data`), tshark's Protocol column (`_ws.col.Protocol`), and
//! the bytes a protocol takes, which display filters read when they slice, measure or search a
//! protocol (`len(ip) == 20`, `frame contains "abc"`).

use std::collections::HashSet;
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use crate::decode::{Body, EncapKind, Other};

use super::{Frame, Layer};

/// The protocol a layer belongs to, as Wireshark names it, and whether Wireshark's
/// `ethertype` dispatcher follows it; `None` for a layer no protocol of the chain shows.
fn protocol_of(layer: Layer, body: &Body<'_>) -> Option<(&'static str, bool)> {
    Some(match layer {
        Layer::Frame => ("frame", false),
        Layer::Sll => ("sll", true),
        Layer::RawIp => ("raw", false),
        Layer::Erf => ("erf", false),
        Layer::Lrh | Layer::Other if matches!(body, Body::Other(Other::InfinibandLink { .. })) => {
            ("infiniband_link", false)
        }
        Layer::Lrh
        | Layer::Grh
        | Layer::Bth
        | Layer::Ext(_)
        | Layer::ExtCut
        | Layer::Mad
        | Layer::Cm
        | Layer::Icrc
        | Layer::Vcrc => ("infiniband", false),
        Layer::Ethernet => ("eth", true),
        Layer::Vlan => ("vlan", true),
        Layer::OtherVlan(_) => ("ieee8021ad", true),
        Layer::Arista => ("avsp", true),
        Layer::VnTag => ("vntag", true),
        Layer::ETag => ("etag", true),
        Layer::Mpls => ("mpls", false),
        Layer::PwControlWord => ("pwethcw", false),
        Layer::Ipv4 => ("ip", false),
        Layer::Ipv6 => ("ipv6", false),
        Layer::Udp => ("udp", false),
        Layer::Gre => ("gre", false),
        Layer::Erspan => ("erspan", false),
        Layer::Spectrum => ("rocescope.spectrum", false),
        Layer::Vxlan => ("vxlan", false),
        Layer::MacControl => ("macc", false),
        Layer::UetEntropy | Layer::UetTss | Layer::UetPds | Layer::UetSes | Layer::UetTrailer => ("uet", false),
        Layer::Payload => match body {
            Body::Uet(_) => ("uet", false),
            _ => ("data", false),
        },
        Layer::Other | Layer::UnsupportedLink => (
            match body {
                Body::Other(Other::Arp) => "arp",
                Body::Other(Other::Lldp) => "lldp",
                Body::Other(Other::Tcp { .. }) => "tcp",
                Body::Other(Other::Icmp) => "icmp",
                Body::Other(Other::Icmpv6) => "icmpv6",
                _ => "data",
            },
            false,
        ),
        Layer::Malformed | Layer::Trailer | Layer::Metamako | Layer::Analysis => return None,
    })
}

/// Calls `sink` with each protocol of the frame in wire order and the bytes it takes, one
/// call for each occurrence (a protocol's consecutive layers are one: the BTH, extended
/// headers, payload and ICRC are `infiniband`, as in Wireshark; an MPLS label stack is one
/// `mpls`). `frame` takes every captured byte; a header protocol its header (`ip` the IPv4
/// header: `len(ip) == 20`; Wireshark's `erspan` and `gre` take the frame they carry as well,
/// rocescope's their header only); an empty payload is no `data`.
pub fn protocols(frame: &Frame<'_, '_>, sink: &mut dyn FnMut(&'static str, Range<usize>)) {
    let body = &frame.packet.body;
    let mut open: Option<(&'static str, Range<usize>)> = None;
    frame.layers(&mut |layer, span| {
        let Some((mut name, _)) = protocol_of(layer, body) else { return };
        // Wireshark's `infiniband` takes its payload and ICRC too
        if layer == Layer::Payload && matches!(body, Body::Roce(_)) {
            name = "infiniband";
        }
        if name == "data" && span.is_empty() {
            return;
        }
        match &mut open {
            Some((current, range)) if *current == name && name != "frame" => {
                range.end = range.end.max(span.end);
                return;
            }
            _ => {}
        }
        if let Some((current, range)) = open.replace((name, span)) {
            sink(current, range);
        }
    });
    if let Some((current, range)) = open {
        sink(current, range);
    }
}

/// Writes the frame's protocol chain as tshark's `frame.protocols` shows it:
/// `eth:ethertype:ip:udp:infiniband:data` (a CM MAD's payload is `infiniband`'s own).
pub fn write_chain(frame: &Frame<'_, '_>, out: &mut String) {
    let body = &frame.packet.body;
    // tshark shows no `data` for a payload the snap length cut
    let cut = frame.packet.data.len() < frame.packet.orig_len as usize;
    let has_mad = matches!(body, Body::Roce(r) if r.mad.is_some());
    // tshark 4.0 hands no RD or XRC payload, nor one of an RC opcode it does not know, to
    // `data`
    let no_data_opcode = frame.bth().is_some_and(|b| matches!(b.opcode(), 24..=31 | 64..=95 | 160..=191));
    // for each GRE header, whether it carries ERSPAN type I (no header of its own: Wireshark
    // still shows an `erspan`)
    let mut erspan1 = Vec::new();
    frame.encaps(&mut |kind| match kind {
        EncapKind::Vxlan { .. } | EncapKind::MplsPseudowire(_) => {}
        kind => erspan1.push(matches!(kind, EncapKind::Erspan1)),
    });
    let mut erspan1 = erspan1.into_iter();
    let mut last: Option<&str> = None;
    frame.layers(&mut |layer, span| {
        let Some((name, dispatches)) = protocol_of(layer, body) else { return };
        if name == "frame" || (name == "data" && (span.is_empty() || has_mad || cut || no_data_opcode)) {
            return;
        }
        // the ICRC and VCRC end `infiniband`'s bytes, after its payload's `data`
        if matches!(layer, Layer::Icrc | Layer::Vcrc) {
            return;
        }
        // one name for the layers of one protocol; but each 802.1Q tag is a `vlan` of its own
        if last == Some(name) && !matches!(layer, Layer::Vlan | Layer::OtherVlan(_)) {
            return;
        }
        if !out.is_empty() {
            out.push(':');
        }
        out.push_str(name);
        if dispatches {
            out.push_str(":ethertype");
        }
        if layer == Layer::Gre && erspan1.next() == Some(true) {
            out.push_str(":erspan");
        }
        last = Some(name);
    });
}

/// `chain`, kept for the rest of the run: a capture has few distinct chains, and a field's
/// value borrows its text.
pub fn interned(chain: &str) -> &'static str {
    static CHAINS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut chains = CHAINS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = chains.get(chain) {
        return known;
    }
    let kept: &'static str = Box::leak(chain.to_owned().into_boxed_str());
    chains.insert(kept);
    kept
}

/// tshark 4.0's Protocol column for the frame: the last protocol's short name (`RRoCE` for
/// RoCEv2, `RoCE` for RoCEv1, `InfiniBand` for a native packet).
pub fn column(frame: &Frame<'_, '_>) -> &'static str {
    let p = frame.packet;
    match &p.body {
        Body::Roce(r) if r.is_native() => "InfiniBand",
        Body::Roce(r) if r.version == 1 => "RoCE",
        Body::Roce(_) => "RRoCE",
        Body::Uet(_) => "UET",
        Body::MacControl(_) => "MAC CTRL",
        Body::Other(Other::InfinibandLink { .. }) => "InfiniBand Link",
        Body::Other(Other::InfinibandNonIba { .. }) => "InfiniBand",
        Body::Other(Other::Arp) => "ARP",
        Body::Other(Other::Lldp) => "LLDP",
        Body::Other(Other::Tcp { .. }) => "TCP",
        Body::Other(Other::Icmp) => "ICMP",
        Body::Other(Other::Icmpv6) => "ICMPv6",
        Body::Other(Other::MacControl { .. }) => "MAC CTRL",
        _ => {
            let mut last = "";
            frame.layers(&mut |layer, _| {
                last = match layer {
                    Layer::Ethernet => "Ethernet",
                    Layer::Ipv4 => "IPv4",
                    Layer::Ipv6 => "IPv6",
                    Layer::Udp => "UDP",
                    Layer::Gre => "GRE",
                    Layer::Mpls => "MPLS",
                    Layer::Vxlan => "VXLAN",
                    _ => last,
                }
            });
            last
        }
    }
}
