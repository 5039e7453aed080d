#!/usr/bin/env python3
r"""Run one SQL query in a fresh DuckDB and write its result as Parquet.

Used by Varve's Rust tests as an independent reader (DuckDB's CSV reader and its
Iceberg reader), run with the venv that scripts/setup-python makes
($VARVE_PYTHON).

    python duckdb_sql.py --sql "<query>" --out result.parquet \
        [--s3-endpoint 127.0.0.1:PORT --s3-key K --s3-secret S --s3-region us-east-1]

On success: exit 0, the result in --out, nothing on stdout.
On error:   exit 1, one line "duckdb_sql: <ErrorType>: <message>" on stderr.

Notes on iceberg_scan with DuckDB 1.5.5 (duckdb-extension-iceberg 1.5.5), checked
on this project's machine:

* iceberg_scan('<table dir>') (a local path, file:// URL, or
  s3://bucket/prefix/ns/table) reads '<table dir>/metadata/version-hint.text' and
  uses its content X VERBATIM to try 'metadata/vX.metadata.json', then
  'metadata/X.metadata.json' (formats 'v%s%s.metadata.json,%s%s.metadata.json';
  the middle %s is a compression suffix, empty by default).
  So the hint must be the bare version number N of vN.metadata.json: "3".
    - NO trailing newline or spaces: "3\n", "3\r\n" and " 3" all FAIL with
      "Iceberg metadata file not found for table version '3\n' ...".
    - "v3" also works (tries vv3..., then v3.metadata.json).
    - The full file name "v3.metadata.json" FAILS (it looks for
      v3.metadata.json.metadata.json).
    - For PyIceberg-style names (00002-<uuid>.metadata.json) the hint must be the
      name without ".metadata.json"; the number "2" does not find them.
  A stale hint silently reads the older version (no error).
* A missing hint is an error ("No version was provided and no version-hint could
  be found, globbing ... is disabled ... 'SET unsafe_enable_version_guessing =
  true;'"). This script never enables guessing: the hint is part of what Varve
  must write.
* iceberg_scan('<...>/metadata/vN.metadata.json') reads that metadata file
  directly and needs no hint; iceberg_scan('<table dir>', version='2') picks
  v2.metadata.json without reading the hint.
* DuckDB caches file contents per connection; this script opens a fresh
  connection (and a fresh extension directory) on every run.
* S3: the httpfs extension is loaded only with --s3-endpoint (host:port; an
  http:// prefix is stripped). Without it an s3:// path fails with "requires the
  extension httpfs to be loaded" (autoinstall/autoload are off).
"""

from __future__ import annotations

import argparse
import glob
import os
import site
import sys
import tempfile

EXTENSIONS_ALWAYS = ("avro", "iceberg")
EXTENSION_S3 = "httpfs"


def fail(exc: BaseException) -> "None":
    msg = " ".join(str(exc).split())
    print(f"duckdb_sql: {type(exc).__name__}: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def site_dirs() -> list[str]:
    dirs: list[str] = []
    try:
        dirs.extend(site.getsitepackages())
    except AttributeError:  # very old virtualenv
        pass
    try:
        dirs.append(site.getusersitepackages())
    except AttributeError:
        pass
    dirs.extend(p for p in sys.path if p.endswith("site-packages"))
    seen: set[str] = set()
    return [d for d in dirs if not (d in seen or seen.add(d))]


def extension_file(name: str) -> str:
    """The .duckdb_extension file shipped in the duckdb-extension-<name> wheel."""
    for d in site_dirs():
        hits = sorted(glob.glob(f"{d}/duckdb_extension_{name}/extensions/*/{name}.duckdb_extension"))
        if hits:
            return hits[-1]
    raise RuntimeError(
        f"{name}.duckdb_extension not found in site-packages "
        f"(pip install duckdb-extension-{name}; see tests/py/requirements.txt)"
    )


def sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sql", required=True, help="the query to run")
    p.add_argument("--out", required=True, help="Parquet file to write the result to")
    p.add_argument("--s3-endpoint", help="host:port of an S3-compatible server (plain HTTP, path style)")
    p.add_argument("--s3-key", default="test", help="access key id (default: test)")
    p.add_argument("--s3-secret", default="test", help="secret access key (default: test)")
    p.add_argument("--s3-region", default="us-east-1", help="region (default: us-east-1)")
    return p.parse_args(argv)


def run(args: argparse.Namespace) -> None:
    import duckdb
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory(prefix="varve-duckdb-ext-") as ext_dir:
        con = duckdb.connect(
            database=":memory:",
            config={
                "autoinstall_known_extensions": "false",
                "autoload_known_extensions": "false",
                "extension_directory": ext_dir,
            },
        )
        try:
            names = list(EXTENSIONS_ALWAYS)
            if args.s3_endpoint:
                names.append(EXTENSION_S3)
            for name in names:
                con.execute(f"INSTALL {sql_str(extension_file(name))}")
            for name in names:
                con.execute(f"LOAD {name}")

            if args.s3_endpoint:
                endpoint = args.s3_endpoint
                for scheme in ("http://", "https://"):
                    if endpoint.startswith(scheme):
                        endpoint = endpoint[len(scheme):]
                endpoint = endpoint.rstrip("/")
                con.execute(
                    "CREATE SECRET varve_s3 ("
                    " TYPE s3,"
                    f" KEY_ID {sql_str(args.s3_key)},"
                    f" SECRET {sql_str(args.s3_secret)},"
                    f" REGION {sql_str(args.s3_region)},"
                    f" ENDPOINT {sql_str(endpoint)},"
                    " URL_STYLE 'path',"
                    " USE_SSL false"
                    ")"
                )

            # Times in UTC, as Varve's sessions have them, whatever the machine's zone.
            con.execute("SET TimeZone = 'UTC'")
            rel = con.sql(args.sql)
            if rel is None:
                raise RuntimeError("the statement returned no result set (use a SELECT)")
            table = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.fetch_arrow_table()
        finally:
            con.close()

    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    tmp = args.out + ".tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, args.out)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        run(args)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - one line on stderr, exit 1
        fail(exc)


if __name__ == "__main__":
    main()
