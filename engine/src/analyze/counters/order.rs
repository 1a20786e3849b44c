//! Whether a host's or a switch's two snapshots were given the wrong way round (`AFTER,BEFORE`):
//! their `time:` lines say so, or, without both, their counters do (monotonic counters go up
//! from BEFORE to AFTER).

use super::snapshot::Snapshot;

/// How two snapshots given as BEFORE and AFTER are ordered, as far as they tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// As given: the times in order, or no evidence against it.
    AsGiven,
    /// AFTER's time is earlier than BEFORE's and its counters are not higher: the files were
    /// given the wrong way round, and are read the other way.
    Swapped { before: String, after: String },
    /// Without both times, more counters went down than up: the files look swapped, or the
    /// counters were reset between them; read as given.
    MostlyDown { down: usize, changed: usize },
    /// AFTER's time is earlier than BEFORE's, yet more counters went up than down: a time line
    /// is wrong; read as given.
    TimesReversed { before: String, after: String },
}

/// How many of the counters in both snapshots went up and down from `before` to `after`.
fn moves(before: &Snapshot, after: &Snapshot) -> (usize, usize) {
    let (mut up, mut down) = (0, 0);
    for (name, was) in &before.counters {
        match after.get(name) {
            Some(now) if now > *was => up += 1,
            Some(now) if now < *was => down += 1,
            _ => {}
        }
    }
    (up, down)
}

/// The order of `before` and `after` (see [`Order`]).
pub fn order(before: &Snapshot, after: &Snapshot) -> Order {
    let (up, down) = moves(before, after);
    match (&before.time, &after.time) {
        (Some((b, b_ns)), Some((a, a_ns))) if a_ns < b_ns => {
            let (before, after) = (b.clone(), a.clone());
            if down >= up { Order::Swapped { before, after } } else { Order::TimesReversed { before, after } }
        }
        (Some(_), Some(_)) => Order::AsGiven,
        _ if down > up => Order::MostlyDown { down, changed: up + down },
        _ => Order::AsGiven,
    }
}

/// The two snapshots as BEFORE and AFTER (swapped back when [`Order::Swapped`]), with their
/// order.
pub fn in_order(before: Snapshot, after: Snapshot) -> (Snapshot, Snapshot, Order) {
    match order(&before, &after) {
        swapped @ Order::Swapped { .. } => (after, before, swapped),
        other => (before, after, other),
    }
}

impl Order {
    /// The warning for `who` (`--counters 10.0.0.3`), none when the order is as given.
    pub fn warning(&self, who: &str) -> Option<String> {
        Some(match self {
            Order::AsGiven => return None,
            Order::Swapped { before, after } => format!(
                "{who}: AFTER was taken at {after}, before BEFORE at {before}: the files look swapped and are read the other way round; give BEFORE first"
            ),
            Order::MostlyDown { down, changed } => format!(
                "{who}: {down} of the {changed} counters that changed went down from BEFORE to AFTER: the files look swapped (give BEFORE first), or the counters were reset between them"
            ),
            Order::TimesReversed { before, after } => format!(
                "{who}: AFTER's time line ({after}) is earlier than BEFORE's ({before}), yet its counters are higher: the files are read as given; check the time lines"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::counters::parse;

    fn snapshot(text: &str) -> Snapshot {
        parse("s", text).expect("a snapshot")
    }

    #[test]
    fn times_say_which_was_first_and_counters_confirm_it() {
        let early = snapshot("time: 2026-12-05T10:00:00Z\na 5\nb 7\n");
        let late = snapshot("time: 2026-12-05T10:00:30Z\na 9\nb 7\n");
        assert_eq!(order(&early, &late), Order::AsGiven);
        let (before, after, swapped) = in_order(late.clone(), early.clone());
        assert_eq!((before.get("a"), after.get("a")), (Some(5), Some(9)), "read the other way round");
        let warning = swapped.warning("--counters 10.0.0.3").expect("a warning");
        assert!(warning.starts_with("--counters 10.0.0.3: AFTER was taken at 2026-12-05T10:00:00Z"), "{warning}");
        assert!(warning.contains("give BEFORE first"), "{warning}");
        // the times reversed but the counters grew: a time line is wrong, read as given
        let wrong_time = snapshot("time: 2026-12-05T09:00:00Z\na 9\nb 8\n");
        let (before, _, reversed) = in_order(early.clone(), wrong_time);
        assert!(matches!(reversed, Order::TimesReversed { .. }) && before.get("a") == Some(5), "{reversed:?}");
        // the times in order and the counters down: a reset, which the rows say
        let reset = snapshot("time: 2026-12-05T11:00:00Z\na 0\nb 0\n");
        assert_eq!(in_order(early, reset).2, Order::AsGiven);
    }

    #[test]
    fn without_times_counters_that_went_down_are_a_warning_only() {
        let (high, low) = (snapshot("a 9\nb 8\nc 1\n"), snapshot("a 5\nb 7\nc 1\nd 0\n"));
        let (before, _, down) = in_order(high.clone(), low.clone());
        assert_eq!(down, Order::MostlyDown { down: 2, changed: 2 });
        assert_eq!(before.get("a"), Some(9), "read as given");
        assert!(down.warning("--switch-counters leaf1").is_some_and(|w| w.contains("2 of the 2 counters")));
        assert_eq!(in_order(low, high).2, Order::AsGiven);
        assert_eq!(order(&snapshot(""), &snapshot("")), Order::AsGiven, "nothing changed");
    }
}
