//! Numbers that round the way MAD-Max's Python code rounds.
//!
//! The reference mixes exact (arbitrary-precision) integer arithmetic with IEEE-754 doubles:
//! a value stays an exact integer until its first true division or its first product with a
//! float (SPEC, conventions). Reference-mode formulas are written with [`Num`] so that every
//! intermediate result is rounded exactly where Python rounds it. This module knows nothing
//! about models or GPUs.

use std::fmt;
use std::ops::{Add, Div, Mul, Sub};

/// A Python `int` (exact; held in `i128`) or `float` (`f64`).
///
/// Integer products that would overflow `i128` fall back to `f64`; no realistic input gets near
/// that (validation bounds every integer field), and it keeps every operation total.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    /// The value as a double, rounded half-to-even like Python's `float(int)`.
    pub fn f64(self) -> f64 {
        match self {
            // Same rounding either way; the i64 conversion is one instruction.
            Num::Int(i) => match i64::try_from(i) {
                Ok(small) => small as f64,
                Err(_) => i as f64,
            },
            Num::Float(f) => f,
        }
    }

    /// True when the value is an exact integer equal to `v` or a float equal to `v`
    /// (Python's `==` across int and float).
    pub fn equals(self, v: i128) -> bool {
        match self {
            Num::Int(i) => i == v,
            Num::Float(f) => f == v as f64,
        }
    }
}

impl From<u64> for Num {
    fn from(v: u64) -> Num {
        Num::Int(v as i128)
    }
}

impl From<i128> for Num {
    fn from(v: i128) -> Num {
        Num::Int(v)
    }
}

impl From<f64> for Num {
    fn from(v: f64) -> Num {
        Num::Float(v)
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) => write!(f, "{x}"),
        }
    }
}

/// Both integers as `i64`, when they fit (the common case, served by hardware arithmetic).
fn small(a: i128, b: i128) -> Option<(i64, i64)> {
    Some((i64::try_from(a).ok()?, i64::try_from(b).ok()?))
}

impl Mul for Num {
    type Output = Num;
    fn mul(self, o: Num) -> Num {
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => {
                let exact = match small(a, b) {
                    Some((x, y)) => Some(x as i128 * y as i128),
                    None => a.checked_mul(b),
                };
                match exact {
                    Some(p) => Num::Int(p),
                    None => Num::Float(Num::Int(a).f64() * Num::Int(b).f64()),
                }
            }
            (a, b) => Num::Float(a.f64() * b.f64()),
        }
    }
}

impl Add for Num {
    type Output = Num;
    fn add(self, o: Num) -> Num {
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => match a.checked_add(b) {
                Some(s) => Num::Int(s),
                None => Num::Float(a as f64 + b as f64),
            },
            (a, b) => Num::Float(a.f64() + b.f64()),
        }
    }
}

impl Sub for Num {
    type Output = Num;
    fn sub(self, o: Num) -> Num {
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => match a.checked_sub(b) {
                Some(s) => Num::Int(s),
                None => Num::Float(a as f64 - b as f64),
            },
            (a, b) => Num::Float(a.f64() - b.f64()),
        }
    }
}

/// Python's true division `/`: always a float; `int / int` is correctly rounded from the exact
/// quotient (not from the two operands rounded to doubles first).
impl Div for Num {
    type Output = Num;
    fn div(self, o: Num) -> Num {
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => Num::Float(int_true_div(a, b)),
            (a, b) => Num::Float(a.f64() / b.f64()),
        }
    }
}

/// `a / b` for integers, correctly rounded (half to even) like CPython's `int.__truediv__`.
/// Division by zero gives an infinity or NaN instead of raising (validation prevents it).
pub fn int_true_div(a: i128, b: i128) -> f64 {
    const EXACT: u128 = 1 << 53;
    const EXACT_I: i64 = 1 << 53;
    if let Some((x, y)) = small(a, b) {
        if (-EXACT_I..=EXACT_I).contains(&x) && (-EXACT_I..=EXACT_I).contains(&y) {
            // Both operands are exact doubles: IEEE division is then correctly rounded.
            return x as f64 / y as f64;
        }
    }
    if b == 0 {
        return Num::Int(a).f64() / 0.0;
    }
    let negative = (a < 0) != (b < 0);
    let (ua, ub) = (a.unsigned_abs(), b.unsigned_abs());
    let magnitude = if ua <= EXACT && ub <= EXACT {
        // Both operands are exact doubles: IEEE division is then correctly rounded.
        ua as f64 / ub as f64
    } else if ub >= 1 << 64 {
        // Out of any realistic range; the nearest double is good enough here.
        ua as f64 / ub as f64
    } else {
        rounded_quotient(ua, ub)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// Correctly rounded `a / b` for `0 < b < 2^64`.
fn rounded_quotient(a: u128, b: u128) -> f64 {
    if a == 0 {
        return 0.0;
    }
    let bits = |x: u128| 128 - x.leading_zeros() as i32;
    // Scale the dividend so the integer quotient has at least 55 significant bits
    // (53 kept + a round bit + a guard), then fold the remainder into a sticky bit.
    let shift = (55 + bits(b) - bits(a)).max(0);
    let scaled = a << shift; // bits(a) + shift <= 55 + 64 < 128: no overflow
    let mut q = scaled / b;
    let mut sticky = !scaled.is_multiple_of(b);
    let mut exp = -shift;
    // Reduce q to 54 bits (53 + round bit), collecting what falls off into the sticky bit.
    while bits(q) > 54 {
        sticky |= q & 1 == 1;
        q >>= 1;
        exp += 1;
    }
    let round_bit = q & 1 == 1;
    let mut m = q >> 1;
    exp += 1;
    if round_bit && (sticky || m & 1 == 1) {
        m += 1;
    }
    // m < 2^54 and the scaling is by a power of two, so this product is exact.
    (m as f64) * 2f64.powi(exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_int_division_matches_float_division() {
        assert_eq!(int_true_div(1, 3), 1.0 / 3.0);
        assert_eq!(int_true_div(-7, 2), -3.5);
        assert_eq!(int_true_div(8796093022208, 8), 1099511627776.0);
    }

    #[test]
    fn big_int_division_is_correctly_rounded() {
        // 2^60 + 1 is not a double; Python: (2**60 + 1) / 3 == 384307168202282325.33.. -> rounds
        // to 384307168202282304.0 (the nearest double), not (float(2**60+1)/3.0).
        let a: i128 = (1 << 60) + 1;
        assert_eq!(int_true_div(a, 3), 384307168202282325.0_f64);
        // Exact halfway cases round to even: (2^54 + 2) / 2 = 2^53 + 1 -> 2^53 (even).
        assert_eq!(int_true_div((1 << 54) + 2, 2), 9007199254740992.0);
        // (2^54 + 6) / 2 = 2^53 + 3 -> 2^53 + 4 (even).
        assert_eq!(int_true_div((1 << 54) + 6, 2), 9007199254740996.0);
        // Nearest wins: (2^55 + 3) / 4 = 2^53 + 0.75 -> 2^53; (2^55 + 5) / 4 = 2^53 + 1.25 -> 2^53 + 2.
        assert_eq!(int_true_div((1 << 55) + 3, 4), 9007199254740992.0);
        assert_eq!(int_true_div((1 << 55) + 5, 4), 9007199254740994.0);
        // Python: (10**20 + 1) / 7 == 14285714285714285714.43 -> 1.4285714285714287e19.
        assert_eq!(int_true_div(100_000_000_000_000_000_001, 7), 1.4285714285714287e19);
    }

    #[test]
    fn python_mixed_arithmetic() {
        let i = Num::Int(3);
        let f = Num::Float(0.5);
        assert_eq!(i * Num::Int(4), Num::Int(12));
        assert_eq!(i * f, Num::Float(1.5));
        assert_eq!(i / Num::Int(3), Num::Float(1.0));
        assert_eq!(Num::Int(1) - Num::Int(1), Num::Int(0));
        assert!(Num::Float(2.0).equals(2));
        assert!(!Num::Float(2.5).equals(2));
    }

    #[test]
    fn overflowing_products_fall_back_to_floats() {
        let big = Num::Int(i128::MAX / 2);
        assert!(matches!(big * Num::Int(4), Num::Float(_)));
        assert!(matches!(big + big + big, Num::Float(_)));
    }
}
