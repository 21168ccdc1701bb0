"""The session masking process's terminal writer (tcg.runner.term_writer): masked
output written on a helper thread, in order, bounded, and all of it before the
process ends. A real PTY is the terminal; its master is the emulator."""

from __future__ import annotations

import os
import threading
import time

import pytest

from tcg.runner.term_writer import TerminalWriter
from tests.helpers.waiting import wait_for


class Emulator:
    """Reads a PTY master on a thread, slowly at first when ``pause`` is set."""

    def __init__(self, master: int, pause: threading.Event | None = None):
        self.master = master
        self.got = bytearray()
        self.pause = pause
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            if self.pause is not None:
                self.pause.wait()
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:  # EIO: the slave side is closed
                return
            if not data:
                return
            self.got += data


@pytest.fixture
def pty():
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)  # as the session's terminal: no output processing
    yield master, slave
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass


def _chunks() -> list[bytes]:
    """Small and large chunks, each one recognisable: numbered lines."""
    out, n = [], 0
    for i in range(400):
        size = 7 if i % 3 else (1 << 15) + i  # keystroke-sized and bulk-sized, mixed
        text = bytearray()
        while len(text) < size:
            text += b"%d\n" % n
            n += 1
        out.append(bytes(text))
    return out


def test_chunks_reach_the_terminal_in_order_small_and_large_mixed(pty):
    master, slave = pty
    go = threading.Event()
    emulator = Emulator(master, go)
    writer = TerminalWriter(slave, cap=1 << 16)
    chunks = _chunks()
    putter = threading.Thread(target=lambda: [writer.put(c) for c in chunks], daemon=True)
    putter.start()
    time.sleep(0.3)  # the terminal reads nothing yet: large chunks queue, small ones wait behind
    go.set()
    putter.join(60)
    writer.close()
    expected = b"".join(chunks)
    wait_for(lambda: len(emulator.got) >= len(expected), 60, "all output on the terminal")
    assert bytes(emulator.got) == expected
    numbers = [int(x) for x in bytes(emulator.got).split()]
    assert numbers == list(range(len(numbers)))


def test_a_terminal_that_reads_nothing_stops_put_at_the_cap(pty):
    master, slave = pty
    go = threading.Event()
    emulator = Emulator(master, go)
    cap = 1 << 16
    writer = TerminalWriter(slave, cap=cap)
    done = threading.Event()
    chunk = b"x" * (1 << 14)

    def put_many() -> None:
        for _ in range(200):  # 3.2 MB, far beyond the cap and the PTY's buffer
            writer.put(chunk)
        done.set()

    threading.Thread(target=put_many, daemon=True).start()
    wait_for(lambda: writer._queued >= cap, 30, "the queue to fill")
    time.sleep(0.3)
    assert not done.is_set()  # put() waits: memory stays bounded
    assert writer._queued < cap + len(chunk)
    go.set()
    assert done.wait(60)
    writer.close()
    wait_for(lambda: len(emulator.got) >= 200 * len(chunk), 60, "all output")
    assert len(emulator.got) == 200 * len(chunk)


def test_close_returns_only_once_everything_is_written(pty):
    master, slave = pty
    go = threading.Event()
    emulator = Emulator(master, go)
    writer = TerminalWriter(slave, cap=1 << 21)  # room for all of it: put() returns at once
    data = b"".join(b"%d\n" % i for i in range(150_000))  # ~1 MB: queued, not yet written
    writer.put(data)
    closer = threading.Thread(target=writer.close, daemon=True)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive()  # the terminal reads nothing yet: close waits
    go.set()
    closer.join(60)
    assert not closer.is_alive()
    os.close(slave)  # written means in the kernel: the emulator still gets all of it
    emulator.thread.join(60)
    assert bytes(emulator.got) == data


def test_a_terminal_that_went_away_is_reported(pty):
    master, slave = pty
    writer = TerminalWriter(slave)
    os.close(master)  # the emulator is gone: writes fail with EIO
    raised: list[BaseException] = []

    def write() -> None:
        try:
            for _ in range(100):
                writer.put(b"y" * (1 << 16))
                time.sleep(0.01)
            writer.close()
        except OSError as exc:
            raised.append(exc)

    putter = threading.Thread(target=write, daemon=True)
    putter.start()
    putter.join(60)
    assert not putter.is_alive(), "put()/close() hang after the terminal went away"
    assert raised, "the write error was not reported"
