"""Varve: time series in your own storage as Apache Iceberg tables, queried with SQL.

>>> import varve, pyarrow as pa
>>> with varve.Lake("memory://") as lake:
...     t = lake.create_table("cpu", pa.table({"ts": pa.array([0, 60_000_000], pa.timestamp("us", "UTC")),
...                                            "host": ["a", "a"], "load": [0.5, 0.7]}),
...                           time_column="ts", series_key=["host"])
...     lake.sql("SELECT host, max(load) AS peak FROM cpu GROUP BY host").to_pylist()
[{'host': 'a', 'peak': 0.7}]

Tables are Parquet files under Iceberg v2 metadata in the lake (a directory, ``s3://bucket/prefix``
or ``memory://``); DuckDB, PyIceberg, Spark and Trino read them too.
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, TypeVar, Union

import pyarrow as pa
import pyarrow.compute as pc

from . import _varve, errors
from .errors import (
    AlreadyExistsError,
    ConflictError,
    CorruptionError,
    Error,
    InternalError,
    InvalidInputError,
    LimitExceededError,
    NotFoundError,
    SchemaMismatchError,
    StorageError,
    TimeoutError,
    UnsupportedError,
    from_native,
)

__version__: str = _varve.__version__

__all__ = ["Lake", "Table", "Result"]
__all__ += errors.__all__

F = TypeVar("F", bound=Callable[..., Any])

_SCHEMES = ("s3://", "s3a://", "file://", "memory://")


def _native(fn: F) -> F:
    """Turns the native module's errors into :class:`Error` subclasses."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except _varve.NativeError as e:
            code, message, retryable = e.args
            raise from_native(code, message, retryable) from None

    return wrapper  # type: ignore[return-value]


def _utc_from_micros(us: int) -> _dt.datetime:
    """A UTC ``datetime`` from µs since the epoch (exact: no float rounding)."""
    return _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(microseconds=us)


def _to_reader(data: Any) -> pa.RecordBatchReader:
    """Any supported input as a stream of record batches (without copying Arrow data)."""
    if isinstance(data, pa.RecordBatchReader):
        return data
    if isinstance(data, pa.Table):
        return data.to_reader()
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data]).to_reader()
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        return pa.Table.from_pandas(data, preserve_index=False).to_reader()
    if module == "polars":
        return data.to_arrow().to_reader()
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data)
    raise InvalidInputError(
        f"cannot append a {type(data).__name__}: give a pyarrow Table, RecordBatch or RecordBatchReader, "
        "a pandas or Polars DataFrame, or an object with __arrow_c_stream__"
    )


class Result:
    """The result of a query: an Arrow table with conversions.

    Iterating yields ``pyarrow.RecordBatch`` objects; the object also exports the Arrow C stream
    (``__arrow_c_stream__``), so ``pyarrow``, ``polars`` and ``duckdb`` take it directly.
    """

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    @property
    def schema(self) -> pa.Schema:
        """The result's columns."""
        return self._table.schema

    @property
    def num_rows(self) -> int:
        """Number of rows."""
        return self._table.num_rows

    def __len__(self) -> int:
        return self._table.num_rows

    def to_arrow(self) -> pa.Table:
        """The rows as a ``pyarrow.Table`` (no copy)."""
        return self._table

    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame`` (needs pandas). Times are ``datetime64[us, UTC]``."""
        return self._table.to_pandas()

    def to_polars(self) -> Any:
        """The rows as a ``polars.DataFrame`` (needs polars)."""
        import polars as pl

        return pl.from_arrow(self._table)

    def to_pylist(self) -> List[Dict[str, Any]]:
        """The rows as a list of dicts."""
        return self._table.to_pylist()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return iter(self._table.to_batches())

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._table.__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        return f"<varve.Result {self.num_rows} rows: {', '.join(self.schema.names)}>"


def _as_of_literal(as_of: Union[_dt.datetime, str, int]) -> str:
    if isinstance(as_of, _dt.datetime):
        if as_of.tzinfo is None:
            as_of = as_of.replace(tzinfo=_dt.timezone.utc)
        return "'" + as_of.astimezone(_dt.timezone.utc).isoformat() + "'"
    if isinstance(as_of, int):
        return str(as_of)
    if isinstance(as_of, str):
        return "'" + as_of.replace("'", "''") + "'"
    raise InvalidInputError(f"as_of: expected a datetime, an RFC 3339 string or ms since the epoch, not {as_of!r}")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Table:
    """A table of a lake. Get one from :meth:`Lake.table` or :meth:`Lake.create_table`."""

    def __init__(self, lake: "Lake", name: str) -> None:
        self._lake = lake
        self._name = name

    @property
    def name(self) -> str:
        """``namespace.table``."""
        return self._name

    def _sql_name(self) -> str:
        ns, _, t = self._name.partition(".")
        return f"{_quote(ns)}.{_quote(t)}"

    @property
    def schema(self) -> pa.Schema:
        """The current columns (the time column is ``timestamp[us, tz=UTC]``).

        Raises:
            NotFoundError: the table was dropped.
        """
        return self.describe()["schema"]

    @_native
    def describe(self) -> Dict[str, Any]:
        """Schema, time column, series key, partition, dedup, location, current snapshot id and metadata
        version."""
        return self._lake._handle.describe(self._name)

    @_native
    def append(
        self,
        data: Any,
        batch_id: Optional[str] = None,
        note: Optional[str] = None,
        timezone: Optional[str] = None,
        maintain: bool = True,
        truncate_ns: bool = False,
    ) -> Dict[str, Any]:
        """Appends rows in one commit (one snapshot).

        Args:
            data: a pyarrow Table, RecordBatch or RecordBatchReader, a pandas or Polars DataFrame, or
                any object with ``__arrow_c_stream__``. Readers are streamed: memory stays bounded.
            batch_id: makes the append idempotent: a batch id committed before writes nothing.
            note: kept with the snapshot, shown by :meth:`history`.
            timezone: zone of naive timestamps in the time column (IANA name or ``-05:00``); UTC if None.
            maintain: compact the partitions written to when they hold more than
                ``varve.compact-min-files`` small files (the table's ``varve.auto-maintain`` permitting).

            truncate_ns: store times with digits below a microsecond (the table keeps µs) truncated;
                without it such data is refused with the first row that would change.

        Returns:
            ``{"rows", "files", "bytes", "snapshot_id", "duplicate", "added_columns",
            "truncated_times", "duplicate_rows_dropped", "rows_replaced", "files_rewritten",
            "attempts", "seconds", "maintenance"}``; bytes are Parquet bytes written; on a
            last-write-wins table ``duplicate_rows_dropped`` counts input rows a later row of the
            same key superseded and ``rows_replaced`` the stored rows replaced; ``maintenance`` is None or what inline compaction did (a failure of it is
            reported there and never undoes the append). With
            ``truncate_ns``, also ``collided_keys``: (series key, time) keys of this append that hold
            more than one input time after truncation.

        Raises:
            InvalidInputError: a value that does not fit its column, with column, row and value; a
                time with nanoseconds (without ``truncate_ns``) or a leap second.
            SchemaMismatchError: a column type Varve cannot store, or cannot convert.
            ConflictError: other writers won every commit attempt (retryable).
            NotFoundError: the table does not exist.
        """
        return self._lake._handle.append(self._name, _to_reader(data), batch_id, note, timezone, maintain, truncate_ns)

    @_native
    def maintain(
        self,
        compact: bool = True,
        retention: bool = True,
        expire: bool = True,
        orphans: bool = True,
        dry_run: bool = False,
        orphan_age: Optional[str] = None,
        snapshot_retention: Optional[str] = None,
        rollups: bool = True,
        drop_all_rows: bool = False,
    ) -> Dict[str, Any]:
        """Maintains the table: removes rows past ``varve.retention``, merges small files, refreshes
        its rollups, expires old snapshots and deletes unreferenced files (each part can be turned
        off).

        Args:
            dry_run: report what would be done and change nothing.
            orphan_age: leave unreferenced files younger than this alone (default ``"1h"``).
            snapshot_retention: expire snapshots older than this instead of the table's
                ``varve.snapshot-retention`` (e.g. ``"0s"``).
            drop_all_rows: let retention remove every row of the table (without it, a table whose
                every row is past its retention keeps them, and ``skipped`` says so).

        Returns:
            ``{"table", "dry_run", "files_before", "files_after", "bytes_before", "bytes_after",
            "partitions_compacted", "rows_rewritten", "files_written", "files_dropped",
            "rows_dropped", "snapshots_expired", "objects_deleted", "bytes_deleted",
            "rollups_refreshed", "actions", "skipped", "seconds"}``.
        """
        return self._lake._handle.maintain(
            self._name,
            compact,
            retention,
            expire,
            orphans,
            dry_run,
            orphan_age,
            snapshot_retention,
            rollups,
            drop_all_rows,
        )

    @_native
    def create_rollup(self, name: str, select: str, if_not_exists: bool = False) -> Optional[Dict[str, Any]]:
        """Creates a materialized rollup of this table and fills it (``CREATE ROLLUP name ON table
        AS select``; see docs/sql.md, "Rollups").

        Args:
            name: the rollup's table (in this table's namespace unless qualified).
            select: ``SELECT <group columns>, time_bucket(<width>, <time column>) AS bucket,
                <aggregates> AS <names> FROM <this table> GROUP BY ...``; aggregates count, sum,
                min, max, avg, first, last, first_not_null, last_not_null, twa and
                approx_percentile_cont (also approx_median).
            if_not_exists: do nothing when it exists.

        Returns:
            The first refresh's report ``{"rollup", "source", "up_to_date", "full", "ranges",
            "rows_written", "files_replaced", "watermark", "seconds"}``, or None when it existed
            and ``if_not_exists`` was given.

        Raises:
            InvalidInputError: a definition outside the rules (the message says which part).
            AlreadyExistsError: a table of that name exists.
        """
        guard = "IF NOT EXISTS " if if_not_exists else ""
        return self._lake._handle.create_rollup(f"CREATE ROLLUP {guard}{name} ON {self._name} AS {select}")

    @_native
    def rollups(self) -> List[Dict[str, Any]]:
        """This table's rollups: ``[{"rollup", "source", "definition", "watermark", "up_to_date"}]``."""
        return self._lake._handle.rollups(self._name)

    @_native
    def refresh_rollups(self) -> List[Dict[str, Any]]:
        """Brings this table's rollups up to its current snapshot; returns one report each."""
        return [self._lake._handle.refresh_rollup(r["rollup"]) for r in self._lake._handle.rollups(self._name)]

    @_native
    def delete(self, where: Optional[str] = None, all: bool = False) -> Dict[str, Any]:
        """Deletes the rows matching ``where`` (a SQL condition such as ``"host = 'a'"``), or every
        row with ``all=True``, in one snapshot that every Iceberg reader sees.

        Returns:
            ``{"table", "rows_deleted", "files_removed", "files_written", "snapshot_id", "seconds"}``.

        Raises:
            InvalidInputError: neither ``where`` nor ``all``, both, or a condition that does not plan.
        """
        if (where is None) == (not all):
            raise InvalidInputError("give where=<condition> for the rows to delete, or all=True for every row")
        return self._lake._handle.delete(self._name, where)

    @_native
    def set_properties(self, set: Optional[Mapping[str, str]] = None, unset: Sequence[str] = ()) -> None:
        """Sets and removes table properties, e.g. ``set={"varve.retention": "30d"}``.

        Raises:
            InvalidInputError: an unknown ``varve.*`` property, a bad value, or one that only
                creation sets (``varve.time-column``, ``varve.series-key``, ``varve.partition``,
                ``varve.dedup``).
        """
        self._lake._handle.set_properties(self._name, dict(set or {}), list(unset))

    @_native
    def latest(self) -> Result:
        """The newest row of every series (of the table, without a series key)."""
        return Result(self._lake._handle.latest(self._name))

    @_native
    def info(self) -> Dict[str, Any]:
        """``rows``, ``live_files``, ``delete_files``, ``bytes``, ``manifests``, ``snapshots``,
        ``partitions``, ``min_time``/``max_time`` (``datetime`` in UTC, ``None`` for an empty table;
        also ``min_time_us``/``max_time_us``, µs since the epoch), ``series``, ``snapshot_id`` and
        ``properties``."""
        info = self._lake._handle.info(self._name)
        for key in ("min_time", "max_time"):
            us = info.get(key + "_us")
            info[key] = None if us is None else _utc_from_micros(us)
        return info

    @_native
    def history(self) -> List[Dict[str, Any]]:
        """Snapshots, oldest first: ``snapshot_id``, ``parent_id``, ``time`` (commit time, a
        ``datetime`` in UTC; also ``timestamp_ms``, ms since the epoch), ``operation``,
        ``rows_added``, ``files_added``, ``batch_id``, ``note``, ``is_current``."""
        history = self._lake._handle.history(self._name)
        for s in history:
            s["time"] = _utc_from_micros(s["timestamp_ms"] * 1000)
        return history

    def scan(
        self,
        columns: Optional[Sequence[str]] = None,
        where: Optional[str] = None,
        snapshot_id: Optional[int] = None,
        as_of: Union[_dt.datetime, str, int, None] = None,
        **limits: Any,
    ) -> Result:
        """Reads the table, now or as it was.

        Args:
            columns: columns to read (all if None).
            where: a SQL condition, e.g. ``"ts >= '2024-01-01T00:00:00Z'"``.
            snapshot_id: read this snapshot (see :meth:`history`).
            as_of: read the snapshot current at this time: a datetime (naive means UTC), an RFC 3339
                string, or ms since the epoch.
            **limits: ``timeout``, ``max_rows``, ``memory_limit`` as in :meth:`Lake.sql`.

        Raises:
            NotFoundError: no such snapshot, or no snapshot at or before ``as_of``.
        """
        if snapshot_id is not None and as_of is not None:
            raise InvalidInputError("give snapshot_id or as_of, not both")
        cols = "*" if columns is None else ", ".join(_quote(c) for c in columns)
        src = self._sql_name()
        if snapshot_id is not None:
            src += f" FOR VERSION AS OF {int(snapshot_id)}"
        elif as_of is not None:
            src += f" FOR TIMESTAMP AS OF {_as_of_literal(as_of)}"
        sql = f"SELECT {cols} FROM {src}"
        if where:
            sql += f" WHERE {where}"
        return self._lake.sql(sql, **limits)

    def __repr__(self) -> str:
        return f"<varve.Table {self._name}>"


class Lake:
    """A lake: a directory or bucket prefix of Iceberg tables.

    Args:
        url: a local path (default ``./varve-lake``), ``file:///path``, ``s3://bucket/prefix``, or
            ``memory://`` (this process only).
        storage_options: S3 settings: ``endpoint``, ``region``, ``access_key_id``,
            ``secret_access_key``, ``allow_http``, ...; ``AWS_*`` environment variables are read too.
            Also Varve's own: ``version-check-interval`` (default ``1s``), ``cache``
            (``memory``, ``disk`` or ``off``), ``cache-memory-bytes`` (``256MiB``), ``cache-dir``,
            ``cache-disk-bytes`` (``10GiB``), ``cache-block-bytes`` (``1MiB``),
            ``cache-request-bytes`` (``1MiB``), ``cache-coalesce-bytes`` (``0``),
            ``cache-decoded-bytes`` (``64MiB``: small data files' rows kept decoded),
            ``filter-pushdown`` (``auto``, ``on`` or ``off``), ``read-ahead-bytes`` (``auto``: 16 MiB on S3);
            see docs/operations.md.
        create: make the directory of a local lake that does not exist yet (as ``varve import``
            and ``varve create`` do); without it a missing local lake is an error, so a typo in the
            path never opens an empty lake.

    Raises:
        InvalidInputError: an unsupported URL scheme (never a local folder named after the URL).
        NotFoundError: a local lake directory that does not exist, without ``create=True``.

    Use as a context manager, or call :meth:`close`. Safe to use from several threads; processes
    started with ``multiprocessing`` (fork or spawn) may use a lake opened before.
    """

    @_native
    def __init__(
        self, url: str = "./varve-lake", storage_options: Optional[Mapping[str, str]] = None, create: bool = False
    ) -> None:
        if "://" in url and not url.startswith(_SCHEMES):
            scheme = url.split("://", 1)[0]
            raise InvalidInputError(f"lake URL {url}: scheme {scheme}:// is not supported (use a path, file://, s3:// or memory://)")
        local = url[len("file://"):] if url.startswith("file://") else (None if "://" in url else url)
        if local is not None and not create and not os.path.isdir(local):
            raise NotFoundError(f"no lake at {url}: pass create=True to make a new local lake there")
        self._url = url
        self._options = dict(storage_options or {})
        self._native_lake: Optional[Any] = _varve.NativeLake(url, {str(k): str(v) for k, v in self._options.items()})

    def __getstate__(self) -> Dict[str, Any]:
        return {"url": self._url, "options": self._options}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(state["url"], state["options"], create=True)  # type: ignore[misc]

    @property
    def _handle(self) -> Any:
        if self._native_lake is None:
            raise InvalidInputError("the lake is closed")
        return self._native_lake

    @property
    @_native
    def url(self) -> str:
        """The lake's absolute root URL, e.g. ``file:///home/me/varve-lake``."""
        return self._handle.url()

    def close(self) -> None:
        """Releases the lake. Further calls raise :class:`InvalidInputError`."""
        self._native_lake = None

    def __enter__(self) -> "Lake":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @_native
    def create_table(
        self,
        name: str,
        schema_or_data: Any,
        time_column: Optional[str] = None,
        series_key: Sequence[str] = (),
        partition: Optional[str] = None,
        dedup: str = "none",
    ) -> Table:
        """Creates a table, and appends ``schema_or_data`` when it is data.

        Args:
            name: ``namespace.table`` or ``table`` (namespace ``default``).
            schema_or_data: a ``pyarrow.Schema``, or data as :meth:`Table.append` takes it.
            time_column: the time column (makes a time-series table); stored as timestamp µs UTC.
            series_key: columns that identify a series, e.g. ``["symbol"]``.
            partition: ``"hour"``, ``"day"``, ``"month"`` or ``"year"`` of the time column. When
                None: for data with a timestamp time column, chosen from it as ``varve import``
                does (a partition holds about a million rows or a year); otherwise ``"day"``.
            dedup: ``"none"`` (keep every row) or ``"last-write-wins"``: a row whose (series key,
                time) is stored already replaces it, within an append (the later row wins) and
                across appends, as every Iceberg reader sees right after the commit.

        Raises:
            AlreadyExistsError, SchemaMismatchError, InvalidInputError.
        """
        if isinstance(schema_or_data, pa.Schema):
            schema, data = schema_or_data, None
        else:
            data = _to_reader(schema_or_data)
            schema = data.schema
        if partition is None:
            partition = "day"
            if data is not None and time_column is not None and schema.get_field_index(time_column) >= 0 \
                    and pa.types.is_timestamp(schema.field(time_column).type):
                whole = data.read_all()
                data = whole
                times = whole.column(time_column).cast(pa.timestamp("us", tz="UTC")).cast(pa.int64())
                bounds = pc.min_max(times)
                if whole.num_rows and bounds["min"].is_valid:
                    span = bounds["max"].as_py() - bounds["min"].as_py()
                    partition = _varve.partition_for_data(whole.num_rows, span, True)
        self._handle.create_table(name, schema, time_column, list(series_key), partition, dedup)
        table = Table(self, self._canonical(name))
        if data is not None:
            try:
                table.append(data)
            except Error:
                self._handle.drop_table(name)
                raise
        return table

    @staticmethod
    def _canonical(name: str) -> str:
        return name if "." in name else f"default.{name}"

    @_native
    def drop_rollup(self, name: str, if_exists: bool = False) -> bool:
        """Drops a rollup (its table and its entry on its source); returns whether it existed.

        Raises:
            NotFoundError: no such rollup (unless ``if_exists``).
            InvalidInputError: the table is not a rollup.
        """
        return self._handle.drop_rollup(name, if_exists)

    @_native
    def refresh_rollup(self, name: str) -> Dict[str, Any]:
        """Brings a rollup up to its table's current snapshot, recomputing the buckets that changed
        rows touch; returns the report (see :meth:`Table.create_rollup`)."""
        return self._handle.refresh_rollup(name)

    @_native
    def table(self, name: str) -> Table:
        """Opens a table.

        Raises:
            NotFoundError: no such table.
        """
        if not self._handle.exists(name):
            raise NotFoundError(f"table {self._canonical(name)} does not exist")
        return Table(self, self._canonical(name))

    @_native
    def tables(self) -> List[str]:
        """Names of all tables, ``namespace.table``, sorted."""
        return self._handle.tables()

    @_native
    def cache_stats(self) -> Dict[str, int]:
        """What the block cache did since the lake was opened: ``memory_hits`` and ``disk_hits``
        (blocks found, of ``cache-block-bytes``, 1 MiB by default), ``misses`` (blocks fetched), ``requests`` (GETs made),
        ``fetched_bytes``, ``hit_bytes``, ``corrupt_blocks`` (damaged disk blocks fetched again),
        and ``memory_bytes``/``disk_bytes`` held now. All zero with ``cache=off``."""
        return self._handle.cache_stats()

    @_native
    def drop_table(self, name: str) -> None:
        """Deletes a table and its files.

        Raises:
            NotFoundError: no such table.
        """
        self._handle.drop_table(name)

    @_native
    def import_files(
        self,
        name: str,
        paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
        format: Optional[str] = None,
        time_column: Union[str, Sequence[str], None] = None,
        time_name: str = "time",
        series_key: Sequence[str] = (),
        partition: Optional[str] = None,
        plain: bool = False,
        null_values: Sequence[str] = (),
        delimiter: Optional[str] = None,
        skip_rows: int = 0,
        time_format: Optional[str] = None,
        timezone: Optional[str] = None,
        time_unit: Optional[str] = None,
        truncate_ns: bool = False,
        rename_duplicates: bool = False,
        batch_id: Optional[str] = None,
        note: Optional[str] = None,
        dedup: str = "none",
        strict_types: bool = False,
    ) -> Dict[str, Any]:
        """Imports files into a table in one commit, decoded as ``varve import`` decodes them.

        The table is created from the first file's columns when it does not exist (``time_column``,
        ``series_key``, ``partition``, ``dedup`` and ``plain`` only shape a new table; without
        ``partition`` the granularity is chosen from the data so that a partition holds about a
        million rows or a year, and ``partition_note`` in the result says which).

        Args:
            name: the table.
            paths: a file or files: CSV, TSV (``.csv``, ``.tsv``, optionally ``.gz``), NDJSON
                (``.ndjson``, ``.jsonl``), Parquet.
            format: ``"csv"``, ``"tsv"``, ``"ndjson"`` or ``"parquet"``; detected from the name if None.
            time_column: the time column; two names are joined with a space into ``time_name``.
            null_values: unquoted CSV fields that mean NULL, besides an unquoted empty field
                (``""`` quoted is the empty string).
            delimiter: one character, for CSV/TSV.
            skip_rows: lines before the header.
            time_format, timezone, time_unit: how to read times (strftime, IANA zone or offset,
                ``s``/``ms``/``us``/``ns`` for numbers).
            truncate_ns: store times with nanoseconds truncated to µs instead of refusing them.
            rename_duplicates: read a repeated header name as ``name_2`` instead of refusing.
            batch_id, note: as in :meth:`Table.append`.
            dedup: of a new table, as in :meth:`Lake.create_table`.
            strict_types: refuse to create a table with a CSV/TSV column that would be text
                although at least 90% of its values are numbers or times (a missing-value
                spelling such as ``nil`` made it text); without it such columns are listed in
                ``mostly_typed_text`` and stay text.

        Returns:
            ``{"append": {... as Table.append ...}, "created", "collided_keys", "contract_note",
            "partition_note", "mostly_typed_text"}``; ``mostly_typed_text`` is a list of
            ``[column, {"would_be", "typed_values", "text_values", "spellings"}]``.

        Raises:
            NotFoundError: a file does not exist.
            InvalidInputError: a bad file or value, naming the file, line or row and the value.
        """
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        if time_column is None:
            times: List[str] = []
        elif isinstance(time_column, str):
            times = [time_column]
        else:
            times = list(time_column)
        return self._handle.import_files(
            name, [os.fspath(p) for p in paths], format, times, time_name, list(series_key), partition, plain,
            list(null_values), delimiter, skip_rows, time_format, timezone, time_unit, truncate_ns,
            rename_duplicates, batch_id, note, dedup, strict_types,
        )

    @_native
    def sql(
        self,
        query: str,
        timeout: Optional[float] = None,
        max_rows: Optional[int] = None,
        memory_limit: Union[int, str, None] = None,
    ) -> Result:
        """Runs one SQL statement (DataFusion SQL with ``time_bucket`` and time travel).

        Args:
            query: the statement; tables are ``namespace.table``.
            timeout: seconds after which the query is cancelled.
            max_rows: fail when the result grows past this many rows.
            memory_limit: bytes for sorts, aggregates and joins, as a number or as text with a
                unit (``"512MiB"``, ``"2GiB"``); they spill to a temporary directory before the
                query fails.

        Raises:
            TimeoutError: past ``timeout`` (also a builtin ``TimeoutError``).
            LimitExceededError: past ``max_rows``, or cannot fit in ``memory_limit``.
            InvalidInputError: bad SQL, an unknown column, or an invalid limit (0, negative).
            NotFoundError: an unknown table or snapshot.
        """
        if isinstance(memory_limit, str):
            memory_limit = _varve.parse_bytes(memory_limit)
        for what, v in (("timeout", timeout), ("max_rows", max_rows), ("memory_limit", memory_limit)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0):
                raise InvalidInputError(f"{what}={v!r}: must be a number above 0")
        if max_rows is not None and not isinstance(max_rows, int):
            raise InvalidInputError(f"max_rows={max_rows!r}: must be a whole number")
        mem = None if memory_limit is None else int(memory_limit)
        return Result(self._handle.sql(query, None if timeout is None else float(timeout), max_rows, mem))

    def __repr__(self) -> str:
        return f"<varve.Lake {self._url}>"
