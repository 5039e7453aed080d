"""Threads query at once (the GIL is released), and processes started with multiprocessing (fork and
spawn) append to one table concurrently without hanging or losing a commit."""

from __future__ import annotations

import multiprocessing as mp
import threading
import time

import pyarrow as pa
import pytest

import varve

US = pa.timestamp("us", "UTC")


def _rows(writer: int, seq: int) -> pa.Table:
    return pa.table({"ts": pa.array([seq * 1_000_000], US), "writer": [writer], "seq": [seq]})


def _writer(lake: varve.Lake, writer: int, batches: int) -> None:
    t = lake.table("t")
    for s in range(batches):
        t.append(_rows(writer, s), batch_id=f"{writer}-{s}")


def _writer_by_url(url: str, opts, writer: int, batches: int) -> None:
    with varve.Lake(url, storage_options=opts) as lake:
        _writer(lake, writer, batches)


def _check(lake: varve.Lake, writers: int, batches: int) -> None:
    r = lake.sql("SELECT count(*) AS n, count(DISTINCT (writer, seq)) AS d FROM t").to_pylist()[0]
    assert r == {"n": writers * batches, "d": writers * batches}
    h = lake.table("t").history()
    # One append per batch; inline compaction adds replace snapshots between them.
    assert sum(1 for s in h if s["operation"] == "append") == writers * batches
    assert all(s["operation"] in ("append", "replace") for s in h)
    assert all(b["parent_id"] == a["snapshot_id"] for a, b in zip(h, h[1:])), "history is linear"


@pytest.mark.parametrize("method", ["fork", "spawn"])
@pytest.mark.parametrize("backend", ["local", "s3"])
def test_processes_append_concurrently(method, backend, tmp_path, request):
    if backend == "local":
        url, opts = str(tmp_path / "lake"), None
    else:
        url, opts = f"s3://lake/{tmp_path.name}", request.getfixturevalue("s3_server")
    lake = varve.Lake(url, storage_options=opts, create=True)
    lake.create_table("t", _rows(0, 0).schema, time_column="ts", series_key=["writer"])
    lake.tables()  # the parent has used its runtime and connections before forking
    ctx = mp.get_context(method)
    writers, batches = 4, 10
    if method == "fork":
        procs = [ctx.Process(target=_writer, args=(lake, w, batches)) for w in range(writers)]
    else:
        procs = [ctx.Process(target=_writer_by_url, args=(url, opts, w, batches)) for w in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0, f"a writer failed or hung (exit code {p.exitcode})"
    _check(lake, writers, batches)


def test_threads_run_queries_at_once(local_lake):
    lake = local_lake
    lake.create_table("t", _rows(0, 0), time_column="ts")
    slow = "SELECT count(*) FROM generate_series(1, 3000000) a(x) WHERE x % 7 = 3"
    start = time.perf_counter()
    lake.sql(slow)
    one = time.perf_counter() - start
    errors = []
    ticks = []

    def run():
        try:
            lake.sql(slow)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for th in threads:
        th.start()
    # While the queries run, this thread keeps getting the GIL.
    while any(th.is_alive() for th in threads):
        ticks.append(time.perf_counter())
        time.sleep(0.01)
    for th in threads:
        th.join()
    assert not errors
    assert len(ticks) > 5, "the main thread ran while queries were executing (GIL released)"
    assert one > 0
