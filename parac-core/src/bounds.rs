//! Interval arithmetic with C semantics, for bounds inference: the interval of every value a
//! subscript can take over a region's iteration space, with concrete sizes and host scalars (as
//! Halide's bounds inference). Used by the host's proofs before a region runs (the code
//! `parac!` emits, through `parac_runtime::bounds`) and by the reference interpreter.
//!
//! Intervals are sound over-approximations with C semantics: every operation whose result may
//! leave its C type's range (where C would wrap) widens to that whole range, so a proof never
//! rests on a value the kernel does not compute.

/// A closed interval of integers (`lo > hi`: empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iv {
    /// The smallest value.
    pub lo: i128,
    /// The largest value.
    pub hi: i128,
}

/// The C integer types a subscript computes in: bits and signedness.
#[derive(Clone, Copy, Debug)]
pub struct CTy {
    /// Width in bits (1 for `bool`).
    pub bits: u32,
    /// Signed.
    pub signed: bool,
}

impl CTy {
    fn range(self) -> Iv {
        if self.bits == 1 {
            return Iv { lo: 0, hi: 1 };
        }
        if self.signed {
            Iv {
                lo: -(1i128 << (self.bits - 1)),
                hi: (1i128 << (self.bits - 1)) - 1,
            }
        } else {
            Iv {
                lo: 0,
                hi: (1i128 << self.bits) - 1,
            }
        }
    }
}

impl Iv {
    /// One value.
    pub fn point(v: i128) -> Iv {
        Iv { lo: v, hi: v }
    }

    /// The values an index variable takes: `lo, lo + step, ..` below `hi` (empty if none).
    pub fn var(lo: i64, hi: i64, step: i64) -> Iv {
        if hi <= lo || step <= 0 {
            return Iv { lo: 1, hi: 0 };
        }
        let last = lo as i128 + ((hi as i128 - lo as i128 - 1) / step as i128) * step as i128;
        Iv {
            lo: lo as i128,
            hi: last,
        }
    }

    /// Whether no value is in it.
    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    /// The result of an operation in C type `t`: itself if it fits, else `t`'s whole range
    /// (C would wrap).
    pub fn fit(self, t: CTy) -> Iv {
        let r = t.range();
        if self.lo >= r.lo && self.hi <= r.hi {
            self
        } else {
            r
        }
    }

    fn corners(a: Iv, b: Iv, f: impl Fn(i128, i128) -> i128) -> Iv {
        let v = [f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)];
        Iv {
            lo: *v.iter().min().expect("four"),
            hi: *v.iter().max().expect("four"),
        }
    }

    /// `a + b`.
    pub fn add(self, b: Iv, t: CTy) -> Iv {
        Iv {
            lo: self.lo + b.lo,
            hi: self.hi + b.hi,
        }
        .fit(t)
    }

    /// `a - b`.
    pub fn sub(self, b: Iv, t: CTy) -> Iv {
        Iv {
            lo: self.lo - b.hi,
            hi: self.hi - b.lo,
        }
        .fit(t)
    }

    /// `a * b` (values are below 2^64, so products fit an `i128`).
    pub fn mul(self, b: Iv, t: CTy) -> Iv {
        Iv::corners(self, b, |x, y| x * y).fit(t)
    }

    /// `-a`.
    pub fn neg(self, t: CTy) -> Iv {
        Iv {
            lo: -self.hi,
            hi: -self.lo,
        }
        .fit(t)
    }

    /// `a / b`, truncating: monotone in each operand while the divisor keeps its sign. A
    /// divisor that may be 0 gives the type's range (the kernel's guarded division reports it).
    pub fn div(self, b: Iv, t: CTy) -> Iv {
        if b.lo <= 0 && b.hi >= 0 {
            return t.range();
        }
        Iv::corners(self, b, |x, y| x / y).fit(t)
    }

    /// `a % b` (C: the sign of `a`, magnitude below `|b|`).
    pub fn rem(self, b: Iv, t: CTy) -> Iv {
        if b.lo <= 0 && b.hi >= 0 {
            return t.range();
        }
        let m = b.lo.abs().max(b.hi.abs()) - 1;
        let lo = if self.lo >= 0 { 0 } else { (-m).max(self.lo) };
        let hi = if self.hi <= 0 { 0 } else { m.min(self.hi) };
        Iv { lo, hi }.fit(t)
    }

    /// `a >> b` (arithmetic); a shift outside `0..bits` gives the type's range.
    pub fn shr(self, b: Iv, t: CTy) -> Iv {
        if b.lo < 0 || b.hi >= t.bits as i128 {
            return t.range();
        }
        Iv::corners(self, b, |x, y| x >> y).fit(t)
    }

    /// `a << b`.
    pub fn shl(self, b: Iv, t: CTy) -> Iv {
        if b.lo < 0 || b.hi >= t.bits as i128 {
            return t.range();
        }
        Iv::corners(self, b, |x, y| x << y).fit(t)
    }

    /// `a & b`: with a non-negative operand, between 0 and it.
    pub fn and(self, b: Iv, t: CTy) -> Iv {
        match (self.lo >= 0, b.lo >= 0) {
            (true, true) => Iv {
                lo: 0,
                hi: self.hi.min(b.hi),
            },
            (true, false) => Iv { lo: 0, hi: self.hi },
            (false, true) => Iv { lo: 0, hi: b.hi },
            (false, false) => t.range(),
        }
    }

    /// `a | b` and `a ^ b`: below the next power of two of both, when both are non-negative.
    pub fn or(self, b: Iv, t: CTy) -> Iv {
        if self.lo < 0 || b.lo < 0 {
            return t.range();
        }
        let top = self.hi.max(b.hi);
        let bits = 128 - top.leading_zeros();
        Iv {
            lo: 0,
            hi: (1i128 << bits) - 1,
        }
        .fit(t)
    }

    /// `min(a, b)`.
    pub fn min(self, b: Iv) -> Iv {
        Iv {
            lo: self.lo.min(b.lo),
            hi: self.hi.min(b.hi),
        }
    }

    /// `max(a, b)`.
    pub fn max(self, b: Iv) -> Iv {
        Iv {
            lo: self.lo.max(b.lo),
            hi: self.hi.max(b.hi),
        }
    }

    /// `abs(a)`.
    pub fn abs(self, t: CTy) -> Iv {
        if self.lo >= 0 {
            self
        } else if self.hi <= 0 {
            self.neg(t)
        } else {
            Iv {
                lo: 0,
                hi: (-self.lo).max(self.hi),
            }
            .fit(t)
        }
    }

    /// A comparison or logical operator: 0 or 1.
    pub fn boolean() -> Iv {
        Iv { lo: 0, hi: 1 }
    }

    /// A conversion to `t` (wraps where it does not fit).
    pub fn cast(self, t: CTy) -> Iv {
        self.fit(t)
    }

    /// Anything of type `t` (an operand the inference does not follow).
    pub fn any(t: CTy) -> Iv {
        t.range()
    }

    /// A window's subscript: its start plus `0, stride, .., (len - 1) * stride`.
    pub fn window(self, len: i64, stride: i64) -> Iv {
        let ext = (len as i128 - 1) * stride as i128;
        Iv {
            lo: self.lo + ext.min(0),
            hi: self.hi + ext.max(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const I32: CTy = CTy {
        bits: 32,
        signed: true,
    };

    #[test]
    fn intervals_follow_c() {
        let x = Iv::var(0, 10, 1);
        assert_eq!(x, Iv { lo: 0, hi: 9 });
        assert_eq!(Iv::var(0, 10, 4), Iv { lo: 0, hi: 8 });
        assert!(Iv::var(3, 3, 1).is_empty());
        assert_eq!(x.div(Iv::point(2), I32), Iv { lo: 0, hi: 4 });
        assert_eq!(
            Iv { lo: -7, hi: 7 }.div(Iv::point(2), I32),
            Iv { lo: -3, hi: 3 }
        );
        assert_eq!(
            x.sub(Iv::point(2), I32).shr(Iv::point(2), I32),
            Iv { lo: -1, hi: 1 }
        );
        assert_eq!(x.rem(Iv::point(4), I32), Iv { lo: 0, hi: 3 });
        assert_eq!(x.div(Iv { lo: -1, hi: 1 }, I32), I32.range());
        assert_eq!(
            Iv::point(i32::MAX as i128).add(Iv::point(1), I32),
            I32.range()
        );
        assert_eq!(Iv { lo: -5, hi: 3 }.abs(I32), Iv { lo: 0, hi: 5 });
        assert_eq!(x.and(Iv::point(3), I32), Iv { lo: 0, hi: 3 });
        assert_eq!(Iv::point(5).window(3, 2), Iv { lo: 5, hi: 9 });
    }
}
