"""The trash: crashes at every step, a full trash, restore's refusals, gc, and
`tcg trash` itself. Crashes are real SIGKILLs of a real process; the full trash
is a real 64 KiB tmpfs in a private mount namespace (root, `unshare -m`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.guard.helpers import (
    BASH,
    TCG,
    TCG_SHELL,
    TIMEOUT,
    env_for,
    events,
    git,
    last_txid,
    run_line,
    tcg,
    trash_dir,
    tree,
)

BLOB = bytes(range(256)) * 16


def project(root: Path) -> Path:
    (root / "keep" / "deep").mkdir(parents=True)
    (root / "keep" / "deep" / "f.bin").write_bytes(BLOB)
    (root / "keep" / "link").symlink_to("deep/f.bin")
    (root / "one.txt").write_bytes(b"one\n")
    (root / "two.txt").write_bytes(b"two\n")
    return root


def txdirs() -> list[Path]:
    root = trash_dir()
    return sorted(p for p in root.iterdir() if not p.name.startswith(".")) if root.exists() else []


# ------------------------------------------------------------------ crashes

CRASHER = textwrap.dedent("""
    import os, signal, sys
    from tcg.guard import fsops, trash as T
    stage, cwd, *targets = sys.argv[1:]

    def die(*_a, **_k):
        os.kill(os.getpid(), signal.SIGKILL)

    renames = [0]
    real_rename = os.rename
    def rename(src, dst):
        renames[0] += 1
        if stage == "before-rename" or (stage == "after-first-rename" and renames[0] == 2):
            die()
        return real_rename(src, dst)
    os.rename = rename
    real_write = fsops.write_new
    def write_new(path, data, mode=0o600, **kw):
        if stage == "before-commit" and path.endswith("/committed"):
            die()
        return real_write(path, data, mode, **kw)
    fsops.write_new = write_new
    if stage == "before-placeholders":
        fsops.make_placeholder = die
    tx = T.Trash.for_install().begin(cwd=cwd, actor="agent", command_hash="0" * 16)
    for t in targets:
        tx.add(os.path.join(cwd, t))
    tx.execute()
    print("not killed")
""")


@pytest.mark.parametrize("stage", ["before-rename", "after-first-rename", "before-commit", "before-placeholders"])
def test_kill_9_mid_transaction_rolls_back_on_next_start(stage, tmp_path):
    cwd = project(tmp_path / "p")
    original = tree(cwd)
    proc = subprocess.run([sys.executable, "-c", CRASHER, stage, str(cwd), "keep", "one.txt"],
                          capture_output=True, timeout=TIMEOUT)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert len(txdirs()) == 1 and (txdirs()[0] / "manifest.json").exists()
    if stage != "before-rename":
        assert tree(cwd) != original, "the crash came after something moved"
    listing = tcg("trash", "list", "--json", cwd=cwd)  # any start recovers
    assert listing.returncode == 0
    assert tree(cwd) == original, "nothing lost"
    assert txdirs() == [], "no orphan left in the trash"


def test_kill_9_of_the_station_while_the_command_runs(tmp_path):
    """The station dies after the delete ran: the next start keeps what was deleted
    and gives back what was not."""
    cwd = project(tmp_path / "p")
    original = tree(cwd)
    line = "rm -r keep; false && rm one.txt; touch started; sleep 60"
    station = subprocess.Popen([TCG_SHELL, "run-line", "--shell", BASH, line], cwd=cwd, env=env_for("agent"),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (cwd / "started").exists():
            assert time.monotonic() < deadline and station.poll() is None
            time.sleep(0.05)
    finally:
        os.killpg(station.pid, signal.SIGKILL)
        station.wait()
    (cwd / "started").unlink()
    assert not (cwd / "keep").exists()
    assert (cwd / "one.txt").read_bytes() == b"\0" * 4, "one.txt is still the stand-in (sparse, same size)"
    assert tcg("trash", "list", cwd=cwd).returncode == 0  # recovery
    assert (cwd / "one.txt").read_bytes() == b"one\n", "the entry the line never deleted went back"
    assert not (cwd / "keep").exists(), "the deleted one stays deleted"
    txid = txdirs()[-1].name
    assert tcg("restore", txid, cwd=cwd).returncode == 0
    assert tree(cwd) == original


# ------------------------------------------------------------------ a full trash

def unshare_available() -> None:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) for a private tmpfs mount")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.decode().strip()}")


def in_tmpfs_trash(script: str, cwd: Path, size: str = "64k") -> subprocess.CompletedProcess[bytes]:
    """Run ``script`` (sh) in a private mount namespace where the trash is a small tmpfs."""
    unshare_available()
    trash = trash_dir()
    trash.mkdir(parents=True, exist_ok=True)
    full = f'mount -t tmpfs -o size={size},mode=0700 tmpfs "$TRASH" || exit 99\n{script}'
    return subprocess.run(["unshare", "-m", "sh", "-c", full], cwd=cwd, capture_output=True, timeout=TIMEOUT,
                          env=env_for("agent", TRASH=str(trash), TCG_SHELL=TCG_SHELL, BASH=BASH, TCG=TCG))


def test_a_full_trash_blocks_and_touches_nothing(tmp_path):
    cwd = tmp_path / "p"
    (cwd / "big").mkdir(parents=True)
    for i in range(8):
        (cwd / "big" / f"part{i}").write_bytes(os.urandom(128 << 10))
    original = tree(cwd)
    proc = in_tmpfs_trash('"$TCG_SHELL" run-line --shell "$BASH" "rm -rf big/"; echo "rc=$?"; '
                          'ls -A "$TRASH" | wc -l', cwd)
    out = proc.stdout.decode()
    assert "rc=126" in out, (out, proc.stderr)
    assert out.strip().endswith("0"), "nothing left in the trash"
    assert b"trash-full" in proc.stderr
    assert tree(cwd) == original
    assert events("command_decision")[-1]["reason"] == "trash-full"


def test_enospc_while_copying_rolls_back(tmp_path):
    """The free-space estimate passes, the copy still runs out of room: the partial
    copy is removed, the original untouched, the refusal says trash-full."""
    cwd = tmp_path / "p"
    (cwd / "big").mkdir(parents=True)
    (cwd / "big" / "data").write_bytes(os.urandom(1 << 20))
    original = tree(cwd)
    code = textwrap.dedent("""
        import os, sys
        from tcg.guard import fsops, trash as T
        fsops.free_bytes = lambda path: None
        tx = T.Trash.for_install().begin(cwd=os.getcwd(), actor="agent", command_hash="0" * 16)
        tx.add(os.path.join(os.getcwd(), "big"))
        try:
            tx.execute()
        except T.TrashFull as exc:
            print("full:", exc.message)
        print("left:", len(os.listdir(os.environ["TRASH"])))
    """)
    proc = in_tmpfs_trash(f'"{sys.executable}" -c \'{code}\'', cwd)
    out = proc.stdout.decode()
    assert "full:" in out and "left: 0" in out, (out, proc.stderr)
    assert tree(cwd) == original


def test_tcg_trash_across_filesystems_copies_verifies_and_restores(tmp_path):
    """Source on a tmpfs, trash on disk: copy, verify, then remove; restore copies back."""
    unshare_available()
    src = tmp_path / "mnt"
    src.mkdir()
    script = textwrap.dedent(f"""
        mount -t tmpfs -o size=4m tmpfs "{src}" || exit 99
        mkdir "{src}/d" && printf 'abc' > "{src}/d/f" && ln -s f "{src}/d/l"
        cd "{src}" && "$TCG" trash -- d || exit 1
        test ! -e d || exit 2
        tx=$(ls "$TRASH_ROOT" | tail -n 1)
        "$TCG" restore "$tx" || exit 3
        cat d/f; readlink d/l
    """)
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, timeout=TIMEOUT,
                          env=env_for("human", TCG=TCG, TRASH_ROOT=str(trash_dir())))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(b"abcf\n")
    assert events("guard_relocate")[-1]["copied"] == 1


# ------------------------------------------------------------------ restore's refusals

def trash_one(cwd: Path, name: str) -> str:
    proc = tcg("trash", "--", name, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split(b": ", 1)[1].split(b"\n", 1)[0].decode()


def test_restore_refuses_an_existing_destination(tmp_path):
    cwd = project(tmp_path / "p")
    txid = trash_one(cwd, "one.txt")
    (cwd / "one.txt").write_bytes(b"new\n")
    proc = tcg("restore", txid, cwd=cwd)
    assert proc.returncode == 1 and b"exists" in proc.stderr and b"hint:" in proc.stderr
    assert (cwd / "one.txt").read_bytes() == b"new\n"
    (cwd / "one.txt").unlink()
    assert tcg("restore", txid, cwd=cwd).returncode == 0
    assert (cwd / "one.txt").read_bytes() == b"one\n"


def test_restore_refuses_a_dangling_symlink(tmp_path):
    cwd = project(tmp_path / "p")
    txid = trash_one(cwd, "keep")
    (cwd / "keep").symlink_to(tmp_path / "nowhere")
    proc = tcg("restore", txid, cwd=cwd)
    assert proc.returncode == 1 and b"dangling symlink" in proc.stderr
    assert not (tmp_path / "nowhere").exists()


def craft(txid: str, manifest: dict, payloads: dict[int, bytes], sign: bool = True, hmac_line: bool = False) -> None:
    """A transaction as tcg writes it; ``hmac_line``: as versions before keyed BLAKE2b
    signed it (an HMAC-SHA256 line of tag, NUL, body, computed here by the stdlib)."""
    import hashlib
    import hmac

    from tcg.keyhash import load_or_create_key
    from tcg.signed import signed_bytes

    def signed(key: bytes, tag: str, body: bytes) -> bytes:
        if hmac_line:
            return hmac.new(key, tag.encode() + b"\0" + body, hashlib.sha256).hexdigest().encode() + b"\n" + body
        return signed_bytes(key, tag, body)

    d = trash_dir() / txid
    (d / "files").mkdir(parents=True)
    body = json.dumps(manifest).encode()
    key = load_or_create_key() if sign else os.urandom(32)
    (d / "manifest.json").write_bytes(signed(key, "trash/manifest.json", body))
    (d / "committed").write_bytes(b"")
    (d / "settled.json").write_bytes(signed(key, "trash/settled.json", b'{"returned": []}'))
    for i, data in payloads.items():
        (d / "files" / str(i)).write_bytes(data)


def entry(path: str) -> dict:
    return {"path": path, "kind": "move", "role": "delete", "type": "file", "method": "rename", "size": 5}


@pytest.mark.parametrize("path", ["/../../home/victim/.bashrc", "home/victim/.bashrc", "/p/./x", "/p//x"])
def test_restore_refuses_a_crafted_manifest_path(path, tmp_path):
    cwd = tmp_path / "p"
    cwd.mkdir()
    craft("20260101-000000-aaaaaa", {"txid": "20260101-000000-aaaaaa", "cwd": str(cwd), "entries": [entry(path)]},
          {0: b"evil\n"})
    proc = tcg("restore", "20260101-000000-aaaaaa", cwd=cwd)
    assert proc.returncode == 1 and b"not written by tcg" in proc.stderr, proc.stderr
    assert (trash_dir() / "20260101-000000-aaaaaa" / "files" / "0").exists()


def test_restore_refuses_a_manifest_not_signed_by_this_install(tmp_path):
    cwd = tmp_path / "p"
    cwd.mkdir()
    target = tmp_path / "victim"
    craft("20260101-000000-bbbbbb", {"txid": "20260101-000000-bbbbbb", "cwd": str(cwd),
                                      "entries": [entry(str(target))]}, {0: b"evil\n"}, sign=False)
    proc = tcg("restore", "20260101-000000-bbbbbb", cwd=cwd)
    assert proc.returncode == 1 and b"does not verify" in proc.stderr
    assert not target.exists()


def test_a_manifest_copied_into_another_folder_is_not_rolled_back(tmp_path):
    """A genuine manifest of one transaction, copied into a new folder with no commit
    marker, must not make recovery move that folder's payload onto the first
    transaction's paths (the signature binds the file's name, the txid binds its folder)."""
    cwd = tmp_path / "p"
    cwd.mkdir()
    target = cwd / "victim.txt"
    first, second = "20260101-000000-eeeeee", "20260101-000000-ffffff"
    craft(second, {"txid": first, "cwd": str(cwd), "entries": [entry(str(target))]}, {0: b"evil\n"})
    for marker in ("committed", "settled.json"):  # pending: recovery would roll it back
        (trash_dir() / second / marker).unlink()
    assert tcg("trash", "list", cwd=cwd).returncode == 0  # any start recovers
    assert not target.exists()
    proc = tcg("restore", second, cwd=cwd)
    assert proc.returncode == 1 and not target.exists()


@pytest.mark.parametrize("sign", [True, False])
def test_a_transaction_signed_by_an_earlier_version_still_restores(sign, tmp_path):
    """Trash records outlive an upgrade: the HMAC-SHA256 line earlier versions wrote
    verifies under this install's key (and only under it)."""
    cwd = tmp_path / "p"
    cwd.mkdir()
    txid = "20260101-000000-dddddd"
    craft(txid, {"txid": txid, "cwd": str(cwd), "entries": [entry(str(cwd / "kept.txt"))]}, {0: b"kept\n"},
          sign=sign, hmac_line=True)
    proc = tcg("restore", txid, cwd=cwd)
    if sign:
        assert proc.returncode == 0, proc.stderr
        assert (cwd / "kept.txt").read_bytes() == b"kept\n"
    else:
        assert proc.returncode == 1 and b"does not verify" in proc.stderr
        assert not (cwd / "kept.txt").exists()


def test_restore_goes_in_reverse_order(tmp_path):
    """Entries deleted child first come back parent first."""
    cwd = tmp_path / "p"
    cwd.mkdir()
    txid = "20260101-000000-cccccc"
    d = str(cwd / "d")
    craft(txid, {"txid": txid, "cwd": str(cwd), "entries": [entry(d + "/f"), {**entry(d), "type": "dir"}]},
          {0: b"child\n"})
    (trash_dir() / txid / "files" / "1").mkdir()
    assert tcg("restore", txid, cwd=cwd).returncode == 0
    assert (cwd / "d" / "f").read_bytes() == b"child\n"


def test_restore_with_to_keeps_the_layout_and_stays_inside(tmp_path):
    cwd = project(tmp_path / "p")
    original = tree(cwd)
    proc = run_line("rm -r keep one.txt", cwd)
    assert proc.returncode == 0
    out = tmp_path / "out"
    assert tcg("restore", last_txid(), "--to", str(out), cwd=cwd).returncode == 0
    assert tree(out) == {k: v for k, v in original.items() if k.startswith("keep") or k == "one.txt"}


def test_an_interrupted_restore_resumes(tmp_path):
    cwd = project(tmp_path / "p")
    original = tree(cwd)
    assert run_line("rm -r keep one.txt two.txt", cwd).returncode == 0
    txid = last_txid()
    code = textwrap.dedent("""
        import os, signal, sys
        from tcg.guard import restore, trash
        n = [0]
        real = os.rename
        def rename(a, b):
            n[0] += 1
            if n[0] == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(a, b)
        os.rename = rename
        restore.restore(trash.Trash.for_install(), sys.argv[1])
    """)
    killed = subprocess.run([sys.executable, "-c", code, txid], cwd=cwd, capture_output=True, timeout=TIMEOUT)
    assert killed.returncode == -signal.SIGKILL
    assert tree(cwd) != original
    assert tcg("restore", txid, cwd=cwd).returncode == 0
    assert tree(cwd) == original


# ------------------------------------------------------------------ tcg trash, list, gc

def test_tcg_trash_moves_lists_and_refuses(tmp_path):
    cwd = project(tmp_path / "p")
    (cwd / "list").write_bytes(b"a file called list\n")
    proc = tcg("trash", "--", "one.txt", "list", "missing", cwd=cwd)
    assert proc.returncode == 1 and b"missing: no such file" in proc.stderr
    assert not (cwd / "one.txt").exists() and not (cwd / "list").exists()
    listing = json.loads(tcg("trash", "list", "--json", cwd=cwd).stdout.splitlines()[-1])
    assert sorted(e["path"] for e in listing["entries"]) == ["list", "one.txt"]
    for bad in (".", "/", str(tmp_path), str(trash_dir())):
        refused = tcg("trash", "--", bad, cwd=cwd)
        assert refused.returncode == 1 and b"refusing" in refused.stderr, bad
    assert (cwd / "two.txt").exists()


def test_gc_is_a_dry_run_unless_applied(repo):
    (repo / "tracked.txt").write_bytes(b"changed\n")
    assert run_line("git reset --hard", repo).returncode == 0
    txid = last_txid()
    assert git(repo, "for-each-ref", "refs/tcg")
    dry = tcg("gc", "--older-than", "0", cwd=repo)
    assert dry.returncode == 0 and f"would delete {txid}".encode() in dry.stdout
    assert (trash_dir() / txid).exists()
    agent = run_line("tcg gc --older-than 0 --apply", repo)
    assert agent.returncode == 126 and b"self-approval" in agent.stderr
    applied = tcg("gc", "--older-than", "0", "--apply", cwd=repo)
    assert applied.returncode == 0 and not (trash_dir() / txid).exists()
    assert not git(repo, "for-each-ref", "refs/tcg")
    assert events("guard_gc")[-1]["transactions"] == 1


def test_nothing_tcg_writes_holds_file_contents_or_names(tmp_path):
    """Events carry counts and hashes: no file name, no content, from a relocation."""
    cwd = tmp_path / "p"
    cwd.mkdir()
    secret_name = "name-" + os.urandom(6).hex()
    secret_body = "body-" + os.urandom(12).hex()
    (cwd / secret_name).write_text(secret_body)
    assert run_line(f"rm {secret_name}", cwd).returncode == 0
    log = (Path(os.environ["TCG_HOME"]) / "state" / "events.jsonl").read_text()
    assert secret_body not in log
    assert secret_name not in log.replace(f"rm {secret_name}", "")  # the masked command line names it


def test_a_deferred_transaction_is_settled_by_its_own_shell(tmp_path):
    """Lines the user's shell runs itself: only that shell's next line (or its end)
    settles them, never another process while the shell may still be running it."""
    from tcg.guard.prepare import settle_deferred
    from tcg.guard.trash import Trash

    cwd = project(tmp_path / "p")
    shell = subprocess.Popen(["sleep", "120"])  # stands for the interactive shell
    try:
        txs = []
        for name in ("one.txt", "two.txt"):
            tx = Trash.for_install().begin(cwd=str(cwd), actor="human", command_hash="0" * 16,
                                           deferred_owner=shell.pid)
            tx.add(str(cwd / name))
            tx.execute()
            tx.detach()
            txs.append(tx.txid)
        (cwd / "two.txt").unlink()  # the shell's line deleted this stand-in; not the other
        assert Trash.for_install().recover() == []
        assert (cwd / "one.txt").read_bytes() == b"\0" * 4
        assert sorted(settle_deferred(shell.pid)) == sorted(txs)
        assert (cwd / "one.txt").read_bytes() == b"one\n"
        assert not (cwd / "two.txt").exists()
        assert tcg("restore", txs[1], cwd=cwd).returncode == 0
        assert (cwd / "two.txt").read_bytes() == b"two\n"
    finally:
        shell.kill()
        shell.wait()
