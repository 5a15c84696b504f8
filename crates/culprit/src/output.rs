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
