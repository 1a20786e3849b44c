//! The `merge` command: the report of a capture whose files were analysed apart, from their
//! saved states (docs/scale.md).

use super::accounts;
use super::exit::{Failure, Outcome};
use super::reporting::{self, Reporting};
use super::saved_run::{load_state, save_state};
use crate::analyze::assemble::Joined;
use crate::analyze::combine::parts::{self, MergeError};
use crate::cli::MergeArgs;
use crate::display_filter::DisplayFilter;

pub fn run(args: &MergeArgs) -> Outcome {
    let joined = Joined { accounts: accounts::read(&args.accounts)?, ..Joined::default() };
    let reporting = Reporting {
        joined: &joined,
        json: args.json,
        color: args.color.enabled(),
        out: args.out.as_deref(),
        html: args.html.as_deref(),
        trace: None,
        fail_on: args.fail_on,
    };
    reporting::warn_without_tables(&reporting);
    reporting::prepare(&reporting, &args.states)
        .and_then(|()| {
            args.state.as_deref().map_or(Ok(()), |s| super::refuse_input(s, &args.states, "the merged analysis"))
        })
        .map_err(Failure::Output)?;
    let parts = args.states.iter().map(|path| (path.display().to_string(), path.as_path())).collect();
    let mut merged =
        parts::merge(parts, |path| load_state(path), DisplayFilter::is_positional).map_err(|e| match e {
            MergeError::Unreadable(failure) => failure,
            MergeError::Refused(message) => Failure::Usage(message),
        })?;
    accounts::check_saved_with(merged.analyzer.known_qps(), &joined.accounts, "merge: the states were")?;
    if let Some(path) = &args.state {
        save_state(path, &merged)?;
    }
    merged.analyzer.finish();
    reporting::report(&merged.analyzer, merged.inputs, &reporting, Ok(Default::default()))
}
