//! Counters, each declared once: the analysis counts into them, the report shows them as they
//! are, the tables take their columns and the live summaries their deltas from the same list.

/// Declares a struct of `u64` counters, with the list of their names ([`Self::NAMES`], the
/// keys the report gives them), their values in that order, the difference of two and the sum.
#[macro_export]
macro_rules! counters {
    ($(#[$meta:meta])* $vis:vis struct $name:ident { $($(#[$fmeta:meta])* $field:ident,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        $vis struct $name {
            $($(#[$fmeta])* pub $field: u64,)*
        }

        impl $name {
            /// The counters' names, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// The counters' values, in the order of [`Self::NAMES`].
            pub fn values(&self) -> impl Iterator<Item = u64> {
                [$(self.$field),*].into_iter()
            }

            /// What was counted since `before` (a counter never goes back; one that did reads 0).
            pub fn since(&self, before: &Self) -> Self {
                $name { $($field: self.$field.saturating_sub(before.$field)),* }
            }

            /// Adds what `other` counted (of other frames) to these counters.
            pub fn add(&mut self, other: &Self) {
                $(self.$field += other.$field;)*
            }
        }

        // counts of frames, never frames by number
        $crate::holds_no_numbers!($name);

        // counts, each added, and grafted as what the part counted after the seam
        impl $crate::analyze::combining::Combine for $name {
            fn add(&mut self, other: &Self) -> Result<(), $crate::analyze::combining::Refused> {
                $name::add(self, other);
                Ok(())
            }

            fn graft(
                &mut self,
                start: &Self,
                end: Self,
                _: &$crate::analyze::combining::Seam,
            ) -> Result<(), $crate::analyze::combining::Refused> {
                $name::add(self, &end.since(start));
                Ok(())
            }
        }
    };
}

counters! {
    /// A flow's counts of what it carried and what came of it (docs/analysis.md, "Flows").
    pub struct FlowCounters {
        packets,
        bytes,
        payload_bytes,
        /// RoCE packets whose ICRC is wrong.
        icrc_bad,
        /// RoCE packets the capture does not hold whole.
        icrc_unverifiable,
        /// Native InfiniBand packets whose VCRC is wrong.
        vcrc_bad,
        /// Second copies of packets (another tap, a doubled mirror); not in the other counts.
        mirror_duplicates,
        naks_psn_seq_err,
        naks_other,
        rnr_naks,
        acks,
        atomic_acks,
        cnps,
        /// Native InfiniBand packets with the BTH's FECN or BECN bit set.
        fecn,
        becn,
        messages,
        read_requests,
    }
}

counters! {
    /// What native InfiniBand packets said beyond their transport: VCRC verdicts, the BTH's
    /// congestion marks, and the ERF loss counters.
    pub struct InfinibandCounts {
        vcrc_ok,
        vcrc_bad,
        vcrc_unverifiable,
        fecn,
        becn,
        /// The sum of the ERF records' loss counters: records the capture card dropped.
        erf_records_lost,
    }
}

counters! {
    /// UET packets by what their CRC32C trailer matched: each reading of the CRC
    /// (docs/decoding.md, "UET integrity"), none of them, or not checked (encrypted, cut).
    pub struct UetCrcCounts {
        crc32c_le,
        crc32c_be,
        crc32c_raw_le,
        crc32c_raw_be,
        no_variant,
        unchecked,
    }
}

use crate::decode::IcrcStatus;

counters! {
    /// RoCE packets by ICRC verdict.
    pub struct IcrcCounts {
        ok,
        bad,
        unverifiable,
    }
}

impl IcrcCounts {
    pub fn count(&mut self, status: IcrcStatus) {
        match status {
            IcrcStatus::Ok => self.ok += 1,
            IcrcStatus::Bad => self.bad += 1,
            IcrcStatus::Unverifiable => self.unverifiable += 1,
        }
    }
}

counters! {
    /// Packets by ECN codepoint (RFC 3168 §5: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub struct EcnCounts {
        not_ect,
        ect0,
        ect1,
        ce,
        /// Packets not CE-marked whose VXLAN overlay's outer header is: marked on the
        /// underlay, the mark not (yet) copied inward (RFC 6040 copies it at decapsulation).
        outer_ce,
    }
}

counters! {
    /// Frame counts of the whole capture (report conventions: every frame is RoCE, non-RoCE,
    /// malformed or cut inside its headers; PFC and PAUSE frames are non-RoCE; mirror
    /// duplicates count as frames).
    pub struct FrameCounts {
        frames,
        bytes,
        roce_packets,
        roce_v1,
        roce_v2,
        /// Native InfiniBand transport packets (ERF or LINKTYPE_INFINIBAND); RoCE packets too.
        infiniband,
        non_roce,
        /// InfiniBand link packets (flow control); non-RoCE.
        infiniband_link,
        /// Frames of a link type (or ERF record type) rocescope does not decode; non-RoCE.
        undecoded_link,
        /// Ultra Ethernet Transport packets (UDP 4793 and `--uet-port`, IP protocol 253); non-RoCE.
        uet_packets,
        pfc_frames,
        pause_frames,
        malformed,
        /// Frames the snap length or a mirror cut before their headers ended (a RoCE frame cut
        /// within its BTH): no QP or PSN to analyse, and nothing wrong with the frame.
        headers_cut,
        mirror_duplicates,
    }
}

impl EcnCounts {
    /// Counts a packet of ECN `ecn` whose overlay's outer header is CE-marked (`outer_ce`):
    /// its codepoint, and the outer mark where its own header has none.
    pub fn count_with_outer(&mut self, ecn: u8, outer_ce: bool) {
        self.count(ecn);
        self.outer_ce += u64::from(outer_ce && ecn & 3 != 3);
    }

    /// Counts the codepoint in the low two bits of `ecn`.
    pub fn count(&mut self, ecn: u8) {
        match ecn & 3 {
            0 => self.not_ect += 1,
            1 => self.ect1 += 1,
            2 => self.ect0 += 1,
            _ => self.ce += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_counters_list_their_names_values_and_deltas() {
        let before = FlowCounters { acks: 2, cnps: 5, ..FlowCounters::default() };
        let now = FlowCounters { acks: 7, cnps: 5, messages: 1, ..FlowCounters::default() };
        let delta = now.since(&before);
        assert_eq!(delta, FlowCounters { acks: 5, messages: 1, ..FlowCounters::default() });
        let named: Vec<(&str, u64)> = FlowCounters::NAMES.iter().copied().zip(delta.values()).collect();
        assert!(named.contains(&("acks", 5)) && named.contains(&("messages", 1)) && named.contains(&("cnps", 0)));
        assert_eq!(named.len(), 17);
        assert_eq!(before.since(&now).acks, 0);
    }

    #[test]
    fn codepoints_and_verdicts_land_in_their_counters() {
        let mut ecn = EcnCounts::default();
        for codepoint in [0, 1, 2, 2, 3, 3, 3, 7] {
            ecn.count(codepoint);
        }
        assert_eq!(ecn, EcnCounts { not_ect: 1, ect1: 1, ect0: 2, ce: 4, outer_ce: 0 });
        // an outer mark counts where the packet's own header has none
        ecn.count_with_outer(2, true);
        ecn.count_with_outer(3, true);
        ecn.count_with_outer(2, false);
        assert_eq!(ecn, EcnCounts { not_ect: 1, ect1: 1, ect0: 4, ce: 5, outer_ce: 1 });
        let mut icrc = IcrcCounts::default();
        for status in [IcrcStatus::Ok, IcrcStatus::Bad, IcrcStatus::Bad, IcrcStatus::Unverifiable] {
            icrc.count(status);
        }
        assert_eq!(icrc, IcrcCounts { ok: 1, bad: 2, unverifiable: 1 });
    }
}
