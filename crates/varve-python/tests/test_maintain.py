"""Maintenance from Python: maintain, inline compaction, table properties, deletes, info keys."""

from __future__ import annotations

import pyarrow as pa
import pytest

import varve

US = pa.timestamp("us", tz="UTC")


def readings(start_s: int, n: int, hosts=("a", "b")) -> pa.Table:
    ts, host, load = [], [], []
    for h in hosts:
        for i in range(n):
            ts.append((start_s + i * 60) * 1_000_000)
            host.append(h)
            load.append(float(i))
    return pa.table({"ts": pa.array(ts, US), "host": host, "load": load})


def test_maintain_properties_and_deletes(lake_args):
    url, opts = lake_args
    with varve.Lake(url, storage_options=opts) as lake:
        t = lake.create_table("m.cpu", readings(0, 1), time_column="ts", series_key=["host"])
        t.set_properties({"varve.auto-maintain": "false"})
        for k in range(1, 11):
            r = t.append(readings(k * 600, 5), maintain=False)
            assert r["maintenance"] is None
        info = t.info()
        for key in ("rows", "live_files", "delete_files", "bytes", "manifests", "snapshots", "partitions",
                    "min_time", "max_time", "series", "properties"):
            assert key in info, key
        assert info["live_files"] == 11 and info["rows"] == 102
        assert info["properties"]["varve.auto-maintain"] == "false"

        dry = t.maintain(dry_run=True)
        assert dry["dry_run"] and dry["partitions_compacted"] == 1
        assert t.info()["live_files"] == 11
        r = t.maintain()
        assert (r["files_before"], r["files_after"], r["rows_rewritten"]) == (11, 1, 102)
        assert t.info()["rows"] == 102

        with pytest.raises(varve.InvalidInputError, match="varve.retention"):
            t.set_properties({"varve.retention": "soon"})
        with pytest.raises(varve.InvalidInputError, match="fixed when the table is created"):
            t.set_properties({"varve.series-key": "ts"})

        d = t.delete("host = 'a'")
        assert d["rows_deleted"] == 51 and d["snapshot_id"]
        assert lake.sql("SELECT count(*) AS n FROM m.cpu").to_pylist() == [{"n": 51}]
        with pytest.raises(varve.InvalidInputError):
            t.delete()
        assert t.delete(all=True)["rows_deleted"] == 51
        assert lake.sql("SELECT count(*) AS n FROM m.cpu").to_pylist() == [{"n": 0}]


def test_last_write_wins(lake_args):
    url, opts = lake_args
    with varve.Lake(url, storage_options=opts) as lake:
        first = pa.table({"ts": pa.array([0, 0, 60_000_000], US), "host": ["a", "a", "b"], "load": [1.0, 2.0, 3.0]})
        t = lake.create_table("w.cpu", first, time_column="ts", series_key=["host"], dedup="last-write-wins")
        assert t.describe()["dedup"] == "last-write-wins"
        r = t.append(pa.table({"ts": pa.array([60_000_000, 120_000_000], US), "host": ["b", "b"],
                               "load": [30.0, 4.0]}))
        assert (r["rows_replaced"], r["files_rewritten"], r["duplicate_rows_dropped"]) == (1, 1, 0)
        rows = lake.sql("SELECT host, load FROM w.cpu ORDER BY host, ts").to_pylist()
        assert rows == [{"host": "a", "load": 2.0}, {"host": "b", "load": 30.0}, {"host": "b", "load": 4.0}]
        with pytest.raises(varve.InvalidInputError, match="none or last-write-wins"):
            lake.create_table("w.bad", first.schema, time_column="ts", dedup="newest")


def test_partition_is_chosen_from_the_data(local_lake):
    lake = local_lake
    # Two days of minute readings: far fewer than a million rows, so one partition per year.
    t = lake.create_table("p.small", readings(0, 2880), time_column="ts", series_key=["host"])
    assert t.describe()["partition"] == "year"
    assert lake.create_table("p.given", readings(0, 10), time_column="ts", partition="hour").describe()["partition"] == "hour"
    assert lake.create_table("p.empty", readings(0, 1).schema, time_column="ts").describe()["partition"] == "day"


def test_alter_table_from_python(local_lake):
    lake = local_lake
    lake.create_table("s.cpu", readings(0, 2), time_column="ts", series_key=["host"])
    lake.sql("ALTER TABLE s.cpu RENAME COLUMN load TO cpu_load")
    lake.sql("ALTER TABLE s.cpu ADD COLUMN note VARCHAR")
    rows = lake.sql("SELECT host, cpu_load, note FROM s.cpu WHERE host = 'a' ORDER BY ts").to_pylist()
    assert rows == [{"host": "a", "cpu_load": 0.0, "note": None}, {"host": "a", "cpu_load": 1.0, "note": None}]
    with pytest.raises(varve.InvalidInputError, match="series key"):
        lake.sql("ALTER TABLE s.cpu DROP COLUMN host")


def test_rollups(lake_args):
    url, opts = lake_args
    with varve.Lake(url, storage_options=opts) as lake:
        t = lake.create_table("m.load", readings(0, 120, hosts=("a", "b", "c")), time_column="ts", series_key=["host"])
        r = t.create_rollup(
            "load_5m",
            "SELECT host, time_bucket(INTERVAL '5 minutes', ts) AS bucket, count(*) AS n, avg(load) AS load "
            "FROM m.load GROUP BY host, bucket",
        )
        assert r["rollup"] == "m.load_5m" and r["full"] and r["rows_written"] == 3 * 24
        assert t.create_rollup("load_5m", "SELECT host, time_bucket(INTERVAL '5 minutes', ts) AS bucket, "
                               "count(*) AS n FROM m.load GROUP BY host, bucket", if_not_exists=True) is None
        [info] = t.rollups()
        assert info["up_to_date"] and info["source"] == "m.load"
        q = "SELECT host, time_bucket(INTERVAL '1 hour', ts) AS h, count(*) AS n, avg(load) AS a FROM m.load GROUP BY 1, 2 ORDER BY 1, 2"
        routed = lake.sql(q)
        plan = lake.sql("EXPLAIN " + q).to_arrow().to_pydict()
        assert any("answered from rollup m.load_5m" in p for p in plan["plan"])
        t.append(readings(120 * 60, 30), maintain=False)
        m = t.maintain(expire=False, orphans=False)
        assert m["rollups_refreshed"] == 1
        assert t.rollups()[0]["up_to_date"]
        assert [x["up_to_date"] for x in t.refresh_rollups()] == [True]
        assert lake.refresh_rollup("m.load_5m")["up_to_date"]
        after = lake.sql(q).to_arrow().to_pydict()
        assert sum(after["n"]) == 3 * 120 + 2 * 30
        assert routed.num_rows > 0
        with pytest.raises(varve.InvalidInputError, match="not a rollup"):
            lake.drop_rollup("m.load")
        assert lake.drop_rollup("m.load_5m")
        assert not lake.drop_rollup("m.load_5m", if_exists=True)
        assert t.rollups() == []
