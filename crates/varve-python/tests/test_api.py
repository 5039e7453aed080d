"""The Python API on every backend: tables, appends from every input kind, results, time travel."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import varve

US = pa.timestamp("us", "UTC")


def readings(start_s: int, n: int, hosts=("a", "b")) -> pa.Table:
    ts, host, load = [], [], []
    for h in hosts:
        for i in range(n):
            ts.append((start_s + i * 60) * 1_000_000)
            host.append(h)
            load.append(i / 10)
    return pa.table({"ts": pa.array(ts, US), "host": host, "load": load})


def test_tables_appends_and_results(lake_args):
    url, opts = lake_args
    with varve.Lake(url, storage_options=opts) as lake:
        t = lake.create_table("metrics.cpu", readings(0, 10), time_column="ts", series_key=["host"], partition="hour")
        assert isinstance(t, varve.Table) and t.name == "metrics.cpu"
        assert lake.tables() == ["metrics.cpu"]
        assert lake.table("metrics.cpu").schema.field("ts").type == US
        # Every kind of input.
        r = t.append(readings(3600, 5).to_batches()[0], note="a batch")
        assert r["rows"] == 10 and r["snapshot_id"] and not r["duplicate"]
        t.append(readings(7200, 5).to_reader())
        t.append(readings(10800, 5).to_pandas())
        t.append(pl.from_arrow(readings(14400, 5)))
        t.append(readings(18000, 5, hosts=("c",)).to_pandas().astype({"load": "float32"}))

        class Stream:
            def __arrow_c_stream__(self, requested_schema=None):
                return readings(21600, 5).__arrow_c_stream__(requested_schema)

        t.append(Stream())
        total = 20 + 10 * 4 + 5 + 10
        res = lake.sql("SELECT count(*) AS n FROM metrics.cpu")
        assert res.to_pylist() == [{"n": total}]
        assert res.to_pandas()["n"][0] == total
        assert res.to_polars()["n"][0] == total
        assert pa.table(res).num_rows == 1  # __arrow_c_stream__
        assert sum(b.num_rows for b in res) == 1
        # Idempotent batches.
        first = t.append(readings(99_000, 1), batch_id="once")
        again = t.append(readings(99_000, 1), batch_id="once")
        assert not first["duplicate"] and again["duplicate"] and again["rows"] == 0
        info = t.info()
        assert info["rows"] == total + 2 and info["series"] == 3
        latest = t.latest().to_pandas().sort_values("host")
        assert list(latest["host"]) == ["a", "b", "c"]
        # Time travel from Python and from SQL.
        h = t.history()
        assert h[1]["note"] == "a batch" and h[-1]["batch_id"] == "once"
        assert t.scan(snapshot_id=h[0]["snapshot_id"]).num_rows == 20
        as_of = h[1]["time"]
        assert as_of == dt.datetime.fromtimestamp(h[1]["timestamp_ms"] / 1000, dt.timezone.utc)
        assert info["min_time"].tzinfo == dt.timezone.utc and info["min_time"] <= info["max_time"]
        assert t.scan(as_of=as_of, columns=["host"]).num_rows == 30
        assert lake.sql(f"SELECT count(*) AS n FROM metrics.cpu FOR VERSION AS OF {h[0]['snapshot_id']}").to_pylist() == [{"n": 20}]
        with pytest.raises(varve.NotFoundError):
            t.scan(snapshot_id=1)
        lake.drop_table("metrics.cpu")
        assert lake.tables() == []


def test_error_classes(local_lake):
    lake = local_lake
    t = lake.create_table("t", readings(0, 3), time_column="ts", series_key=["host"])
    with pytest.raises(varve.AlreadyExistsError) as e:
        lake.create_table("t", readings(0, 1).schema, time_column="ts")
    assert e.value.code == "already_exists" and e.value.hint and e.value.retryable is False
    for query in ("SELECT * FROM nope", "SELECT * FROM other.nope"):
        with pytest.raises(varve.NotFoundError):
            lake.sql(query)
    with pytest.raises(varve.NotFoundError):
        lake.table("nope")
    with pytest.raises(varve.InvalidInputError) as e:
        lake.sql("SELECT no_such_column FROM t")
    assert "no_such_column" in str(e.value)
    with pytest.raises(varve.InvalidInputError):
        lake.sql("SELEC 1")
    bad = pa.table({"ts": pa.array([0, 1], US), "host": ["a", "a"], "load": ["1.5", "fast"]})
    with pytest.raises(varve.InvalidInputError) as e:
        t.append(bad)
    assert str(e.value) == "column load, row 2: 'fast' is not a float64"
    with pytest.raises(varve.SchemaMismatchError) as e:
        t.append(pa.table({"ts": pa.array([0], US), "tags": pa.array([["x"]])}))
    assert isinstance(e.value, varve.InvalidInputError)
    with pytest.raises(varve.InvalidInputError):
        t.append({"not": "arrow"})
    assert t.info()["rows"] == 6, "failed appends change nothing"
    with pytest.raises(varve.InvalidInputError):
        varve.Lake("ftp://host/lake")
    with pytest.raises(varve.InvalidInputError):
        varve.Lake("gs://bucket/x")
    lake.close()
    with pytest.raises(varve.InvalidInputError):
        lake.tables()
    assert issubclass(varve.TimeoutError, TimeoutError)
    assert varve.ConflictError("x", retryable=True).retryable
    for cls in (varve.StorageError, varve.LimitExceededError, varve.CorruptionError):
        assert issubclass(cls, varve.Error)


def test_guards(local_lake):
    lake = local_lake
    # Daily partitions: two files. (With one file, the timeout below takes effect only after the
    # cross join's current batch, which takes over 10 s in a debug build.)
    lake.create_table("t", readings(0, 2000, hosts=[f"h{i}" for i in range(10)]), time_column="ts", series_key=["host"],
                      partition="day")
    # max_rows
    assert lake.sql("SELECT * FROM t", max_rows=20_000).num_rows == 20_000
    with pytest.raises(varve.LimitExceededError):
        lake.sql("SELECT * FROM t", max_rows=100)
    # timeout: a cross join that runs for minutes is cancelled.
    start = dt.datetime.now()
    with pytest.raises(varve.TimeoutError) as e:
        lake.sql("SELECT count(*) FROM t a CROSS JOIN t b WHERE a.load * b.load > 1e9", timeout=0.5)
    assert isinstance(e.value, TimeoutError)
    assert (dt.datetime.now() - start).total_seconds() < 10
    # memory_limit: a sort within the limit succeeds...
    res = lake.sql("SELECT host, ts, load FROM t ORDER BY load DESC, host, ts", memory_limit=16 * 1024 * 1024)
    assert res.num_rows == 20_000
    assert lake.sql("SELECT host, ts FROM t ORDER BY ts", memory_limit="16MiB").num_rows == 20_000
    with pytest.raises(varve.InvalidInputError):
        lake.sql("SELECT 1", memory_limit="lots")
    # ...and a query that cannot fit fails with the limit error.
    with pytest.raises(varve.LimitExceededError):
        lake.sql("SELECT host, array_agg(load) FROM t GROUP BY host", memory_limit=10_000)
    for bad in ({"timeout": 0}, {"timeout": -1}, {"max_rows": 0}, {"memory_limit": -5}, {"max_rows": 1.5}):
        with pytest.raises(varve.InvalidInputError):
            lake.sql("SELECT 1", **bad)


def test_storage_and_corruption_errors(tmp_path, s3_server):
    with varve.Lake("s3://no-such-bucket/lake", storage_options=s3_server) as lake:
        with pytest.raises(varve.StorageError) as e:
            lake.tables()
        assert e.value.code == "storage"
        assert "the bucket no-such-bucket does not exist" in str(e.value) and "\n" not in str(e.value)
    root = tmp_path / "lake"
    with varve.Lake(str(root), create=True) as lake:
        lake.create_table("t", readings(0, 1), time_column="ts")
        (root / "default" / "t" / "metadata" / "v2.metadata.json").write_text("{ not json")
        (root / "default" / "t" / "metadata" / "version-hint.text").write_text("2")
    # A lake handle keeps the metadata it wrote (metadata files are immutable): a file damaged
    # afterwards is found by the next handle that reads it.
    with varve.Lake(str(root)) as lake:
        with pytest.raises(varve.CorruptionError) as e:
            lake.table("t").info()
        assert "v2.metadata.json" in str(e.value)


def test_a_missing_local_lake_is_an_error_unless_create(tmp_path):
    missing = tmp_path / "no" / "such" / "dir"
    with pytest.raises(varve.NotFoundError, match="create=True"):
        varve.Lake(str(missing))
    assert not missing.exists(), "nothing is created"
    with varve.Lake(str(missing), create=True) as lake:
        assert lake.tables() == []
        t = lake.create_table("e", readings(0, 1).schema, time_column="ts", series_key=["host"])
        assert t.latest().num_rows == 0, "an empty table answers with no rows"
    assert missing.is_dir()


def test_cache_options_and_stats(tmp_path):
    """The block cache's options are storage options; its counters come back as a dict."""
    url = str(tmp_path / "lake")
    cache_dir = tmp_path / "cache"
    with varve.Lake(url, create=True) as lake:
        lake.create_table("m.cpu", readings(0, 100), time_column="ts", series_key=["host"])
    opts = {"cache-dir": str(cache_dir), "version-check-interval": "250ms"}
    with varve.Lake(url, storage_options=opts) as lake:
        # (A sum reads the data; count(*) is answered from the manifests.)
        assert lake.sql("SELECT round(sum(load)) AS s FROM m.cpu").to_pylist() == [{"s": 990.0}]
        stats = lake.cache_stats()
        assert stats["misses"] > 0 and stats["requests"] > 0 and stats["disk_bytes"] > 0
        assert set(stats) >= {"memory_hits", "disk_hits", "fetched_bytes", "hit_bytes", "corrupt_blocks", "memory_bytes"}
    assert any(cache_dir.iterdir())
    with varve.Lake(url, storage_options={"cache": "off"}) as lake:
        assert lake.sql("SELECT round(sum(load)) AS s FROM m.cpu").to_pylist() == [{"s": 990.0}]
        assert lake.cache_stats()["requests"] == 0
    with pytest.raises(varve.InvalidInputError, match="cache-dir"):
        varve.Lake(url, storage_options={"cache": "disk"})
