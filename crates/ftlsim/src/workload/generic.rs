//! Any delimited trace, with the columns named by a [`GenericSpec`] mapping (`--columns`).

use super::fields::{address, field_error, size, time, Fields, LineError, Sep};
use super::options::{Delimiter, GenericSpec};
use super::reader::{LineFormat, Raw};
use super::IoKind;

pub(crate) struct Generic {
    spec: GenericSpec,
    sep: Sep,
    /// The last column the mapping uses.
    width: usize,
}

impl Generic {
    pub(crate) fn new(spec: GenericSpec) -> Generic {
        let sep = match spec.delimiter {
            Delimiter::Comma => Sep::Char(b','),
            Delimiter::Whitespace => Sep::Whitespace,
            Delimiter::Char(c) => Sep::Char(c as u8),
        };
        let width = [spec.time.map_or(0, |c| c.index), spec.op, spec.offset.index, spec.size.index]
            .into_iter()
            .max()
            .unwrap_or(0);
        Generic { spec, sep, width }
    }

    /// The first mapped column at or after `index`, with its name: the one a line that ends
    /// before `index` lacks.
    fn next_mapped(&self, index: usize) -> (usize, &'static str) {
        let mapped = [
            (self.spec.time.map(|c| c.index), "time"),
            (Some(self.spec.op), "op"),
            (Some(self.spec.offset.index), "offset"),
            (Some(self.spec.size.index), "size"),
        ];
        mapped
            .into_iter()
            .filter_map(|(column, name)| column.filter(|&c| c >= index).map(|c| (c, name)))
            .min()
            .expect("the loop stops at the last mapped column")
    }
}

impl LineFormat for Generic {
    fn parse(&mut self, line: &[u8], number: u64) -> Result<Option<Raw>, LineError> {
        if number <= self.spec.skip {
            return Ok(None);
        }
        let mut f = Fields::new(line, self.sep);
        let (mut t, mut kind, mut offset, mut len) = (0, IoKind::Read, 0, 0);
        for index in 1..=self.width {
            let Some(b) = f.next_raw() else {
                let (column, name) = self.next_mapped(index);
                return Err(LineError::Field { index: column, name, expected: "a value".into(), found: None });
            };
            let i = index;
            if let Some(c) = self.spec.time.filter(|c| c.index == i) {
                t = time(i, "time", b, c.unit)?;
            }
            if i == self.spec.op {
                kind = self
                    .spec
                    .ops
                    .iter()
                    .find(|(v, _)| v.as_bytes().eq_ignore_ascii_case(b))
                    .map(|(_, k)| *k)
                    .ok_or_else(|| {
                        let known: Vec<&str> = self.spec.ops.iter().map(|(v, _)| v.as_str()).collect();
                        field_error(i, "op", format!("one of {}", known.join(", ")), b)
                    })?;
            }
            if i == self.spec.offset.index {
                offset = address(i, "offset", b, self.spec.offset.unit)?;
            }
            if i == self.spec.size.index {
                len = size(i, "size", b, self.spec.size.unit)?;
            }
        }
        Ok(Some(Raw { time: t, kind, offset, len, content: None }))
    }
}
