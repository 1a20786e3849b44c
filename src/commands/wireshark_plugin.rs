//! The `wireshark-plugin` command: the Lua post-dissector that shows `annotate`'s comments as
//! fields and expert items, printed or installed into the personal Lua plugin folder.

use std::io::Write as _;
use std::path::PathBuf;

use super::exit::{Failure, Outcome, written};
use crate::cli::WiresharkPluginArgs;
use crate::output::atomic::write_whole;
use crate::output::wireshark::{PLUGIN, PLUGIN_FILE};

pub fn run(args: &WiresharkPluginArgs) -> Outcome {
    if !args.install {
        let mut out = std::io::stdout().lock();
        return written(out.write_all(PLUGIN.as_bytes()).and_then(|()| out.flush()), |e| {
            format!("cannot write the output: {e}")
        });
    }
    let folder = personal_lua_plugins().ok_or_else(|| {
        Failure::Output("cannot install the plugin: no home folder (HOME, or APPDATA on Windows, is not set)".into())
    })?;
    let path = folder.join(PLUGIN_FILE);
    install(&path).map_err(|e| Failure::Output(format!("cannot install the plugin as {}: {e}", path.display())))?;
    println!("{}", path.display());
    Ok(())
}

/// Writes the plugin as `path`, whole or not at all, creating its folder.
fn install(path: &std::path::Path) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    write_whole(path, PLUGIN)
}

/// The personal Lua plugin folder Wireshark 2.5 and later read (its User's Guide, "Plugin
/// folders"; `tshark -G folders` prints it as "Personal Lua Plugins"):
/// `%APPDATA%\Wireshark\plugins` on Windows, `~/.local/lib/wireshark/plugins` elsewhere.
fn personal_lua_plugins() -> Option<PathBuf> {
    let home = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        home("APPDATA").map(|d| d.join("Wireshark").join("plugins"))
    } else {
        home("HOME").map(|d| d.join(".local").join("lib").join("wireshark").join("plugins"))
    }
}
