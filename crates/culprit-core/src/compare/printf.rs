//! The few printf conversions the lkp table uses (`%d` of a float, `%.Nf`, `%.Ng`), reproduced as Ruby's
//! `format` prints them, because Rust's formatter has no `%g` and truncates differently.

/// Ruby's spelling of non-finite floats in `format`, so a bad value renders as lkp would show it.
fn non_finite(x: f64) -> Option<String> {
    if x.is_nan() {
        Some("NaN".to_string())
    } else if x.is_infinite() {
        Some(if x > 0.0 { "Inf".to_string() } else { "-Inf".to_string() })
    } else {
        None
    }
}

/// `%d` of a float as Ruby does it: the value truncated toward zero.
pub fn int_trunc(x: f64) -> String {
    if let Some(s) = non_finite(x) {
        return s;
    }
    let t = x.trunc();
    if t.abs() < 9.0e15 {
        format!("{}", t as i64)
    } else {
        format!("{t:.0}")
    }
}

/// `%.{prec}f`, optionally with an explicit `+` sign (`%+.{prec}f`).
pub fn fixed(x: f64, prec: usize, plus: bool) -> String {
    if let Some(s) = non_finite(x) {
        return if plus && x > 0.0 { format!("+{s}") } else { s };
    }
    if plus {
        format!("{x:+.prec$}")
    } else {
        format!("{x:.prec$}")
    }
}

/// `%.{prec}g` as C defines it: `prec` significant digits, scientific notation when the decimal exponent is
/// below -4 or at least `prec`, trailing zeros removed, exponent with a sign and at least two digits.
pub fn general(x: f64, prec: usize, plus: bool) -> String {
    if let Some(s) = non_finite(x) {
        return if plus && x > 0.0 { format!("+{s}") } else { s };
    }
    let p = prec.max(1);
    let sign = if x.is_sign_negative() && x != 0.0 {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    };
    let a = x.abs();
    if a == 0.0 {
        return format!("{sign}0");
    }
    // Round to p significant digits first: the exponent that decides the style is the one after rounding.
    let sci = format!("{:.*e}", p - 1, a);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse::<i32>().unwrap_or(0)),
        None => (sci.clone(), 0),
    };
    if exp < -4 || exp >= p as i32 {
        let m = strip_zeros(&mantissa);
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        format!("{sign}{}", strip_zeros(&format!("{a:.decimals$}")))
    }
}

/// A fraction as the percentage a user types for `--min-change` (`7%`, not `7.000000000000001%`; `0.25%`, not
/// `0.2%`): rounded to the hundredth of a percent, trailing zeros removed. Every message that names the user's bar
/// spells it so, whichever command prints it.
pub fn percent_of_fraction(fraction: f64) -> String {
    format!("{}%", (fraction * 10_000.0).round() / 100.0)
}

/// Removes trailing zeros after a decimal point, and the point itself if nothing follows it.
fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_matches_c_printf() {
        // Expected strings are what `printf("%.4g")` / `printf("%.5g")` print in C and Ruby.
        let cases: &[(f64, usize, &str)] = &[
            (123456789.0, 4, "1.235e+08"),
            (7785809.108594, 5, "7.7858e+06"),
            (10.0, 5, "10"),
            (0.0, 5, "0"),
            (0.0001234, 4, "0.0001234"),
            (0.00001234, 4, "1.234e-05"),
            (99999.0, 2, "1e+05"),
            (-2.5e-7, 2, "-2.5e-07"),
            (1234.5, 4, "1234"),
            (1.0e100, 4, "1e+100"),
        ];
        for &(x, p, want) in cases {
            assert_eq!(general(x, p, false), want, "%.{p}g of {x}");
        }
        assert_eq!(general(1.0e104, 2, true), "+1e+104");
        assert_eq!(general(f64::NAN, 4, false), "NaN");
    }

    #[test]
    fn a_fraction_reads_as_the_percentage_typed() {
        assert_eq!(percent_of_fraction(0.07), "7%");
        assert_eq!(percent_of_fraction(0.0025), "0.25%");
        assert_eq!(percent_of_fraction(0.125), "12.5%");
        assert_eq!(percent_of_fraction(0.01), "1%");
    }

    #[test]
    fn fixed_and_trunc_match_ruby() {
        assert_eq!(fixed(-21.8123, 1, true), "-21.8");
        assert_eq!(fixed(0.04, 1, true), "+0.0");
        assert_eq!(fixed(948.289, 2, false), "948.29");
        assert_eq!(int_trunc(1212.97), "1212");
        assert_eq!(int_trunc(-3.99), "-3");
        assert_eq!(int_trunc(f64::INFINITY), "Inf");
    }
}
