"""Kafka helper for Varve's ingestion tests and benchmarks, with confluent-kafka (librdkafka).

    kafka_tool.py --brokers H:P create-topic NAME --partitions N
    kafka_tool.py --brokers H:P produce --topic T --partitions N --count C [--rate R]
                  [--format json|line-protocol|csv] [--bad-every K] [--first I] [--fields F]
                  [--linger-ms MS]

`produce` sends records i = first .. first+count-1, record i to partition i % N, so that within a
partition the records are in order of i. A record's payload carries `seq` = i (and `p`, its
partition), a time (the producer's clock, ms) and F float fields. With --bad-every K every K-th
record is bad in one of several ways (not JSON, no time, a text value for a float column, a time
that is not a time), and its i is listed in the summary printed on stdout as JSON:
{"produced": C, "bad": [i, ...], "seconds": S}.
"""

import argparse
import json
import sys
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(args):
    admin = AdminClient({"bootstrap.servers": args.brokers})
    futures = admin.create_topics([NewTopic(args.name, num_partitions=args.partitions, replication_factor=1)])
    for f in futures.values():
        f.result(30)
    # The broker may answer metadata for the new topic a moment later.
    deadline = time.time() + 30
    while time.time() < deadline:
        md = admin.list_topics(timeout=10)
        t = md.topics.get(args.name)
        if t is not None and len(t.partitions) == args.partitions:
            break
        time.sleep(0.1)
    print(json.dumps({"topic": args.name, "partitions": args.partitions}))


def payload(fmt, i, p, fields, bad):
    now = int(time.time() * 1000)
    values = {f"f{k}": (i * 0.5 + k) for k in range(fields)}
    if bad is not None:
        if bad == 0:
            return b"{not json " + str(i).encode()
        if bad == 1:
            if fmt == "json":
                return json.dumps({"seq": i, "p": p, **values}).encode()
            if fmt == "csv":
                return f",d{i % 20},{i},{p}".encode()
            return f"m,device=d{i % 20} seq={i}i,p={p}i,f0=\"text\" {now}".encode()
        if bad == 2:
            if fmt == "json":
                return json.dumps({"time": now, "device": f"d{i % 20}", "seq": i, "p": p, "f0": "x"}).encode()
            if fmt == "csv":
                return f"{now},d{i % 20},x,{p}".encode()
            return f"m,device=d{i % 20} seq=\"x\",p={p}i {now}".encode()
        if fmt == "json":
            return json.dumps({"time": "not a time", "seq": i, "p": p}).encode()
        if fmt == "csv":
            return f"yesterday,d{i % 20},{i},{p}".encode()
        return f"m,device=d{i % 20} seq={i}i,p={p}i notatime".encode()
    if fmt == "json":
        return json.dumps({"time": now, "device": f"d{i % 20}", "seq": i, "p": p, **values}).encode()
    if fmt == "csv":
        return f"{now},d{i % 20},{i},{p}".encode()
    fs = ",".join([f"seq={i}i", f"p={p}i"] + [f"{k}={v}" for k, v in values.items()])
    return f"m,device=d{i % 20} {fs} {now}".encode()


def produce(args):
    prod = Producer({
        "bootstrap.servers": args.brokers,
        "linger.ms": args.linger_ms,
        "acks": "all",
        "enable.idempotence": False,
        "queue.buffering.max.messages": 1_000_000,
    })
    errors = []

    def report(err, msg):
        if err is not None:
            errors.append(str(err))

    bad = []
    start = time.time()
    kinds = 0
    for n in range(args.count):
        i = args.first + n
        p = i % args.partitions
        b = None
        if args.bad_every and i % args.bad_every == args.bad_every - 1:
            b = kinds % 4
            kinds += 1
            bad.append(i)
        while True:
            try:
                prod.produce(args.topic, payload(args.format, i, p, args.fields, b), partition=p, on_delivery=report)
                break
            except BufferError:
                prod.poll(0.05)
        if args.rate:
            ahead = start + (n + 1) / args.rate - time.time()
            if ahead > 0:
                prod.poll(0)
                time.sleep(ahead)
        if n % 1000 == 0:
            prod.poll(0)
    left = prod.flush(60)
    if left or errors:
        sys.exit(f"produce: {left} records not delivered, errors: {errors[:5]}")
    print(json.dumps({"produced": args.count, "bad": bad, "seconds": time.time() - start}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", required=True)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("create-topic")
    c.add_argument("name")
    c.add_argument("--partitions", type=int, default=1)
    p = sub.add_parser("produce")
    p.add_argument("--topic", required=True)
    p.add_argument("--partitions", type=int, default=1)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--rate", type=float, default=0)
    p.add_argument("--format", default="json", choices=["json", "line-protocol", "csv"])
    p.add_argument("--bad-every", type=int, default=0)
    p.add_argument("--fields", type=int, default=1)
    # A broker that writes each request to S3 wants fewer, larger requests.
    p.add_argument("--linger-ms", type=int, default=5)
    args = ap.parse_args()
    {"create-topic": create_topic, "produce": produce}[args.cmd](args)


if __name__ == "__main__":
    main()
