//! The result store: the Store trait, SQLite and PostgreSQL implementations (being written).
