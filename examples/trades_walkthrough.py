"""A walk-through of the varve Python package on about 3 million synthetic trades.

    python examples/trades_walkthrough.py [--rows 3000000] [--lake DIR]

Trades (ts, symbol, price, size, exchange, side) over 10 days, appended one commit per day, then:
a full scan vs a one-day time range, two columns vs all columns, 1 commit vs 300 small commits of the
same rows, a cold aggregate (a new process) vs a warm one, and the three query guards firing.
Prints each figure; docs/python.md records a run.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import varve

DAYS = 10
DAY_US = 86_400_000_000
START_US = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z


def trades_for_day(day: int, n: int, rng: np.random.Generator) -> pa.Table:
    ts = np.sort(rng.integers(0, DAY_US, n)) + START_US + day * DAY_US
    symbols = np.array([f"SYM{i:03d}" for i in range(100)])
    sym = rng.integers(0, 100, n)
    price = np.round(50 + sym + rng.normal(0, 1, n).cumsum() / 100, 4)
    return pa.table({
        "ts": pa.array(ts, pa.timestamp("us", "UTC")),
        "symbol": pa.array(symbols[sym]),
        "price": pa.array(price),
        "size": pa.array(rng.integers(1, 1000, n)),
        "exchange": pa.array(np.array(["XNAS", "XNYS", "ARCX", "BATS", "IEXG"])[rng.integers(0, 5, n)]),
        "side": pa.array(np.where(rng.random(n) < 0.5, "buy", "sell")),
    })


def timed(label: str, fn, repeat: int = 3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    print(f"  {label:<46} {best * 1000:9.1f} ms")
    return out, best


COLD = """
import sys, time, varve
t = time.perf_counter()
lake = varve.Lake(sys.argv[1])
r = lake.sql("SELECT symbol, sum(price * size) / sum(size) AS vwap FROM trades GROUP BY symbol")
print(time.perf_counter() - t, r.num_rows)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=3_000_000, help="total trades (default 3,000,000)")
    ap.add_argument("--lake", help="lake directory (default: a new temporary directory)")
    args = ap.parse_args()
    root = Path(args.lake or tempfile.mkdtemp(prefix="varve-trades-"))
    if root.exists():
        shutil.rmtree(root)
    rng = np.random.default_rng(42)
    per_day = args.rows // DAYS
    days = [trades_for_day(d, per_day, rng) for d in range(DAYS)]
    print(f"varve {varve.__version__}: {per_day * DAYS:,} trades over {DAYS} days in {root}")

    with varve.Lake(str(root)) as lake:
        t0 = time.perf_counter()
        trades = lake.create_table("trades", days[0].schema, time_column="ts", series_key=["symbol"])
        for d, tbl in enumerate(days):
            trades.append(tbl, batch_id=f"day-{d}")
        secs = time.perf_counter() - t0
        info = trades.info()
        print(f"\n1. Append, one commit per day: {info['rows']:,} rows in {secs:.2f} s "
              f"({info['rows'] / secs:,.0f} rows/s), {info['data_files']} files, {info['bytes'] / 2**20:.1f} MiB")

        print("\n2. Full scan vs one-day time range (count and VWAP)")
        full = "SELECT count(*) AS n, sum(price * size) / sum(size) AS vwap FROM trades"
        day = full + " WHERE ts >= '2025-01-05T00:00:00Z' AND ts < '2025-01-06T00:00:00Z'"
        _, a = timed("all 10 days", lambda: lake.sql(full))
        _, b = timed("one day", lambda: lake.sql(day))
        print(f"  -> {a / b:.1f}x faster; " + lake.sql("EXPLAIN " + day).to_arrow().column(1)[-1].as_py())

        print("\n3. Two columns vs all columns (full rows to Arrow)")
        _, a = timed("SELECT * (6 columns)", lambda: lake.sql("SELECT * FROM trades"), repeat=2)
        _, b = timed("SELECT ts, price", lambda: lake.sql("SELECT ts, price FROM trades"), repeat=2)
        print(f"  -> {a / b:.1f}x faster")

        print("\n4. The same rows in 1 commit vs 300 small commits")
        many = lake.create_table("trades_small", days[0].schema, time_column="ts", series_key=["symbol"])
        allrows = pa.concat_tables(days)
        chunk = (allrows.num_rows + 299) // 300
        t0 = time.perf_counter()
        for i in range(300):
            many.append(allrows.slice(i * chunk, chunk))
        print(f"  300 appends took {time.perf_counter() - t0:.1f} s; {many.info()['data_files']} files")
        lake.create_table("trades_one", allrows, time_column="ts", series_key=["symbol"])
        agg = "SELECT symbol, count(*), avg(price) FROM {} GROUP BY symbol"
        _, a = timed("aggregate over 1 commit", lambda: lake.sql(agg.format("trades_one")))
        _, b = timed("aggregate over 300 commits", lambda: lake.sql(agg.format("trades_small")))
        print(f"  -> 300 commits cost {b / a:.1f}x (compaction will merge small files)")

        print("\n5. Cold (new process) vs warm aggregate")
        out = subprocess.run([sys.executable, "-c", COLD, str(root)], capture_output=True, text=True, check=True)
        cold = float(out.stdout.split()[0])
        print(f"  {'cold: new process, open lake, VWAP by symbol':<46} {cold * 1000:9.1f} ms")
        _, warm = timed("warm: same query again", lambda: lake.sql(
            "SELECT symbol, sum(price * size) / sum(size) AS vwap FROM trades GROUP BY symbol"))

        print("\n6. Guards")
        try:
            lake.sql("SELECT count(*) FROM trades a JOIN trades b ON a.symbol = b.symbol", timeout=0.5)
        except varve.TimeoutError as e:
            print(f"  timeout=0.5      -> varve.TimeoutError: {e}")
        cap = info["rows"] // 10
        try:
            lake.sql("SELECT * FROM trades", max_rows=cap)
        except varve.LimitExceededError as e:
            print(f"  max_rows={cap:<7} -> varve.LimitExceededError: {e}")
        try:
            lake.sql("SELECT symbol, array_agg(price) FROM trades GROUP BY symbol", memory_limit=8 * 2**20)
        except varve.LimitExceededError as e:
            print(f"  memory_limit=8MiB -> varve.LimitExceededError: {str(e)[:110]}...")
        r = lake.sql("SELECT * FROM trades ORDER BY price DESC LIMIT 5", memory_limit=64 * 2**20)
        print(f"  memory_limit=64MiB, top-5 by price over all rows -> ok, {r.num_rows} rows")


if __name__ == "__main__":
    main()
