//! Parser for vm-scalability output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct VmScalability;

impl Parser for VmScalability {
    fn name(&self) -> &'static str {
        "vm-scalability"
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "vm-scalability", hint: "parser not written yet".into() })
    }
}
