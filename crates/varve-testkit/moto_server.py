"""moto's S3 server with atomic conditional writes, for Varve's tests.

Usage: python moto_server.py -H 127.0.0.1 -p PORT   (the arguments of moto_server)

Varve commits a table version with one conditional PUT (`If-None-Match: *`), and its commit
protocol is only as safe as that write is atomic. AWS S3, MinIO and R2 make it atomic; moto 5.2
does not: `put_object` checks that the key is absent and stores the object in two steps, with the
checksum and bucket lookups in between, so two concurrent PUTs of one key can both succeed. Under
load in CI two writers both committed `v180.metadata.json` of one table and the first writer's
rows vanished. This wrapper holds one lock around moto's object-writing handlers, so a
conditional write is checked and stored as one step, as the real services do.
"""

import sys
import threading

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

if __name__ == "__main__":
    main(sys.argv[1:])
