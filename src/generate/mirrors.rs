//! The mirror-format scenarios (docs/samples.md): what real switches' mirror sessions put on
//! the wire (`../shared/mirror-formats.md`).

use rocescope_parsers::ext::ExtHeaders;
use rocescope_parsers::psn::psn_add;

use super::encode::{self, L2, RoceFrame};
use super::scenarios::{ACK_32_CREDITS, Conn, Scenario, T0, US, endpoint};

/// What a `truncate size` of 64 bytes keeps of each mirrored frame (SONiC `truncate_size`,
/// Cumulus and Arista `truncate size`).
const TRUNCATE_SIZE: usize = 64;

/// An AETH syndrome: NAK, PSN sequence error.
const NAK_PSN_SEQUENCE: u8 = 0x60;

/// A mirror session that truncates its copies and marks nothing: ERSPAN type I (GRE 0x88BE
/// without a sequence number or ERSPAN header, as Broadcom-based switches send it), every
/// mirrored frame cut to its first 64 bytes. Three 4 KiB SENDs at MTU 1024 from 10.0.0.1 to
/// 10.0.0.2, each ACKed; the second packet of the second message is lost before the mirror,
/// the responder NAKs it and the requester goes back to it. Headers, PSNs and lengths are all
/// there; no ICRC can be verified.
pub fn truncated_copies() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000911), b: endpoint(2, 0x000922), vlan: None };
    let collector = L2::new([0x02, 0, 0, 0, 0xEE, 0x01], [0x02, 0, 0, 0, 0xEE, 0xFF]);
    let mut s = Scenario::pcap("mirror_truncated.pcap");
    let mut t = T0;
    let mut mirror = |s: &mut Scenario, f: &RoceFrame| {
        let frame = f.encode();
        let kept = &frame[..frame.len().min(TRUNCATE_SIZE)];
        s.push(t, encode::erspan1(&collector, [192, 0, 2, 1], [192, 0, 2, 100], kept));
        t += 2 * US;
    };
    let first = 0x000100;
    let send = |n: u32| {
        // SEND FIRST, MIDDLE, MIDDLE, LAST
        let opcode = [0x00, 0x01, 0x01, 0x02][(n % 4) as usize];
        let mut f = conn.frame(true, opcode, psn_add(first, n), ExtHeaders::default(), 1024);
        f.bth.ack_req = n % 4 == 3;
        f
    };
    for n in 0..12u32 {
        if n == 5 {
            continue;
        }
        mirror(&mut s, &send(n));
        if n == 6 {
            mirror(&mut s, &conn.ack(false, psn_add(first, 5), 1, NAK_PSN_SEQUENCE));
            for resent in 5..7 {
                mirror(&mut s, &send(resent));
            }
        }
        if n % 4 == 3 {
            mirror(&mut s, &conn.ack(false, psn_add(first, n), n / 4 + 1, ACK_32_CREDITS));
        }
    }
    s
}
