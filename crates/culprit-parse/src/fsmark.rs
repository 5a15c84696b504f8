//! Parser for fsmark output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Fsmark;

impl Parser for Fsmark {
    fn name(&self) -> &'static str {
        "fsmark"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "fsmark", hint: "parser not written yet".into() })
    }
}
