//! Decoding: one Kafka record's payload into rows of named, typed values, in the format the
//! pipeline names (JSON objects, InfluxDB line protocol, CSV lines). Decoding knows nothing of
//! the table; [`crate::rows`] fits the values to its columns.
//!
//! - JSON: one object per record (or one object per line). Nested objects are flattened with `.`
//!   (`{"a":{"b":1}}` is column `a.b`); arrays are refused. A key given twice in one object is
//!   refused (a JSON parser keeps one of them silently).
//! - Line protocol (<https://docs.influxdata.com/influxdb/v2/reference/syntax/line-protocol/>):
//!   one or more lines per record; tags are text values, fields keep their types, a line's
//!   timestamp is in `--time-unit` (default ns), and a line without one takes the record's Kafka
//!   timestamp, so that a replay decodes the same rows.
//! - CSV: one or more lines per record, no header, columns named by `--csv-columns`; a value is an
//!   integer, a float, `true`/`false` or text, as it reads, and an empty value is null.

use serde_json::Value as Json;

/// One decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Text(String),
    /// A CSV field: text whose type is its column's ([`crate::rows`] reads it as that type; a new
    /// column takes the type the text reads as).
    Raw(String),
}

impl Value {
    /// What the value is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::UInt(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Text(_) | Value::Raw(_) => "text",
        }
    }
}

/// A row's time as decoded: still in the record's own terms, converted by [`crate::rows`].
#[derive(Debug, Clone, PartialEq)]
pub enum RawTime {
    /// The time field's value (a number in `--time-unit`, or text).
    Value(Value),
    /// A time in the given unit already (line protocol), or the record's Kafka timestamp (ms).
    Scaled(i64, arrow::datatypes::TimeUnit),
}

/// One decoded row: its time and its other values, in payload order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub time: RawTime,
    pub values: Vec<(String, Value)>,
    /// Names that are the series key when the table is created (line protocol tags).
    pub tags: Vec<String>,
}

/// The payload format of a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    Json,
    LineProtocol,
    Csv,
}

/// How to decode payloads.
#[derive(Debug, Clone)]
pub struct Decoder {
    pub format: Format,
    /// The JSON field or CSV column holding the time.
    pub time_field: String,
    /// Line protocol timestamps' unit.
    pub line_unit: arrow::datatypes::TimeUnit,
    /// CSV column names.
    pub csv_columns: Vec<String>,
}

impl Decoder {
    /// Decodes one payload; `kafka_ms` is the record's Kafka timestamp (ms since the epoch).
    ///
    /// Errors: why the payload is refused, naming the line or field.
    pub fn decode(&self, payload: &[u8], kafka_ms: i64) -> Result<Vec<Row>, String> {
        let text = std::str::from_utf8(payload).map_err(|e| format!("the payload is not UTF-8 ({e})"))?;
        match self.format {
            Format::Json => self.json(text),
            Format::LineProtocol => self.line_protocol(text, kafka_ms),
            Format::Csv => self.csv(text),
        }
    }

    fn json(&self, text: &str) -> Result<Vec<Row>, String> {
        let mut rows = Vec::new();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        // One object per record, possibly pretty-printed, or one per line.
        let objects: Vec<&str> = match lines.len() > 1 && lines.iter().all(|l| l.trim_start().starts_with('{')) {
            true => lines,
            false => vec![text],
        };
        for (i, obj) in objects.iter().enumerate() {
            let at = |m: String| match objects.len() {
                1 => m,
                _ => format!("line {}: {m}", i + 1),
            };
            check_repeated_keys(obj).map_err(at)?;
            let v: Json = serde_json::from_str(obj).map_err(|e| at(format!("not JSON: {e}")))?;
            let Json::Object(map) = v else {
                return Err(at("not a JSON object".to_string()));
            };
            let mut values = Vec::new();
            flatten("", map, &mut values).map_err(at)?;
            let Some(i) = values.iter().position(|(k, _)| *k == self.time_field) else {
                return Err(at(format!("no time field {:?}", self.time_field)));
            };
            let (_, t) = values.remove(i);
            if t == Value::Null {
                return Err(at(format!("the time field {:?} is null", self.time_field)));
            }
            rows.push(Row {
                time: RawTime::Value(t),
                values,
                tags: vec![],
            });
        }
        Ok(rows)
    }

    fn line_protocol(&self, text: &str, kafka_ms: i64) -> Result<Vec<Row>, String> {
        let mut rows = Vec::new();
        let many = text.lines().filter(|l| !l.trim().is_empty()).count() > 1;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |m: String| match many {
                true => format!("line {}: {m}", n + 1),
                false => m,
            };
            let parsed = match influxdb_line_protocol::parse_lines(line).next() {
                Some(Ok(p)) => p,
                Some(Err(e)) => return Err(at(format!("not line protocol: {e}"))),
                None => continue,
            };
            let mut values = Vec::new();
            let mut tags = Vec::new();
            for (k, v) in parsed.series.tag_set.iter().flatten() {
                tags.push(k.to_string());
                values.push((k.to_string(), Value::Text(v.to_string())));
            }
            for (k, v) in &parsed.field_set {
                let v = match v {
                    influxdb_line_protocol::FieldValue::I64(i) => Value::Int(*i),
                    influxdb_line_protocol::FieldValue::U64(u) => Value::UInt(*u),
                    influxdb_line_protocol::FieldValue::F64(f) => Value::Float(*f),
                    influxdb_line_protocol::FieldValue::String(s) => Value::Text(s.to_string()),
                    influxdb_line_protocol::FieldValue::Boolean(b) => Value::Bool(*b),
                };
                let name = k.to_string();
                if tags.contains(&name) {
                    return Err(at(format!("{name} is a tag and a field")));
                }
                // A field given twice: the last counts, as in InfluxDB.
                values.retain(|(n, _)| *n != name);
                values.push((name, v));
            }
            if values.iter().any(|(k, _)| *k == self.time_field) {
                return Err(at(format!(
                    "{} is the time column's name, not a tag's or field's",
                    self.time_field
                )));
            }
            let time = match parsed.timestamp {
                Some(t) => RawTime::Scaled(t, self.line_unit),
                None => RawTime::Scaled(kafka_ms, arrow::datatypes::TimeUnit::Millisecond),
            };
            rows.push(Row { time, values, tags });
        }
        if rows.is_empty() {
            return Err("no line protocol lines".to_string());
        }
        Ok(rows)
    }

    fn csv(&self, text: &str) -> Result<Vec<Row>, String> {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes());
        let mut rows = Vec::new();
        for (n, rec) in r.records().enumerate() {
            let at = |m: String| format!("line {}: {m}", n + 1);
            let rec = rec.map_err(|e| at(format!("not CSV: {e}")))?;
            if rec.len() != self.csv_columns.len() {
                return Err(at(format!(
                    "{} values for {} columns ({})",
                    rec.len(),
                    self.csv_columns.len(),
                    self.csv_columns.join(",")
                )));
            }
            let mut time = None;
            let mut values = Vec::new();
            for (name, field) in self.csv_columns.iter().zip(rec.iter()) {
                let v = csv_value(field);
                if *name == self.time_field {
                    if v == Value::Null {
                        return Err(at(format!("the time column {name:?} is empty")));
                    }
                    time = Some(v);
                } else {
                    values.push((name.clone(), v));
                }
            }
            let Some(time) = time else {
                return Err(format!(
                    "--csv-columns does not name the time column {:?}",
                    self.time_field
                ));
            };
            rows.push(Row {
                time: RawTime::Value(time),
                values,
                tags: vec![],
            });
        }
        if rows.is_empty() {
            return Err("no CSV lines".to_string());
        }
        Ok(rows)
    }
}

/// A CSV value: null when empty, else its text, typed by its column.
fn csv_value(s: &str) -> Value {
    match s {
        "" => Value::Null,
        s => Value::Raw(s.to_string()),
    }
}

/// The type CSV text reads as when it starts a new column: an integer (without leading zeros,
/// which an integer would drop), a float, a boolean, or text.
pub fn csv_type(s: &str) -> Value {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let leading_zero = digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0.");
    if !leading_zero {
        if let Ok(i) = s.parse::<i64>() {
            return Value::Int(i);
        }
        if s.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) && s.bytes().any(|b| b.is_ascii_digit()) {
            if let Ok(f) = s.parse::<f64>() {
                return Value::Float(f);
            }
        }
    }
    match s {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::Text(s.to_string()),
    }
}

fn flatten(prefix: &str, map: serde_json::Map<String, Json>, out: &mut Vec<(String, Value)>) -> Result<(), String> {
    for (k, v) in map {
        let name = match prefix {
            "" => k,
            p => format!("{p}.{k}"),
        };
        let v = match v {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(b),
            Json::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Value::Int(i),
                (None, Some(u)) => Value::UInt(u),
                _ => match n.as_f64() {
                    Some(f) if f.is_finite() => Value::Float(f),
                    _ => return Err(format!("field {name}: number {n} is out of range")),
                },
            },
            Json::String(s) => Value::Text(s),
            Json::Array(_) => return Err(format!("field {name} is an array; arrays are not supported")),
            Json::Object(m) => {
                flatten(&name, m, out)?;
                continue;
            }
        };
        if out.iter().any(|(n, _)| *n == name) {
            return Err(format!("field {name} is given twice (once as a nested key)"));
        }
        out.push((name, v));
    }
    Ok(())
}

/// Refuses an object with a key repeated in one object, at any depth (a parser keeps only one
/// of the values, silently).
fn check_repeated_keys(text: &str) -> Result<(), String> {
    match varve::input::repeated_key(text.as_bytes()) {
        Some(k) => Err(format!(
            "key {k:?} is given twice in one object (one value would be lost)"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::TimeUnit;

    fn dec(format: Format) -> Decoder {
        Decoder {
            format,
            time_field: "time".into(),
            line_unit: TimeUnit::Nanosecond,
            csv_columns: vec!["time".into(), "host".into(), "v".into()],
        }
    }

    #[test]
    fn json_rows() {
        let d = dec(Format::Json);
        let r = d
            .decode(br#"{"time": 5, "a": {"b": 1.5, "c": "x"}, "n": null}"#, 0)
            .unwrap();
        assert_eq!(r[0].time, RawTime::Value(Value::Int(5)));
        assert_eq!(
            r[0].values,
            vec![
                ("a.b".into(), Value::Float(1.5)),
                ("a.c".into(), Value::Text("x".into())),
                ("n".into(), Value::Null)
            ]
        );
        assert_eq!(d.decode(b"{\"time\":1}\n{\"time\":2}", 0).unwrap().len(), 2);
        assert!(d.decode(br#"{"a": 1}"#, 0).unwrap_err().contains("no time field"));
        assert!(d
            .decode(br#"{"time": 1, "a": 1, "a": 2}"#, 0)
            .unwrap_err()
            .contains("twice"));
        assert!(d.decode(br#"{"time": 1, "a": [1]}"#, 0).unwrap_err().contains("array"));
        assert!(d.decode(b"{\"time\": ", 0).unwrap_err().contains("not JSON"));
        assert!(d.decode(b"[1]", 0).unwrap_err().contains("not a JSON object"));
        assert!(d.decode(&[0xff, 0xfe], 0).unwrap_err().contains("UTF-8"));
    }

    #[test]
    fn line_protocol_rows() {
        let d = dec(Format::LineProtocol);
        let r = d
            .decode(b"cpu,host=a usage=1.5,n=3i 1000\ncpu,host=b usage=2", 7)
            .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].time, RawTime::Scaled(1000, TimeUnit::Nanosecond));
        assert_eq!(r[1].time, RawTime::Scaled(7, TimeUnit::Millisecond));
        assert_eq!(r[0].tags, vec!["host".to_string()]);
        assert_eq!(r[0].values[2], ("n".into(), Value::Int(3)));
        assert!(d.decode(b"cpu usage=", 0).unwrap_err().contains("line protocol"));
    }

    #[test]
    fn csv_rows() {
        let d = dec(Format::Csv);
        let r = d.decode(b"2024-01-01T00:00:00Z,a,1.5", 0).unwrap();
        assert_eq!(
            r[0].values,
            vec![
                ("host".into(), Value::Raw("a".into())),
                ("v".into(), Value::Raw("1.5".into()))
            ]
        );
        assert!(d.decode(b"1,a", 0).unwrap_err().contains("2 values for 3 columns"));
        assert_eq!(csv_type("12"), Value::Int(12));
        assert_eq!(csv_type("007"), Value::Text("007".into()));
        assert_eq!(csv_type("-0.5"), Value::Float(-0.5));
        assert_eq!(csv_type("inf"), Value::Text("inf".into()));
    }
}
