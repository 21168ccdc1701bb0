"""The watcher against a real X clipboard (Xvfb + xclip), in process.

Each test copies like a user (xclip -i owns the selection), polls the watcher
with the real XclipBackend (its runner only records argv), and reads the
clipboard back with xclip -o.
"""

from __future__ import annotations

import os

from tcg.clipboard.backends import XclipBackend
from tcg.clipboard.watcher import (
    CLEAN,
    ERROR,
    MASKED,
    NOT_TEXT,
    OWN_WRITE,
    UNCHANGED,
    WRITE_FAILED,
    ClipboardWatcher,
    inspection_end,
    utf8_ceil,
    utf8_floor,
)
from tcg.events import iter_records
from tcg.keyhash import KeyedHasher
from tests.clipboard.conftest import copy, needs_x, paste
from tests.clipboard.helpers import RecordingRunner, fake_pat, path_with, shim_dir
from tests.helpers.leaks import assert_no_secret_written

pytestmark = needs_x

CAP = 256 * 1024
FILLER = "Съешь же ещё этих мягких французских булок, да выпей чаю. The quick brown fox.\n"


def ph(tok: str) -> str:
    return f"<SECRET:github-pat-classic:{KeyedHasher.for_install().h8(tok)}>"


def events(tcg_home):
    return list(iter_records(tcg_home / "state" / "events.jsonl"))


def make(logs=None, **kw):
    rec = RecordingRunner()
    w = ClipboardWatcher(XclipBackend(runner=rec), interval=0.1,
                         log=(logs.append if logs is not None else lambda m: None), **kw)
    return w, rec


def test_masks_in_place_and_records_only_hashes(display, tcg_home):
    tok = fake_pat()
    text = f"deploy with\nGITHUB_TOKEN={tok}\n# end ✓\n"
    copy(text.encode())
    w, rec = make()
    assert w.poll() == MASKED
    got = paste().decode()
    assert got == text.replace(tok, ph(tok))  # the rest is untouched, byte for byte
    [ev] = events(tcg_home)
    assert ev["event"] == "clipboard_masked" and ev["surface"] == "clipboard"
    assert ev["rules"] == ["github-pat-classic"] and ev["reason"] == "clipboard-secret"
    assert ev["original_bytes"] == len(text.encode()) and ev["masked_bytes"] == len(got.encode())
    assert len(ev["content_h16"]) == 16 and ev["count"] == 1
    assert_no_secret_written(tcg_home, [tok])


def test_own_write_is_not_remasked_and_unchanged_clipboard_is_not_written(display, tcg_home):
    tok = fake_pat()
    copy(f"token {tok}".encode())
    w, rec = make()
    assert w.poll() == MASKED
    assert rec.writes == 1
    assert w.poll() == OWN_WRITE
    assert [w.poll() for _ in range(5)] == [UNCHANGED] * 5
    assert rec.writes == 1
    assert len(events(tcg_home)) == 1
    # a watcher without the memory sees only placeholders: clean, nothing written
    w2, rec2 = make()
    assert w2.poll() == CLEAN and rec2.writes == 0
    assert [w2.poll() for _ in range(3)] == [UNCHANGED] * 3 and rec2.writes == 0
    # with the XFixes hint, unchanged polls start no tool at all (read + TARGETS only)
    assert len(rec2.argvs) == 2


def test_without_the_hint_an_unchanged_poll_costs_one_read_and_no_write(display, tcg_home):
    copy(b"plain text")
    w, rec = make(use_hint=False)
    assert w.poll() == CLEAN
    assert [w.poll() for _ in range(3)] == [UNCHANGED] * 3
    assert len(rec.argvs) == 2 + 3 and rec.writes == 0


def test_hint_sees_every_copy_and_the_periodic_read_still_happens(display, tcg_home, monkeypatch):
    copy(b"plain text")
    w, rec = make()
    assert w._hint is not None
    assert w.poll() == CLEAN
    assert w.poll() == UNCHANGED and len(rec.argvs) == 2
    tok = fake_pat()
    copy(f"new {tok}".encode())  # a new copy: XFixes reports the owner change
    assert wait_for_outcome(w, MASKED)
    assert tok.encode() not in paste()
    import tcg.clipboard.watcher as watcher_mod

    monkeypatch.setattr(watcher_mod, "VERIFY_EVERY", 0.0)  # the safety net: read regardless
    n = len(rec.argvs)
    assert w.poll() in (OWN_WRITE, UNCHANGED) and w.poll() == UNCHANGED
    assert len(rec.argvs) == n + 2


def wait_for_outcome(w, outcome, polls=50):
    import time

    for _ in range(polls):
        if w.poll() == outcome:
            return True
        time.sleep(0.05)
    return False


def test_clean_text_is_never_written(display, tcg_home):
    copy("just some notes, nothing secret here ✓".encode())
    w, rec = make()
    assert w.poll() == CLEAN
    assert [w.poll() for _ in range(3)] == [UNCHANGED] * 3
    assert rec.writes == 0 and not events(tcg_home)


def test_300kb_text_cap_straddling_secret_is_masked_whole(display, tcg_home):
    before, straddling, after = fake_pat(), fake_pat(), fake_pat()
    head = f"first {before}\n" + FILLER * 3
    body = head + FILLER * ((CAP - 10 - len(head.encode())) // len(FILLER.encode()))
    pad = CAP - 10 - len(body.encode())
    body += " " * pad  # the straddling token starts 10 bytes before the cap
    assert len(body.encode()) == CAP - 10
    text = body + straddling + "\n" + FILLER * 200 + f"later {after}\n" + FILLER * 100
    assert 290_000 < len(text.encode()) < 320_000
    copy(text.encode())
    w, rec = make()
    assert w.poll() == MASKED
    got = paste().decode()
    # exactly: the two tokens inspected are masked whole, the rest is byte-identical
    assert got == text.replace(before, ph(before)).replace(straddling, ph(straddling))
    assert after in got  # starts past the cap: not inspected (documented)
    partial, masked = events(tcg_home)
    assert partial["event"] == "clipboard_partially_inspected"
    assert partial["reason"] == "clipboard-over-cap" and partial["cap"] == CAP
    assert partial["total_bytes"] == len(text.encode())
    data = text.encode()
    assert data.index(straddling.encode()) + 40 <= partial["inspected_bytes"] < data.index(after.encode())
    assert partial["beyond_cap_bytes"] > 0
    assert masked["event"] == "clipboard_masked" and masked["count"] == 2
    assert_no_secret_written(tcg_home, [before, straddling])


def test_clean_300kb_text_reports_partial_inspection_on_a_char_boundary(display, tcg_home):
    text = FILLER * (300_000 // len(FILLER.encode()))
    copy(text.encode())
    w, rec = make()
    assert w.poll() == CLEAN
    [ev] = events(tcg_home)
    n = ev["inspected_bytes"]
    assert CAP <= n < CAP + 200
    text.encode()[:n].decode("utf-8")  # a whole number of characters
    assert rec.writes == 0


def test_cut_helpers_respect_utf8_boundaries():
    data = "aé✓😀b".encode()  # 1, 2, 3, 4-byte characters
    boundaries = {0, 1, 3, 6, 10, 11}
    for n in range(len(data) + 1):
        assert utf8_floor(data, n) in boundaries and utf8_floor(data, n) <= n
        assert utf8_ceil(data, n) in boundaries and utf8_ceil(data, n) >= n


def test_private_key_block_straddling_the_cap_is_followed_to_its_end():
    from tcg.detect.engine import load_detector

    det = load_detector()
    line = "MIIEowIBAAKCAQEAx4Lm9Qz8Rt2Wv5Yb9Kc4Hd6Jf1Gs0Pa3UeZq8Lm3Nv7Rt2Wx5Yb9K\n"
    block = ("-----BEGIN RSA PRIVATE KEY-----\n" + line * 300 + "-----END RSA PRIVATE KEY-----\n")
    data = (" " * (CAP - 100) + block + "tail text\n").encode()
    end = inspection_end(det, data, CAP, 5000)
    assert end >= data.index(b"-----END RSA PRIVATE KEY-----") + 29
    unterminated = (" " * (CAP - 100) + block.split("-----END")[0]).encode() + b"x" * 20_000
    assert inspection_end(det, unterminated, CAP, 5000) == len(unterminated)  # fail closed


def test_image_is_left_alone(display, tcg_home):
    tok = fake_pat()
    png = b"\x89PNG\r\n\x1a\n\x00\x00" + tok.encode() + b"\x00\xff" * 50
    copy(png, target="image/png")
    w, rec = make()
    assert w.poll() == NOT_TEXT
    assert [w.poll() for _ in range(2)] == [UNCHANGED] * 2
    assert rec.writes == 0
    assert paste("image/png") == png and not events(tcg_home)


def test_10mb_clipboard_is_masked_without_truncation(display, tcg_home):
    tok = fake_pat()
    text = (f"KEY={tok}\n" + "0123456789 abcdefghij klmnopqrst uvwxyz ✓\n" * 250_000)
    data = text.encode()
    assert len(data) > 10_000_000
    copy(data)
    w, rec = make()
    assert w.poll() == MASKED
    got = paste()
    assert got == data.replace(tok.encode(), ph(tok).encode())
    assert [e["event"] for e in events(tcg_home)] == ["clipboard_partially_inspected", "clipboard_masked"]


def test_hanging_tool_times_out_and_is_logged_once(display, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with(shim_dir(tmp_path, "import time\ntime.sleep(60)")))
    logs: list[str] = []
    w, rec = make(logs)
    w.backend.read_timeout = 0.3
    assert [w.poll() for _ in range(3)] == [ERROR] * 3
    assert len(logs) == 1 and "did not answer" in logs[0]


def test_failed_write_leaves_the_whole_original_and_retries(display, tmp_path, monkeypatch, tcg_home):
    tok = fake_pat()
    text = f"TOKEN={tok}\n" + FILLER * 2000
    copy(text.encode())
    # an xclip whose -i reads part of the content, then dies: nothing partial may land
    shim = shim_dir(tmp_path, (
        "if sys.argv[-1] == '-i':\n"
        "    sys.stdin.buffer.read(1000)\n"
        "    sys.stderr.write('Error: simulated failure\\n')\n"
        "    sys.exit(1)\n"
        "os.execv(REAL, [REAL] + sys.argv[1:])"))
    real_path = os.environ["PATH"]
    monkeypatch.setenv("PATH", path_with(shim))
    logs: list[str] = []
    w, rec = make(logs)
    assert [w.poll() for _ in range(3)] == [WRITE_FAILED] * 3  # retried each poll, logged once
    assert len(logs) == 1 and "could not write" in logs[0] and tok not in logs[0]
    assert paste() == text.encode()
    monkeypatch.setenv("PATH", real_path)
    assert w.poll() == MASKED
    assert logs[-1] == "recovered: write:failed"
    assert paste() == text.replace(tok, ph(tok)).encode()


def test_unwritable_event_log_is_logged_once_and_masking_goes_on(display, tmp_path, tcg_home):
    from tcg.events import EventLog

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    logs: list[str] = []
    w, rec = make(logs, events=EventLog(path=blocker / "events.jsonl"))
    for _ in range(2):
        tok = fake_pat()
        copy(f"k={tok}".encode())
        assert wait_for_outcome(w, MASKED)
        assert tok.encode() not in paste()
    assert [m for m in logs if "event log" in m] == logs[:1] and len(logs) == 1


class BrokenTargets(XclipBackend):
    """Fault injection: listing the formats raises (a bug, not a tool failure)."""

    def targets(self):
        raise RuntimeError("boom")


def test_an_unexpected_exception_never_stops_the_watcher(display, tcg_home):
    copy(b"some text")
    logs: list[str] = []
    w = ClipboardWatcher(BrokenTargets(), interval=0.1, log=logs.append)
    assert [w.poll() for _ in range(3)] == [ERROR] * 3
    assert len(logs) == 1 and "internal error" in logs[0] and "RuntimeError" in logs[0]


def test_content_over_the_read_limit_is_left_alone_and_not_reread_every_poll(display, tcg_home):
    tok = fake_pat()
    data = f"{tok}\n".encode() + b"x" * 5000
    copy(data)
    logs: list[str] = []
    w, rec = make(logs, use_hint=False)
    w.backend.max_read = 1000
    assert [w.poll() for _ in range(4)] == [ERROR] * 4
    assert len(rec.argvs) == 1  # backed off: no read per poll
    assert len(logs) == 1 and "read limit" in logs[0]
    assert paste() == data and rec.writes == 0
