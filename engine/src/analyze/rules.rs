//! The rules' frame: the findings raised over a finished report ([`crate::analyze::finding`]).
//! Each analysis's rules live in its room (the RoCE analysis's in `roce/rules/`) and read only
//! their room's section of the report, through [`Rules::report`], so they explain exactly the
//! numbers it shows; they add their findings through [`Rules::add`]. The report shell runs
//! them all (`crate::analyze::assemble::findings`).

use crate::analyze::finding::{Evidence, Finding, Kind};

/// "1 flow", "2 flows".
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A room's section of a finished report (`S`), and the findings raised so far, to which its
/// rules add theirs.
pub(crate) struct Rules<'r, S: ?Sized> {
    pub(crate) report: &'r S,
    out: &'r mut Vec<Finding>,
}

/// What a finding is, whatever its numbers: its kind, likely cause and first action.
pub(crate) struct About {
    pub(crate) kind: Kind,
    pub(crate) cause: &'static str,
    pub(crate) action: &'static str,
}

impl<'r, S: ?Sized> Rules<'r, S> {
    pub(crate) fn new(report: &'r S, out: &'r mut Vec<Finding>) -> Rules<'r, S> {
        Rules { report, out }
    }

    pub(crate) fn add(&mut self, about: About, message: String, evidence: Evidence) {
        let About { kind: Kind { code, severity, .. }, cause, action } = about;
        self.out.push(Finding { severity, code, message, evidence, cause: cause.into(), action: action.into() });
    }
}
