//! What the types that a merge grafts share: telling the greatest value seen after a point
//! ([`crate::analyze::combine::graft`]). A leaf: it names none of them.

/// The greatest value of `mine` and of what `end` saw after `start`, its value at an earlier
/// point: a later value above `start` shows in `end`; one at or below does not, which does
/// not matter only where `mine` is at least `start`.
pub fn later_max<T: Ord + Copy>(mine: T, start: T, end: T) -> Result<T, &'static str> {
    match end > start {
        true => Ok(mine.max(end)),
        false if mine >= start => Ok(mine),
        false => Err("a greatest value"),
    }
}
