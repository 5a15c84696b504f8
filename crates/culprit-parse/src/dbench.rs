//! Parser for dbench output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Dbench;

impl Parser for Dbench {
    fn name(&self) -> &'static str {
        "dbench"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "dbench", hint: "parser not written yet".into() })
    }
}
