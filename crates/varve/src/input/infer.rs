//! Type inference for text columns: the narrowest type every non-null value of a column fits.
//!
//! The rules follow Arrow's CSV inference, widened where Arrow turns data into text: booleans
//! (`true`/`false`, any case), 64-bit integers (that fit), floats (decimal or exponent notation and
//! the usual spellings of infinity and NaN: `inf`, `+inf`, `Infinity`, `-Infinity`, `NaN`, any
//! case), dates `YYYY-MM-DD`, timestamps `YYYY-MM-DD[T ]HH:MM:SS[.f][zone]` with the unit their
//! fraction needs; anything else, or a mix, is text. A number with a leading zero (`007`,
//! `-012`, `00.5`) or a plus sign (`+5`) is text: a code or identifier, which a number would
//! change (the same rule as `varve ingest`'s CSV records). A column with no values is `Null`.

use arrow::datatypes::{DataType, TimeUnit};

/// What the values of one column seen so far fit, and, for a column that is text, how many of
/// its values are of another type (numbers or times) and how the others are spelled, so that an
/// import can say when a column is text only because of a few stray spellings (`nil`, `-`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Guess {
    bits: u16,
    /// The types of the values that are not text.
    typed_bits: u16,
    typed: u64,
    text: u64,
    /// Up to [`MAX_SPELLINGS`] distinct text values, with their counts.
    spellings: Vec<(String, u64)>,
    /// More distinct text values were seen than are kept.
    more_spellings: bool,
}

/// Distinct text spellings a [`Guess`] keeps.
const MAX_SPELLINGS: usize = 5;

/// A text column whose values are mostly of another type: the type the others fit and the text
/// spellings that made it text.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MostlyTyped {
    /// The type the non-text values fit (e.g. `Float64`).
    #[serde(serialize_with = "type_name")]
    pub would_be: DataType,
    /// Values of that type among those sampled.
    pub typed_values: u64,
    /// Text values among those sampled.
    pub text_values: u64,
    /// The distinct text spellings, most frequent first, with their counts.
    pub spellings: Vec<(String, u64)>,
}

const BOOL: u16 = 1;
const INT: u16 = 1 << 1;
const FLOAT: u16 = 1 << 2;
const DATE: u16 = 1 << 3;
const TS_S: u16 = 1 << 4;
const TS_MS: u16 = 1 << 5;
const TS_US: u16 = 1 << 6;
const TS_NS: u16 = 1 << 7;
const TEXT: u16 = 1 << 8;

fn type_name<S: serde::Serializer>(t: &DataType, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_string())
}

impl MostlyTyped {
    /// One line for people, e.g. `column isig is text, though 98.8% of 2000 sampled values are
    /// numbers (Float64); the others are "nil" (24 rows), "-" (1 row)`.
    pub fn describe(&self, column: &str) -> String {
        let kind = match &self.would_be {
            DataType::Int64 | DataType::Float64 => "numbers",
            DataType::Boolean => "booleans",
            _ => "times",
        };
        let total = self.typed_values + self.text_values;
        let others: Vec<String> = self
            .spellings
            .iter()
            .map(|(s, n)| format!("{s:?} ({n} row{})", if *n == 1 { "" } else { "s" }))
            .collect();
        format!(
            "column {column} is text, though {:.1}% of {total} sampled values are {kind} ({:?}); the others are {}",
            100.0 * self.typed_values as f64 / total.max(1) as f64,
            self.would_be,
            others.join(", ")
        )
    }
}

impl Guess {
    /// Takes one non-null value into account.
    pub(crate) fn update(&mut self, v: &str) {
        let c = classify(v);
        self.bits |= c;
        if c != TEXT {
            self.typed_bits |= c;
            self.typed += 1;
            return;
        }
        self.text += 1;
        if let Some(e) = self.spellings.iter_mut().find(|(s, _)| s == v) {
            e.1 += 1;
        } else if self.spellings.len() < MAX_SPELLINGS {
            self.spellings.push((v.to_string(), 1));
        } else {
            self.more_spellings = true;
        }
    }

    /// For a column inferred as text: `Some` when at least 90% of its values fit another type
    /// and the rest are at most [`MAX_SPELLINGS`] distinct spellings (a missing-value marker such
    /// as `nil`, `NA` or `-`, typically).
    pub(crate) fn mostly_typed(&self) -> Option<MostlyTyped> {
        if self.data_type() != DataType::Utf8 || self.more_spellings || self.typed == 0 {
            return None;
        }
        if (self.typed as f64) < 0.9 * (self.typed + self.text) as f64 {
            return None;
        }
        let would_be = Guess {
            bits: self.typed_bits,
            ..Default::default()
        }
        .data_type();
        if would_be == DataType::Utf8 {
            return None;
        }
        let mut spellings = self.spellings.clone();
        spellings.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Some(MostlyTyped {
            would_be,
            typed_values: self.typed,
            text_values: self.text,
            spellings,
        })
    }

    /// The type the values fit.
    pub(crate) fn data_type(&self) -> DataType {
        let b = self.bits;
        match b {
            0 => DataType::Null,
            BOOL => DataType::Boolean,
            INT => DataType::Int64,
            FLOAT | 6 => DataType::Float64,
            b if b & !(DATE | TS_S | TS_MS | TS_US | TS_NS) == 0 => {
                if b & TS_NS != 0 {
                    DataType::Timestamp(TimeUnit::Nanosecond, None)
                } else if b & TS_US != 0 {
                    DataType::Timestamp(TimeUnit::Microsecond, None)
                } else if b & TS_MS != 0 {
                    DataType::Timestamp(TimeUnit::Millisecond, None)
                } else if b & TS_S != 0 {
                    DataType::Timestamp(TimeUnit::Second, None)
                } else {
                    DataType::Date32
                }
            }
            _ => DataType::Utf8,
        }
    }
}

/// Whether `v` is one of the spellings of infinity or NaN a float column accepts (`inf`,
/// `infinity`, `nan`, optionally signed, any case).
pub(crate) fn is_special_float(v: &str) -> bool {
    let u = v.strip_prefix(['+', '-']).unwrap_or(v);
    u.eq_ignore_ascii_case("inf") || u.eq_ignore_ascii_case("infinity") || u.eq_ignore_ascii_case("nan")
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_decimal(v: &str) -> bool {
    let v = v.strip_prefix('-').unwrap_or(v);
    let (mantissa, exp) = match v.find(['e', 'E']) {
        Some(i) => (&v[..i], Some(&v[i + 1..])),
        None => (v, None),
    };
    if let Some(e) = exp {
        if !digits(e.strip_prefix(['+', '-']).unwrap_or(e)) {
            return false;
        }
    }
    match mantissa.split_once('.') {
        Some((a, b)) => (digits(a) || a.is_empty()) && (digits(b) || b.is_empty()) && !(a.is_empty() && b.is_empty()),
        // Without a point it is a float only with an exponent (else an integer).
        None => exp.is_some() && digits(mantissa),
    }
}

/// The timestamp unit a value `YYYY-MM-DD[T ]HH:MM:SS[.f][rest]` needs, as a bit, or 0.
fn timestamp_bit(v: &str) -> u16 {
    let b = v.as_bytes();
    let date = |b: &[u8]| {
        b.len() >= 10
            && b[..4].iter().all(u8::is_ascii_digit)
            && b[4] == b'-'
            && b[5..7].iter().all(u8::is_ascii_digit)
            && b[7] == b'-'
            && b[8..10].iter().all(u8::is_ascii_digit)
    };
    if !date(b) {
        return 0;
    }
    if b.len() == 10 {
        return DATE;
    }
    let time_ok = b.len() >= 19
        && (b[10] == b'T' || b[10] == b' ')
        && b[11..13].iter().all(u8::is_ascii_digit)
        && b[13] == b':'
        && b[14..16].iter().all(u8::is_ascii_digit)
        && b[16] == b':'
        && b[17..19].iter().all(u8::is_ascii_digit);
    if !time_ok {
        return 0;
    }
    let rest = &b[19..];
    if rest.first() == Some(&b'.') {
        let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let after = &rest[1 + n..];
        if after.first().is_some_and(u8::is_ascii_digit) {
            return 0;
        }
        return match n {
            1..=3 => TS_MS,
            4..=6 => TS_US,
            7..=9 => TS_NS,
            _ => 0,
        };
    }
    if rest.first().is_some_and(u8::is_ascii_digit) {
        return 0;
    }
    TS_S
}

/// Whether `v` is a number spelled with a leading zero (`007`, `-012`, `00.5`): a code, an
/// identifier or a zip code, whose zeros a number would drop.
fn leading_zero(v: &str) -> bool {
    let unsigned = v.strip_prefix('-').unwrap_or(v);
    let b = unsigned.as_bytes();
    b.len() > 1 && b[0] == b'0' && b[1].is_ascii_digit()
}

fn classify(v: &str) -> u16 {
    if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") {
        return BOOL;
    }
    let unsigned = v.strip_prefix('-').unwrap_or(v);
    if digits(unsigned) || is_decimal(v) {
        // A number that would lose its leading zeros is text: reading `007` as 7 changes it.
        if leading_zero(v) {
            return TEXT;
        }
        if digits(unsigned) {
            return if v.parse::<i64>().is_ok() { INT } else { TEXT };
        }
        return FLOAT;
    }
    if is_special_float(v) {
        return FLOAT;
    }
    match timestamp_bit(v) {
        0 => TEXT,
        b => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn infer(values: &[&str]) -> DataType {
        let mut g = Guess::default();
        for v in values {
            g.update(v);
        }
        g.data_type()
    }

    #[test]
    fn spellings_of_infinity_are_floats() {
        for v in [
            "Infinity",
            "-Infinity",
            "+Infinity",
            "inf",
            "+inf",
            "-INF",
            "NaN",
            "nan",
        ] {
            assert_eq!(infer(&["1.5", v]), DataType::Float64, "{v}");
        }
        assert_eq!(infer(&["1", "2"]), DataType::Int64);
        assert_eq!(infer(&["1", "2.5"]), DataType::Float64);
        assert_eq!(infer(&["1e5"]), DataType::Float64);
        assert_eq!(infer(&["99999999999999999999"]), DataType::Utf8);
        assert_eq!(infer(&["Inf inity"]), DataType::Utf8);
        assert_eq!(infer(&[]), DataType::Null);
    }

    #[test]
    fn mostly_numeric_text_is_noticed() {
        let mut g = Guess::default();
        for i in 0..95 {
            g.update(&format!("{i}.5"));
        }
        for _ in 0..4 {
            g.update("nil");
        }
        g.update("-");
        assert_eq!(g.data_type(), DataType::Utf8);
        let m = g.mostly_typed().unwrap();
        assert_eq!(m.would_be, DataType::Float64);
        assert_eq!((m.typed_values, m.text_values), (95, 5));
        assert_eq!(m.spellings, vec![("nil".to_string(), 4), ("-".to_string(), 1)]);
        // Mostly text, or many different texts: text it is.
        let mut g = Guess::default();
        for v in ["1", "a", "b"] {
            g.update(v);
        }
        assert!(g.mostly_typed().is_none());
        let mut g = Guess::default();
        for i in 0..100 {
            g.update(&i.to_string());
        }
        for v in ["a", "b", "c", "d", "e", "f"] {
            g.update(v);
        }
        assert!(g.mostly_typed().is_none());
    }

    #[test]
    fn leading_zeros_and_plus_signs_stay_text() {
        for v in ["007", "012", "-01", "00.5", "0001e3", "+5", "+1.5"] {
            assert_eq!(infer(&["1", v]), DataType::Utf8, "{v}");
        }
        for v in ["0", "-0", "0.5", "-0.25", "0e3", "10"] {
            assert_ne!(infer(&["1", v]), DataType::Utf8, "{v}");
        }
        // Times before the year 1000 (Go's zero time) are times, not numbers with zeros.
        assert_eq!(
            infer(&["0001-01-01T00:00:00Z", "2024-01-01T00:00:00Z"]),
            DataType::Timestamp(TimeUnit::Second, None)
        );
        assert_eq!(infer(&["0999-12-31"]), DataType::Date32);
        // Codes with one stray spelling are not "mostly numbers": no advice that would drop zeros.
        let mut g = Guess::default();
        for v in ["007", "012", "100", "A12"] {
            g.update(v);
        }
        assert_eq!(g.data_type(), DataType::Utf8);
        assert!(g.mostly_typed().is_none());
    }

    #[test]
    fn times_get_the_unit_their_fraction_needs() {
        assert_eq!(infer(&["2024-01-01"]), DataType::Date32);
        assert_eq!(
            infer(&["2024-01-01T00:00:00Z", "2024-01-01 00:00:00.5"]),
            DataType::Timestamp(TimeUnit::Millisecond, None)
        );
        assert_eq!(
            infer(&["2019-06-15T00:00:12.868214001Z"]),
            DataType::Timestamp(TimeUnit::Nanosecond, None)
        );
        assert_eq!(infer(&["2024-01-01", "x"]), DataType::Utf8);
    }
}
