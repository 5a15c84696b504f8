//! Parser for fio output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Fio;

impl Parser for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "fio", hint: "parser not written yet".into() })
    }
}
