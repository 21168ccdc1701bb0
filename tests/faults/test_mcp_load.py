"""Load, MCP: 50 clients' worth of traffic through one proxy at once
(docs/reliability.md). The proxy is a stdio proxy (one per configured server),
so the load is 50 client threads each keeping requests in flight on the same
pipe, with ids of their own, against the scripted raw server
(tests/mcp/raw_server.py): every response arrives once, to its id, no planted
secret comes back unmasked, and the proxy's memory stays bounded."""

from __future__ import annotations

import json
import sys
import threading
import time

import pytest

from tests.faults.helpers import TIMEOUT, fresh_token
from tests.mcp.test_proxy_raw import RawProxy, req

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads the proxy's RSS from /proc")

CLIENTS = 50
PER_CLIENT = 12
RSS_LIMIT_KIB = 200 * 1024


def _request(client: int, n: int, token: str) -> dict:
    mid = f"c{client}-{n}"
    kind = n % 3
    if kind == 0:
        return req(mid, "echo", text=f"client {client} says {token}")
    if kind == 1:
        return req(mid, "big", size=64_000, tail=f" tail {token}")
    return req(mid, "error_secret", token=token)


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(x.split()[1]) for x in fh if x.startswith("VmRSS:"))


def test_fifty_clients_at_once_every_response_arrives_masked_with_bounded_memory(tmp_path, tcg_home):
    tokens = [fresh_token() for _ in range(CLIENTS)]
    proxy = RawProxy(tmp_path)
    write_lock = threading.Lock()  # one whole line at a time, as each client's framing would
    in_flight = {"now": 0, "peak": 0}
    start = threading.Barrier(CLIENTS)

    def client(c: int) -> None:
        start.wait(TIMEOUT)
        for n in range(PER_CLIENT):
            line = (json.dumps(_request(c, n, tokens[c])) + "\n").encode()
            with write_lock:
                proxy.write(line)
                in_flight["now"] += 1
                in_flight["peak"] = max(in_flight["peak"], in_flight["now"])
            time.sleep(0.001)

    rss: list[int] = []
    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(CLIENTS)]
    for t in threads:
        t.start()
    answers: dict[str, dict] = {}
    deadline = time.monotonic() + TIMEOUT * 3
    while len(answers) < CLIENTS * PER_CLIENT:
        assert time.monotonic() < deadline, f"only {len(answers)} answers"
        msg = proxy.next()
        assert msg["id"] not in answers, f"answered twice: {msg['id']}"
        answers[msg["id"]] = msg
        with write_lock:
            in_flight["now"] -= 1
        if len(answers) % 50 == 0:
            rss.append(_rss_kib(proxy.proc.pid))
    for t in threads:
        t.join(TIMEOUT)
    rss.append(_rss_kib(proxy.proc.pid))
    proxy.proc.stdin.close()
    assert proxy.proc.wait(TIMEOUT) == 0

    # The load really was concurrent: many requests in flight, clients interleaved at the server.
    assert in_flight["peak"] >= CLIENTS, in_flight
    seen = [json.loads(ln)["id"].split("-")[0] for ln in proxy.log.read_text().splitlines()]
    assert len(seen) == CLIENTS * PER_CLIENT
    switches = sum(a != b for a, b in zip(seen, seen[1:], strict=False))
    assert switches >= CLIENTS * 2, f"the clients' requests were not interleaved ({switches} switches)"

    assert set(answers) == {f"c{c}-{n}" for c in range(CLIENTS) for n in range(PER_CLIENT)}
    for mid, msg in answers.items():
        body = json.dumps(msg)
        assert "<SECRET:github-pat-classic:" in body, (mid, body[:300])
    for token in tokens:
        assert token[4:20].encode() not in proxy.received
    assert max(rss) < RSS_LIMIT_KIB, f"proxy RSS grew to {max(rss)} KiB"
