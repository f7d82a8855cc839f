"""aioquic (an independent HTTP/3 client) fetches resources from our h3 server.

Arguments: CA certificate, UDP port on 127.0.0.1, output directory, a JSON file
of [index, host, path]. One QUIC connection per host (SNI = host), every
request of that host concurrent on it; each body is written to OUT/index and
[index, status, alpn] is printed for each, as JSON.
"""
import asyncio
import json
import os
import sys

from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.waiting = {}
        self.responses = {}

    def quic_event_received(self, event):
        for ev in self.h3.handle_event(event):
            if isinstance(ev, (HeadersReceived, DataReceived)):
                r = self.responses.get(ev.stream_id)
                if r is None:
                    continue
                if isinstance(ev, HeadersReceived):
                    r["headers"] += ev.headers
                else:
                    r["body"] += ev.data
                if ev.stream_ended:
                    self.waiting.pop(ev.stream_id).set_result(None)

    async def get(self, host, path):
        sid = self._quic.get_next_available_stream_id()
        self.responses[sid] = {"headers": [], "body": b""}
        self.waiting[sid] = self._loop.create_future()
        self.h3.send_headers(
            sid,
            [
                (b":method", b"GET"),
                (b":scheme", b"https"),
                (b":authority", host.encode()),
                (b":path", path.encode()),
                (b"user-agent", b"aioquic"),
            ],
            end_stream=True,
        )
        self.transmit()
        await asyncio.wait_for(self.waiting[sid], 30)
        return self.responses.pop(sid)


async def main():
    ca, port, out, plan = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    by_host = {}
    for i, host, path in json.load(open(plan)):
        by_host.setdefault(host, []).append((i, path))
    results = []
    for host, items in by_host.items():
        cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=host)
        cfg.load_verify_locations(ca)
        async with connect("127.0.0.1", port, configuration=cfg, create_protocol=Client) as c:
            responses = await asyncio.gather(*(c.get(host, p) for _, p in items))
            alpn = c._quic.tls.alpn_negotiated
            for (i, _), r in zip(items, responses):
                status = dict(r["headers"]).get(b":status", b"").decode()
                with open(os.path.join(out, str(i)), "wb") as f:
                    f.write(r["body"])
                results.append([i, status, alpn])
    print(json.dumps(results))


asyncio.run(main())
