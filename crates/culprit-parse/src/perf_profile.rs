//! Parser for `perf report` text, printing the call-graph percentages lkp-tests' perf-profile parser prints.
//!
//! # Input
//! The output of `perf report --children --header -U -g folded,0.5,callee --sort=dso,symbol -i perf.data` (the
//! flags lkp's perf-profile monitor uses). The first line must be the `# ========` that `--header` prints, as lkp
//! requires; the event comes from the first `# Samples: <n> of event '<event>'` line (or the older `# Events:`).
//! After it, each symbol line `  <children>%  <self>%  <dso>  [k] <symbol>` carries the symbol's share of samples in
//! itself and its callees (children) and in itself alone (self); each folded line `<pct>% a;b;c` carries a call
//! chain, callee first.
//!
//! # Output
//! Keys sorted bytewise, each value summed over lines with the same key and printed with two decimals, keys below
//! 0.05 left out:
//! - `calltrace.<event>.<f1>.<f2>...` (at most the five innermost frames of a chain, joined with `.`),
//! - `children.<event>.<symbol>` and `self.<event>.<symbol>`.
//!
//! `<event>` is perf's event name with `:` turned into `-` and quotes removed: `cycles:pp` gives `cycles-pp`, and on
//! a machine without hardware counters (where Culprit records `cpu-clock`) it is `cpu-clock`, so the metrics read
//! `perf-profile.self.cpu-clock.<symbol>`. A symbol's compiler suffixes `.isra.N`, `.constprop.N` and `.part.N` are
//! removed so the names stay stable across builds.
//!
//! As in lkp, every `# ` line after the first event is skipped, so a report with several events attributes all
//! its lines to the first one.

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

const PROGRAM: &str = "perf-profile";

pub struct PerfProfile;

impl Parser for PerfProfile {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn kind(&self) -> Kind {
        Kind::Monitor
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        parse_text(input.main)
    }
}

struct Patterns {
    header: Regex,
    event: Regex,
    symbol_line: Regex,
    folded_line: Regex,
    compiler_suffix: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        // Ruby's `\s` is ASCII whitespace only; spell it out so Unicode spaces do not count.
        const S: &str = r"[ \t\r\n\x0B\x0C]";
        const NS: &str = r"[^ \t\r\n\x0B\x0C]";
        // These patterns are fixed and valid; a failure here is a programming error caught by every test.
        let compile = |re: &str| Regex::new(re).unwrap_or_else(|e| panic!("perf-profile pattern {re}: {e}"));
        Patterns {
            header: compile(r"(?m)^# ========$| --header"),
            event: compile(&format!(r"^# (?:Events: [0-9]+[KMG ]{S}+|Samples: [0-9]+[KMG ] of event )")),
            symbol_line: compile(&format!(
                r"^{S}*([0-9]+\.[0-9]+)%{S}+([0-9]+\.[0-9]+)%{S}+{NS}+{S}+{NS}+{S}+({NS}+)({S}+{NS}+{S}+{NS}+)?{S}*$"
            )),
            folded_line: compile(&format!(r"^([0-9]+\.[0-9]+)%{S}+({NS}+)$")),
            compiler_suffix: compile(r"\.(?:isra|constprop|part)\.[0-9]+"),
        }
    })
}

/// Ruby's `String#chomp`: one trailing `\r\n`, `\n` or `\r` removed.
fn chomp(line: &str) -> &str {
    line.strip_suffix("\r\n").or_else(|| line.strip_suffix('\n')).or_else(|| line.strip_suffix('\r')).unwrap_or(line)
}

fn fixup_symbol(symbol: &str) -> String {
    patterns().compiler_suffix.replace_all(symbol, "").into_owned()
}

/// Parses a perf report into lkp's `key: value` lines.
pub fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let p = patterns();
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.is_empty() {
        return Err(ParseError::NoResults { program: PROGRAM, hint: "the perf report is empty".into() });
    }
    if !p.header.is_match(first) {
        return Err(ParseError::NoResults {
            program: PROGRAM,
            hint: "expected a `perf report --header` text starting with `# ========` \
                   (run perf report with --header, as lkp does)"
                .into(),
        });
    }

    let mut event = None;
    for line in lines.by_ref() {
        if let Some(m) = p.event.find(line) {
            let rest = line.get(m.end()..).unwrap_or("");
            event = Some(chomp(&rest.replace(':', "-").replace('\'', "")).to_string());
            break;
        }
    }
    let Some(event) = event else {
        return Err(ParseError::Truncated {
            program: PROGRAM,
            detail: "the header has no `# Samples: <n> of event '<event>'` line; the report stops in its header \
                     or perf recorded no samples"
                .into(),
        });
    };

    let mut results: BTreeMap<String, f64> = BTreeMap::new();
    let mut records = 0usize;
    for raw in lines {
        let line = chomp(raw);
        if line.starts_with("# ") {
            continue;
        }
        if let Some(caps) = p.symbol_line.captures(line) {
            let children = caps.get(1).map_or(0.0, |m| m.as_str().parse().unwrap_or(0.0));
            let own = caps.get(2).map_or(0.0, |m| m.as_str().parse().unwrap_or(0.0));
            let symbol = fixup_symbol(caps.get(3).map_or("", |m| m.as_str()));
            *results.entry(format!("children.{event}.{symbol}")).or_default() += children;
            *results.entry(format!("self.{event}.{symbol}")).or_default() += own;
            records += 1;
        } else if let Some(caps) = p.folded_line.captures(line) {
            let percent: f64 = caps.get(1).map_or(0.0, |m| m.as_str().parse().unwrap_or(0.0));
            let chain = caps.get(2).map_or("", |m| m.as_str());
            // Ruby's split drops trailing empty fields; lkp keeps the five innermost frames.
            let mut frames: Vec<&str> = chain.split(';').collect();
            while frames.last().is_some_and(|f| f.is_empty()) {
                frames.pop();
            }
            let names: Vec<String> = frames.iter().take(5).map(|f| fixup_symbol(f)).collect();
            *results.entry(format!("calltrace.{event}.{}", names.join("."))).or_default() += percent;
            records += 1;
        }
    }
    if records == 0 {
        return Err(ParseError::Truncated {
            program: PROGRAM,
            detail: format!(
                "the report for event '{event}' has no symbol or call-chain lines; \
                 perf report may have stopped early or perf recorded too few samples"
            ),
        });
    }

    let mut out = ParseOutput::default();
    for (key, percent) in results {
        if percent >= 0.05 {
            out.push(key, format!("{percent:.2}"));
        }
    }
    // The monitor calls this function directly rather than through `Parser::parse`, so the check is made here too.
    out.check_finite(PROGRAM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_suffixes_are_removed() {
        for (symbol, want) in [
            ("foo.isra.3", "foo"),
            ("bar.constprop.0.part.12", "bar"),
            ("baz.cold", "baz.cold"),
            ("qux.part.x", "qux.part.x"),
        ] {
            assert_eq!(fixup_symbol(symbol), want);
        }
    }

    #[test]
    fn two_decimals_round_like_c() {
        // Ruby's format('%.2f') rounds the exact binary value; ties between two decimals go to even.
        assert_eq!(format!("{:.2}", 0.125), "0.12");
        assert_eq!(format!("{:.2}", 0.375), "0.38");
        assert_eq!(format!("{:.2}", 1.005), "1.00");
    }
}
