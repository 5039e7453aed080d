"""Load on `varve serve`: HTTP and PostgreSQL clients (threads) running a basic query suite for
SECONDS, two line-protocol writers, and a monitor of /metrics. Prints one JSON object: requests,
errors (with the first few messages), wrong answers, p50/p99 latency per protocol, the most
queries seen in flight, rows written. The Rust test (load.rs) checks it.

Environment: HTTP (base URL), PG_PORT, CLIENTS (per protocol), SECONDS, EXPECTED (JSON: the
answers of the suite on the lake before the run).
"""

import json
import os
import threading
import time
import urllib.request

import psycopg

HTTP = os.environ["HTTP"]
PG_PORT = os.environ["PG_PORT"]
CLIENTS = int(os.environ["CLIENTS"])
SECONDS = float(os.environ["SECONDS"])
EXPECTED = json.loads(os.environ["EXPECTED"])
SUITE = [
    "SELECT count(*) AS n, sum(v) AS s FROM m.cpu",
    "SELECT host, max(v) AS top FROM m.cpu GROUP BY host ORDER BY host",
    "SELECT ts, v FROM m.cpu WHERE host = 'h1' ORDER BY ts DESC LIMIT 10",
    "SELECT time_bucket(INTERVAL '1 hour', ts) AS b, avg(v) AS a FROM m.cpu GROUP BY b ORDER BY b",
    "SELECT host, last(v, ts) AS v FROM m.cpu GROUP BY host ORDER BY host",
]
lock = threading.Lock()
stats = {"http": [], "pg": []}
errors = []
wrong = []
written = [0]
stop_at = time.time() + SECONDS


def norm(rows):
    """Answers as comparable lists: floats rounded, times as text."""
    out = []
    for r in rows:
        out.append([round(x, 6) if isinstance(x, float) else (str(x) if x is not None and not isinstance(x, (int, str)) else x) for x in r])
    return out


def http_client(i):
    n = i
    while time.time() < stop_at:
        sql = SUITE[n % len(SUITE)]
        n += 1
        t = time.time()
        try:
            req = urllib.request.Request(HTTP + "/v1/sql?format=json", data=sql.encode(), method="POST")
            with urllib.request.urlopen(req, timeout=60) as r:
                body = json.loads(r.read())
            took = time.time() - t
            if sql == SUITE[0] and [body[0]["n"]] != [EXPECTED["n"]]:
                with lock:
                    wrong.append(("http", sql, body))
            with lock:
                stats["http"].append(took)
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(f"http: {sql}: {e}")


def pg_client(i):
    n = i
    try:
        conn = psycopg.connect(f"host=127.0.0.1 port={PG_PORT} dbname=varve user=load password=x", autocommit=True)
    except Exception as e:  # noqa: BLE001
        with lock:
            errors.append(f"pg connect: {e}")
        return
    with conn:
        cur = conn.cursor()
        while time.time() < stop_at:
            sql = SUITE[n % len(SUITE)]
            n += 1
            t = time.time()
            try:
                cur.execute(sql)
                rows = cur.fetchall()
                took = time.time() - t
                if sql == SUITE[0] and rows[0][0] != EXPECTED["n"]:
                    with lock:
                        wrong.append(("pg", sql, norm(rows)))
                with lock:
                    stats["pg"].append(took)
            except Exception as e:  # noqa: BLE001
                with lock:
                    errors.append(f"pg: {sql}: {e}")


def writer(i):
    k = 0
    while time.time() < stop_at:
        lines = "\n".join(
            f"load,writer=w{i} v={k * 1000 + j}i {(1_700_000_000 + k * 1000 + j) * 1_000_000_000}" for j in range(500)
        )
        k += 1
        try:
            req = urllib.request.Request(HTTP + "/api/v2/write?bucket=w", data=lines.encode(), method="POST")
            with urllib.request.urlopen(req, timeout=60) as r:
                r.read()
            with lock:
                written[0] += 500
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(f"write: {e}")
        time.sleep(0.2)


max_in_flight = [0]


def monitor():
    while time.time() < stop_at:
        try:
            with urllib.request.urlopen(HTTP + "/metrics", timeout=10) as r:
                for line in r.read().decode().splitlines():
                    if line.startswith("varve_queries_in_flight "):
                        max_in_flight[0] = max(max_in_flight[0], int(float(line.split()[1])))
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(f"metrics: {e}")
        time.sleep(0.2)


threads = [threading.Thread(target=http_client, args=(i,)) for i in range(CLIENTS)]
threads += [threading.Thread(target=pg_client, args=(i,)) for i in range(CLIENTS)]
threads += [threading.Thread(target=writer, args=(i,)) for i in range(2)]
threads.append(threading.Thread(target=monitor))
for t in threads:
    t.start()
for t in threads:
    t.join()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000 if xs else None


print(
    json.dumps(
        {
            "requests": {k: len(v) for k, v in stats.items()},
            "p50_ms": {k: pct(v, 0.50) for k, v in stats.items()},
            "p99_ms": {k: pct(v, 0.99) for k, v in stats.items()},
            "errors": len(errors),
            "first_errors": errors[:5],
            "wrong": wrong[:5],
            "max_in_flight": max_in_flight[0],
            "written": written[0],
        }
    )
)
