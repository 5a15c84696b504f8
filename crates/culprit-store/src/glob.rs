//! Shell-style glob matching for job names, testcases and hostnames in filters (`fio-*`, `lkp-?`, `[ab]*`).
//!
//! Matching happens in Rust rather than in SQL because SQLite's GLOB and PostgreSQL's LIKE disagree on syntax;
//! one matcher keeps both back ends answering the same.

/// Why a pattern is not a well-formed glob: where its unclosed `[` is. Commands check what the user typed with
/// [`validate`] and refuse it, since a `[` that silently matches itself is rarely what was meant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{pattern}' is not a valid glob: the `[` at character {} opens a character class that no `]` closes; close \
     it (`[ab]`), or write `[[]` to match a `[` itself",
    position + 1
)]
pub struct GlobError {
    pub pattern: String,
    /// The 0-based character index of the unclosed `[`.
    pub position: usize,
}

/// Checks that `pattern` is a well-formed glob: every `[` opens a class that a `]` closes. [`matches`] still
/// accepts a malformed pattern (matching such a `[` literally) so that stored filters keep working; this is for
/// patterns a user just typed.
pub fn validate(pattern: &str) -> Result<(), GlobError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut p = 0;
    while p < chars.len() {
        if chars[p] == '[' {
            match class_matches(&chars, p, '\0') {
                Some((_, len)) => p += len,
                None => return Err(GlobError { pattern: pattern.to_string(), position: p }),
            }
        } else {
            p += 1;
        }
    }
    Ok(())
}

/// Whether `text` matches `pattern`. `*` matches any run of characters, `?` one character, `[abc]` / `[a-z]` /
/// `[!a]` a character class; every other character matches itself. A malformed class (no closing `]`) matches
/// its `[` literally.
pub fn matches(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point for the last `*`, linear in practice and never recursive,
    // so no pattern can exhaust the stack.
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        let step = match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => match class_matches(&pattern, p, text[t]) {
                Some((true, len)) => Some(len),
                Some((false, _)) => None,
                None => (text[t] == '[').then_some(1),
            },
            Some(c) => (*c == text[t]).then_some(1),
            None => None,
        };
        match step {
            Some(len) => {
                p += len;
                t += 1;
            }
            None => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|c| *c == '*')
}

/// Matches a `[...]` class starting at `pattern[start]`; returns whether `c` is in it and the class's length,
/// or `None` when the class is not closed.
fn class_matches(pattern: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negated = matches!(pattern.get(i), Some('!') | Some('^'));
    if negated {
        i += 1;
    }
    let mut found = false;
    let mut first = true;
    loop {
        let current = *pattern.get(i)?;
        if current == ']' && !first {
            return Some((found != negated, i + 1 - start));
        }
        first = false;
        if pattern.get(i + 1) == Some(&'-') && pattern.get(i + 2).is_some_and(|end| *end != ']') {
            let end = *pattern.get(i + 2)?;
            found |= current <= c && c <= end;
            i += 3;
        } else {
            found |= current == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{matches, validate, GlobError};

    #[test]
    fn glob_cases() {
        let cases: &[(&str, &str, bool)] = &[
            ("fio-basic", "fio-basic", true),
            ("fio-basic", "fio-basic2", false),
            ("fio-*", "fio-basic-4k", true),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("*-4k*", "fio-basic-4k-randwrite", true),
            ("*-8k*", "fio-basic-4k-randwrite", false),
            ("lkp-?", "lkp-a", true),
            ("lkp-?", "lkp-ab", false),
            ("[ab]*", "beta", true),
            ("[ab]*", "gamma", false),
            ("[!ab]*", "gamma", true),
            ("[a-c]x", "bx", true),
            ("[a-c]x", "dx", false),
            ("[unclosed", "[unclosed", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbYd", false),
            ("ü*", "übung", true),
            ("**a", "bbba", true),
        ];
        for (pattern, text, expected) in cases {
            assert_eq!(matches(pattern, text), *expected, "{pattern} vs {text}");
        }
    }

    #[test]
    fn validate_refuses_unclosed_classes_only() {
        for good in ["", "fio-*", "lkp-?", "[ab]*", "[!a]x", "[a-c]", "[]]", "[[]", "a[b]c[d]", "*]"] {
            assert_eq!(validate(good), Ok(()), "{good}");
        }
        let cases: &[(&str, usize)] =
            &[("[[", 0), ("[", 0), ("ab[", 2), ("[a]x[", 4), ("[]", 0), ("[!]", 0), ("ü[", 1)];
        for (bad, position) in cases {
            assert_eq!(validate(bad), Err(GlobError { pattern: bad.to_string(), position: *position }), "{bad}");
        }
        let message = validate("x[[").unwrap_err().to_string();
        assert!(message.contains("'x[['") && message.contains("character 2") && message.contains("[[]"), "{message}");
    }
}
