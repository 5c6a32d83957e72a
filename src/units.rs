//! How numbers are shown to people: SI prefixes with three significant figures and a unit
//! (`72.9 ms`, `1.21 M samples/s`, `40.0 GB`). Shared by the CLI and the web page; the engine
//! never formats, except the counts in its error messages ([`grouped`]).

pub use crate::engine::extended::rules::grouped;

/// `x` with three significant figures (no prefix), e.g. `72.9`, `0.00123`, `1230`.
pub fn sig3(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    let decimals_for = |v: f64| (2 - v.abs().log10().floor() as i32).max(0);
    let d = decimals_for(x);
    let scale = 10f64.powi(d);
    let rounded = (x * scale).round() / scale;
    // Rounding may carry into a new digit (0.9997 -> 1.00): count the digits again.
    let d = decimals_for(rounded).min(d) as usize;
    format!("{rounded:.d$}")
}

/// `x` scaled by an SI prefix so that 1 <= mantissa < 1000, with three significant figures, a
/// space, the prefix and the unit: `si(1.21e6, "samples/s") == "1.21 M samples/s"`.
pub fn si(x: f64, unit: &str) -> String {
    const PREFIXES: [(f64, &str); 9] = [
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
        (1.0, ""),
        (1e-3, "m"),
        (1e-6, "\u{b5}"),
    ];
    if !x.is_finite() || x == 0.0 {
        return format!("{} {unit}", sig3(x));
    }
    let a = x.abs();
    // Symbols take the prefix directly (ms, GB/s); words get a space (M samples/s), and never
    // a fraction's prefix: 0.500 requests/s, not 500 m requests/s (there are no milli-requests).
    let word = unit.len() > 1 && unit.starts_with(|c: char| c.is_lowercase());
    if word && a < 0.9995 {
        return format!("{} {unit}", sig3(x));
    }
    let (scale, prefix) = PREFIXES.iter().copied().find(|(s, _)| a >= *s * 0.9995).unwrap_or((1e-9, "n"));
    let sep = if word && !prefix.is_empty() { " " } else { "" };
    format!("{} {prefix}{sep}{unit}", sig3(x / scale))
}

/// A duration given in seconds: `72.9 ms`, `218 s`, `3.20 min` (past 10 minutes: minutes,
/// past 10 hours: hours). Under half a nanosecond it is `0 s`: no op lasts that little, so
/// such a figure is rounding noise (an overlap of 4.87e-14 s), not `0.0000487 ns`.
pub fn duration(s: f64) -> String {
    if s.abs() < 0.5e-9 {
        si(0.0, "s")
    } else if s.is_finite() && s.abs() >= 36_000.0 {
        format!("{} h", sig3(s / 3600.0))
    } else if s.is_finite() && s.abs() >= 600.0 {
        format!("{} min", sig3(s / 60.0))
    } else {
        si(s, "s")
    }
}

/// Bytes in decimal GB (1e9), the page's and the CLI's unit: `40.0 GB`, `1.14 GB`, `512 MB`
/// (datasheets' "80 GB" are GiB: [`gib`] says those).
pub fn bytes(b: f64) -> String {
    si(b, "B")
}

/// Bytes in binary GiB (2^30), for the "GiB on hover" convention: `37.3 GiB`.
pub fn gib(b: f64) -> String {
    format!("{} GiB", sig3(b / (1u64 << 30) as f64))
}

/// A bandwidth in bytes/s, in GB/s style units: `200 GB/s`.
pub fn bytes_per_s(b: f64) -> String {
    si(b, "B/s")
}

/// A count (parameters, samples) with the suffixes ML papers use: `50.6 B`, `445 M`, `2.05 k`.
pub fn count(x: f64) -> String {
    const SUFFIXES: [(f64, &str); 4] = [(1e12, " T"), (1e9, " B"), (1e6, " M"), (1e3, " k")];
    match SUFFIXES.iter().find(|(s, _)| x.abs() >= *s * 0.9995) {
        Some((scale, suffix)) => format!("{}{suffix}", sig3(x / scale)),
        None if x.fract() == 0.0 => format!("{x}"),
        None => sig3(x),
    }
}

/// A whole number of things, the noun singular for one: `1 replica`, `2 replicas`
/// (`noun` + "s" otherwise).
pub fn things(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A share in percent with three significant figures: `99.8 %`; below 0.001 % it is `0 %`
/// (rounding noise, e.g. overlapped communication of -3e-13 s).
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p.abs() < 1e-3 {
        return "0 %".to_owned();
    }
    format!("{} %", sig3(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_under_a_nanosecond_are_zero() {
        assert_eq!(duration(4.87e-14), "0 s");
        assert_eq!(duration(-3e-13), "0 s");
        assert_eq!(duration(2e-9), "2.00 ns");
        assert_eq!(duration(0.0729), "72.9 ms");
    }

    #[test]
    fn things_are_singular_only_for_one() {
        assert_eq!(things(1, "replica"), "1 replica");
        assert_eq!(things(0, "replica"), "0 replicas");
        assert_eq!(things(8, "node"), "8 nodes");
    }

    #[test]
    fn three_significant_figures_with_si_prefixes() {
        assert_eq!(si(0.0729, "s"), "72.9 ms");
        assert_eq!(si(1.21e6, "samples/s"), "1.21 M samples/s");
        assert_eq!(si(999_700.0, "samples/s"), "1.00 M samples/s");
        assert_eq!(sig3(0.99971), "1.00");
        assert_eq!(si(4e10, "B"), "40.0 GB");
        assert_eq!(si(2.0001e11, "B/s"), "200 GB/s");
        assert_eq!(si(9.4034, "samples/s"), "9.40 samples/s");
        assert_eq!(si(0.0, "s"), "0 s");
        // Counted things have no milli-prefix: half a request per second is 0.500 requests/s.
        assert_eq!(si(0.5, "requests/s"), "0.500 requests/s");
        assert_eq!(si(0.0123, "samples/s"), "0.0123 samples/s");
        assert_eq!(duration(217.79), "218 s");
        assert_eq!(duration(1200.0), "20.0 min");
        assert_eq!(percent(0.9976), "99.8 %");
        assert_eq!(percent(1.04e-15), "0 %");
        assert_eq!(count(50.6e9), "50.6 B");
        assert_eq!(count(445e6), "445 M");
        assert_eq!(count(12.0), "12");
        assert_eq!(gib(40e9), "37.3 GiB");
        assert_eq!(sig3(-3.2e-13), "-0.000000000000320");
    }
}
