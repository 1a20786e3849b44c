//! The rules' frame: the findings raised over a finished report ([`crate::analyze::report::finding`]).
//! Each analysis's rules live in its room (the RoCE analysis's in `roce/rules/`) and add theirs
//! through [`Rules::add`]; they read the finished report, so they explain exactly the numbers it
//! shows. [`Rules::finish`] joins the troubleshooting table's causes (troubleshooting.rs).

mod troubleshooting;

use crate::analyze::report::Report;
use crate::analyze::report::finding::{Evidence, Finding, Kind};

/// "1 flow", "2 flows".
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// The findings raised so far over a finished report: each analysis's rules add theirs, then
/// [`Rules::finish`].
pub(crate) struct Rules<'r> {
    pub(crate) report: &'r Report,
    out: Vec<Finding>,
}

/// What a finding is, whatever its numbers: its kind, likely cause and first action.
pub(crate) struct About {
    pub(crate) kind: Kind,
    pub(crate) cause: &'static str,
    pub(crate) action: &'static str,
}

impl<'r> Rules<'r> {
    pub(crate) fn new(report: &'r Report) -> Rules<'r> {
        Rules { report, out: Vec::new() }
    }

    pub(crate) fn add(&mut self, about: About, message: String, evidence: Evidence) {
        let About { kind: Kind { code, severity, .. }, cause, action } = about;
        self.out.push(Finding { severity, code, message, evidence, cause: cause.into(), action: action.into() });
    }

    /// The findings, each with the troubleshooting table's causes whose symptoms the report
    /// shows, errors first.
    pub(crate) fn finish(mut self) -> Vec<Finding> {
        troubleshooting::annotate(self.report, &mut self.out);
        self.out.sort_by_key(|f| std::cmp::Reverse(f.severity));
        self.out
    }
}
