//! Parser for sysbench output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Sysbench;

impl Parser for Sysbench {
    fn name(&self) -> &'static str {
        "sysbench"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "sysbench", hint: "parser not written yet".into() })
    }
}
