//! How counts read in the mails, logs and messages: "1 run", "3 runs", "0 builds".
//!
//! Every noun Culprit counts (runs, builds, pairs, commits, CPUs, sockets, NUMA nodes, metrics, sessions) forms its
//! plural with an `s`, so one rule serves them all; a verb that agrees with a count ("holds", "hold") stays with the
//! sentence that has it.

use std::fmt::Display;

/// `singular` as it reads after the count `n`: itself for exactly one, with an `s` for any other count, zero
/// included ("0 runs", as English has it).
pub fn noun<N: PartialEq + From<u8>>(n: N, singular: &str) -> String {
    if n == N::from(1) {
        singular.to_string()
    } else {
        format!("{singular}s")
    }
}

/// The count followed by its noun: `counted(1, "run")` is "1 run", `counted(3, "run")` is "3 runs".
pub fn counted<N: Display + PartialEq + From<u8> + Copy>(n: N, singular: &str) -> String {
    format!("{n} {}", noun(n, singular))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        let cases: &[(u64, &str, &str)] = &[
            (0, "run", "0 runs"),
            (1, "run", "1 run"),
            (2, "run", "2 runs"),
            (11, "build", "11 builds"),
            (21, "socket", "21 sockets"),
            (1, "NUMA node", "1 NUMA node"),
            (4, "NUMA node", "4 NUMA nodes"),
        ];
        for &(n, singular, expected) in cases {
            assert_eq!(counted(n, singular), expected, "{n} {singular}");
        }
    }

    #[test]
    fn the_count_may_be_any_unsigned_integer() {
        assert_eq!(counted(1usize, "pair"), "1 pair");
        assert_eq!(counted(3u32, "thread"), "3 threads");
        assert_eq!(noun(1u16, "commit"), "commit");
        assert_eq!(noun(0usize, "commit"), "commits");
    }
}
