//! Where the PostgreSQL store finds a password that its URL does not carry: `PGPASSWORD`, then libpq's password
//! file (`PGPASSFILE`, default `~/.pgpass`), looked up as libpq looks it up.
//!
//! Culprit prints `--db` URLs without their password (in mails and hints, which must not leak it), so a pasted
//! command has to find the password where libpq-based tools (psql, pgbench, Culprit's own pgbench runner) find it.
//! The file's format is libpq's: lines `hostname:port:database:username:password`, `#` comments, `*` matching any
//! value in the first four fields, `\:` and `\\` standing for a literal colon and backslash; the first matching line
//! wins. As libpq does, a file that its group or others may read or write is ignored, because a password file that
//! others can read has already leaked.

use std::path::{Path, PathBuf};

/// What the connection is to: the values a password file's line is matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    pub host: &'a str,
    pub port: u16,
    pub database: &'a str,
    pub user: &'a str,
}

/// The outcome of a password search, kept so that a failed connection can say where it looked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// `PGPASSWORD` was set (and not empty: libpq, too, treats an empty one as unset).
    Environment(String),
    /// A line of this password file matched.
    File(PathBuf, String),
    /// No password: the file looked in, and why it gave nothing when it was not merely without a matching line.
    Nothing { file: Option<PathBuf>, note: Option<String> },
}

/// Splits one line of a password file into its five fields, undoing the `\:` and `\\` escapes; `None` for comments,
/// blank lines and lines with fewer than five fields. Each of the first four fields comes with a flag saying whether
/// it is a wildcard: a bare `*`, not an escaped `\*`, which matches only a literal star.
pub fn parse_line(line: &str) -> Option<([(String, bool); 4], String)> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.starts_with('#') || line.trim().is_empty() {
        return None;
    }
    let mut fields: Vec<(String, bool)> = Vec::with_capacity(5);
    let mut current = String::new();
    let mut escaped_any = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            // libpq drops a backslash and takes the next character literally, whatever it is.
            '\\' => {
                escaped_any = true;
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            // The password is the rest of the line, colons included, once four separators have been seen.
            ':' if fields.len() < 4 => {
                let wildcard = current == "*" && !escaped_any;
                fields.push((std::mem::take(&mut current), wildcard));
                escaped_any = false;
            }
            _ => current.push(c),
        }
    }
    if fields.len() < 4 {
        return None;
    }
    let mut it = fields.into_iter();
    let four = [it.next()?, it.next()?, it.next()?, it.next()?];
    Some((four, current))
}

/// The password of the first line of `contents` that matches `target`, as libpq picks it.
pub fn lookup(contents: &str, target: &Target<'_>) -> Option<String> {
    let port = target.port.to_string();
    let wanted = [target.host, port.as_str(), target.database, target.user];
    contents.lines().filter_map(parse_line).find_map(|(fields, password)| {
        let matches = fields.iter().zip(wanted).all(|((value, wildcard), want)| *wildcard || value == want);
        matches.then_some(password)
    })
}

/// The password file libpq would read: `PGPASSFILE`, else `~/.pgpass`.
pub fn password_file() -> Option<PathBuf> {
    match std::env::var_os("PGPASSFILE") {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|home| Path::new(&home).join(".pgpass")),
    }
}

/// Looks for the password of `target`: `PGPASSWORD` first, then the password file.
pub fn find(target: &Target<'_>) -> Found {
    if let Some(password) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
        return Found::Environment(password);
    }
    let Some(file) = password_file() else {
        return Found::Nothing { file: None, note: None };
    };
    let Ok(metadata) = std::fs::metadata(&file) else {
        return Found::Nothing { file: Some(file), note: Some("it does not exist".into()) };
    };
    if !metadata.is_file() {
        return Found::Nothing { file: Some(file), note: Some("it is not a plain file".into()) };
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = metadata.permissions().mode();
        if mode & 0o077 != 0 {
            return Found::Nothing {
                file: Some(file),
                note: Some(format!(
                    "it was ignored because its group or others may access it (mode {:o}); chmod 600 it, as libpq \
                     asks",
                    mode & 0o777
                )),
            };
        }
    }
    match std::fs::read_to_string(&file) {
        Ok(contents) => match lookup(&contents, target) {
            Some(password) => Found::File(file, password),
            None => Found::Nothing { file: Some(file), note: None },
        },
        Err(e) => Found::Nothing { file: Some(file), note: Some(format!("it could not be read: {e}")) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGET: Target<'static> = Target { host: "db.lab", port: 5433, database: "culprit", user: "farm" };

    #[test]
    fn lines_are_split_with_libpq_escapes() {
        let field = |s: &str, w: bool| (s.to_string(), w);
        for (line, expected) in [
            ("h:5432:d:u:pw", Some(([field("h", false), field("5432", false), field("d", false), field("u", false)], "pw"))),
            ("*:*:*:*:a:b", Some(([field("*", true), field("*", true), field("*", true), field("*", true)], "a:b"))),
            (r"h\:x:1:d\\b:u:p\:w", Some(([field("h:x", false), field("1", false), field(r"d\b", false),
                field("u", false)], "p:w"))),
            (r"\*:1:d:u:p", Some(([field("*", false), field("1", false), field("d", false), field("u", false)], "p"))),
            ("h:1:d:u:pw\r", Some(([field("h", false), field("1", false), field("d", false), field("u", false)], "pw"))),
            ("h:1:d:u:", Some(([field("h", false), field("1", false), field("d", false), field("u", false)], ""))),
            ("# h:1:d:u:pw", None),
            ("", None),
            ("h:1:d:u", None),
            (r"h:1:d\:u:pw", None),
        ] {
            let parsed = parse_line(line);
            let expected = expected.map(|(fields, password)| (fields, password.to_string()));
            assert_eq!(parsed, expected, "{line:?}");
        }
    }

    #[test]
    fn the_first_matching_line_gives_the_password() {
        for (contents, expected) in [
            ("db.lab:5433:culprit:farm:secret", Some("secret")),
            ("other:5433:culprit:farm:x\ndb.lab:5433:culprit:farm:secret", Some("secret")),
            ("*:*:*:farm:any\ndb.lab:5433:culprit:farm:exact", Some("any")),
            ("db.lab:5432:culprit:farm:x", None),
            ("db.lab:5433:postgres:farm:x", None),
            ("db.lab:5433:culprit:other:x", None),
            ("db.lab:*:culprit:*:wild", Some("wild")),
            // An escaped star is a literal star, which matches only a host named `*`.
            (r"\*:5433:culprit:farm:x", None),
            ("# db.lab:5433:culprit:farm:commented\n\n*:5433:*:*:pw:with:colons", Some("pw:with:colons")),
            ("", None),
        ] {
            assert_eq!(lookup(contents, &TARGET).as_deref(), expected, "{contents:?}");
        }
    }
}
