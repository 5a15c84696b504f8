//! Parser for will-it-scale output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct WillItScale;

impl Parser for WillItScale {
    fn name(&self) -> &'static str {
        "will-it-scale"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "will-it-scale", hint: "parser not written yet".into() })
    }
}
