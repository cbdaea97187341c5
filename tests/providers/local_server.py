"""A local HTTP endpoint on 127.0.0.1 for driving the official SDK clients in tests (no provider is called)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Route = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]
"""What the endpoint answers a POST with: (path, JSON body) -> (status, JSON payload)."""


@contextmanager
def serve(route: Route, statuses: list[int]) -> Iterator[str]:
    """Serve `route` on 127.0.0.1 (a free port) in a thread for the block; yields `http://127.0.0.1:PORT`.

    Every status answered is appended to `statuses`, so a test can tell what the SDK really received.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            status, payload = route(self.path, json.loads(self.rfile.read(length)))
            statuses.append(status)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    with serve_handler(Handler) as url:
        yield url


@contextmanager
def serve_handler(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on 127.0.0.1 (a free port) in a thread for the block; yields `http://127.0.0.1:PORT`, and
    closes the server and its thread after."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # shutdown() waits for the serve loop's next poll: poll often, or each server takes half a second to stop
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
