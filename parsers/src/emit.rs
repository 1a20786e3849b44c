//! Writing headers, the inverse of the views: each header's `Repr` (or owned value) has an
//! `emit` that returns its bytes as an array, and an `of` that reads a view back into one, as
//! smoltcp's `wire` module pairs `Packet` with `Repr`. A program that builds packets (the
//! sample generator, tests) writes every layout here, beside the parser that reads it, never a
//! second time. Nothing here allocates or panics.

/// `parts` laid end to end in an array of `N` bytes: bytes past `N` are dropped and bytes not
/// written stay 0 (each caller's parts add up to `N`, which its round-trip test checks).
pub(crate) fn join<const N: usize>(parts: &[&[u8]]) -> [u8; N] {
    let mut out = [0u8; N];
    for (slot, byte) in out.iter_mut().zip(parts.iter().flat_map(|p| p.iter())) {
        *slot = *byte;
    }
    out
}

/// The low 24 bits of `value`, big-endian (QPNs, PSNs, MSNs and other 24-bit fields).
pub(crate) fn be24_bytes(value: u32) -> [u8; 3] {
    let [_, a, b, c] = value.to_be_bytes();
    [a, b, c]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_laid_end_to_end_and_cut_or_padded_to_the_array() {
        assert_eq!(join::<5>(&[&[1, 2], &[3], &[4, 5, 6]]), [1, 2, 3, 4, 5]);
        assert_eq!(join::<4>(&[&[9]]), [9, 0, 0, 0]);
        assert_eq!(be24_bytes(0xAB12_3456), [0x12, 0x34, 0x56]);
    }
}
