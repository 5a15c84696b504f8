//! Parser for mpstat output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Mpstat;

impl Parser for Mpstat {
    fn name(&self) -> &'static str {
        "mpstat"
    }
    fn kind(&self) -> Kind {
        Kind::Monitor
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "mpstat", hint: "parser not written yet".into() })
    }
}
