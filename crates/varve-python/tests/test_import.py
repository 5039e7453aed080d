"""Files through ``Lake.import_files`` (the engine's shared input path) and ns times through
``Table.append``: issue 8's defects as the Python package sees them."""

from __future__ import annotations

import gzip

import pyarrow as pa
import pytest

import varve


def write(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_quoted_empty_is_text_unquoted_empty_is_null(local_lake, tmp_path):
    f = write(tmp_path, "q.csv", b'time,host,v\n2024-05-01T00:00:00Z,"",1\n2024-05-01T00:00:00Z,,2\n')
    local_lake.import_files("t", f, time_column="time", series_key=["host"])
    got = local_lake.sql("SELECT host IS NULL AS n, count(*) AS c FROM t GROUP BY 1 ORDER BY 1").to_pylist()
    assert got == [{"n": False, "c": 1}, {"n": True, "c": 1}]
    assert len(local_lake.table("t").latest()) == 2


def test_bom_crlf_and_gzip(local_lake, tmp_path):
    f = write(tmp_path, "b.csv.gz", gzip.compress(b"\xef\xbb\xbftime,v\r\n2024-01-10T06:00:00Z,1\r\n"))
    local_lake.import_files("b", f, time_column="time")
    assert local_lake.table("b").schema.names == ["time", "v"]


def test_nanoseconds_refused_then_truncated_with_counts(local_lake, tmp_path):
    f = write(tmp_path, "ns.csv", b"time,s,v\n2019-06-15T00:00:12.868214000Z,a,1\n2019-06-15T00:00:12.868214001Z,a,2\n")
    with pytest.raises(varve.InvalidInputError, match=r"row 2: 2019-06-15T00:00:12.868214001Z has nanoseconds"):
        local_lake.import_files("ns", f, series_key=["s"])
    assert "default.ns" not in local_lake.tables()
    r = local_lake.import_files("ns", f, series_key=["s"], truncate_ns=True)
    assert r["append"]["truncated_times"] == 1 and r["collided_keys"] == 1 and r["created"]

    # Arrow data with ns timestamps through Table.append.
    t = local_lake.table("ns")
    data = pa.table({
        "time": pa.array([1_560_556_812_868_214_001, 1_560_556_812_868_214_002], pa.timestamp("ns", "UTC")),
        "s": ["b", "b"],
        "v": [3, 4],
    })
    with pytest.raises(varve.InvalidInputError, match="has nanoseconds"):
        t.append(data)
    r = t.append(data, truncate_ns=True)
    assert r["truncated_times"] == 2 and r["collided_keys"] == 1


def test_infinity_spellings_and_new_columns_typed(local_lake, tmp_path):
    a = write(tmp_path, "a.csv", b"time,k,a\n2024-01-01T00:00:00Z,x,Infinity\n2024-01-01T00:01:00Z,x,-Infinity\n")
    b = write(tmp_path, "b.csv", b"time,k,a,b,c\n2024-01-01T00:02:00Z,x,NaN,10,0.5\n")
    local_lake.import_files("f", a, series_key=["k"])
    r = local_lake.import_files("f", b)
    assert r["append"]["added_columns"] == ["b", "c"]
    schema = local_lake.table("f").schema
    assert schema.field("a").type == pa.float64()
    assert schema.field("b").type == pa.int64() and schema.field("c").type == pa.float64()
    assert local_lake.sql("SELECT sum(b) AS b, sum(c) AS c FROM f").to_pylist() == [{"b": 10, "c": 0.5}]


def test_leap_second_repeated_names_and_long_values(local_lake, tmp_path):
    leap = write(tmp_path, "leap.csv", b"time,v\n2016-12-31T23:59:60Z,1\n")
    with pytest.raises(varve.InvalidInputError, match="is a leap second"):
        local_lake.import_files("l", leap)
    dup = write(tmp_path, "dup.csv", b"time,series,value,value\n2024-01-01T00:00:00Z,z_2,7,8\n")
    with pytest.raises(varve.InvalidInputError, match='columns 3 and 4 are both named "value"'):
        local_lake.import_files("d", dup)
    local_lake.import_files("d", dup, rename_duplicates=True)
    assert local_lake.sql("SELECT value, value_2 FROM d").to_pylist() == [{"value": 7, "value_2": 8}]
    good = write(tmp_path, "good.csv", b"time,v\n2024-01-01T00:00:00Z,1\n")
    local_lake.import_files("n", good)
    long = write(tmp_path, "long.csv", b"time,v\n2024-01-01T00:01:00Z," + b"x" * (1 << 20) + b"\n")
    with pytest.raises(varve.InvalidInputError) as e:
        local_lake.import_files("n", long)
    assert len(str(e.value)) < 400 and "(1048576 bytes)" in str(e.value)


def test_a_missing_file_is_not_found(local_lake, tmp_path):
    with pytest.raises(varve.NotFoundError, match="no such file"):
        local_lake.import_files("x", tmp_path / "nope.csv")


def test_arrow_columns_with_one_name_are_refused(local_lake):
    t = local_lake.create_table("a", pa.schema([("ts", pa.timestamp("us", "UTC")), ("v", pa.int64())]), time_column="ts")
    data = pa.Table.from_arrays(
        [pa.array([0], pa.timestamp("us", "UTC")), pa.array([7]), pa.array([8])], names=["ts", "v", "v"]
    )
    with pytest.raises(varve.InvalidInputError, match='columns 2 and 3 of the input are both named "v"'):
        t.append(data)
    assert t.info()["rows"] == 0
