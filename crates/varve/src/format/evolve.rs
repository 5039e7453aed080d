//! Schema evolution (Iceberg spec, "Schema Evolution"): adding, renaming and dropping columns and
//! widening their types, as a new Iceberg schema with the same field ids. Data files are never
//! rewritten for it: readers match columns by field id (`format::field_ids`), so a renamed column
//! reads under its new name in old files, and a column dropped and added again is a new field that
//! old rows do not fill. Also the column type names of `varve create` and SQL (`parse_type`).

use std::sync::Arc;

use arrow::datatypes::{DataType, TimeUnit};
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};

use super::schema::iceberg_type;
use super::TableContract;
use crate::error::{Error, Result};

/// One change of a table's columns.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnChange {
    /// A new nullable column, with a new field id: rows written before read it as NULL.
    Add {
        /// The column's name.
        name: String,
        /// Its type.
        data_type: DataType,
    },
    /// A new name for a column (same field id: rows written before read under the new name).
    Rename {
        /// The current name.
        from: String,
        /// The new name.
        to: String,
    },
    /// Removes a column (its field id is never used again; its data stays in old files).
    Drop {
        /// The column's name.
        name: String,
    },
    /// A wider type: int32 to int64, float32 to float64 (the Iceberg spec's type promotions).
    Widen {
        /// The column's name.
        name: String,
        /// The new type.
        to: DataType,
    },
}

/// The name [`parse_type`] reads back for `dt` (`int64`, `timestamptz`, ...), as `CREATE TABLE`
/// and `varve create` spell types; Arrow's own name for types without one.
pub fn type_label(dt: &DataType) -> String {
    match dt {
        DataType::Boolean => "bool".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(TimeUnit::Microsecond, None) => "timestamp".into(),
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => "timestamptz".into(),
        other => other.to_string(),
    }
}

/// The Arrow type of a column type name as `varve create -c NAME:TYPE` and SQL take them: `bool`,
/// `int32`/`int`/`integer`, `int64`/`bigint`/`long`, `float32`/`float`/`real`, `float64`/`double`
/// (as DataFusion's SQL reads `FLOAT` and `DOUBLE`),
/// `string`/`text`/`varchar`, `date`, `timestamp`, `timestamptz`.
///
/// Errors: [`crate::ErrorKind::InvalidInput`] naming the type.
pub fn parse_type(name: &str) -> Result<DataType> {
    let lower = name.trim().to_ascii_lowercase();
    // Parenthesised arguments go, except the precision of FLOAT(p) (SQL: p > 24 is double).
    let mut t = String::new();
    let mut args = String::new();
    let mut depth = 0;
    for c in lower.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth > 0 => args.push(c),
            _ => t.push(c),
        }
    }
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t == "float" && args.trim().parse::<u32>().is_ok_and(|p| p > 24) {
        return Ok(DataType::Float64);
    }
    Ok(match t.as_str() {
        "bool" | "boolean" => DataType::Boolean,
        "int" | "int32" | "integer" | "int4" => DataType::Int32,
        "int64" | "long" | "bigint" | "int8" => DataType::Int64,
        "float32" | "float" | "real" | "float4" => DataType::Float32,
        "float64" | "double" | "double precision" | "float8" => DataType::Float64,
        "string" | "str" | "text" | "utf8" | "varchar" | "character varying" => DataType::Utf8,
        "date" => DataType::Date32,
        "timestamp" | "timestamp without time zone" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "timestamptz" | "timestamp with time zone" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        other => {
            return Err(Error::invalid(format!(
                "unknown type {other:?}: use bool, int32, int64, float32, float64, string, date, timestamp or \
                 timestamptz"
            )))
        }
    })
}

/// `schema` with `changes` applied in order. New fields get ids above `last_column_id` (the
/// table's highest id ever, so a dropped id is never reused).
///
/// Errors: [`crate::ErrorKind::InvalidInput`] for a column that does not exist or exists already,
/// dropping or renaming the time column or a series key column, or a type change that is not a
/// widening.
pub(crate) fn apply(
    schema: &Schema,
    last_column_id: i32,
    contract: &TableContract,
    changes: &[ColumnChange],
) -> Result<Schema> {
    let mut fields: Vec<NestedField> = schema.as_struct().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut next_id = last_column_id.max(schema.highest_field_id());
    let names = |fields: &[NestedField]| fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>().join(", ");
    let find = |fields: &[NestedField], name: &str| -> Result<usize> {
        fields.iter().position(|f| f.name == name).ok_or_else(|| {
            Error::invalid(format!(
                "column {name} does not exist; the columns are {}",
                names(fields)
            ))
        })
    };
    let keyed = |name: &str, what: &str| -> Result<()> {
        if contract.time_column.as_deref() == Some(name) {
            return Err(Error::invalid(format!(
                "column {name} is the table's time column: it cannot be {what}"
            )));
        }
        if contract.series_key.iter().any(|k| k == name) {
            return Err(Error::invalid(format!(
                "column {name} is in the table's series key: it cannot be {what}"
            )));
        }
        Ok(())
    };
    for change in changes {
        match change {
            ColumnChange::Add { name, data_type } => {
                if name.trim().is_empty() {
                    return Err(Error::invalid("a new column needs a name"));
                }
                if fields.iter().any(|f| f.name == *name) {
                    return Err(Error::invalid(format!("column {name} exists already")));
                }
                next_id += 1;
                fields.push(NestedField::optional(
                    next_id,
                    name,
                    Type::Primitive(iceberg_type(name, data_type)?),
                ));
            }
            ColumnChange::Rename { from, to } => {
                let i = find(&fields, from)?;
                keyed(from, "renamed (the table's contract names it)")?;
                if to.trim().is_empty() {
                    return Err(Error::invalid(format!("column {from}: the new name is empty")));
                }
                if fields.iter().any(|f| f.name == *to) {
                    return Err(Error::invalid(format!(
                        "cannot rename {from} to {to}: column {to} exists already"
                    )));
                }
                fields[i].name = to.clone();
            }
            ColumnChange::Drop { name } => {
                let i = find(&fields, name)?;
                keyed(name, "dropped")?;
                fields.remove(i);
            }
            ColumnChange::Widen { name, to } => {
                let i = find(&fields, name)?;
                keyed(name, "widened (its values are the table's row keys)")?;
                let wider = iceberg_type(name, to)?;
                let Type::Primitive(current) = fields[i].field_type.as_ref() else {
                    return Err(Error::invalid(format!("column {name} is not a primitive column")));
                };
                let allowed = current == &wider
                    || matches!(
                        (current, &wider),
                        (PrimitiveType::Int, PrimitiveType::Long) | (PrimitiveType::Float, PrimitiveType::Double)
                    );
                if !allowed {
                    return Err(Error::invalid(format!(
                        "column {name} is {current}: it can become {wider} only by a widening (int to long, \
                         float to double: the Iceberg type promotions); add a new column and INSERT ... SELECT \
                         into it instead"
                    )));
                }
                *fields[i].field_type = Type::Primitive(wider);
            }
        }
    }
    Ok(Schema::builder()
        .with_schema_id(schema.schema_id() + 1)
        .with_fields(fields.into_iter().map(Arc::new).collect::<Vec<_>>())
        .with_identifier_field_ids(schema.identifier_field_ids())
        .build()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_type_names() {
        assert_eq!(
            parse_type("TIMESTAMP(6) WITH TIME ZONE").unwrap(),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            parse_type("timestamp(3)").unwrap(),
            DataType::Timestamp(TimeUnit::Microsecond, None)
        );
        assert_eq!(parse_type("FLOAT(53)").unwrap(), DataType::Float64);
        assert_eq!(parse_type("FLOAT(10)").unwrap(), DataType::Float32);
        assert_eq!(parse_type("VARCHAR(20)").unwrap(), DataType::Utf8);
        assert_eq!(parse_type("double precision").unwrap(), DataType::Float64);
        assert!(parse_type("interval").is_err());
    }
}
