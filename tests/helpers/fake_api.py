"""The HTTP side of the local API stand-ins (tests/launcher/fake_anthropic.py,
tests/agents/fake_openai.py): every request body kept verbatim — exactly what
a provider would receive — and turn N of a script answering the Nth request
that counts as a turn."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def text(message: str) -> dict[str, Any]:
    return {"text": message}


class FakeAPI:
    """Subclasses say which requests are turns (counts) and how to answer (answer)."""

    def __init__(self, turns: list[dict[str, Any]]):
        self.turns = turns
        self.bodies: list[str] = []
        self.calls = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, body: bytes, ctype: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._send(json.dumps({"object": "list", "data": [], "models": []}).encode(), "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0)).decode("utf-8", "replace")
                try:
                    req = json.loads(raw)
                except ValueError:
                    req = {}
                with owner.lock:
                    owner.bodies.append(raw)
                    if owner.counts(req):
                        idx = owner.calls
                        owner.calls += 1
                        turn = owner.turns[idx] if idx < len(owner.turns) else text("done")
                    else:
                        turn = text("ok")
                body, ctype = owner.answer(req, turn)
                self._send(body, ctype)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def counts(self, req: dict[str, Any]) -> bool:
        return True

    def answer(self, req: dict[str, Any], turn: dict[str, Any]) -> tuple[bytes, str]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


