//! TSBS IoT: a fleet of trucks reporting `readings` (position, speed, fuel use) and `diagnostics`
//! (fuel state, load, status) every 10 s, with the TSBS truck tags on every row.
//!
//! Tags and their value sets follow TSBS's IoT use case (fleets East/West/North/South/Central,
//! models F-150/G-2000/H-2 with their capacities, ...); a few trucks have a null driver, model or
//! device version (their capacities stay those of their model), and
//! a few field values are null, as in TSBS. The values follow a simple physical model so the
//! suite's questions have non-trivial answers: trucks alternate between driving (20-110 km/h)
//! and stops, burn fuel while driving and refuel near empty, change load at stops, and now and
//! then break down (status 0) for 10-60 minutes.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Builder, Int64Builder, RecordBatch, StringBuilder, TimestampMicrosecondBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{chunk_rows, normal, pick, stream, Delivery, GenSpec, GeneratedTable, TableSink, TSBS_INTERVAL_US};

const FLEETS: &[&str] = &["East", "West", "North", "South", "Central"];
const DRIVERS: &[&str] = &["Derek", "Rodney", "Albert", "Andy", "Seth", "Trish"];
/// Truck models with their load capacity (kg), fuel capacity (l) and nominal fuel consumption
/// (l/100 km): the capacities follow the model, as in TSBS.
const MODELS: &[(&str, f64, f64, f64)] = &[
    ("F-150", 2000.0, 200.0, 15.0),
    ("G-2000", 5000.0, 300.0, 19.0),
    ("H-2", 1500.0, 150.0, 12.0),
];
const DEVICE_VERSIONS: &[&str] = &["v1.0", "v1.5", "v2.0", "v2.3"];
/// Share of trucks with each nullable tag missing.
const NULL_TAG: f64 = 0.02;
/// Share of field values that are null.
const NULL_FIELD: f64 = 0.001;

/// The fleets, for query parameters.
pub const FLEET_NAMES: &[&str] = FLEETS;

/// A truck's name: `truck_<index>`.
pub fn truck_name(i: u32) -> String {
    format!("truck_{i}")
}

fn tag_fields() -> Vec<Field> {
    let ts = Field::new(
        "ts",
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        false,
    );
    vec![
        ts,
        Field::new("name", DataType::Utf8, false),
        Field::new("fleet", DataType::Utf8, true),
        Field::new("driver", DataType::Utf8, true),
        Field::new("model", DataType::Utf8, true),
        Field::new("device_version", DataType::Utf8, true),
        Field::new("load_capacity", DataType::Float64, true),
        Field::new("fuel_capacity", DataType::Float64, true),
        Field::new("nominal_fuel_consumption", DataType::Float64, true),
    ]
}

/// Schema of `readings`: time, tags, then latitude, longitude, elevation (m), velocity (km/h),
/// heading (degrees), grade (%) and fuel_consumption (l/100 km).
pub fn readings_schema() -> SchemaRef {
    let mut f = tag_fields();
    for name in [
        "latitude",
        "longitude",
        "elevation",
        "velocity",
        "heading",
        "grade",
        "fuel_consumption",
    ] {
        f.push(Field::new(name, DataType::Float64, true));
    }
    Arc::new(Schema::new(f))
}

/// Schema of `diagnostics`: time, tags, then fuel_state (0..1), current_load (kg) and status
/// (0 = broken down, 1..5 otherwise).
pub fn diagnostics_schema() -> SchemaRef {
    let mut f = tag_fields();
    f.push(Field::new("fuel_state", DataType::Float64, true));
    f.push(Field::new("current_load", DataType::Float64, true));
    f.push(Field::new("status", DataType::Int64, true));
    Arc::new(Schema::new(f))
}

struct Truck {
    name: String,
    fleet: &'static str,
    driver: Option<&'static str>,
    model: Option<&'static str>,
    device_version: Option<&'static str>,
    load_capacity: f64,
    fuel_capacity: f64,
    nominal: f64,
    rng: ChaCha8Rng,
    driving: bool,
    remaining: u32,
    broken: u32,
    lat: f64,
    lon: f64,
    elevation: f64,
    velocity: f64,
    heading: f64,
    grade: f64,
    fuel: f64,
    load: f64,
}

fn maybe<'a>(rng: &mut ChaCha8Rng, v: &'a str) -> Option<&'a str> {
    (rng.random::<f64>() >= NULL_TAG).then_some(v)
}

impl Truck {
    fn new(seed: u64, i: u32) -> Truck {
        let mut t = stream(seed, "iot.truck.tags", i as u64);
        let fleet = pick(&mut t, FLEETS);
        let driver = pick(&mut t, DRIVERS);
        let (model, load_capacity, fuel_capacity, nominal) = MODELS[t.random_range(0..MODELS.len())];
        let dv = pick(&mut t, DEVICE_VERSIONS);
        let driver = maybe(&mut t, driver);
        let model = maybe(&mut t, model);
        let device_version = maybe(&mut t, dv);
        let mut rng = stream(seed, "iot.truck.values", i as u64);
        Truck {
            name: truck_name(i),
            fleet,
            driver,
            model,
            device_version,
            load_capacity,
            fuel_capacity,
            nominal,
            driving: rng.random::<f64>() < 0.5,
            remaining: rng.random_range(1..=360),
            broken: 0,
            lat: rng.random_range(25.0..49.0),
            lon: rng.random_range(-124.0..-67.0),
            elevation: rng.random_range(0.0..2000.0),
            velocity: 0.0,
            heading: rng.random_range(0.0..360.0),
            grade: rng.random_range(0.0..10.0),
            fuel: rng.random_range(0.1..1.0),
            load: rng.random_range(0.0..load_capacity),
            rng,
        }
    }

    /// Advances one 10 s tick.
    fn step(&mut self) {
        let r = &mut self.rng;
        if self.broken > 0 {
            self.broken -= 1;
        } else if r.random::<f64>() < 1.0 / 3000.0 {
            self.broken = r.random_range(60..=360);
        }
        if self.remaining == 0 {
            self.driving = !self.driving;
            self.remaining = if self.driving {
                r.random_range(18..=1080)
            } else {
                self.load = r.random_range(0.0..self.load_capacity);
                r.random_range(6..=360)
            };
        }
        self.remaining -= 1;
        let moving = self.driving && self.broken == 0;
        if moving {
            let base = if self.velocity < 20.0 { 50.0 } else { self.velocity };
            self.velocity = (base + 3.0 * normal(r)).clamp(20.0, 110.0);
        } else {
            self.velocity = 0.0;
        }
        self.heading = (self.heading + 5.0 * normal(r)).rem_euclid(360.0);
        let km = self.velocity * 10.0 / 3600.0;
        self.lat = (self.lat + km * self.heading.to_radians().cos() / 111.0).clamp(-89.0, 89.0);
        self.lon = (self.lon + km * self.heading.to_radians().sin() / (111.0 * self.lat.to_radians().cos()))
            .clamp(-180.0, 180.0);
        self.elevation = (self.elevation + 2.0 * normal(r)).clamp(0.0, 5000.0);
        self.grade = (self.grade + 0.5 * normal(r)).clamp(0.0, 30.0);
        if moving {
            // l/100 km × km → litres, as a share of the tank.
            let used = self.nominal * 2.0 * km / 100.0;
            self.fuel -= used / self.fuel_capacity;
        }
        if self.fuel <= 0.02 {
            self.fuel = 1.0;
        }
    }

    fn fuel_consumption(&mut self) -> f64 {
        if self.velocity > 0.0 {
            self.nominal * self.rng.random_range(0.8..1.2)
        } else {
            self.rng.random_range(0.0..0.5)
        }
    }

    fn status(&mut self) -> i64 {
        if self.broken > 0 {
            0
        } else {
            self.rng.random_range(1..=5)
        }
    }
}

struct Reading {
    ts: i64,
    truck: u32,
    v: [Option<f64>; 7],
}

struct Diagnostic {
    ts: i64,
    truck: u32,
    fuel_state: Option<f64>,
    current_load: Option<f64>,
    status: Option<i64>,
}

fn nullable<T>(rng: &mut ChaCha8Rng, v: T) -> Option<T> {
    (rng.random::<f64>() >= NULL_FIELD).then_some(v)
}

struct Tags {
    ts: TimestampMicrosecondBuilder,
    name: StringBuilder,
    fleet: StringBuilder,
    driver: StringBuilder,
    model: StringBuilder,
    device_version: StringBuilder,
    load_capacity: Float64Builder,
    fuel_capacity: Float64Builder,
    nominal: Float64Builder,
}

impl Tags {
    fn new() -> Tags {
        Tags {
            ts: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
            name: StringBuilder::new(),
            fleet: StringBuilder::new(),
            driver: StringBuilder::new(),
            model: StringBuilder::new(),
            device_version: StringBuilder::new(),
            load_capacity: Float64Builder::new(),
            fuel_capacity: Float64Builder::new(),
            nominal: Float64Builder::new(),
        }
    }

    fn push(&mut self, ts: i64, t: &Truck) {
        self.ts.append_value(ts);
        self.name.append_value(&t.name);
        self.fleet.append_value(t.fleet);
        self.driver.append_option(t.driver);
        self.model.append_option(t.model);
        self.device_version.append_option(t.device_version);
        self.load_capacity.append_value(t.load_capacity);
        self.fuel_capacity.append_value(t.fuel_capacity);
        self.nominal.append_value(t.nominal);
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        vec![
            Arc::new(self.ts.finish()),
            Arc::new(self.name.finish()),
            Arc::new(self.fleet.finish()),
            Arc::new(self.driver.finish()),
            Arc::new(self.model.finish()),
            Arc::new(self.device_version.finish()),
            Arc::new(self.load_capacity.finish()),
            Arc::new(self.fuel_capacity.finish()),
            Arc::new(self.nominal.finish()),
        ]
    }
}

fn readings_batch(schema: &SchemaRef, rows: &[Reading], trucks: &[Truck]) -> Result<RecordBatch, String> {
    let mut tags = Tags::new();
    let mut fields: Vec<Float64Builder> = (0..7).map(|_| Float64Builder::with_capacity(rows.len())).collect();
    for r in rows {
        tags.push(r.ts, &trucks[r.truck as usize]);
        for (b, v) in fields.iter_mut().zip(r.v) {
            b.append_option(v);
        }
    }
    let mut cols = tags.finish();
    cols.extend(fields.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
    RecordBatch::try_new(schema.clone(), cols).map_err(|e| e.to_string())
}

fn diagnostics_batch(schema: &SchemaRef, rows: &[Diagnostic], trucks: &[Truck]) -> Result<RecordBatch, String> {
    let mut tags = Tags::new();
    let mut fuel = Float64Builder::with_capacity(rows.len());
    let mut load = Float64Builder::with_capacity(rows.len());
    let mut status = Int64Builder::with_capacity(rows.len());
    for r in rows {
        tags.push(r.ts, &trucks[r.truck as usize]);
        fuel.append_option(r.fuel_state);
        load.append_option(r.current_load);
        status.append_option(r.status);
    }
    let mut cols = tags.finish();
    cols.push(Arc::new(fuel.finish()));
    cols.push(Arc::new(load.finish()));
    cols.push(Arc::new(status.finish()));
    RecordBatch::try_new(schema.clone(), cols).map_err(|e| e.to_string())
}

/// Generates both tables into `dir`.
pub(super) fn generate(spec: &GenSpec, dir: &Path, progress: &dyn Fn(f64)) -> Result<Vec<GeneratedTable>, String> {
    let chunk = chunk_rows(spec);
    let mut trucks: Vec<Truck> = (0..spec.scale).map(|i| Truck::new(spec.seed, i)).collect();
    let mut readings = TableSink::new(dir, "readings", readings_schema(), spec.format, spec.file_rows)?;
    let mut diagnostics = TableSink::new(dir, "diagnostics", diagnostics_schema(), spec.format, spec.file_rows)?;
    let mut r_delivery = Delivery::new(spec, "iot.delivery.readings");
    let mut d_delivery = Delivery::new(spec, "iot.delivery.diagnostics");
    let (mut r_out, mut d_out) = (Vec::with_capacity(chunk), Vec::with_capacity(chunk));
    let ticks = (spec.duration_us / TSBS_INTERVAL_US) as u64;
    let (rs, ds) = (readings.schema(), diagnostics.schema());
    for tick in 0..ticks {
        let ts = spec.start_us + tick as i64 * TSBS_INTERVAL_US;
        r_delivery.release(tick, &mut r_out);
        d_delivery.release(tick, &mut d_out);
        for (i, t) in trucks.iter_mut().enumerate() {
            t.step();
            let fc = t.fuel_consumption();
            let status = t.status();
            let r = &mut t.rng;
            let v = [
                nullable(r, t.lat),
                nullable(r, t.lon),
                nullable(r, t.elevation),
                nullable(r, t.velocity),
                nullable(r, t.heading),
                nullable(r, t.grade),
                nullable(r, fc),
            ];
            let reading = Reading { ts, truck: i as u32, v };
            let diag = Diagnostic {
                ts,
                truck: i as u32,
                fuel_state: nullable(r, (t.fuel * 1000.0).round() / 1000.0),
                current_load: nullable(r, t.load.round()),
                status: nullable(r, status),
            };
            r_delivery.offer(tick, reading, &mut r_out);
            d_delivery.offer(tick, diag, &mut d_out);
        }
        if r_out.len() >= chunk {
            readings.write(&readings_batch(&rs, &r_out, &trucks)?)?;
            r_out.clear();
        }
        if d_out.len() >= chunk {
            diagnostics.write(&diagnostics_batch(&ds, &d_out, &trucks)?)?;
            d_out.clear();
        }
        if tick % 360 == 0 {
            progress(tick as f64 / ticks as f64);
        }
    }
    r_delivery.drain(&mut r_out);
    d_delivery.drain(&mut d_out);
    readings.write(&readings_batch(&rs, &r_out, &trucks)?)?;
    diagnostics.write(&diagnostics_batch(&ds, &d_out, &trucks)?)?;
    progress(1.0);
    Ok(vec![readings.finish()?, diagnostics.finish()?])
}
