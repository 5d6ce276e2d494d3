//! What the subcommands print on standard output. A reader that stops early (`inspect | head -1`)
//! closes the pipe; `println!` would panic on the next write, so this ends the process quietly
//! with success instead, as `cat`, `grep` and ripgrep do.

use std::fmt::Arguments;
use std::io::Write;

/// Writes `text`, ending the process with status 0 if the reader has gone.
pub(crate) fn write(text: Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let done = out.write_fmt(text).and_then(|()| out.flush());
    match done {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        // a full disk or a closed descriptor: say so rather than lose output silently
        Err(e) => {
            eprintln!("equinix-mcp: cannot write to standard output: {e}");
            std::process::exit(1)
        }
    }
}

/// `println!` through [`write`].
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => { $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` through [`write`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdout::write(format_args!($($arg)*)) };
}
