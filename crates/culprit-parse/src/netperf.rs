//! Parser for netperf output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Netperf;

impl Parser for Netperf {
    fn name(&self) -> &'static str {
        "netperf"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "netperf", hint: "parser not written yet".into() })
    }
}
