"""The XFixes change hint: wire-protocol client against a real Xvfb, and its parsers."""

from __future__ import annotations

import socket
import struct
import subprocess
import time

import pytest

from tcg.clipboard.x11 import SelectionHint, X11Error, parse_display, read_xauthority
from tests.clipboard.conftest import copy, needs_x


@needs_x
def test_hint_reports_each_clipboard_copy_and_nothing_else(display):
    hint = SelectionHint(display)
    assert hint.changed() is True  # first call: state unknown, read
    assert hint.changed() is False
    copy(b"one")
    copy(b"one")  # the same content again is still a new copy
    time.sleep(0.05)
    assert hint.changed() is True
    assert hint.changed() is False
    subprocess.run(["xclip", "-selection", "primary", "-i"], input=b"x",
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    time.sleep(0.05)
    assert hint.changed() is False  # PRIMARY is not watched
    hint.close()


def test_hint_without_a_server_is_unavailable_not_an_error():
    hint = SelectionHint(":987")
    assert hint.changed() is None and "cannot connect" in hint.error
    assert hint.changed() is None  # no reconnect storm: retried after RECONNECT_EVERY


@pytest.mark.parametrize(("display", "expected"), [(":0", ("", 0)), (":12.0", ("", 12)),
                                                     ("unix:3", ("", 3)), ("localhost:10.0", ("localhost", 10))])
def test_parse_display(display, expected):
    assert parse_display(display) == expected


def test_parse_display_rejects_garbage():
    with pytest.raises(X11Error):
        parse_display("nonsense")


def _entry(family, address, number, name, data):
    out = struct.pack(">H", family)
    for f in (address, number, name, data):
        out += struct.pack(">H", len(f)) + f
    return out


def test_xauthority_picks_this_host_and_display(tmp_path):
    host = socket.gethostname().encode()
    f = tmp_path / "xauth"
    f.write_bytes(_entry(256, b"otherhost", b"5", b"MIT-MAGIC-COOKIE-1", b"A" * 16)
                  + _entry(256, host, b"5", b"MIT-MAGIC-COOKIE-1", b"B" * 16)
                  + _entry(256, host, b"6", b"MIT-MAGIC-COOKIE-1", b"C" * 16) + b"\x01")
    assert read_xauthority(f, 5, host.decode()) == (b"MIT-MAGIC-COOKIE-1", b"B" * 16)
    assert read_xauthority(f, 6, host.decode())[1] == b"C" * 16
    assert read_xauthority(f, 7, host.decode()) == (b"", b"")
    assert read_xauthority(tmp_path / "missing", 5, "h") == (b"", b"")
