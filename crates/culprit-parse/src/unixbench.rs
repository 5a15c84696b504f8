//! Parser for unixbench output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Unixbench;

impl Parser for Unixbench {
    fn name(&self) -> &'static str {
        "unixbench"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "unixbench", hint: "parser not written yet".into() })
    }
}
