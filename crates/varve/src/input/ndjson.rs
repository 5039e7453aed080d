//! NDJSON inputs: one JSON object per line; types inferred from the first lines by Arrow.
//!
//! Arrow's JSON decoder keeps the last of two equal keys in an object (`{"a":1,"a":2}` reads as
//! `a = 2`, the 1 silently gone), so every line is checked for repeated keys, at any depth, on its
//! way to the decoder; a repeated key is an error naming the line and the key.

use std::collections::HashSet;
use std::fmt;
use std::io::{BufRead, Read};
use std::sync::{Arc, Mutex};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use arrow::datatypes::Schema;

use crate::error::{Error, Result};

use super::source::open_text;
use super::{Batches, Input, Progress, BATCH_ROWS, INFER_ROWS};

/// The first error of the line check, kept aside: Arrow's JSON reader turns the I/O error that
/// carries it into text.
type Slot = Arc<Mutex<Option<Error>>>;

fn json_error(name: &str, slot: &Slot, e: arrow::error::ArrowError) -> Error {
    if let Some(checked) = slot.lock().ok().and_then(|mut s| s.take()) {
        return checked;
    }
    let text = e.to_string();
    let text = text.strip_prefix("Json error: ").unwrap_or(&text);
    let msg = if text.contains("incomplete deflate stream") || text.contains("end of file") {
        "the file is truncated (unexpected end of input)".to_string()
    } else {
        // Arrow's messages may quote a whole value: keep them short.
        crate::error::cut_long(text, 400)
    };
    Error::invalid(format!("{name}: {msg}")).with_source(e)
}

/// The columns of the first [`INFER_ROWS`] objects.
pub(crate) fn infer_schema(input: &Input) -> Result<Schema> {
    let slot = Slot::default();
    let mut r = CheckedLines::new(open_text(input, None)?, &input.name, &slot);
    let (schema, _) = arrow::json::reader::infer_json_schema(&mut r, Some(INFER_ROWS))
        .map_err(|e| json_error(&input.name, &slot, e))?;
    if schema.fields().is_empty() {
        return Err(Error::invalid(format!("{}: the file is empty", input.name)));
    }
    Ok(schema)
}

/// The objects as batches of the inferred schema. Strict: a key the inferred schema lacks (first
/// seen after the inferred lines) is an error, never silently dropped.
pub(crate) fn batches(input: &Input, progress: Option<Progress>) -> Result<Batches> {
    let slot = Slot::default();
    let r = CheckedLines::new(open_text(input, progress)?, &input.name, &slot);
    let reader = arrow::json::ReaderBuilder::new(Arc::clone(input.schema()))
        .with_strict_mode(true)
        .with_batch_size(BATCH_ROWS)
        .build(r)
        .map_err(|e| json_error(&input.name, &slot, e))?;
    let name = input.name.clone();
    Ok(Box::new(
        reader.map(move |b| b.map_err(|e| json_error(&name, &slot, e))),
    ))
}

/// Hands lines on unchanged, after checking each for repeated keys.
struct CheckedLines<R> {
    inner: R,
    line: Vec<u8>,
    pos: usize,
    number: u64,
    name: String,
    slot: Slot,
}

impl<R: BufRead> CheckedLines<R> {
    fn new(inner: R, name: &str, slot: &Slot) -> std::io::BufReader<CheckedLines<R>> {
        std::io::BufReader::with_capacity(
            1 << 16,
            CheckedLines {
                inner,
                line: Vec::new(),
                pos: 0,
                number: 0,
                name: name.to_string(),
                slot: slot.clone(),
            },
        )
    }
}

impl<R: BufRead> Read for CheckedLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.line.len() {
            self.line.clear();
            self.pos = 0;
            if self.inner.read_until(b'\n', &mut self.line)? == 0 {
                return Ok(0);
            }
            self.number += 1;
            if let Some(key) = repeated_key(&self.line) {
                let e = Error::invalid(format!(
                    "{}: line {}: the key \"{}\" appears twice in one object (one value would be lost)",
                    self.name,
                    self.number,
                    crate::error::cut(&key)
                ));
                let text = e.message().to_string();
                if let Ok(mut s) = self.slot.lock() {
                    s.get_or_insert(e);
                }
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, text));
            }
        }
        let n = buf.len().min(self.line.len() - self.pos);
        buf[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A key that appears twice in one object of the JSON text `line` (at any depth), or `None`
/// (also for text that is not JSON: the decoder reports that). JSON parsers keep one of the two
/// values silently (RFC 8259, section 4: names "SHOULD be unique"), so Varve refuses such objects.
pub fn repeated_key(line: &[u8]) -> Option<String> {
    // Cheap exit: a line with fewer than two keys cannot repeat one.
    if line.iter().filter(|b| **b == b':').count() < 2 {
        return None;
    }
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(line);
    let _ = NoRepeats(&mut found).deserialize(&mut de);
    found
}

/// Walks a JSON value, recording the first repeated key of an object.
struct NoRepeats<'a>(&'a mut Option<String>);

impl<'de> DeserializeSeed<'de> for NoRepeats<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoRepeats<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoRepeats(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(k) = map.next_key::<String>()? {
            map.next_value_seed(NoRepeats(&mut *self.0))?;
            if self.0.is_none() && !keys.insert(k.clone()) {
                *self.0 = Some(k);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_found_at_any_depth() {
        assert_eq!(repeated_key(br#"{"a":1,"a":2}"#), Some("a".into()));
        assert_eq!(repeated_key(br#"{"a":1,"b":{"c":1,"c":2}}"#), Some("c".into()));
        assert_eq!(repeated_key(br#"{"a":1,"b":[{"a":1}]}"#), None);
        assert_eq!(repeated_key(b"not json"), None);
    }
}
