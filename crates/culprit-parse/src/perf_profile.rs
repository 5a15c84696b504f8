//! Parser for perf-profile output (being written).

use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};

pub struct PerfProfile;

impl Parser for PerfProfile {
    fn name(&self) -> &'static str {
        "perf-profile"
    }
    fn kind(&self) -> Kind {
        Kind::Monitor
    }
    fn parse(&self, _input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        Err(ParseError::NoResults { program: "perf-profile", hint: "parser not written yet".into() })
    }
}
