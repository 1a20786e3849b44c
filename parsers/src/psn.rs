//! 24-bit packet sequence number arithmetic (IBA §9.7.1; Linux `rxe` `psn_compare`).
//!
//! PSNs wrap at 2^24. Order is defined on the circle: `a` is ahead of `b` when
//! `(a − b) mod 2^24` is in `(0, 2^23)`, behind when it is in `[2^23, 2^24)`.

pub const PSN_MASK: u32 = 0x00FF_FFFF;
pub const PSN_MODULUS: u32 = 1 << 24;
pub const PSN_HALF: u32 = 1 << 23;

/// `(a + n) mod 2^24`.
pub const fn psn_add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & PSN_MASK
}

/// `(a − b) mod 2^24`, in `[0, 2^24)`.
pub const fn psn_forward_distance(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & PSN_MASK
}

/// Signed distance `a − b` on the circle, in `[−2^23, 2^23)`: positive when `a` is ahead.
pub const fn psn_diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_wraps() {
        assert_eq!(psn_add(0xFF_FFFF, 1), 0);
        assert_eq!(psn_add(0xFF_FFFE, 5), 3);
    }

    #[test]
    fn signed_distance_across_the_wrap() {
        assert_eq!(psn_diff(0, 0xFF_FFFF), 1);
        assert_eq!(psn_diff(0xFF_FFFF, 0), -1);
        assert_eq!(psn_diff(5, 5), 0);
        assert_eq!(psn_diff(2, 0xFF_FFFE), 4);
        assert_eq!(psn_diff(PSN_HALF, 0), -(PSN_HALF as i32));
        assert_eq!(psn_diff(PSN_HALF - 1, 0), (PSN_HALF - 1) as i32);
    }

    #[test]
    fn forward_distance() {
        assert_eq!(psn_forward_distance(3, 0xFF_FFFE), 5);
        assert_eq!(psn_forward_distance(0xFF_FFFE, 3), PSN_MODULUS - 5);
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn comparison_is_antisymmetric(a in 0..PSN_MODULUS, b in 0..PSN_MODULUS) {
            // the one pair of points exactly half the circle apart is behind both ways
            if psn_forward_distance(a, b) == PSN_HALF {
                prop_assert_eq!((psn_diff(a, b), psn_diff(b, a)), (-(PSN_HALF as i32), -(PSN_HALF as i32)));
            } else {
                prop_assert_eq!(psn_diff(a, b), -psn_diff(b, a));
            }
            prop_assert_eq!(psn_diff(a, b) == 0, a == b);
        }

        #[test]
        fn moving_forward_is_ahead_across_the_wrap(a in 0..PSN_MODULUS, n in 1..PSN_HALF) {
            let b = psn_add(a, n);
            prop_assert!(b <= PSN_MASK);
            prop_assert_eq!(psn_diff(b, a), n as i32);
            prop_assert_eq!(psn_forward_distance(b, a), n);
            prop_assert_eq!(psn_forward_distance(a, b), PSN_MODULUS - n);
        }
    }

    #[test]
    fn antisymmetric_except_at_half() {
        for (a, b) in [(0u32, 1u32), (10, 0xFF_FFF0), (0x12_3456, 0x65_4321), (7, 7)] {
            assert_eq!(psn_diff(a, b), -psn_diff(b, a));
        }
    }
}
