//! What an FTL writes into the spare (out-of-band) area of each page, and whether it fits.
//!
//! A page's spare area holds ECC and the FTL's metadata; only `device.geometry.spare_usable`
//! bytes are left to the FTL (paper 000's device: 112 of 448 bytes). Each FTL declares the fields
//! it writes with their encoded sizes, and a device whose usable spare bytes cannot hold them is
//! refused when the FTL is built. The flash array keeps the common fields (page kind, logical
//! number, version) in flat arrays for speed; [`SpareLayout::encode`] is the byte image the
//! declared sizes stand for.

use super::Geometry;
use crate::error::{Result, SimError};

/// One field of a spare layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpareField {
    pub name: &'static str,
    /// Encoded size in bytes: 1 to 8 for a number ([`SpareLayout::encode`]), up to
    /// [`MAX_FIELD_BYTES`] for a record the FTL encodes itself (3DFTL's mapping metadata).
    pub bytes: u32,
}

/// The largest field an FTL may declare.
pub const MAX_FIELD_BYTES: u32 = 256;

impl SpareField {
    pub const fn new(name: &'static str, bytes: u32) -> Self {
        SpareField { name, bytes }
    }
}

/// The page kind (data, translation, ...).
pub const KIND_FIELD: SpareField = SpareField::new("page kind", 1);
/// The logical number: LPN of a data page, translation-page number of a translation page.
pub const LOGICAL_FIELD: SpareField = SpareField::new("logical number", 4);
/// The writer's version or sequence number (the newest copy wins on recovery).
pub const VERSION_FIELD: SpareField = SpareField::new("version", 4);

/// The fields an FTL writes in every spare area, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpareLayout {
    pub fields: &'static [SpareField],
}

/// What every page-mapped FTL writes: the page kind, the logical number and the version.
pub const BASIC_LAYOUT: SpareLayout = SpareLayout { fields: &[KIND_FIELD, LOGICAL_FIELD, VERSION_FIELD] };

impl SpareLayout {
    /// Encoded size of a record.
    pub fn bytes(&self) -> u32 {
        self.fields.iter().map(|f| f.bytes).sum()
    }

    /// Refuses a layout that does not fit the device's usable spare bytes, naming the FTL, its
    /// fields, the bytes needed and the bytes available.
    pub fn check(&self, ftl: &str, geometry: &Geometry) -> Result<()> {
        if let Some(field) = self.fields.iter().find(|f| !(1..=MAX_FIELD_BYTES).contains(&f.bytes)) {
            return Err(SimError::Other(format!(
                "FTL {ftl} declares spare field \"{}\" of {} bytes (1 to {MAX_FIELD_BYTES})",
                field.name, field.bytes
            )));
        }
        let usable = geometry.spare_usable_bytes();
        if self.bytes() <= usable {
            return Ok(());
        }
        let fields: Vec<String> = self.fields.iter().map(|f| format!("{} {} B", f.name, f.bytes)).collect();
        Err(SimError::config(
            geometry.spare_usable_field(),
            format!(
                "FTL {ftl} writes {} B in every spare area ({}), but only {usable} B are usable",
                self.bytes(),
                fields.join(", ")
            ),
        ))
    }

    /// The byte image of a record holding `values` (one per field, little-endian, each within
    /// its field's size).
    pub fn encode(&self, values: &[u64]) -> Result<Vec<u8>> {
        if values.len() != self.fields.len() {
            return Err(SimError::Other(format!("{} values for {} spare fields", values.len(), self.fields.len())));
        }
        let mut out = Vec::with_capacity(self.bytes() as usize);
        if let Some(field) = self.fields.iter().find(|f| f.bytes > 8) {
            return Err(SimError::Other(format!(
                "spare field \"{}\" is a record its FTL encodes, not a number",
                field.name
            )));
        }
        for (field, &value) in self.fields.iter().zip(values) {
            let bytes = value.to_le_bytes();
            let width = field.bytes as usize;
            if bytes[width..].iter().any(|&b| b != 0) {
                return Err(SimError::Other(format!(
                    "spare field \"{}\": {value} does not fit in {width} bytes",
                    field.name
                )));
            }
            out.extend_from_slice(&bytes[..width]);
        }
        Ok(out)
    }

    /// The values of a record encoded by [`SpareLayout::encode`].
    pub fn decode(&self, record: &[u8]) -> Result<Vec<u64>> {
        if record.len() != self.bytes() as usize {
            return Err(SimError::Other(format!(
                "a spare record of {} bytes, expected {}",
                record.len(),
                self.bytes()
            )));
        }
        if let Some(field) = self.fields.iter().find(|f| f.bytes > 8) {
            return Err(SimError::Other(format!(
                "spare field \"{}\" is a record its FTL encodes, not a number",
                field.name
            )));
        }
        let mut at = 0;
        let values = self
            .fields
            .iter()
            .map(|field| {
                let mut bytes = [0u8; 8];
                let width = field.bytes as usize;
                bytes[..width].copy_from_slice(&record[at..at + width]);
                at += width;
                u64::from_le_bytes(bytes)
            })
            .collect();
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use proptest::prelude::*;

    fn field_strategy() -> impl Strategy<Value = (u32, u64)> {
        (1u32..=8).prop_flat_map(|bytes| {
            let max = if bytes == 8 { u64::MAX } else { (1u64 << (8 * bytes)) - 1 };
            (Just(bytes), 0..=max)
        })
    }

    proptest! {
        #[test]
        fn records_round_trip_through_their_encoding(fields in prop::collection::vec(field_strategy(), 1..12)) {
            let spec: Vec<SpareField> = fields.iter().map(|&(bytes, _)| SpareField::new("f", bytes)).collect();
            let layout = SpareLayout { fields: Box::leak(spec.into_boxed_slice()) };
            let values: Vec<u64> = fields.iter().map(|&(_, v)| v).collect();
            let record = layout.encode(&values).unwrap();
            prop_assert_eq!(record.len() as u32, layout.bytes());
            prop_assert_eq!(layout.decode(&record).unwrap(), values);
        }

        #[test]
        fn a_layout_fits_exactly_when_its_bytes_are_usable(usable in 0u32..40, fields in prop::collection::vec(1u32..=8, 1..8)) {
            let mut geometry = Config::preset("mlc8g").unwrap().device.geometry;
            geometry.spare_usable = Some(usable);
            let spec: Vec<SpareField> = fields.iter().map(|&b| SpareField::new("f", b)).collect();
            let layout = SpareLayout { fields: Box::leak(spec.into_boxed_slice()) };
            let needed: u32 = fields.iter().sum();
            match layout.check("x", &geometry) {
                Ok(()) => prop_assert!(needed <= usable),
                Err(e) => {
                    prop_assert!(needed > usable);
                    let message = e.to_string();
                    prop_assert!(message.contains("device.geometry.spare_usable"), "{}", message);
                    let expected = format!("writes {needed} B");
                    prop_assert!(message.contains(&expected), "{}", message);
                }
            }
        }
    }

    #[test]
    fn a_value_too_wide_for_its_field_is_refused() {
        let err = BASIC_LAYOUT.encode(&[1, 1 << 32, 0]).unwrap_err().to_string();
        assert!(err.contains("logical number") && err.contains("4 bytes"), "{err}");
    }

    #[test]
    fn a_record_field_counts_against_the_budget_but_is_not_a_number() {
        let geometry = Config::preset("mlc8g").unwrap().device.geometry;
        const FITS: &[SpareField] = &[SpareField::new("record", 108), SpareField::new("sequence", 4)];
        const OVER: &[SpareField] = &[SpareField::new("record", 109), SpareField::new("sequence", 4)];
        let fits = SpareLayout { fields: FITS };
        fits.check("x", &geometry).unwrap();
        let over = SpareLayout { fields: OVER };
        let err = over.check("x", &geometry).unwrap_err().to_string();
        assert!(err.contains("writes 113 B") && err.contains("record 109 B"), "{err}");
        assert!(fits.encode(&[0, 0]).unwrap_err().to_string().contains("not a number"));
        assert!(fits.decode(&[0; 112]).unwrap_err().to_string().contains("not a number"));
    }

    #[test]
    fn paper_000s_device_leaves_112_bytes() {
        let geometry = Config::preset("mlc8g").unwrap().device.geometry;
        assert_eq!((geometry.spare_size, geometry.spare_usable_bytes()), (448, 112));
        BASIC_LAYOUT.check("pftl", &geometry).unwrap();
    }
}
