//! What installing rocescope puts in place, generated from the command line's own definition
//! (`cli.rs`), so that it always matches the build: `rocescope completions SHELL` prints a shell
//! completion script, `rocescope man` the manual page (`--out DIR`: one page per command).

use std::io::{self, Write};
use std::path::Path;

use clap::CommandFactory;
use clap_mangen::Man;

use super::exit::{Failure, Outcome, written};
use crate::cli::{Cli, CompletionsArgs, ManArgs};

/// The program's name, as the completion scripts register it and the pages title it.
const PROGRAM: &str = "rocescope";

/// `rocescope completions SHELL`: the completion script on standard output.
pub fn completions(args: &CompletionsArgs) -> Outcome {
    // generated into memory first: clap_complete panics on a failed write, and a closed
    // standard output is an error to report, not a panic
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), PROGRAM, &mut script);
    print(&script)
}

/// `rocescope man`: rocescope(1) on standard output; with `--out DIR`, rocescope.1 and
/// rocescope-COMMAND.1 for every command written into DIR.
pub fn man(args: &ManArgs) -> Outcome {
    let mut cli = Cli::command().disable_help_subcommand(true);
    // built, each command's display name is its page's name: `rocescope-analyze`
    cli.build();
    let Some(dir) = &args.out else { return print(&render(&Man::new(cli))?) };
    std::fs::create_dir_all(dir).map_err(|e| Failure::Output(format!("cannot create {}: {e}", dir.display())))?;
    let commands: Vec<clap::Command> = cli.get_subcommands().filter(|c| !c.is_hide_set()).cloned().collect();
    for command in std::iter::once(cli).chain(commands) {
        write_page(dir, &Man::new(command))?;
    }
    Ok(())
}

/// A page in roff.
fn render(page: &Man) -> Result<Vec<u8>, Failure> {
    let mut roff = Vec::new();
    page.render(&mut roff).map_err(|e| Failure::Output(format!("cannot render the manual page: {e}")))?;
    Ok(roff)
}

/// `page` into `dir` under its own file name (`rocescope-analyze.1`), whole or not at all.
fn write_page(dir: &Path, page: &Man) -> Outcome {
    let path = dir.join(page.get_filename());
    let text = String::from_utf8_lossy(&render(page)?).into_owned();
    crate::output::atomic::write_whole(&path, &text)
        .map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())))
}

/// `bytes` on standard output.
fn print(bytes: &[u8]) -> Outcome {
    let mut out = io::stdout().lock();
    written(out.write_all(bytes).and_then(|()| out.flush()), |e| format!("cannot write the output: {e}"))
}
