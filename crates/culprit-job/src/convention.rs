//! lkp-tests' param conventions as pure functions: CPU shares (`nr_threads: 50%`), durations (`300s`, `5m`),
//! iteration counts (`8x`) and sizes (`4k`, `64M`, `1G`).
//!
//! The rules follow lkp's `params/nr_threads`, `params/iterations` and `lib/unit.rb`: a share is that percentage of
//! the CPU count, truncated (Culprit then raises it to at least 1 so a small machine still runs one thread); duration
//! suffixes are `s`, `m`, `h`, `d`, `w`; size suffixes are binary multiples (`k` = 1024) as lkp and fio use them.
//! Unlike lkp, which quietly takes the leading digits of anything, a value that does not fit a form is an error that
//! names the value and the accepted forms.

use thiserror::Error;

/// A param value that does not fit its convention.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("'{value}' is not {expected}")]
pub struct ConventionError {
    /// The value as written in the job.
    pub value: String,
    /// What was expected, with the accepted forms.
    pub expected: &'static str,
}

fn fail(value: &str, expected: &'static str) -> ConventionError {
    ConventionError {
        value: value.to_string(),
        expected,
    }
}

const SHARE_FORMS: &str = "a whole number (8, or 8t for threads) or a share of the CPUs (50%, 12.5%, 200%)";
const DURATION_FORMS: &str =
    "a duration: seconds (300), or a number with s, m, h, d or w (300s, 5m, 1h)";
const ITERATION_FORMS: &str =
    "an iteration count: a whole number, optionally followed by x (8, 8x)";
const SIZE_FORMS: &str =
    "a size: bytes (512), or a whole number with k, M, G, T or P, optionally followed by B or iB (4k, 64M, 1GiB)";

/// Splits `text` into its leading ASCII digits and the rest.
fn split_digits(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

/// `nr_threads`-style counts: a whole number as is (with a `t` for threads, as the robot's fsmark jobs write
/// `nr_threads: 32t`), or `P%` of `nr_cpu` (truncated as lkp does, then at least 1). Shares above 100% are allowed
/// (lkp's hackbench runs `1600%`).
pub fn share_or_count(value: &str, nr_cpu: u32) -> Result<u64, ConventionError> {
    let text = value.trim();
    if let Some(percent) = text.strip_suffix('%') {
        let share = parse_decimal(percent).ok_or_else(|| fail(value, SHARE_FORMS))?;
        // Work in integer millipercent so 12.5% of 8 CPUs is exactly 1, not a float rounding artefact.
        let threads = share.saturating_mul(u64::from(nr_cpu)) / 100_000;
        return Ok(threads.max(1));
    }
    let count = text.strip_suffix('t').unwrap_or(text);
    // `parse` alone would take a sign (`+4`); a count is digits only.
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail(value, SHARE_FORMS));
    }
    count.parse::<u64>().map_err(|_| fail(value, SHARE_FORMS))
}

/// Parses `12`, `12.5`, `0.125` into thousandths (12000, 12500, 125); at most three decimals.
fn parse_decimal(text: &str) -> Option<u64> {
    let (whole, rest) = split_digits(text);
    let fraction = match rest.strip_prefix('.') {
        Some(f) if !f.is_empty() && f.len() <= 3 && f.bytes().all(|b| b.is_ascii_digit()) => f,
        Some(_) => return None,
        None if rest.is_empty() => "",
        None => return None,
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut thousandths: u64 = 0;
    for (i, digit) in fraction.bytes().enumerate() {
        thousandths += u64::from(digit - b'0') * 10u64.pow(2 - i as u32);
    }
    whole.checked_mul(1000)?.checked_add(thousandths)
}

/// Durations in seconds: `300`, `300s`, `5m`, `1h`, `2d`, `1w`.
pub fn duration_secs(value: &str) -> Result<u64, ConventionError> {
    let text = value.trim();
    let (digits, unit) = split_digits(text);
    if digits.is_empty() {
        return Err(fail(value, DURATION_FORMS));
    }
    let multiplier: u64 = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 24 * 3600,
        "w" => 7 * 24 * 3600,
        _ => return Err(fail(value, DURATION_FORMS)),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .ok_or_else(|| fail(value, DURATION_FORMS))
}

/// A number of seconds as [`duration_secs`] reads it back, in the largest unit that divides it: `7200` is `2h`,
/// `2700` is `45m`, `90` is `90s`. A message that names a limit then shows what to type to change it.
pub fn duration_text(secs: u64) -> String {
    const UNITS: [(u64, &str); 4] = [(7 * 24 * 3600, "w"), (24 * 3600, "d"), (3600, "h"), (60, "m")];
    for (size, unit) in UNITS {
        if secs > 0 && secs.is_multiple_of(size) {
            return format!("{}{unit}", secs / size);
        }
    }
    format!("{secs}s")
}

/// Iteration counts: `8x` or `8`.
pub fn iterations(value: &str) -> Result<u64, ConventionError> {
    let text = value.trim();
    let digits = text.strip_suffix('x').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail(value, ITERATION_FORMS));
    }
    digits
        .parse::<u64>()
        .map_err(|_| fail(value, ITERATION_FORMS))
}

/// Sizes in bytes, binary multiples: `512`, `4k`, `64M`, `1G`, `1T`, `4KB`, `1GiB` (suffixes are case-insensitive).
pub fn size_bytes(value: &str) -> Result<u64, ConventionError> {
    let text = value.trim();
    let (digits, unit) = split_digits(text);
    if digits.is_empty() {
        return Err(fail(value, SIZE_FORMS));
    }
    let unit = unit.to_ascii_lowercase();
    let prefix = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let shift = match prefix {
        "" if unit != "ib" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        "p" => 50,
        _ => return Err(fail(value, SIZE_FORMS)),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .ok_or_else(|| fail(value, SIZE_FORMS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_counts() {
        let cases: &[(&str, u32, Option<u64>)] = &[
            ("50%", 2, Some(1)),
            ("50%", 8, Some(4)),
            ("100%", 8, Some(8)),
            ("200%", 2, Some(4)),
            ("1600%", 4, Some(64)),
            ("12.5%", 8, Some(1)),
            ("10%", 4, Some(1)), // 0.4 threads truncates to 0, then at least 1
            ("0%", 4, Some(1)),
            ("7", 2, Some(7)),
            (" 16 ", 2, Some(16)),
            ("0", 2, Some(0)),
            ("", 2, None),
            ("%", 2, None),
            ("fifty%", 2, None),
            ("50 %", 2, None),
            ("-1", 2, None),
            ("1.5", 2, None),
            ("12.3456%", 8, None),
            ("4t", 2, Some(4)),
            ("32t", 64, Some(32)),
            ("t", 2, None),
            ("4tt", 2, None),
            ("+4", 2, None),
            ("50%t", 2, None),
        ];
        for (value, nr_cpu, want) in cases {
            assert_eq!(
                share_or_count(value, *nr_cpu).ok(),
                *want,
                "{value} of {nr_cpu} CPUs"
            );
        }
    }

    #[test]
    fn durations() {
        let cases: &[(&str, Option<u64>)] = &[
            ("300", Some(300)),
            ("300s", Some(300)),
            ("5m", Some(300)),
            ("1h", Some(3600)),
            ("2d", Some(172_800)),
            ("1w", Some(604_800)),
            ("0s", Some(0)),
            ("", None),
            ("s", None),
            ("5min", None),
            ("1.5h", None),
            ("-5s", None),
            ("5 m", None),
            ("99999999999999999999w", None),
        ];
        for (value, want) in cases {
            assert_eq!(duration_secs(value).ok(), *want, "{value}");
        }
    }

    #[test]
    fn duration_texts_read_back() {
        let cases: &[(u64, &str)] = &[
            (0, "0s"),
            (2, "2s"),
            (90, "90s"),
            (2700, "45m"),
            (5400, "90m"),
            (7200, "2h"),
            (172_800, "2d"),
            (1_209_600, "2w"),
            (3601, "3601s"),
        ];
        for &(secs, text) in cases {
            assert_eq!(duration_text(secs), text);
            assert_eq!(duration_secs(text), Ok(secs), "{text}");
        }
    }

    #[test]
    fn iteration_counts() {
        let cases: &[(&str, Option<u64>)] = &[
            ("8x", Some(8)),
            ("8", Some(8)),
            ("1x", Some(1)),
            ("x", None),
            ("", None),
            ("8xx", None),
            ("eight", None),
        ];
        for (value, want) in cases {
            assert_eq!(iterations(value).ok(), *want, "{value}");
        }
    }

    #[test]
    fn sizes() {
        let cases: &[(&str, Option<u64>)] = &[
            ("512", Some(512)),
            ("512B", Some(512)),
            ("4k", Some(4096)),
            ("4K", Some(4096)),
            ("4KB", Some(4096)),
            ("4kib", Some(4096)),
            ("64M", Some(64 << 20)),
            ("64m", Some(64 << 20)),
            ("1G", Some(1 << 30)),
            ("1GiB", Some(1 << 30)),
            ("1g", Some(1 << 30)),
            ("1T", Some(1 << 40)),
            ("2P", Some(2 << 50)),
            ("", None),
            ("k", None),
            ("4iB", None),
            ("4X", None),
            ("1.5G", None),
            ("4 k", None),
            ("-4k", None),
            ("99999P", None),
        ];
        for (value, want) in cases {
            assert_eq!(size_bytes(value).ok(), *want, "{value}");
        }
    }

    #[test]
    fn errors_name_the_value_and_the_forms() {
        let message = size_bytes("4X").unwrap_err().to_string();
        assert!(
            message.contains("'4X'") && message.contains("64M"),
            "{message}"
        );
        let message = duration_secs("5min").unwrap_err().to_string();
        assert!(
            message.contains("'5min'") && message.contains("300s"),
            "{message}"
        );
        let message = share_or_count("lots", 4).unwrap_err().to_string();
        assert!(
            message.contains("'lots'") && message.contains("50%"),
            "{message}"
        );
        let message = iterations("x").unwrap_err().to_string();
        assert!(
            message.contains("'x'") && message.contains("8x"),
            "{message}"
        );
    }
}
