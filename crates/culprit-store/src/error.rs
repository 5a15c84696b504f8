//! The store's error type: every failure names the database (or file) involved and says what to do about it.

use std::path::PathBuf;

/// Why a store operation failed. `location` is the database file (or server) the operation was about, so that a
/// user who keeps several result stores knows which one is broken.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the result store {location}: {reason}; {hint}")]
    Open { location: String, reason: String, hint: String },

    #[error(
        "the result store {location} has schema version {found}, but this culprit only knows versions up to \
         {supported}; it was written by a newer culprit: upgrade culprit, or give another store with --db PATH or \
         $CULPRIT_DB"
    )]
    SchemaTooNew { location: String, found: i64, supported: i64 },

    #[error(
        "{location} is a {engine} database of something else (it holds {tables} and no culprit schema); culprit \
         does not write into it: give a culprit store (or a new file, or an empty database) with --db PATH or \
         $CULPRIT_DB"
    )]
    NotACulpritStore { location: String, engine: &'static str, tables: String },

    #[error("cannot upgrade the result store {location} to schema version {version}: {reason}; nothing was changed")]
    Migration { location: String, version: i64, reason: String },

    #[error(
        "cannot {action} in the result store {location}: it is read-only; nothing stored was changed. {what_to_do}, \
         or give a writable store with --db PATH or $CULPRIT_DB"
    )]
    ReadOnly { location: String, action: String, what_to_do: &'static str },

    #[error(
        "cannot {action} in the result store {location}: the disk (or the store's size limit) is full; the \
         transaction was rolled back and everything stored before is intact. Free disk space and run again"
    )]
    Full { location: String, action: String },

    #[error(
        "cannot {action} in the result store {location}: another culprit holds the database lock; wait for it to \
         finish and run again"
    )]
    Busy { location: String, action: String },

    #[error(
        "cannot {action}: the result store {location} is damaged or is not a culprit database ({reason}); restore it \
         from a backup or give another store with --db PATH or $CULPRIT_DB"
    )]
    Corrupt { location: String, action: String, reason: String },

    #[error("cannot {action} in the result store {location}: {reason}")]
    Database { location: String, action: String, reason: String },

    #[error("the result store {location} holds an unreadable value in {what}: {reason}")]
    BadStoredValue { location: String, what: String, reason: String },

    #[error("{what} does not exist in the result store {location}")]
    NotFound { location: String, what: String },

    #[error(
        "no stored results for revision `{given}` in {location}; give a full or unique SHA prefix (at least 4 hex \
         digits), a label or a `git describe` name of a stored run (`culprit results` lists them)"
    )]
    UnknownRevision { location: String, given: String },

    #[error(
        "revision `{given}` is ambiguous in {location}: it matches {}; give more digits, or `label:NAME` for a label",
        candidates.join(", ")
    )]
    AmbiguousRevision { location: String, given: String, candidates: Vec<String> },

    #[error("invalid metric regex `{pattern}`: {reason}")]
    BadRegex { pattern: String, reason: String },

    #[error("invalid value for {field}: {reason}")]
    InvalidInput { field: String, reason: String },

    #[error("cannot create the directory {} for the result store: {reason}", path.display())]
    CreateDir { path: PathBuf, reason: String },
}
