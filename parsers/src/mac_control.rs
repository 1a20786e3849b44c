//! MAC Control frames (EtherType 0x8808): IEEE 802.3 Annex 31B PAUSE (opcode 0x0001) and
//! IEEE 802.1Qbb / 802.3 Annex 31D priority-based flow control, PFC (opcode 0x0101).
//!
//! PAUSE: opcode, pause_time (quanta). PFC: opcode, class-enable vector (bit n of the low byte
//! enables priority n), then eight 16-bit pause times, priority 0 first. One quantum is 512 bit
//! times at the port's speed. A time is meaningful only when its class is enabled; enabled with
//! time 0 means XON (resume now).

use crate::error::{Error, Layer, be16, split_array};

pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;

/// A decoded MAC Control frame payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacControl {
    /// 802.3x PAUSE: all traffic paused for `quanta` (0 = resume).
    Pause { quanta: u16 },
    /// 802.1Qbb PFC.
    Pfc(Pfc),
    /// Another MAC Control opcode (e.g. EPON GATE); not decoded further.
    Other { opcode: u16 },
}

/// A PFC frame: which priorities it addresses and the pause time for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Pfc {
    /// The full 16-bit class-enable vector as on the wire (the high byte is reserved, 0).
    pub class_enable: u16,
    /// Pause time per priority, in quanta, priority 0 first.
    pub quanta: [u16; 8],
}

impl Pfc {
    /// Is priority `p` (0..8) addressed by this frame?
    pub fn enabled(&self, priority: u8) -> bool {
        priority < 8 && self.class_enable & (1 << priority) != 0
    }

    /// The pause time for priority `p`, if enabled.
    pub fn pause_quanta(&self, priority: u8) -> Option<u16> {
        if self.enabled(priority) { self.quanta.get(usize::from(priority)).copied() } else { None }
    }
}

impl MacControl {
    /// The opcode on the wire.
    pub fn opcode(&self) -> u16 {
        match self {
            MacControl::Pause { .. } => OPCODE_PAUSE,
            MacControl::Pfc(_) => OPCODE_PFC,
            MacControl::Other { opcode } => *opcode,
        }
    }

    /// Parses the payload after the EtherType.
    pub fn parse(input: &[u8]) -> Result<MacControl, Error> {
        let (op, rest) = split_array::<2>(input, Layer::MacControl)?;
        match be16(*op) {
            OPCODE_PAUSE => {
                let (time, _) = split_array::<2>(rest, Layer::MacControl)
                    .map_err(|_| Error::truncated(Layer::MacControl, 4, input.len()))?;
                Ok(MacControl::Pause { quanta: be16(*time) })
            }
            OPCODE_PFC => {
                let (body, _) = split_array::<18>(rest, Layer::MacControl)
                    .map_err(|_| Error::truncated(Layer::MacControl, 20, input.len()))?;
                let mut quanta = [0u16; 8];
                for (slot, pair) in quanta.iter_mut().zip(body[2..].chunks_exact(2)) {
                    if let [hi, lo] = *pair {
                        *slot = be16([hi, lo]);
                    }
                }
                Ok(MacControl::Pfc(Pfc { class_enable: be16([body[0], body[1]]), quanta }))
            }
            opcode => Ok(MacControl::Other { opcode }),
        }
    }
}

impl MacControl {
    /// Writes the opcode and its parameters through `put` (a PAUSE's quanta; a PFC frame's
    /// class-enable vector and eight quanta; nothing after another opcode). The frame's
    /// padding to the minimum size is the caller's.
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&self.opcode().to_be_bytes());
        match self {
            MacControl::Pause { quanta } => put(&quanta.to_be_bytes()),
            MacControl::Pfc(pfc) => {
                put(&pfc.class_enable.to_be_bytes());
                pfc.quanta.iter().for_each(|q| put(&q.to_be_bytes()));
            }
            MacControl::Other { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pfc_priority_3_xoff_and_5_xon() {
        // opcode 0x0101, enable P3 and P5, P3 = 0xffff, P5 = 0
        let mut b = vec![0x01, 0x01, 0x00, 0x28];
        for p in 0..8u8 {
            b.extend_from_slice(if p == 3 { &[0xff, 0xff] } else { &[0x00, 0x00] });
        }
        b.extend_from_slice(&[0; 26]);
        let MacControl::Pfc(pfc) = MacControl::parse(&b).unwrap() else { panic!("not PFC") };
        assert_eq!(pfc.class_enable, 0x0028);
        assert_eq!(pfc.pause_quanta(3), Some(0xffff));
        assert_eq!(pfc.pause_quanta(5), Some(0));
        assert_eq!(pfc.pause_quanta(0), None);
        assert_eq!(pfc.pause_quanta(9), None);
        assert_eq!(pfc.quanta[3], 65535);
    }

    #[test]
    fn pause_frame() {
        let b = [0x00, 0x01, 0x12, 0x34, 0, 0];
        assert_eq!(MacControl::parse(&b).unwrap(), MacControl::Pause { quanta: 0x1234 });
        assert_eq!(MacControl::parse(&b).unwrap().opcode(), OPCODE_PAUSE);
    }

    #[test]
    fn other_opcode_is_kept() {
        assert_eq!(MacControl::parse(&[0x00, 0x02]).unwrap(), MacControl::Other { opcode: 2 });
    }

    #[test]
    fn truncated_frames() {
        assert_eq!(MacControl::parse(&[0x01]).unwrap_err(), Error::truncated(Layer::MacControl, 2, 1));
        assert_eq!(MacControl::parse(&[0x01, 0x01, 0, 8, 0]).unwrap_err(), Error::truncated(Layer::MacControl, 20, 5));
        assert_eq!(MacControl::parse(&[0x00, 0x01, 0]).unwrap_err(), Error::truncated(Layer::MacControl, 4, 3));
    }
}
