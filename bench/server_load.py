"""Drives `varve serve` for scripts/bench-server: N clients (threads) over HTTP or PostgreSQL
(psycopg) run a suite's queries round-robin for SECONDS, or N writers post InfluxDB line protocol
in batches of BATCH lines. Prints one JSON object: queries (or rows) per second, p50/p99 latency
in ms, errors.

  server_load.py query http|pg CLIENTS SECONDS HTTP_URL PG_PORT QUERIES_FILE
  server_load.py write WRITERS SECONDS HTTP_URL BATCH
"""

import json
import sys
import threading
import time
import urllib.request

mode = sys.argv[1]
lock = threading.Lock()
lat = []
errors = []
done = [0]


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1000, 2) if xs else None


if mode == "query":
    proto, clients, seconds, http, pg_port, qfile = sys.argv[2:8]
    clients, seconds = int(clients), float(seconds)
    # `varve-bench queries` output: blocks of `-- name: what` lines and one statement, blank-line separated.
    queries = []
    for block in open(qfile).read().split("\n\n"):
        sql = " ".join(l for l in block.splitlines() if l.strip() and not l.startswith("--")).strip().rstrip(";")
        if sql:
            queries.append(sql)
    stop_at = time.time() + seconds

    def http_client(i):
        n = i
        while time.time() < stop_at:
            q = queries[n % len(queries)]
            n += 1
            t = time.time()
            try:
                req = urllib.request.Request(http + "/v1/sql?format=arrow", data=q.encode(), method="POST")
                with urllib.request.urlopen(req, timeout=300) as r:
                    r.read()
                with lock:
                    lat.append(time.time() - t)
            except Exception as e:  # noqa: BLE001
                with lock:
                    errors.append(str(e))

    def pg_client(i):
        import psycopg

        n = i
        with psycopg.connect(f"host=127.0.0.1 port={pg_port} dbname=varve user=bench password=x", autocommit=True) as c:
            cur = c.cursor()
            while time.time() < stop_at:
                q = queries[n % len(queries)]
                n += 1
                t = time.time()
                try:
                    cur.execute(q)
                    cur.fetchall()
                    with lock:
                        lat.append(time.time() - t)
                except Exception as e:  # noqa: BLE001
                    with lock:
                        errors.append(str(e))

    target = http_client if proto == "http" else pg_client
    started = time.time()
    threads = [threading.Thread(target=target, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.time() - started
    print(json.dumps({"qps": round(len(lat) / took, 2), "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99),
                      "queries": len(lat), "errors": len(errors), "first_error": errors[:1]}))
else:
    writers, seconds, http, batch = sys.argv[2:6]
    writers, seconds, batch = int(writers), float(seconds), int(batch)
    stop_at = time.time() + seconds

    def writer(i):
        k = 0
        while time.time() < stop_at:
            base = (1_700_000_000 + i * 10_000_000 + k * batch) * 1_000_000_000
            body = "\n".join(
                f"bench,host=h{j % 100},writer=w{i} usage={j * 0.5},load={j}i {base + j * 1_000_000_000}"
                for j in range(batch)
            ).encode()
            k += 1
            t = time.time()
            try:
                req = urllib.request.Request(http + "/api/v2/write?bucket=w", data=body, method="POST")
                with urllib.request.urlopen(req, timeout=300) as r:
                    r.read()
                with lock:
                    lat.append(time.time() - t)
                    done[0] += batch
            except Exception as e:  # noqa: BLE001
                with lock:
                    errors.append(str(e))

    started = time.time()
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.time() - started
    print(json.dumps({"rows_per_s": round(done[0] / took), "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99),
                      "batches": len(lat), "errors": len(errors), "first_error": errors[:1]}))
