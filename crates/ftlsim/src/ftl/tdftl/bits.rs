//! Bit fields packed least significant bit first into a byte buffer: written through a 64-bit
//! accumulator so each field costs a shift and an or, not a loop over its bits; read by position.

/// Writes fields one after another from the buffer's first bit.
pub struct BitWriter<'a> {
    buf: &'a mut [u8],
    acc: u64,
    bits: u32,
    byte: usize,
}

impl<'a> BitWriter<'a> {
    pub fn new(buf: &'a mut [u8]) -> Self {
        BitWriter { buf, acc: 0, bits: 0, byte: 0 }
    }

    /// Appends the low `width` (at most 32) bits of `value`.
    #[inline(always)]
    pub fn put(&mut self, value: u64, width: u32) {
        self.acc |= (value & ((1u64 << width) - 1)) << self.bits;
        self.bits += width;
        if self.bits >= 32 {
            // Every byte flushed holds bits already written, so it lies inside the image.
            self.buf[self.byte..self.byte + 4].copy_from_slice(&(self.acc as u32).to_le_bytes());
            self.byte += 4;
            self.acc >>= 32;
            self.bits -= 32;
        }
    }

    /// Writes the last partial bytes (their unused high bits zero).
    pub fn finish(mut self) {
        while self.bits > 0 {
            self.buf[self.byte] = self.acc as u8;
            self.byte += 1;
            self.acc >>= 8;
            self.bits = self.bits.saturating_sub(8);
        }
    }
}

/// Replaces the `width` (at most 57) bits from bit `at` of `buf` by the low bits of `value`.
pub fn replace_bits(buf: &mut [u8], at: u32, width: u32, value: u64) {
    let (first, shift) = ((at >> 3) as usize, at & 7);
    let bytes = &mut buf[first..first + (shift + width).div_ceil(8) as usize];
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    let mask = ((1u64 << width) - 1) << shift;
    let word = u64::from_le_bytes(word) & !mask | (value << shift) & mask;
    bytes.copy_from_slice(&word.to_le_bytes()[..bytes.len()]);
}

/// Reads fields at any bit position of an image: each field is one unaligned 8-byte load from a
/// padded copy, so fields are read in any order and independently of each other.
pub struct Fields<const N: usize> {
    buf: [u8; N],
}

impl<const N: usize> Fields<N> {
    /// A copy of `image` with 8 bytes of zeros after it (`N` must be at least its length + 8).
    #[inline(always)]
    pub fn new(image: &[u8]) -> Self {
        let mut buf = [0u8; N];
        buf[..image.len()].copy_from_slice(image);
        Fields { buf }
    }

    /// The `width` (at most 57) bits from bit `at`.
    #[inline(always)]
    pub fn get(&self, at: u32, width: u32) -> u64 {
        let byte = (at >> 3) as usize;
        let word = u64::from_le_bytes(self.buf[byte..byte + 8].try_into().expect("eight bytes"));
        (word >> (at & 7)) & ((1u64 << width) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_any_width_read_back_in_order() {
        let fields: Vec<(u64, u32)> =
            (0..60u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15), 1 + (i % 32) as u32)).collect();
        let mut buf = [0u8; 256];
        let mut w = BitWriter::new(&mut buf);
        for &(v, width) in &fields {
            w.put(v, width);
        }
        w.finish();
        let r = Fields::<264>::new(&buf);
        let mut at = 0;
        for &(v, width) in &fields {
            assert_eq!(r.get(at, width), v & ((1 << width) - 1), "a field of {width} bits at bit {at}");
            at += width;
        }
    }

    #[test]
    fn a_replaced_field_leaves_its_neighbours() {
        let mut buf = [0xA5u8; 16];
        replace_bits(&mut buf, 13, 10, 0x3FF_0155);
        let (after, before) = (Fields::<24>::new(&buf), Fields::<24>::new(&[0xA5; 16]));
        assert_eq!(after.get(13, 10), 0x155);
        assert_eq!(after.get(0, 13), before.get(0, 13));
        assert_eq!(after.get(23, 41), before.get(23, 41));
    }
}
