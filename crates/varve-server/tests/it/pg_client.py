"""psycopg 3 against `varve serve --pg`: what a Python service and Grafana's PostgreSQL data source
send. Prints one JSON object with what it saw; the Rust test (pg.rs) checks it against the lake.

Environment: PORT, TOKEN (a write token), READ_TOKEN (a read token scoped to namespace `m`).
"""

import datetime
import json
import os
import threading
import time

import psycopg

PORT = os.environ["PORT"]
DSN = f"host=127.0.0.1 port={PORT} dbname=varve user=grafana"
out = {}


def sqlstate(fn):
    try:
        fn()
    except psycopg.Error as e:
        return e.sqlstate
    return None


with psycopg.connect(DSN, password=os.environ["TOKEN"]) as conn:
    out["server_version"] = conn.info.server_version
    out["parameters"] = {
        p: conn.info.parameter_status(p)
        for p in ["server_version", "server_encoding", "client_encoding", "DateStyle"]
    }
    cur = conn.cursor()

    # Parameters (extended protocol, Describe before Bind).
    cur.execute(
        "SELECT count(*), sum(v) FROM m.cpu WHERE host = %s AND ts < %s",
        ("h1", datetime.datetime(1970, 1, 1, 5, tzinfo=datetime.timezone.utc)),
    )
    out["h1_before_5h"] = list(cur.fetchone())

    # Server-side prepared statements: psycopg prepares after 5 executions; prepare=True at once.
    counts = []
    for i in range(7):
        cur.execute("SELECT count(*) FROM m.cpu WHERE v > %s", (float(i * 100),), prepare=True)
        counts.append(cur.fetchone()[0])
    out["counts_over"] = counts

    # Binary and text results of the common types.
    row_sql = (
        "SELECT true AS b, 2::smallint AS i2, 3::int AS i4, 4::bigint AS i8, 1.5::real AS f4, "
        "2.25::double precision AS f8, 'x'::text AS t, DATE '2024-02-29' AS d, "
        "TIMESTAMPTZ '2024-02-29 12:00:00Z' AS tz, 1.25::decimal(10,2) AS n"
    )
    for binary in (False, True):
        cur.execute(row_sql, binary=binary)
        r = cur.fetchone()
        out[f"types_{'binary' if binary else 'text'}"] = [
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7].isoformat(), r[8].isoformat(), str(r[9]),
        ]
    cur.execute("SELECT X'00ff'::bytea", binary=True)
    out["bytea"] = cur.fetchone()[0].hex()

    # Writes with parameters: one row, then executemany.
    t0 = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    cur.execute("INSERT INTO m.cpu VALUES (%s, %s, %s)", (t0, "py", 1.0))
    out["insert_rowcount"] = cur.rowcount
    cur.executemany(
        "INSERT INTO m.cpu VALUES (%s, %s, %s)",
        [(t0 + datetime.timedelta(minutes=i), "py", float(i)) for i in range(1, 4)],
    )
    conn.commit()
    cur.execute("SELECT count(*), sum(v) FROM m.cpu WHERE host = 'py'")
    out["py_rows"] = list(cur.fetchone())

    # Errors carry SQLSTATE codes.
    out["bad_column"] = sqlstate(lambda: cur.execute("SELECT nope FROM m.cpu"))
    conn.rollback()
    out["missing_table"] = sqlstate(lambda: cur.execute("SELECT * FROM m.nope"))
    conn.rollback()

    # Refused, never changed or run: a number for a time, a file written by path, runtime
    # settings, a COPY column the table lacks, a COPY before another statement.
    out["int_for_time"] = sqlstate(lambda: cur.execute("SELECT count(*) FROM m.cpu WHERE ts >= %s", (1700000000,)))
    conn.rollback()
    out["float_for_text"] = sqlstate(lambda: cur.execute("SELECT count(*) FROM m.cpu WHERE host = %s", (2.5,)))
    conn.rollback()
    out["copy_to_file"] = sqlstate(lambda: cur.execute("EXPLAIN ANALYZE COPY (SELECT 1) TO '/tmp/varve-pg-copy-to.csv'"))
    conn.rollback()
    out["copy_to_file_exists"] = os.path.exists("/tmp/varve-pg-copy-to.csv")
    out["set_runtime"] = sqlstate(lambda: cur.execute("SET datafusion.runtime.memory_limit = '10G'"))
    conn.rollback()

    def copy_typo():
        with cur.copy("COPY m.cpu (ts, hots, v) FROM STDIN WITH (FORMAT csv)") as cp:
            cp.write("2001-01-01T00:00:00Z,x,1\n")

    out["copy_typo"] = sqlstate(copy_typo)
    conn.rollback()

    def copy_ok():
        with cur.copy("COPY m.cpu FROM STDIN WITH (FORMAT csv)") as cp:
            cp.write('2001-01-01T00:00:00Z,"psy,copy",1.25\n2001-01-01T00:01:00Z,psycopy,\n')

    copy_ok()
    conn.commit()
    cur.execute("SELECT count(*), sum(v) FROM m.cpu WHERE host IN ('psy,copy', 'psycopy')")
    out["copied"] = list(cur.fetchone())

    # Run-time parameters.
    cur.execute("SET application_name = 'varve-test'")
    cur.execute("SHOW application_name")
    out["application_name"] = cur.fetchone()[0]
    cur.execute("SHOW server_version")
    out["show_server_version"] = cur.fetchone()[0]
    conn.commit()

    # What Grafana's PostgreSQL data source sends (postgresMetaQuery.ts and its macros).
    cur.execute("SELECT current_setting('server_version_num')::int/100 as version")
    out["grafana_version"] = cur.fetchone()[0]
    cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'")
    out["grafana_timescaledb"] = cur.fetchall()
    cur.execute(
        """SELECT
    CASE WHEN
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      THEN quote_ident(table_name)
      ELSE quote_ident(table_schema) || '.' || quote_ident(table_name)
    END AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) NOT IN ('information_schema',
                             'pg_catalog',
                             '_timescaledb_cache',
                             '_timescaledb_catalog',
                             '_timescaledb_internal',
                             '_timescaledb_config',
                             'timescaledb_information',
                             'timescaledb_experimental')
    ORDER BY 1"""
    )
    out["grafana_tables"] = [r[0] for r in cur.fetchall()]
    cur.execute(
        "SELECT quote_ident(column_name) AS \"column\", data_type AS \"type\" FROM information_schema.columns "
        "WHERE table_schema = 'm' AND table_name = 'cpu' ORDER BY ordinal_position"
    )
    out["grafana_columns"] = [r[0] for r in cur.fetchall()]
    # $__timeGroupAlias(ts, '1h'), $__timeFilter(ts) over the first 5 hours.
    cur.execute(
        "SELECT floor(extract(epoch from ts)/3600)*3600 AS \"time\", avg(v) AS \"v\" FROM m.cpu "
        "WHERE ts BETWEEN '1970-01-01T00:00:00Z' AND '1970-01-01T04:59:59Z' GROUP BY 1 ORDER BY 1"
    )
    out["grafana_series"] = [[float(t), v] for t, v in cur.fetchall()]
    conn.commit()

    # A cancel request stops a running query.
    def cancel_soon():
        time.sleep(1.0)
        conn.cancel_safe()

    threading.Thread(target=cancel_soon).start()
    started = time.time()
    out["cancelled"] = sqlstate(
        lambda: cur.execute("SELECT count(*) FROM range(100000000000) a WHERE a.value % 7 = 3")
    )
    out["cancel_seconds"] = time.time() - started
    conn.rollback()
    cur.execute("SELECT 1")
    out["after_cancel"] = cur.fetchone()[0]

# A read token scoped to namespace m: reads m, cannot write, cannot read elsewhere.
with psycopg.connect(DSN, password=os.environ["READ_TOKEN"], autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute("SELECT count(*) FROM m.cpu")
    out["read_token_count"] = cur.fetchone()[0]
    out["read_token_insert"] = sqlstate(
        lambda: cur.execute("INSERT INTO m.cpu VALUES (TIMESTAMPTZ '2001-01-01 00:00:00Z', 'r', 1.0)")
    )
    out["read_token_other"] = sqlstate(lambda: cur.execute("SELECT * FROM other.t"))

try:
    psycopg.connect(DSN, password="varve_wrong").close()
    out["wrong_password"] = "connected"
except psycopg.OperationalError as e:
    out["wrong_password"] = str(e)
print(json.dumps(out, default=str))
