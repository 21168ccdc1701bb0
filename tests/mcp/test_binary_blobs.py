"""Random binary through the real MCP stack: the SDK server returns a 1–5 MB file as an image
and as a blob resource, `tcg mcp-proxy` relays it, the SDK client decodes it — byte for
byte what the server read. Personal data is not looked for in decoded binary; a secret
planted in the same binary is still masked."""

from __future__ import annotations

import base64
import random

import pytest

from tests.mcp.helpers import planted_secrets, run_client


@pytest.mark.parametrize("size", [1_000_000, 2_000_000, 5_000_000])
def test_random_binary_round_trips_through_the_proxy(tmp_path, tcg_home, size):
    data = random.Random(size).randbytes(size)
    path = tmp_path / "random.png"
    path.write_bytes(data)

    async def body(client):
        return (await client.call_tool("blob", {"path": str(path)})).content

    image, resource = run_client(body)
    assert base64.b64decode(image.data) == data
    assert base64.b64decode(resource.resource.blob) == data


def test_a_secret_inside_binary_is_masked_an_email_is_not(tmp_path, tcg_home):
    secret = planted_secrets()["TEST_SECRET_A"]
    rng = random.Random(7)
    with_email = rng.randbytes(200_000) + b"\x00mail\x00ivan.petrov@yandex.ru\x00" + rng.randbytes(200_000)
    with_token = with_email + f"\x00TOKEN={secret}\x00".encode() + rng.randbytes(1000)
    (tmp_path / "a.bin").write_bytes(with_email)
    (tmp_path / "b.bin").write_bytes(with_token)

    async def body(client):
        return [(await client.call_tool("blob", {"path": str(tmp_path / n)})).content for n in ("a.bin", "b.bin")]

    (img_a, res_a), (img_b, res_b) = run_client(body)
    assert base64.b64decode(img_a.data) == with_email == base64.b64decode(res_a.resource.blob)
    for data in (img_b.data, res_b.resource.blob):
        decoded = base64.b64decode(data)
        assert decoded.startswith(b"<SECRET:") and secret.encode() not in decoded
