//! Parser for iperf output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Iperf;

impl Parser for Iperf {
    fn name(&self) -> &'static str {
        "iperf"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "iperf", hint: "parser not written yet".into() })
    }
}
