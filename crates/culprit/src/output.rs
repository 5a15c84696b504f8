//! Writing to stdout where a closed pipe (`culprit results | head`) ends the program quietly instead of failing.

use std::io::{self, Write};

/// Signals that stdout was closed by the reader; `main` turns it into a successful exit.
#[derive(Debug)]
pub struct BrokenPipe;

impl std::fmt::Display for BrokenPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout closed")
    }
}

impl std::error::Error for BrokenPipe {}

/// Prints `text` to stdout as is; a broken pipe becomes [`BrokenPipe`].
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(BrokenPipe.into()),
        Err(e) => Err(e.into()),
    }
}

/// Prints `text` followed by a newline.
pub fn println(text: &str) -> anyhow::Result<()> {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(text);
    s.push('\n');
    print(&s)
}

/// An error as the user reads it, one line each: `culprit: <what went wrong>`, then `  caused by: <cause>` for each
/// cause. `main` prints it to stderr; the dashboard shows the same text on its error pages.
pub fn error_text(err: &anyhow::Error) -> String {
    let mut text = format!("culprit: {err}\n");
    for cause in err.chain().skip(1) {
        text.push_str(&format!("  caused by: {cause}\n"));
    }
    text
}
