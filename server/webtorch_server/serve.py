"""How `webtorch-playground` serves the app: uvicorn with bounded connections.

uvicorn closes an idle keep-alive connection after `timeout_keep_alive`, but has no deadline
for reading a request head: a client that connects and sends nothing (or one byte at a time)
holds its connection forever; its `limit_concurrency` counts every client's connections
together, so one client holding that many idle connections makes every other client's
requests 503; and uvicorn's own 400 and 503 responses carry none of the app's security
headers.  PlaygroundProtocol is uvicorn's h11 protocol with these fixed:

- a request head must be complete within `header_timeout` seconds of the connection opening
  (or of the previous response ending), however the bytes trickle in; else the connection is
  closed.  No deadline runs while the app is answering a request.
- one client address (an IPv6 client's /64 network) holds at most `limit_per_client`
  connections: a connection past that is closed at once, so one client cannot take the
  `limit_concurrency` budget (browsers open 6 per host).
- the 400 for a malformed or oversized request head (uvicorn writes it itself, below the ASGI
  app) and the 503 past `limit_concurrency` carry the security headers.
"""

from __future__ import annotations

import collections
import functools
import ipaddress

import h11
import uvicorn
from starlette.responses import PlainTextResponse
from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import SecurityHeadersMiddleware, log, with_security_headers

HEADER_TIMEOUT = 10.0  # seconds to receive a whole request head
KEEP_ALIVE_TIMEOUT = 5  # seconds an idle keep-alive connection stays open
LIMIT_CONCURRENCY = 100  # more open connections (or requests in flight) than this get a 503
LIMIT_PER_CLIENT = 16  # connections one client address may hold; more are closed at once
MAX_HEAD_BYTES = 64 * 1024  # a longer request line + headers is a 400

_UNAVAILABLE = SecurityHeadersMiddleware(
    PlainTextResponse("Service Unavailable", status_code=503, headers={"connection": "close"}))


def client_key(host: str) -> str:
    """What the per-client limit counts by: an IPv4 address (IPv4-mapped ones too), or the /64
    network of an IPv6 address (one client usually holds a whole /64)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:  # a Unix socket's path
        return host
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, 64), strict=False))


class PlaygroundProtocol(H11Protocol):
    def __init__(self, config, server_state, app_state, _loop=None, *,
                 header_timeout: float = HEADER_TIMEOUT, limit_per_client: int = LIMIT_PER_CLIENT,
                 clients: collections.Counter | None = None):
        super().__init__(config, server_state, app_state, _loop)
        self.header_timeout = header_timeout
        self.header_timer = None
        # open connections per client_key, shared by all of the server's connections
        self.limit_per_client = limit_per_client
        self.clients = clients if clients is not None else collections.Counter()
        self.client_key = None
        # The concurrency limit is checked in `limited_app`, so the 503 gets the headers.
        self.limit, self.limit_concurrency = self.limit_concurrency, None
        self.served_app, self.app = self.app, self.limited_app

    async def limited_app(self, scope, receive, send):
        if self.limit is not None and (len(self.connections) > self.limit
                                       or len(self.tasks) > self.limit):
            log.warning("more than %d connections or requests at once: 503", self.limit)
            return await _UNAVAILABLE(scope, receive, send)
        await self.served_app(scope, receive, send)

    # -- the request-head deadline: armed whenever no request is being answered

    def update_header_timer(self) -> None:
        answering = self.cycle is not None and not self.cycle.response_complete
        if answering or self.transport.is_closing():
            if self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None
        elif self.header_timer is None:
            self.header_timer = self.loop.call_later(self.header_timeout, self.header_timed_out)

    def header_timed_out(self) -> None:
        self.header_timer = None
        if not self.transport.is_closing():
            log.info("closed a connection that sent no complete request in %gs",
                     self.header_timeout)
            self.transport.close()

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        if self.client:
            self.client_key = client_key(self.client[0])
            self.clients[self.client_key] += 1
            if self.clients[self.client_key] > self.limit_per_client:
                if self.clients[self.client_key] == self.limit_per_client + 1:  # once per burst
                    log.warning("%s holds %d connections: closing its new ones", self.client_key,
                                self.limit_per_client)
                transport.close()
                return
        self.update_header_timer()

    def handle_events(self) -> None:
        super().handle_events()
        self.update_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.update_header_timer()

    def connection_lost(self, exc) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None
        if self.client_key is not None:
            self.clients[self.client_key] -= 1
            if not self.clients[self.client_key]:
                del self.clients[self.client_key]
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        headers = with_security_headers([(b"content-type", b"text/plain; charset=utf-8"),
                                         (b"connection", b"close")])
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=msg.encode("ascii")), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()


def run(app, host: str, port: int, *, log_level: str = "info",
        header_timeout: float = HEADER_TIMEOUT, limit_concurrency: int = LIMIT_CONCURRENCY,
        limit_per_client: int = LIMIT_PER_CLIENT, timeout_keep_alive: int = KEEP_ALIVE_TIMEOUT) -> None:
    """Serve `app` on host:port with PlaygroundProtocol until interrupted.  Responses name no
    server software (no `server: uvicorn` header)."""
    protocol = functools.partial(PlaygroundProtocol, header_timeout=header_timeout,
                                 limit_per_client=limit_per_client, clients=collections.Counter())
    uvicorn.run(app, host=host, port=port, log_level=log_level, http=protocol,
                timeout_keep_alive=timeout_keep_alive, limit_concurrency=limit_concurrency,
                h11_max_incomplete_event_size=MAX_HEAD_BYTES, server_header=False)
