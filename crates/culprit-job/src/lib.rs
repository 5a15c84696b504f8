//! lkp-tests job files: loading, param conventions, matrix expansion, split, path_params and stable job ids. No I/O:
//! callers read the file and pass its text and name.
//!
//! ```text
//! JobFile::parse(text, "jobs/fio-basic.yaml")   YAML documents hash0 --- hash1 ... --- hashN
//!   (or JobFile::parse_with_includes, which first pastes lkp's `<<: FILE` includes the caller finds)
//!   .expand()                                   jobs hash0, hash0+hash1, ..., hash0+hashN, each a cartesian product
//!   -> Vec<AtomicJob>                           one matrix point each: name(), path_params(), id(), programs(), ...
//! ```
//!
//! Which keys are metadata, programs or monitors is decided by one table, [`table`]; param conventions (`50%`,
//! `300s`, `8x`, `64M`) live in [`convention`].

pub mod atomic;
pub mod convention;
pub mod expand;
pub mod include;
pub mod load;
mod locate;
pub mod table;
pub mod template;
mod yaml_out;

pub use atomic::{AtomicJob, KeyProblem, MonitorUse, ProgramUse};
pub use convention::ConventionError;
pub use expand::MAX_ATOMIC_JOBS;
pub use load::JobFile;

use thiserror::Error;

/// Where in a job file something is: the file name, and the line when it could be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: Option<usize>,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}", self.file, line),
            None => write!(f, "{}", self.file),
        }
    }
}

/// Why a job file cannot be loaded, expanded or read. Every message names the file (and line when known) and says
/// what to do.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum JobError {
    /// The text is not valid YAML.
    #[error("{file}:{line}:{column}: malformed YAML: {reason}; fix the YAML syntax there (indentation, a ':' after each key, matching quotes and brackets)")]
    Yaml {
        file: String,
        line: usize,
        column: usize,
        reason: String,
    },
    /// A whole number too large (or too small) for any key: YAML reads it, but no job value can hold it. It is not a
    /// syntax error, so it is not said as one.
    #[error("{place}: '{key}' = {value} is out of range for that key (whole numbers in a job file go from -9223372036854775808 to 18446744073709551615, and most keys take far less); give '{key}' a value in its range")]
    OutOfRange {
        place: Place,
        key: String,
        value: String,
    },
    /// A key given twice in one hash. YAML's parser places this at the start of the hash, which is rarely where the
    /// mistake is, so the place is the second occurrence.
    #[error("{place}: '{key}' is given a second time in the same hash (first at line {first_line}); a key can appear once, so merge the two into one '{key}:' or remove one")]
    DuplicateKey {
        place: Place,
        key: String,
        first_line: usize,
    },
    /// A line that YAML cannot read is indented with a tab. The parser's own words (`found character that cannot
    /// start any token`) do not say that a tab is the character, nor that YAML indents with spaces only.
    #[error("{file}:{line}:{column}: a tab indents this line, but YAML indents with spaces only; replace the tab with spaces")]
    TabIndent { file: String, line: usize, column: usize },
    /// An unquoted value holds `: ` (a command job's `cmd: echo 'ops/s: 1'`), which YAML reads as a second key on the
    /// line. The parser's words (`mapping values are not allowed in this context`) do not say that quoting the value
    /// is the fix.
    #[error(
        "{file}:{line}: the value of '{key}' holds ': ', which YAML reads as the start of another key; quote the \
         whole value ({key}: \"...\", or '...' with each ' inside written '')"
    )]
    ColonInValue { file: String, line: usize, key: String },
    /// The text is not valid YAML, and the parser gave no position.
    #[error("{file}: malformed YAML: {reason}; fix the YAML syntax")]
    YamlNoPosition { file: String, reason: String },
    /// No document holds any key.
    #[error("{file}: the job file is empty; write at least a program key, e.g. 'suite: hackbench' and 'hackbench:'")]
    Empty { file: String },
    /// A document is a list or a scalar instead of a hash.
    #[error("{place}: document {document} is {found}, but a job is a hash of 'key: value' lines; write it as 'key: value' lines")]
    NotAHash {
        place: Place,
        document: usize,
        found: &'static str,
    },
    /// A key is not a plain scalar (a list or hash as key, or an lkp `{{ }}` template inside a flow list or hash).
    #[error("{place}: key {key} is not plain text{hint}")]
    BadKey {
        place: Place,
        key: String,
        hint: &'static str,
    },
    /// A YAML feature Culprit does not support.
    #[error("{place}: {what} is not supported; {todo}")]
    Unsupported {
        place: Place,
        what: String,
        todo: &'static str,
    },
    /// A program or monitor key holds a scalar or a list where its params hash (or nothing) is needed.
    #[error("{place}: '{key}' is {what}, so its value must be empty or a hash of its params, not {found}; write e.g.\n  {key}:\n    option: value")]
    NeedsHash {
        place: Place,
        key: String,
        what: String,
        found: String,
    },
    /// An expanded key holds an empty list, which would produce no job at all.
    #[error("{place}: '{key}' is an empty list, which yields no job; give it at least one value or remove it")]
    EmptyList { place: Place, key: String },
    /// The matrix is too large to be meant.
    #[error("{file}: the job expands to {count} atomic jobs, more than the limit of {limit}; lists responsible: {keys}; shorten those lists or split the file")]
    Explosion {
        file: String,
        count: String,
        limit: usize,
        keys: String,
    },
    /// Two atomic jobs of one file get the same name, so `culprit split` would write one over the other.
    #[error("{file}: two atomic jobs are both named '{name}' (documents {first} and {second}); make the documents differ in a param, or merge them")]
    DuplicateName {
        file: String,
        name: String,
        first: usize,
        second: usize,
    },
    /// Two atomic jobs share a name because a later document took the first's program besides its own (a later
    /// document has every key of the first): the job's two programs are the mistake, not the names (QA 58).
    #[error("{file}: document {document} selects {count} programs ({programs}): a later document takes every key of the first document, its program too; put the params they share in a first document that names no program, and each program in a document of its own after it")]
    InheritedProgram {
        file: String,
        document: usize,
        count: usize,
        programs: String,
    },
    /// An lkp `{{ expression }}` template that cannot be computed for a matrix point.
    #[error("{place}: cannot compute the '{{{{ }}}}' template of '{key}': {reason}; Culprit computes lkp's templates with the part of Ruby they are written in (params by name, strings, numbers, == =~ ? :, && ||, if/elsif/else/end, case/when/else/end), so write this one in that part or write the value itself")]
    Template { place: Place, key: String, reason: String },
    /// An lkp include (`<<: FILE`) that cannot be read: the file is not found, or the line is not one lkp reads.
    #[error("{place}: cannot include '{file}': {reason}")]
    Include { place: Place, file: String, reason: String },
    /// A param value that does not fit its convention, or is missing, or is not text.
    #[error("{place}: {key}: {reason}")]
    Param {
        place: Place,
        key: String,
        reason: String,
    },
}
