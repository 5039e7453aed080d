"""moto's S3 server with atomic conditional writes, for Varve's tests.

Usage: python moto_server.py -H 127.0.0.1 -p PORT   (the arguments of moto_server)

Varve commits a table version with one conditional PUT (`If-None-Match: *`), and its commit
protocol is only as safe as that write is atomic. AWS S3, MinIO and R2 make it atomic; moto 5.2
does not: `put_object` checks that the key is absent and stores the object in two steps, with the
checksum and bucket lookups in between, so two concurrent PUTs of one key can both succeed. Under
load in CI two writers both committed `v180.metadata.json` of one table and the first writer's
rows vanished. This wrapper holds one lock around moto's object-writing handlers, so a
conditional write is checked and stored as one step, as the real services do.

It also makes a range GET cost its range. moto 5.2 reads an object's whole body from its spooled
temporary file for every GET (`FakeKey.value`) and slices the range out of it afterwards: a 1 MiB
range of a 200 MiB object took 154 ms here (6.5 MiB/s), of a 4 MiB object 4.8 ms. On S3 a range
GET's cost does not grow with the object's size, so benchmarks on moto charged compacted (large)
files for moto's copy. The wrapper keeps each object's body as one immutable `bytes` once read, so
slicing a range copies only the range; writing or deleting the key drops it.
"""

import sys
import threading

from moto.s3.models import FakeKey
from moto.s3.responses import S3Response
from moto.server import main

_lock = threading.Lock()


def _serialized(handler):
    def run(self, *args, **kwargs):
        with _lock:
            return handler(self, *args, **kwargs)

    return run


# put_object: single PUTs (If-None-Match, If-Match); _key_response_post: completing a multipart
# upload (If-None-Match); copy_object and delete_object: the other writes of a key.
for name in ("put_object", "_key_response_post", "copy_object", "delete_object"):
    setattr(S3Response, name, _serialized(getattr(S3Response, name)))

_read_value = FakeKey.value.fget
_write_value = FakeKey.value.fset


def _value(key):
    body = key.__dict__.get("_varve_body")
    if body is None:
        body = _read_value(key)
        key.__dict__["_varve_body"] = body
    return body


def _set_value(key, new_value):
    key.__dict__.pop("_varve_body", None)
    _write_value(key, new_value)


_dispose = FakeKey.dispose


def _dispose_key(key, *args, **kwargs):
    key.__dict__.pop("_varve_body", None)
    _dispose(key, *args, **kwargs)


FakeKey.value = property(_value, _set_value)
FakeKey.dispose = _dispose_key

if __name__ == "__main__":
    main(sys.argv[1:])
