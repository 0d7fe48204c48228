//! Bit fields packed least significant bit first into a byte buffer, through a 64-bit
//! accumulator so each field costs a shift and an or, not a loop over its bits.

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

/// Reads fields in the order a [`BitWriter`] wrote them.
pub struct BitReader<'a> {
    buf: &'a [u8],
    acc: u64,
    bits: u32,
    byte: usize,
}

impl<'a> BitReader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        BitReader { buf, acc: 0, bits: 0, byte: 0 }
    }

    /// The next `width` (at most 32) bits.
    #[inline(always)]
    pub fn get(&mut self, width: u32) -> u64 {
        if self.bits < width {
            if let Some(word) = self.buf.get(self.byte..self.byte + 4) {
                // Four bytes at once (fewer than 32 bits are held, so they fit).
                self.acc |= (u32::from_le_bytes(word.try_into().expect("four bytes")) as u64) << self.bits;
                self.byte += 4;
                self.bits += 32;
            }
            while self.bits < width {
                self.acc |= (self.buf[self.byte] as u64) << self.bits;
                self.byte += 1;
                self.bits += 8;
            }
        }
        let value = self.acc & ((1u64 << width) - 1);
        self.acc >>= width;
        self.bits -= width;
        value
    }

    #[inline]
    pub fn skip(&mut self, width: u32) {
        self.get(width);
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
        let mut r = BitReader::new(&buf);
        for &(v, width) in &fields {
            assert_eq!(r.get(width), v & ((1 << width) - 1), "a field of {width} bits");
        }
    }
}
