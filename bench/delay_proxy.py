"""A TCP proxy that adds a fixed delay to every request, for benchmarks of object storage with
latency (scripts/bench-server --s3): each chunk a client sends reaches the upstream DELAY_MS
after it arrived (chunks keep their order and are pipelined, so a request of many chunks costs
the delay once, as a round trip to a distant store does). Answers go back at once.

    delay_proxy.py LISTEN_PORT UPSTREAM_PORT DELAY_MS

Prints "ready" on stdout when it listens on 127.0.0.1:LISTEN_PORT.
"""

import asyncio
import sys


async def pipe_delayed(reader, writer, delay):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def forward():
        while True:
            at, data = await queue.get()
            if data is None:
                break
            wait = at - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    task = asyncio.create_task(forward())
    try:
        while True:
            data = await reader.read(1 << 16)
            if not data:
                break
            await queue.put((loop.time() + delay, data))
    except ConnectionError:
        pass
    await queue.put((0, None))
    await task


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(1 << 16)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    writer.close()


async def main():
    listen, upstream, delay_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])

    async def handle(cr, cw):
        try:
            ur, uw = await asyncio.open_connection("127.0.0.1", upstream)
        except OSError:
            cw.close()
            return
        await asyncio.gather(pipe_delayed(cr, uw, delay_ms / 1000), pipe(ur, cw), return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
