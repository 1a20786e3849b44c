//! Cache hints: asking the CPU to start loading memory ahead of its use, so that the latency of
//! the load overlaps other work. A hint only: it never faults, never reads the memory on the
//! program's behalf, and changes no result.

/// Starts loading `bytes` into the caches. A thread that hashes frame after frame of a mapping
/// overlaps the memory latency of the next frames with the work on this one; the hardware
/// prefetcher alone stops at every page boundary.
#[inline]
pub fn bytes(bytes: &[u8]) {
    for line in bytes.chunks(64) {
        hint(line.as_ptr());
    }
}

#[inline]
fn hint(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE, which the intrinsic needs, is part of every x86_64 CPU; a prefetch only
    // hints the cache and never dereferences the pointer.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
