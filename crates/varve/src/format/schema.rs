//! Arrow ↔ Iceberg schema mapping (Iceberg spec, "Schemas and Data Types"; Parquet field ids per
//! the spec's "Parquet" appendix, carried in Arrow field metadata under `PARQUET:field_id`).
//!
//! Varve stores flat tables of primitive columns. Strings of every Arrow flavour become `string`,
//! small integers become `int`, `float16` becomes `float`; the time column of a time-series table
//! is `timestamptz` (µs, UTC). Nested and other types are refused with the column's name.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef, TimeUnit};
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

use crate::error::{Error, Result};

/// The time zone name Varve gives UTC timestamps in Arrow.
pub const UTC: &str = "UTC";

/// The Arrow type of the time column: µs since the epoch, UTC.
pub fn time_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
}

/// The Iceberg type a column of Arrow type `dt` is stored as.
///
/// Errors: [`crate::ErrorKind::SchemaMismatch`] naming `column` for nested or unknown types.
pub(crate) fn iceberg_type(column: &str, dt: &DataType) -> Result<PrimitiveType> {
    use DataType as D;
    Ok(match dt {
        D::Boolean => PrimitiveType::Boolean,
        D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16 => PrimitiveType::Int,
        D::Int64 | D::UInt32 => PrimitiveType::Long,
        D::Float16 | D::Float32 => PrimitiveType::Float,
        D::Float64 => PrimitiveType::Double,
        D::Utf8 | D::LargeUtf8 | D::Utf8View => PrimitiveType::String,
        D::Binary | D::LargeBinary | D::BinaryView => PrimitiveType::Binary,
        D::Date32 | D::Date64 => PrimitiveType::Date,
        D::Timestamp(_, None) => PrimitiveType::Timestamp,
        D::Timestamp(_, Some(_)) => PrimitiveType::Timestamptz,
        D::Time32(_) | D::Time64(_) => PrimitiveType::Time,
        D::Decimal128(p, s) if *s >= 0 => PrimitiveType::Decimal {
            precision: *p as u32,
            scale: *s as u32,
        },
        D::Null => PrimitiveType::String,
        other => {
            return Err(Error::schema(format!(
                "column {column}: type {other} is not supported (supported: boolean, integers, floats, \
                 strings, binary, date, time, timestamp, decimal)"
            )))
        }
    })
}

/// The Arrow type Varve reads and writes for an Iceberg primitive type.
pub(crate) fn arrow_type(t: &PrimitiveType) -> Result<DataType> {
    Ok(match t {
        PrimitiveType::Boolean => DataType::Boolean,
        PrimitiveType::Int => DataType::Int32,
        PrimitiveType::Long => DataType::Int64,
        PrimitiveType::Float => DataType::Float32,
        PrimitiveType::Double => DataType::Float64,
        PrimitiveType::String => DataType::Utf8,
        PrimitiveType::Binary => DataType::Binary,
        PrimitiveType::Date => DataType::Date32,
        PrimitiveType::Time => DataType::Time64(TimeUnit::Microsecond),
        PrimitiveType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        PrimitiveType::Timestamptz => time_type(),
        PrimitiveType::Decimal { precision, scale } => DataType::Decimal128(*precision as u8, *scale as i8),
        other => return Err(Error::schema(format!("Iceberg type {other} is not supported by Varve"))),
    })
}

/// The Arrow schema of an Iceberg schema, each field carrying its Iceberg field id.
pub(crate) fn to_arrow(schema: &Schema) -> Result<SchemaRef> {
    let mut fields = Vec::new();
    for f in schema.as_struct().fields() {
        let Type::Primitive(p) = f.field_type.as_ref() else {
            return Err(Error::schema(format!(
                "column {}: nested types are not supported",
                f.name
            )));
        };
        let field = Field::new(&f.name, arrow_type(p)?, !f.required).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            f.id.to_string(),
        )]));
        fields.push(field);
    }
    Ok(Arc::new(ArrowSchema::new(fields)))
}

/// An Iceberg schema for a new table from an Arrow schema. Field ids are assigned from 1 in order.
/// The time column is made `timestamptz` and required.
pub(crate) fn from_arrow(arrow: &ArrowSchema, time_column: Option<&str>) -> Result<Schema> {
    let mut fields = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, f) in arrow.fields().iter().enumerate() {
        if f.name().is_empty() {
            return Err(Error::schema(format!("column {}: a column needs a name", i + 1)));
        }
        if !seen.insert(f.name().clone()) {
            return Err(Error::schema(format!("column {}: the name appears twice", f.name())));
        }
        let id = i as i32 + 1;
        let field = if Some(f.name().as_str()) == time_column {
            NestedField::required(id, f.name(), Type::Primitive(PrimitiveType::Timestamptz))
        } else {
            NestedField::optional(id, f.name(), Type::Primitive(iceberg_type(f.name(), f.data_type())?))
        };
        fields.push(Arc::new(field));
    }
    if let Some(t) = time_column {
        if !seen.contains(t) {
            return Err(Error::schema(format!("time column {t} is not among the columns")));
        }
    }
    Ok(Schema::builder().with_fields(fields).build()?)
}

/// `schema` with optional columns added for each `(name, arrow type)`: Iceberg schema evolution
/// ("Schema Evolution": new columns take fresh field ids above the table's last column id).
pub(crate) fn add_columns(schema: &Schema, last_column_id: i32, new: &[(String, DataType)]) -> Result<Schema> {
    let mut fields: Vec<_> = schema.as_struct().fields().to_vec();
    let mut next = last_column_id.max(schema.highest_field_id());
    for (name, dt) in new {
        next += 1;
        fields.push(Arc::new(NestedField::optional(
            next,
            name,
            Type::Primitive(iceberg_type(name, dt)?),
        )));
    }
    Ok(Schema::builder()
        .with_schema_id(schema.schema_id() + 1)
        .with_fields(fields)
        .build()?)
}

/// Whether two schemas have the same columns (ids, names, types, nullability), whatever their ids.
pub(crate) fn same_columns(a: &Schema, b: &Schema) -> bool {
    a.as_struct() == b.as_struct()
}

/// `schema` with another schema id.
pub(crate) fn with_schema_id(schema: &Schema, id: i32) -> Result<Schema> {
    Ok(schema.clone().into_builder().with_schema_id(id).build()?)
}
