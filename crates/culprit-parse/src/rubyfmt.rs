//! Number formatting as Ruby prints it (`Float#to_s`, `Integer#to_s`), so parser output matches lkp byte for byte.

/// Ruby's `Float#to_s`: the shortest representation that round-trips, with `.0` for integral values, and
/// scientific notation (`1.0e-05`, `1.0e+16`) outside 1e-4 <= |x| < 1e16.
pub fn float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    let abs = x.abs();
    if (1e-4..1e16).contains(&abs) {
        let s = format!("{x}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        // Rust's `{:e}` gives the shortest round-trip mantissa, e.g. `1e-5` or `1.5e16`.
        let s = format!("{x:e}");
        let (mantissa, exponent) = s.split_once('e').expect("{:e} always has an exponent");
        let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
        let exp: i32 = exponent.parse().expect("{:e} exponent is an integer");
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::float;

    #[test]
    fn matches_ruby_float_to_s() {
        for (x, ruby) in [
            (8324.8, "8324.8"),
            (100.0, "100.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e-5, "1.0e-05"),
            (1.5e16, "1.5e+16"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
            (1e15, "1000000000000000.0"),
        ] {
            assert_eq!(float(x), ruby, "{x}");
        }
    }
}
