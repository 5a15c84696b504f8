//! Parser for stress-ng output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct StressNg;

impl Parser for StressNg {
    fn name(&self) -> &'static str {
        "stress-ng"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "stress-ng", hint: "parser not written yet".into() })
    }
}
