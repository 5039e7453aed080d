"""DuckDB as the benchmark's reference engine (run by varve-bench; not a user tool).

Usage: python duckdb_runner.py DATASET_DIR NAMESPACE

Reads DATASET_DIR/dataset.json and makes each generated table a view NAMESPACE.<table> over its
Parquet files. Then reads one JSON command per line on stdin:

    {"sql": "...", "runs": N, "out": "/path/result.parquet"}

runs the query once in a fresh connection (first run) and N times more in that connection (warm
runs; best = the fastest of those), writes the last result to `out` as Parquet and answers one JSON line on stdout:

    {"first_ms": ..., "best_ms": ..., "rows": ..., "version": "1.5.5"}   or   {"error": "..."}

Times are wall-clock milliseconds for executing the query and fetching the whole result as Arrow.
"""
import json
import os
import sys
import time

import duckdb
import pyarrow.parquet as pq


def connect(dataset_dir, namespace, info):
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f'CREATE SCHEMA IF NOT EXISTS "{namespace}"')
    for t in info["tables"]:
        files = [os.path.join(dataset_dir, t["name"], f) for f in t["files"]]
        listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
        con.execute(f'CREATE VIEW "{namespace}"."{t["name"]}" AS SELECT * FROM read_parquet([{listing}])')
    return con


def run(con, sql):
    t = time.perf_counter()
    result = con.execute(sql).to_arrow_table()
    return (time.perf_counter() - t) * 1000.0, result


def main():
    dataset_dir, namespace = sys.argv[1], sys.argv[2]
    with open(os.path.join(dataset_dir, "dataset.json")) as f:
        info = json.load(f)
    print(json.dumps({"ready": True, "version": duckdb.__version__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        try:
            con = connect(dataset_dir, namespace, info)
            first_ms, result = run(con, cmd["sql"])
            warm = []
            for _ in range(int(cmd.get("runs", 0))):
                ms, result = run(con, cmd["sql"])
                warm.append(ms)
            best_ms = min(warm) if warm else first_ms
            con.close()
            pq.write_table(result, cmd["out"])
            answer = {"first_ms": first_ms, "best_ms": best_ms, "rows": result.num_rows, "version": duckdb.__version__}
        except Exception as e:  # the runner reports it as the query's failure
            answer = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
