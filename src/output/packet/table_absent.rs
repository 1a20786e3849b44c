//! A build without the `tables` feature has no per-packet table: a type with no values stands
//! for it where `analyze` would feed one (it refuses `--out` before any could be made).

use std::io;

use crate::ordered::{Decided, FrameSink};
use crate::output::atomic::Written;

pub enum PacketTable {}

impl PacketTable {
    pub fn finish(self) -> io::Result<Written> {
        match self {}
    }
}

impl FrameSink for PacketTable {
    fn write(&mut self, _: Decided<'_, '_>) -> io::Result<()> {
        match *self {}
    }
}
