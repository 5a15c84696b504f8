//! Parser for perf-stat output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct PerfStat;

impl Parser for PerfStat {
    fn name(&self) -> &'static str {
        "perf-stat"
    }
    fn kind(&self) -> Kind {
        Kind::Monitor
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "perf-stat", hint: "parser not written yet".into() })
    }
}
