#!/usr/bin/env python3
"""Read an Iceberg table with PyIceberg from one metadata file; write it as Parquet.

Used by Varve's Rust tests as an independent Iceberg reader, run with the venv
that scripts/setup-python makes ($VARVE_PYTHON).

    python pyiceberg_scan.py --metadata <path or s3://.../metadata/vN.metadata.json> \
        --out result.parquet [--snapshot-id N] \
        [--s3-endpoint http://127.0.0.1:PORT --s3-key K --s3-secret S --s3-region us-east-1]

On success: exit 0, the rows in --out, and one JSON line on stdout:
    {"rows": N, "snapshot_id": <scanned snapshot id or null>, "schema": ["col", ...]}
On error:   exit 1, one line "pyiceberg_scan: <ErrorType>: <message>" on stderr.

Notes (PyIceberg 0.12 with its PyArrow FileIO, checked against moto):
* S3 goes through pyarrow.fs.S3FileSystem. With s3.endpoint set it already uses
  path-style requests (pyarrow's default force_virtual_addressing=False), so no
  extra property is needed; this script still sets s3.force-virtual-addressing=false
  to make that explicit.
* s3.region must be given: without it PyIceberg asks the real AWS for the bucket's
  region (pyarrow.fs.resolve_s3_region), which cannot work offline. The default
  here is us-east-1.
* The endpoint needs its scheme (http://127.0.0.1:PORT); a bare host:port is
  given http:// here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def fail(exc: BaseException) -> "None":
    msg = " ".join(str(exc).split())
    print(f"pyiceberg_scan: {type(exc).__name__}: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--metadata", required=True, help="path or s3:// URL of a vN.metadata.json")
    p.add_argument("--out", required=True, help="Parquet file to write the rows to")
    p.add_argument("--snapshot-id", type=int, help="scan this snapshot instead of the current one")
    p.add_argument("--s3-endpoint", help="http://host:port of an S3-compatible server")
    p.add_argument("--s3-key", default="test", help="access key id (default: test)")
    p.add_argument("--s3-secret", default="test", help="secret access key (default: test)")
    p.add_argument("--s3-region", default="us-east-1", help="region (default: us-east-1)")
    return p.parse_args(argv)


def properties(args: argparse.Namespace) -> dict[str, str]:
    props = {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
    if args.s3_endpoint:
        endpoint = args.s3_endpoint.rstrip("/")
        if "://" not in endpoint:
            endpoint = "http://" + endpoint
        props.update(
            {
                "s3.endpoint": endpoint,
                "s3.access-key-id": args.s3_key,
                "s3.secret-access-key": args.s3_secret,
                "s3.region": args.s3_region,
                "s3.force-virtual-addressing": "false",
            }
        )
    else:
        # Never let a stray s3:// path resolve the region against the real AWS.
        props["s3.region"] = args.s3_region
    return props


def run(args: argparse.Namespace) -> dict:
    import pyarrow.parquet as pq
    from pyiceberg.table import StaticTable

    location = args.metadata
    if "://" not in location:
        location = os.path.abspath(location)

    table = StaticTable.from_metadata(location, properties=properties(args))

    if args.snapshot_id is not None:
        if table.snapshot_by_id(args.snapshot_id) is None:
            known = [s.snapshot_id for s in table.snapshots()]
            raise ValueError(f"snapshot {args.snapshot_id} not in {location} (snapshots: {known})")
        snapshot_id = args.snapshot_id
        scan = table.scan(snapshot_id=snapshot_id)
    else:
        current = table.current_snapshot()
        snapshot_id = current.snapshot_id if current is not None else None
        scan = table.scan()

    arrow = scan.to_arrow()

    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    tmp = args.out + ".tmp"
    pq.write_table(arrow, tmp)
    os.replace(tmp, args.out)

    return {"rows": arrow.num_rows, "snapshot_id": snapshot_id, "schema": list(arrow.schema.names)}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        summary = run(args)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - one line on stderr, exit 1
        fail(exc)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
