//! The mirror-format scenarios (docs/samples.md): what real switches' mirror sessions put on
//! the wire (`../shared/mirror-formats.md`).

use rocescope_parsers::ext::ExtHeaders;
use rocescope_parsers::psn::psn_add;

use super::encode::{self, L2, RoceFrame};
use super::scenarios::{ACK_32_CREDITS, Conn, Scenario, T0, US, endpoint, write_message};

/// Arista timestamp formats: 64-bit TAI and 48-bit UTC.
const ARISTA_64_TAI: u16 = 0x0010;
const ARISTA_48_UTC: u16 = 0x0120;

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

/// An Arista switch's timestamping (tap aggregation): every frame carries Arista's timestamp
/// header after its source MAC, taken 300 ns before the capture's own time; 64-bit TAI
/// timestamps for the first half of the frames, 48-bit UTC ones after. RDMA WRITEs of 256
/// bytes from 10.0.0.1 to 10.0.0.2, every fourth ACKed, and the last ones mirrored to a
/// collector over GRE (transparent Ethernet, key 0x0A0A) with the timestamp header inside.
pub fn arista_timestamps() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000A11), b: endpoint(2, 0x000A22), vlan: None };
    let collector = L2::new([0x02, 0, 0, 0, 0xEE, 0x01], [0x02, 0, 0, 0, 0xEE, 0xFF]);
    let mut s = Scenario::pcap("mirror_arista_timestamp.pcap");
    let first = 0x000200;
    for n in 0..12u32 {
        let t = T0 + i64::from(n) * 4 * US;
        let mut write = conn.frame(true, 0x0A, psn_add(first, n), reth(n), 256);
        write.bth.ack_req = n % 4 == 3;
        let mut frames = vec![write];
        if n % 4 == 3 {
            frames.push(conn.ack(false, psn_add(first, n), n / 4 + 1, ACK_32_CREDITS));
        }
        for (i, f) in frames.iter().enumerate() {
            let at = t + i as i64 * US;
            let version = if n < 6 { ARISTA_64_TAI } else { ARISTA_48_UTC };
            let stamped = encode::with_arista_timestamp(&f.encode(), version, at - 300);
            let bytes = if n < 9 {
                stamped
            } else {
                encode::gre_ethernet(&collector, [192, 0, 2, 1], [192, 0, 2, 100], 0x0A0A, &stamped)
            };
            s.push(at, bytes);
        }
    }
    s
}

/// NVIDIA Spectrum's mirror session (SONiC everflow) copying one RC connection to a collector:
/// GRE protocol 0x8949, the 22-byte vendor header, then the frame. Four 4 KiB RDMA WRITEs at
/// MTU 1024 from 10.0.0.1 QP 0x000B11 to 10.0.0.2 QP 0x000B22 (DSCP 26, ECT(0)), each ACKed;
/// the switch marks the second packet of the second and fourth messages CE, and the receiver
/// answers each mark with a CNP (DSCP 48) 3 µs later. The session mirrors every packet it sees.
pub fn spectrum_everflow() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000B11), b: endpoint(2, 0x000B22), vlan: None };
    let collector = L2::new([0x02, 0, 0, 0, 0xEE, 0x01], [0x02, 0, 0, 0, 0xEE, 0xFF]);
    let mut s = Scenario::pcap("mirror_spectrum.pcap");
    let mirror = |s: &mut Scenario, t: i64, f: &RoceFrame| {
        let copy = encode::spectrum_mirror(&collector, [192, 0, 2, 1], [192, 0, 2, 100], SPECTRUM_HEADER, &f.encode());
        s.push(t, copy);
    };
    let first = 0x000300;
    for message in 0..4u32 {
        let t = T0 + i64::from(message) * 40 * US;
        let start = psn_add(first, 4 * message);
        let va = 0x7f00_0000_0000 + u64::from(message) * 4096;
        for (i, mut f) in write_message(&conn, start, 4096, 1024, va).into_iter().enumerate() {
            let marked = message % 2 == 1 && i == 1;
            if marked {
                f.l3 = f.l3.with_qos(26, 3);
            }
            mirror(&mut s, t + i as i64 * US, &f);
            if marked {
                mirror(&mut s, t + i as i64 * US + 3 * US, &conn.cnp(false));
            }
        }
        mirror(&mut s, t + 6 * US, &conn.ack(false, psn_add(start, 3), message + 1, ACK_32_CREDITS));
    }
    s.sorted()
}

/// The vendor header's length on the Spectrum parts SONiC's tests run on.
const SPECTRUM_HEADER: usize = 22;

/// A RETH for the `n`-th 256-byte WRITE.
fn reth(n: u32) -> ExtHeaders {
    let reth = rocescope_parsers::ext::Reth { va: 0x7f00_0000_0000 + u64::from(n) * 256, rkey: 0x77, dma_len: 256 };
    ExtHeaders { reth: Some(reth), ..ExtHeaders::default() }
}
