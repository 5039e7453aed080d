//! `varve._varve`: the native half of the `varve` Python package.
//!
//! A thin layer over [`varve::Lake`]: Arrow data crosses by the Arrow C stream interface (no copies),
//! every call that does I/O or runs a query releases the GIL, and engine errors are raised as
//! `NativeError(code, message, retryable)`, which the Python half turns into `varve.Error`
//! subclasses. The Tokio runtime and the lake's object store are made again in a forked child, so
//! processes started with `multiprocessing` (fork or spawn) work with lakes opened before.

#![warn(missing_docs)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::ffi_stream::ArrowArrayStreamReader;
use arrow_pyarrow::{FromPyArrow, IntoPyArrow, PyArrowType, Table};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use varve::import::Collisions;
use varve::{
    AppendOptions, ImportOptions, Input, InputFormat, Lake, Partitioning, QueryOptions, TableContract, TextOptions,
    TimeOptions,
};

create_exception!(
    _varve,
    NativeError,
    PyException,
    "An engine error: args are (code, message, retryable)."
);

fn to_py(e: varve::Error) -> PyErr {
    NativeError::new_err((e.kind().code(), e.message().to_string(), e.is_retryable()))
}

fn invalid(message: impl Into<String>) -> PyErr {
    NativeError::new_err(("invalid_input", message.into(), false))
}

/// The process's runtime; a forked child makes its own (the parent's threads do not exist there).
fn runtime() -> PyResult<Arc<tokio::runtime::Runtime>> {
    static RT: Mutex<Option<(u32, Arc<tokio::runtime::Runtime>)>> = Mutex::new(None);
    let mut guard = RT.lock().map_err(|_| invalid("runtime lock poisoned"))?;
    let pid = std::process::id();
    if let Some((p, rt)) = guard.as_ref() {
        if *p == pid {
            return Ok(rt.clone());
        }
        // A forked child: the parent's runtime cannot be used or dropped here.
        if let Some(old) = guard.take() {
            std::mem::forget(old);
        }
    }
    let rt = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("varve")
            .thread_stack_size(varve::THREAD_STACK_BYTES)
            .build()
            .map_err(|e| invalid(format!("cannot start the runtime: {e}")))?,
    );
    *guard = Some((pid, rt.clone()));
    Ok(rt)
}

/// A lake opened from Python.
#[pyclass(module = "varve._varve")]
struct NativeLake {
    url: String,
    options: HashMap<String, String>,
    /// The lake and the process that opened it.
    lake: Mutex<(u32, Lake)>,
}

impl NativeLake {
    /// The lake, opened again in a forked child (its connections belong to the parent).
    fn lake(&self) -> PyResult<Lake> {
        let mut g = self.lake.lock().map_err(|_| invalid("lake lock poisoned"))?;
        let pid = std::process::id();
        if g.0 != pid {
            *g = (pid, Lake::open(&self.url, &self.options).map_err(to_py)?);
        }
        Ok(g.1.clone())
    }

    /// Runs `f` on the runtime with the GIL released.
    /// The future runs on a runtime worker (whose stack has room for deep SQL expressions), not on
    /// the calling Python thread.
    fn run<T: Send + 'static, F>(&self, py: Python<'_>, f: impl FnOnce(Lake) -> F + Send) -> PyResult<T>
    where
        F: std::future::Future<Output = varve::Result<T>> + Send + 'static,
    {
        let lake = self.lake()?;
        let rt = runtime()?;
        py.detach(move || {
            let task = rt.spawn(f(lake));
            let out = rt
                .block_on(task)
                .unwrap_or_else(|e| Err(varve::Error::internal(format!("the call failed unexpectedly: {e}"))));
            // A commit's version hint is written after it answered: a Python caller often reads
            // with DuckDB next, which follows the hint, so a call returns once it is written.
            rt.block_on(varve::settle_published());
            out
        })
        .map_err(to_py)
    }
}

/// A serializable engine report (`AppendReport`, `TableInfo`, `SnapshotInfo`s) as Python dicts and
/// lists, through JSON (integers stay exact).
fn to_py_value<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| invalid(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

fn table_to_py(py: Python<'_>, r: varve::QueryResult) -> PyResult<Py<PyAny>> {
    let t = Table::try_new(r.batches, r.schema).map_err(|e| invalid(e.to_string()))?;
    Ok(t.into_pyarrow(py)?.unbind())
}

#[pymethods]
impl NativeLake {
    #[new]
    #[pyo3(signature = (url, options=None))]
    fn new(url: String, options: Option<HashMap<String, String>>) -> PyResult<Self> {
        let options = options.unwrap_or_default();
        let lake = Lake::open(&url, &options).map_err(to_py)?;
        Ok(NativeLake {
            url,
            options,
            lake: Mutex::new((std::process::id(), lake)),
        })
    }

    /// The lake's absolute root URL.
    fn url(&self) -> PyResult<String> {
        Ok(self.lake()?.url().to_string())
    }

    #[pyo3(signature = (name, schema, time_column=None, series_key=Vec::new(), partition="day".to_string(),
        dedup="none".to_string()))]
    #[allow(clippy::too_many_arguments)]
    fn create_table(
        &self,
        py: Python<'_>,
        name: String,
        schema: PyArrowType<arrow::datatypes::Schema>,
        time_column: Option<String>,
        series_key: Vec<String>,
        partition: String,
        dedup: String,
    ) -> PyResult<()> {
        let dedup = dedup.parse::<varve::Dedup>().map_err(to_py)?;
        let contract = match time_column {
            Some(t) => TableContract::time_series(t)
                .with_series_key(series_key)
                .with_partitioning(partition.parse::<Partitioning>().map_err(to_py)?)
                .with_dedup(dedup),
            None if !series_key.is_empty() => return Err(invalid("a series key needs a time column")),
            None if dedup != varve::Dedup::None => {
                return Err(invalid(
                    "dedup needs a time column: rows are matched on series key and time",
                ))
            }
            None => TableContract::default(),
        };
        let schema = schema.0;
        self.run(py, move |lake| async move {
            lake.create_table(&name, &schema, &contract).await.map(|_| ())
        })
    }

    fn drop_table(&self, py: Python<'_>, name: String) -> PyResult<()> {
        self.run(py, move |lake| async move { lake.drop_table(&name).await })
    }

    fn tables(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.run(py, |lake| async move {
            Ok(lake.tables().await?.iter().map(|t| t.to_string()).collect())
        })
    }

    fn cache_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = self.lake()?.cache_stats();
        to_py_value(py, &stats)
    }

    fn exists(&self, py: Python<'_>, name: String) -> PyResult<bool> {
        self.run(py, move |lake| async move { lake.table_exists(&name).await })
    }

    /// Appends an Arrow stream; returns the report as a dict (with `collided_keys` when
    /// `truncate_ns`).
    #[pyo3(signature = (name, data, batch_id=None, note=None, timezone=None, maintain=true, truncate_ns=false))]
    #[allow(clippy::too_many_arguments)]
    fn append<'py>(
        &self,
        py: Python<'py>,
        name: String,
        data: &Bound<'py, PyAny>,
        batch_id: Option<String>,
        note: Option<String>,
        timezone: Option<String>,
        maintain: bool,
        truncate_ns: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let reader = ArrowArrayStreamReader::from_pyarrow_bound(data)?;
        let opts = AppendOptions {
            batch_id,
            note,
            time: TimeOptions {
                timezone,
                truncate_ns,
                ..Default::default()
            },
            no_maintain: !maintain,
            checkpoint: None,
        };
        let (report, collided) = self.run(py, move |lake| async move {
            let d = lake.describe(&name).await?;
            let mut collisions = match (&d.contract.time_column, truncate_ns) {
                (Some(t), true) => Some(Collisions::new(t.clone(), d.contract.series_key.clone())),
                _ => None,
            };
            let time = opts.time.clone();
            let mut appender = lake.appender(&name, opts).await?;
            if appender.is_duplicate() {
                return Ok((appender.commit().await?, 0));
            }
            let mut rows = 0u64;
            for batch in reader {
                let batch = match batch {
                    Ok(b) => b,
                    Err(e) => {
                        appender.abort().await;
                        return Err(varve::Error::invalid(format!("reading the input: {e}")).with_source(e));
                    }
                };
                if let Some(c) = collisions.as_mut() {
                    if let Err(e) = c.observe(&batch, &time, rows) {
                        appender.abort().await;
                        return Err(e);
                    }
                }
                rows += batch.num_rows() as u64;
                appender.push(batch).await?;
            }
            let n = collisions.map(|c| c.count()).unwrap_or(0);
            Ok((appender.commit().await?, n))
        })?;
        let out = to_py_value(py, &report)?;
        if truncate_ns {
            out.set_item("collided_keys", collided)?;
        }
        Ok(out)
    }

    /// Imports files (CSV, TSV, NDJSON, Parquet; text optionally gzip) through the engine's shared
    /// import path; returns the report as a dict.
    #[pyo3(signature = (name, paths, format=None, time_columns=Vec::new(), time_name="time".to_string(),
        series_key=Vec::new(), partition=None, plain=false, null_values=Vec::new(), delimiter=None,
        skip_rows=0, time_format=None, timezone=None, time_unit=None, truncate_ns=false,
        rename_duplicates=false, batch_id=None, note=None, dedup="none".to_string(), strict_types=false))]
    #[allow(clippy::too_many_arguments)]
    fn import_files<'py>(
        &self,
        py: Python<'py>,
        name: String,
        paths: Vec<std::path::PathBuf>,
        format: Option<String>,
        time_columns: Vec<String>,
        time_name: String,
        series_key: Vec<String>,
        partition: Option<String>,
        plain: bool,
        null_values: Vec<String>,
        delimiter: Option<String>,
        skip_rows: usize,
        time_format: Option<String>,
        timezone: Option<String>,
        time_unit: Option<String>,
        truncate_ns: bool,
        rename_duplicates: bool,
        batch_id: Option<String>,
        note: Option<String>,
        dedup: String,
        strict_types: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let format = format.map(|f| f.parse::<InputFormat>()).transpose().map_err(to_py)?;
        let delimiter = match delimiter.as_deref() {
            None => None,
            Some(d) if d.len() == 1 => Some(d.as_bytes()[0]),
            Some(d) => return Err(invalid(format!("delimiter={d:?}: expected one character"))),
        };
        let text = TextOptions {
            delimiter,
            skip_rows,
            null_values,
            rename_duplicates,
        };
        let opts = ImportOptions {
            time_columns,
            time_name,
            series_key,
            partition: partition
                .map(|p| p.parse::<Partitioning>())
                .transpose()
                .map_err(to_py)?,
            dedup: dedup.parse::<varve::Dedup>().map_err(to_py)?,
            plain,
            time: TimeOptions {
                timezone,
                format: time_format,
                unit: time_unit
                    .as_deref()
                    .map(varve::parse_time_unit)
                    .transpose()
                    .map_err(to_py)?,
                origin: None,
                truncate_ns,
            },
            batch_id,
            note,
            no_maintain: false,
            strict_types,
        };
        let report = self.run(py, move |lake| async move {
            let inputs: Vec<Input> = paths
                .iter()
                .map(|p| Input::open(p, format, &text))
                .collect::<varve::Result<_>>()?;
            varve::import(&lake, &name, &inputs, &opts, None).await
        })?;
        to_py_value(py, &report)
    }

    /// Runs SQL; returns a `pyarrow.Table`.
    #[pyo3(signature = (query, timeout=None, max_rows=None, memory_limit=None))]
    fn sql(
        &self,
        py: Python<'_>,
        query: String,
        timeout: Option<f64>,
        max_rows: Option<i64>,
        memory_limit: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let timeout = match timeout {
            Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t)),
            Some(t) => return Err(invalid(format!("timeout={t}: must be a number of seconds above 0"))),
            None => None,
        };
        let positive = |v: Option<i64>, what: &str| -> PyResult<Option<usize>> {
            match v {
                Some(n) if n > 0 => Ok(Some(n as usize)),
                Some(n) => Err(invalid(format!("{what}={n}: must be at least 1"))),
                None => Ok(None),
            }
        };
        let limits = QueryOptions {
            timeout,
            max_rows: positive(max_rows, "max_rows")?,
            memory_limit: positive(memory_limit, "memory_limit")?,
        };
        let r = self.run(py, move |lake| async move { lake.sql_with(&query, &limits).await })?;
        table_to_py(py, r)
    }

    fn latest(&self, py: Python<'_>, name: String) -> PyResult<Py<PyAny>> {
        let r = self.run(py, move |lake| async move { lake.latest(&name).await })?;
        table_to_py(py, r)
    }

    fn describe<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyDict>> {
        let d = self.run(py, move |lake| async move { lake.describe(&name).await })?;
        let out = PyDict::new(py);
        out.set_item("name", d.ident.to_string())?;
        out.set_item("schema", PyArrowType(d.schema.as_ref().clone()))?;
        out.set_item("time_column", d.contract.time_column.clone())?;
        out.set_item("series_key", d.contract.series_key.clone())?;
        out.set_item(
            "partition",
            d.contract
                .time_column
                .as_ref()
                .map(|_| d.contract.partitioning.to_string()),
        )?;
        out.set_item("dedup", d.contract.dedup.to_string())?;
        out.set_item("location", d.location)?;
        out.set_item("snapshot_id", d.snapshot_id)?;
        out.set_item("metadata_version", d.metadata_version)?;
        Ok(out)
    }

    fn info<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        let info = self.run(py, move |lake| async move { lake.info(&name).await })?;
        to_py_value(py, &info)
    }

    /// Runs maintenance; returns the report as a dict.
    #[pyo3(signature = (name, compact=true, retention=true, expire=true, orphans=true, dry_run=false, orphan_age=None, snapshot_retention=None, rollups=true, drop_all_rows=false))]
    #[allow(clippy::too_many_arguments)]
    fn maintain<'py>(
        &self,
        py: Python<'py>,
        name: String,
        compact: bool,
        retention: bool,
        expire: bool,
        orphans: bool,
        dry_run: bool,
        orphan_age: Option<String>,
        snapshot_retention: Option<String>,
        rollups: bool,
        drop_all_rows: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let duration = |v: Option<String>, what: &str| -> PyResult<Option<Duration>> {
            v.map(|v| varve::parse_duration(&v).map_err(|e| invalid(format!("{what}={v:?}: {}", e.message()))))
                .transpose()
        };
        let opts = varve::MaintainOptions {
            compact,
            retention,
            expire,
            orphans,
            drop_all_rows,
            rollups,
            dry_run,
            orphan_age: duration(orphan_age, "orphan_age")?.unwrap_or(varve::DEFAULT_ORPHAN_AGE),
            snapshot_retention: duration(snapshot_retention, "snapshot_retention")?,
            progress: None,
        };
        let report = self.run(py, move |lake| async move { lake.maintain(&name, &opts).await })?;
        to_py_value(py, &report)
    }

    /// Deletes rows matching a SQL predicate (every row when None); returns the report as a dict.
    #[pyo3(signature = (name, predicate=None))]
    fn delete<'py>(&self, py: Python<'py>, name: String, predicate: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let report = self.run(
            py,
            move |lake| async move { lake.delete(&name, predicate.as_deref()).await },
        )?;
        to_py_value(py, &report)
    }

    /// Sets and removes table properties.
    #[pyo3(signature = (name, set, unset))]
    fn set_properties(
        &self,
        py: Python<'_>,
        name: String,
        set: std::collections::HashMap<String, String>,
        unset: Vec<String>,
    ) -> PyResult<()> {
        self.run(
            py,
            move |lake| async move { lake.set_properties(&name, &set, &unset).await },
        )
    }

    /// Runs `CREATE ROLLUP ...`; returns the first refresh's report, or None when it existed and
    /// the statement says IF NOT EXISTS.
    fn create_rollup<'py>(&self, py: Python<'py>, sql: String) -> PyResult<Bound<'py, PyAny>> {
        let report = self.run(py, move |lake| async move { lake.create_rollup(&sql).await })?;
        to_py_value(py, &report)
    }

    /// Drops a rollup; returns whether it existed.
    #[pyo3(signature = (name, if_exists=false))]
    fn drop_rollup(&self, py: Python<'_>, name: String, if_exists: bool) -> PyResult<bool> {
        self.run(py, move |lake| async move { lake.drop_rollup(&name, if_exists).await })
    }

    /// The rollups of a table (or of every table) as dicts.
    #[pyo3(signature = (source=None))]
    fn rollups<'py>(&self, py: Python<'py>, source: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let list = self.run(py, move |lake| async move { lake.rollups(source.as_deref()).await })?;
        to_py_value(py, &list)
    }

    /// Refreshes a rollup; returns the report as a dict.
    fn refresh_rollup<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        let report = self.run(py, move |lake| async move { lake.refresh_rollup(&name).await })?;
        to_py_value(py, &report)
    }

    fn history<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        let history = self.run(py, move |lake| async move { lake.history(&name).await })?;
        to_py_value(py, &history)
    }
}

/// Bytes in `512MiB`-style text (`1048576`, `64KiB`, `2GiB`; KB/MB/GB are powers of 1000), as
/// the CLI reads `--memory-limit`.
#[pyfunction]
fn parse_bytes(text: &str) -> PyResult<u64> {
    varve::parse_bytes(text).map_err(to_py)
}

/// The partition granularity for `rows` rows over `span_us` µs (`whole`: all the data, not a
/// sample), as `varve import` chooses it: `hour`, `day`, `month` or `year`.
#[pyfunction]
fn partition_for_data(rows: u64, span_us: i64, whole: bool) -> String {
    Partitioning::for_data(rows, span_us, whole).to_string()
}

#[pymodule]
fn _varve(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeLake>()?;
    m.add_function(wrap_pyfunction!(partition_for_data, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add("NativeError", m.py().get_type::<NativeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
