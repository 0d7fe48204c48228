//! Division by a divisor fixed at construction (pages per block, planes): a shift and a mask when
//! it is a power of two, as in nearly every geometry, a hardware division otherwise. A division
//! takes tens of cycles; the address arithmetic of every flash operation does several.

/// A fixed nonzero `u32` divisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divisor {
    value: u32,
    /// `log2(value)` when `value` is a power of two, else `u32::MAX`.
    shift: u32,
}

impl Divisor {
    /// Panics on zero (a geometry is validated before use: every count is at least 1).
    #[inline]
    pub fn new(value: u32) -> Self {
        assert!(value != 0, "a divisor is nonzero");
        let shift = if value.is_power_of_two() { value.trailing_zeros() } else { u32::MAX };
        Divisor { value, shift }
    }

    #[inline]
    pub fn get(self) -> u32 {
        self.value
    }

    #[inline]
    pub fn quotient(self, x: u32) -> u32 {
        if self.shift != u32::MAX {
            x >> self.shift
        } else {
            x / self.value
        }
    }

    #[inline]
    pub fn remainder(self, x: u32) -> u32 {
        if self.shift != u32::MAX {
            x & (self.value - 1)
        } else {
            x % self.value
        }
    }

    /// `(x / value, x % value)`.
    #[inline]
    pub fn div_rem(self, x: u32) -> (u32, u32) {
        (self.quotient(x), self.remainder(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_division_for_powers_of_two_and_others() {
        for value in [1, 2, 3, 4, 7, 8, 255, 256, 384, 1 << 31, u32::MAX] {
            let d = Divisor::new(value);
            for x in [0, 1, 2, 3, 255, 256, 257, 1000, 65_535, 1 << 20, u32::MAX - 1, u32::MAX] {
                assert_eq!(d.div_rem(x), (x / value, x % value), "{x} / {value}");
            }
        }
    }
}
