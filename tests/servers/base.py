"""What every local test server shares: bind 127.0.0.1:0, serve from a daemon thread,
answer JSON in one write, stop cleanly."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["JsonHandler", "LocalHTTPServer"]


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without this, delayed ACKs stall every
    # request by ~40 ms (a GitHub test file took 56 s instead of 16 s).
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:
        pass

    def read_body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def send_json(
        self,
        status: int,
        payload: Any,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


class LocalHTTPServer:
    """Subclasses provide ``handler()``: a ``JsonHandler`` subclass bound to the instance."""

    _server: ThreadingHTTPServer | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def stopping(self) -> threading.Event:
        """Set on stop(): lets a deliberately slow answer give up at once."""
        if "_stopping" not in self.__dict__:
            self.__dict__["_stopping"] = threading.Event()
        return self.__dict__["_stopping"]

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return int(self._server.server_address[1])

    def start(self) -> Self:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._server.daemon_threads = True
        # stop() waits for the loop's next poll: 0.05 s, not the default 0.5 s per test
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
