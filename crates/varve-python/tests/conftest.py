"""Fixtures: lakes on local disk, in memory, and in a bucket on a real S3-compatible server (moto)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "examples" / "data"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3_server():
    """A moto S3 server on 127.0.0.1 for the session; yields its storage options."""
    # moto with atomic conditional writes (see the launcher's docstring), run by this interpreter.
    launcher = Path(__file__).resolve().parents[2] / "varve-testkit" / "moto_server.py"
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(launcher), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.time() > deadline:
                proc.kill()
                raise RuntimeError("moto_server did not start")
            time.sleep(0.1)
    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                 region_name="us-east-1").create_bucket(Bucket="lake")
    yield {"endpoint": endpoint, "access_key_id": "testing", "secret_access_key": "testing",
           "region": "us-east-1", "allow_http": "true"}
    proc.kill()
    proc.wait()


@pytest.fixture(params=["local", "memory", "s3"])
def lake_args(request, tmp_path):
    """(url, storage_options) for each backend."""
    if request.param == "local":
        (tmp_path / "lake").mkdir()
        return str(tmp_path / "lake"), None
    if request.param == "memory":
        return "memory://", None
    opts = request.getfixturevalue("s3_server")
    return f"s3://lake/{tmp_path.name}", opts


@pytest.fixture
def local_lake(tmp_path):
    import varve

    with varve.Lake(str(tmp_path / "lake"), create=True) as lake:
        yield lake
