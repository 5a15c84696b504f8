//! Parser for fs_mark output: the result table that follows the `FSUse%  Count  Size  Files/sec  App Overhead` header.
//!
//! Format read: the text fs_mark 3.3 writes to stdout, as lkp-tests runs it (`programs/fsmark/run`), e.g.
//!
//! ```text
//! fs_mark -d /fs/sda1/1 -d /fs/sda1/2 ... -D 16 -N 256 -n 1600 -L 1 -S 1 -s 8192
//! ```
//!
//! Everything up to the `FSUse%` header is skipped (it holds the echoed command and `#` comments, sometimes with
//! binary garbage). Each following line with exactly five fields is one loop's result; the first line with another
//! shape (`Average Files/sec: ...`) ends the table.
//!
//! Metrics (lkp names, prefix `fsmark.`):
//! - `files_per_sec`: mean of the `Files/sec` column, printed as a Ruby float.
//! - `app_overhead`: mean of the `App Overhead` column (microseconds), printed as a Ruby float.
//!
//! Errors: a row whose Files/sec or App Overhead is not a number (`nan`) is [`ParseError::Malformed`], where lkp
//! would read it as 0; no `FSUse%` table at all is [`ParseError::NoResults`], or [`ParseError::Truncated`] when fs_mark's
//! command line or comment block shows it did start; a header without any result row is also `Truncated` (lkp
//! prints nothing then, so the run counts as incomplete).
//!
//! fs_mark is not packaged in Debian; lkp's own fixtures pin this parser.

use crate::dbench::ruby_num;
use crate::rubyfmt;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Fsmark;

const PROGRAM: &str = "fsmark";

impl Parser for Fsmark {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        parse_text(input.main)
    }
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let mut lines = ruby_num::lines(text).enumerate();
    let saw_header = lines.by_ref().any(|(_, line)| line.starts_with("FSUse"));
    if !saw_header {
        if text.contains("fs_mark") {
            return Err(ParseError::Truncated {
                program: PROGRAM,
                detail: "fs_mark started (its command line or `#  fs_mark` comment block is there) but the output \
                         ends before the `FSUse%  Count  Size  Files/sec  App Overhead` result table"
                    .into(),
            });
        }
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: "expected the result table header `FSUse%  Count  Size  Files/sec  App Overhead` that fs_mark \
                   prints after its `#` comment block"
                .into(),
        });
    }
    let mut files_per_sec = Vec::new();
    let mut app_overhead = Vec::new();
    for (index, line) in lines {
        let fields = ruby_num::split_whitespace(line);
        let [_, _, _, files, overhead] = fields.as_slice() else {
            break;
        };
        // lkp reads a non-numeric figure (`nan`, `-nan`) as 0, which would be stored as a plausible measurement.
        let number = |what: &str, word: &str| {
            ruby_num::number(word).ok_or_else(|| ParseError::Malformed {
                program: PROGRAM,
                line: index + 1,
                detail: format!(
                    "the {what} column is {}, not a number; expected rows of `<FSUse%> <Count> <Size> <Files/sec> \
                     <App Overhead>`",
                    crate::excerpt(word)
                ),
            })
        };
        files_per_sec.push(number("Files/sec", files)?);
        app_overhead.push(number("App Overhead", overhead)?);
    }
    if files_per_sec.is_empty() {
        // lkp prints nothing here on purpose so the run counts as incomplete (a kernel problem may be the cause).
        return Err(ParseError::Truncated {
            program: PROGRAM,
            detail: "the `FSUse%` header is not followed by any `<FSUse%> <Count> <Size> <Files/sec> <App Overhead>` \
                     row; fs_mark stopped before finishing a loop"
                .into(),
        });
    }
    let mut out = ParseOutput::default();
    out.push("files_per_sec", rubyfmt::float(ruby_num::sum(&files_per_sec) / files_per_sec.len() as f64));
    out.push("app_overhead", rubyfmt::float(ruby_num::sum(&app_overhead) / app_overhead.len() as f64));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_every_loop_until_the_table_ends() {
        let text = "# comment\nFSUse%        Count         Size    Files/sec     App Overhead\n\
                    5 100 8192 10.0 300\n6 200 8192 20.0 500\nAverage Files/sec: 15.0\n7 300 8192 99.0 999\n";
        assert_eq!(parse_text(text).map(|o| o.render()).as_deref(), Ok("files_per_sec: 15.0\napp_overhead: 400.0"));
    }

    #[test]
    fn fsmark_nan_files_per_sec_is_an_error() {
        let text = "FSUse%        Count         Size    Files/sec     App Overhead\n5 100 8192 -nan 300\n";
        match parse_text(text) {
            Err(ParseError::Malformed { line: 2, detail, .. }) => assert!(detail.contains("Files/sec"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn header_without_rows_is_truncated() {
        assert!(matches!(parse_text("FSUse%  Count\n"), Err(ParseError::Truncated { .. })));
    }
}
