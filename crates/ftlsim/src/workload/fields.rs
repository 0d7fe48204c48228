//! Splitting a line into fields and parsing them without allocating; a bad field becomes
//! `field N (name): expected ..., found "..."`.

use std::borrow::Cow;
use std::fmt;

/// Why one line could not be read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LineError {
    Field { index: usize, name: &'static str, expected: Cow<'static, str>, found: Option<String> },
    Line(String),
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::Field { index, name, expected, found: Some(found) } => {
                write!(f, "field {index} ({name}): expected {expected}, found \"{found}\"")
            }
            LineError::Field { index, name, expected, found: None } => {
                write!(f, "field {index} ({name}): expected {expected}, found end of line")
            }
            LineError::Line(message) => f.write_str(message),
        }
    }
}

/// Shown text of a bad field, cut so one huge field cannot flood the message.
fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() > 60 {
        format!("{}...", text.chars().take(60).collect::<String>())
    } else {
        text.into_owned()
    }
}

pub(crate) fn field_error(
    index: usize,
    name: &'static str,
    expected: impl Into<Cow<'static, str>>,
    found: &[u8],
) -> LineError {
    LineError::Field { index, name, expected: expected.into(), found: Some(shown(found)) }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sep {
    /// One character between fields; spaces around a field are trimmed.
    Char(u8),
    /// Runs of spaces and tabs.
    Whitespace,
}

/// The fields of one line, numbered from 1.
pub(crate) struct Fields<'a> {
    rest: Option<&'a [u8]>,
    sep: Sep,
    index: usize,
}

fn trim(mut b: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = b {
        b = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = b {
        b = rest;
    }
    b
}

impl<'a> Fields<'a> {
    pub(crate) fn new(line: &'a [u8], sep: Sep) -> Self {
        let line = if sep == Sep::Whitespace { trim(line) } else { line };
        Fields { rest: if line.is_empty() { None } else { Some(line) }, sep, index: 0 }
    }

    /// The next field, or `None` at the end of the line.
    #[inline]
    pub(crate) fn next_raw(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        self.index += 1;
        match self.sep {
            Sep::Char(c) => match memchr(c, rest) {
                Some(i) => {
                    self.rest = Some(&rest[i + 1..]);
                    Some(trim(&rest[..i]))
                }
                None => {
                    self.rest = None;
                    Some(trim(rest))
                }
            },
            Sep::Whitespace => {
                let end = rest.iter().position(|b| *b == b' ' || *b == b'\t').unwrap_or(rest.len());
                let field = &rest[..end];
                let mut tail = &rest[end..];
                while let [b' ' | b'\t', t @ ..] = tail {
                    tail = t;
                }
                self.rest = if tail.is_empty() { None } else { Some(tail) };
                Some(field)
            }
        }
    }

    /// The next field, named for the error when the line ends before it.
    #[inline]
    pub(crate) fn next(&mut self, name: &'static str) -> Result<(usize, &'a [u8]), LineError> {
        match self.next_raw() {
            Some(f) => Ok((self.index, f)),
            None => Err(LineError::Field { index: self.index + 1, name, expected: "a value".into(), found: None }),
        }
    }

    /// Fails when fields remain.
    pub(crate) fn end(&mut self, expected_fields: usize) -> Result<(), LineError> {
        match self.next_raw() {
            None => Ok(()),
            Some(f) => Err(field_error(self.index, "end of line", format!("{expected_fields} fields"), f)),
        }
    }
}

#[inline]
fn memchr(c: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|b| *b == c)
}

/// A decimal integer of digits only.
#[inline]
pub(crate) fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// A non-negative integer field.
#[inline]
pub(crate) fn uint(index: usize, name: &'static str, b: &[u8]) -> Result<u64, LineError> {
    parse_u64(b).ok_or_else(|| field_error(index, name, "a non-negative integer", b))
}

/// A size field: a positive integer times `unit` bytes.
#[inline]
pub(crate) fn size(index: usize, name: &'static str, b: &[u8], unit: u64) -> Result<u64, LineError> {
    match parse_u64(b) {
        Some(0) => Err(field_error(index, name, "a positive size", b)),
        Some(v) => v.checked_mul(unit).ok_or_else(|| field_error(index, name, "a size that fits in 64 bits", b)),
        None => Err(field_error(index, name, "a positive integer", b)),
    }
}

/// An address field in units of `unit` bytes.
#[inline]
pub(crate) fn address(index: usize, name: &'static str, b: &[u8], unit: u64) -> Result<u64, LineError> {
    uint(index, name, b)?
        .checked_mul(unit)
        .ok_or_else(|| field_error(index, name, "an address that fits in 64 bits", b))
}

/// A non-negative decimal number times `10^scale`, exact for up to `scale` fractional digits
/// (further digits are truncated); exponent forms go through `f64`.
pub(crate) fn parse_decimal(b: &[u8], scale: u32) -> Option<u64> {
    let (int, frac) = match b.iter().position(|c| *c == b'.') {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &b[..0]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let whole = if int.is_empty() { Some(0) } else { parse_u64(int) };
    let fraction_ok = frac.iter().all(u8::is_ascii_digit);
    if let (Some(whole), true) = (whole, fraction_ok) {
        let mut f: u64 = 0;
        for i in 0..scale as usize {
            f = f * 10 + frac.get(i).map_or(0, |c| (c - b'0') as u64);
        }
        return whole.checked_mul(10u64.pow(scale))?.checked_add(f);
    }
    // Exponent forms such as 1.5e-3.
    let v: f64 = std::str::from_utf8(b).ok()?.parse().ok()?;
    let scaled = v * 10f64.powi(scale as i32);
    (v.is_finite() && v >= 0.0 && scaled < u64::MAX as f64).then(|| scaled.round() as u64)
}

/// A non-negative time field in units of `unit_ns` nanoseconds, converted to nanoseconds;
/// decimals are accepted for microseconds, milliseconds and seconds.
pub(crate) fn time(index: usize, name: &'static str, b: &[u8], unit_ns: u64) -> Result<u64, LineError> {
    // Decimal digits that make one unit a whole number of nanoseconds.
    let digits = match unit_ns {
        1_000_000_000 => 9,
        1_000_000 => 6,
        1_000 => 3,
        _ => 0,
    };
    if digits == 0 {
        // Units of a nanosecond or 100 ns ticks: integers only.
        return parse_u64(b)
            .and_then(|v| v.checked_mul(unit_ns))
            .ok_or_else(|| field_error(index, name, "a non-negative integer", b));
    }
    let unit = unit_ns / 10u64.pow(digits);
    parse_decimal(b, digits)
        .and_then(|v| v.checked_mul(unit))
        .ok_or_else(|| field_error(index, name, "a non-negative number", b))
}

/// The first 64 bits of a 32-hex-digit MD5.
pub(crate) fn md5_prefix(b: &[u8]) -> Option<u64> {
    if b.len() != 32 || !b.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(&b[..16]).ok()?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_csv_and_whitespace() {
        let mut f = Fields::new(b"1, a ,,3", Sep::Char(b','));
        let got: Vec<_> = std::iter::from_fn(|| f.next_raw()).collect();
        assert_eq!(got, vec![&b"1"[..], b"a", b"", b"3"]);
        let mut f = Fields::new(b"  8,16   3 \t 9  ", Sep::Whitespace);
        let got: Vec<_> = std::iter::from_fn(|| f.next_raw()).collect();
        assert_eq!(got, vec![&b"8,16"[..], b"3", b"9"]);
    }

    #[test]
    fn missing_field_is_named() {
        let mut f = Fields::new(b"1,2", Sep::Char(b','));
        f.next("a").unwrap();
        f.next("b").unwrap();
        assert_eq!(f.next("offset").unwrap_err().to_string(), "field 3 (offset): expected a value, found end of line");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_decimal(b"0.000123456", 9), Some(123_456));
        assert_eq!(parse_decimal(b"12", 9), Some(12_000_000_000));
        assert_eq!(parse_decimal(b".5", 3), Some(500));
        assert_eq!(parse_decimal(b"1.5e-3", 9), Some(1_500_000));
        assert_eq!(parse_decimal(b"-1.0", 9), None);
        assert_eq!(parse_decimal(b"1.2.3", 9), None);
        assert_eq!(time(1, "t", b"1.25", 1_000_000).unwrap(), 1_250_000);
        assert_eq!(
            size(6, "size", b"0", 1).unwrap_err().to_string(),
            "field 6 (size): expected a positive size, found \"0\""
        );
        assert_eq!(
            size(6, "size", b"-512", 1).unwrap_err().to_string(),
            "field 6 (size): expected a positive integer, found \"-512\""
        );
        assert_eq!(md5_prefix(b"bf619eac0cdf3f68d496ea9344137e8b"), Some(0xbf619eac0cdf3f68));
        assert_eq!(md5_prefix(b"xyz"), None);
    }
}
