//! Parser for hackbench output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Hackbench;

impl Parser for Hackbench {
    fn name(&self) -> &'static str {
        "hackbench"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "hackbench", hint: "parser not written yet".into() })
    }
}
