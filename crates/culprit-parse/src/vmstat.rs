//! Parser for vmstat output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct Vmstat;

impl Parser for Vmstat {
    fn name(&self) -> &'static str {
        "vmstat"
    }
    fn kind(&self) -> Kind {
        Kind::Monitor
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "vmstat", hint: "parser not written yet".into() })
    }
}
