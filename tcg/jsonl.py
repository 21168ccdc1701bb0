"""Append-only JSONL files that survive crashes, full disks and concurrent writers.

The one place tcg appends a record to a file (the security-event log uses it).

Writing (``append``): one ``write`` of a whole line on an ``O_APPEND`` descriptor
under an advisory ``flock``. Files give no PIPE_BUF atomicity, so the lock is
what keeps two writers' records apart; it is held only for the checks and the
write. Under the lock:

- a file that does not end in ``\\n`` (a record torn by a kill or a full disk)
  gets one first, so the torn tail stays an isolated bad line instead of
  swallowing the record written after it;
- a write that fails part-way (ENOSPC, EFBIG) is cut back off, so the file
  stays parseable;
- when the file would grow past ``max_bytes``, it is rotated first
  (``events.jsonl`` → ``events.jsonl.1`` → … → ``.keep``, the oldest dropped):
  a record is never split across files. A writer that waited for the lock
  while another rotated notices that its descriptor is the old file and
  reopens.

Reading (``iter_lines`` / ``follow_lines``): the rotated files oldest first,
then the live file; every file is opened before any is read, so a rotation
during the read neither loses nor repeats lines. Only an unterminated final
line is held back (it may still be being written).
"""

from __future__ import annotations

import errno
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

LOCK_WAIT = 0.25  # seconds a writer waits for the lock before writing without it
# Free space (and file-size limit headroom) below which a file counts as full:
# several records' worth, so a writer that checked first is not refused mid-record.
HEADROOM = 16 * 1024


def append(path: str, data: bytes, *, max_bytes: int = 0, keep: int = 0) -> None:
    """Append ``data`` (one or more whole ``\\n``-terminated lines) to ``path``.

    Raises OSError (ENOSPC, EFBIG, EACCES, …) with nothing half-written left in
    the file when the lock was held. ``max_bytes``/``keep`` > 0 rotate by size.
    """
    for _attempt in range(3):
        fd = _open_append(path)
        try:
            if not _lock(fd):
                # Lock busy past LOCK_WAIT (a writer stopped with Ctrl-Z): write the
                # record whole anyway; readers resync on a torn neighbour.
                _write_all(fd, data, cut_back_to=None)
                return
            if not _same_file(fd, path):
                continue  # rotated while we waited: the record goes to the new file
            size = os.fstat(fd).st_size
            if max_bytes > 0 and keep > 0 and size and size + len(data) > max_bytes:
                rotate(path, keep)
                continue
            line = data
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + data
            _write_all(fd, line, cut_back_to=size)
            return
        finally:
            os.close(fd)  # releases the lock
    fd = _open_append(path)  # rotating writers kept winning: write where we are
    try:
        _write_all(fd, data, cut_back_to=None)
    finally:
        os.close(fd)


def check_writable(path: str, need: int = HEADROOM) -> None:
    """Raise OSError when a record could not be appended to ``path`` now: it
    cannot be opened, is not a regular file, the filesystem has less than
    ``need`` bytes free (ENOSPC) or the file-size limit (``ulimit -f``) is
    within ``need`` of its size (EFBIG). Writes nothing."""
    fd = _open_append(path)
    try:
        st = os.fstat(fd)
        if hasattr(os, "fstatvfs"):
            vfs = os.fstatvfs(fd)
            free = (vfs.f_bfree if os.geteuid() == 0 else vfs.f_bavail) * vfs.f_frsize
            if vfs.f_blocks and free < need:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        limit = _file_size_limit()
        if limit is not None and st.st_size + need > limit:
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), path)
    finally:
        os.close(fd)


def rotate(path: str, keep: int) -> None:
    """Shift ``path`` to ``path.1`` (``.1`` to ``.2`` …), dropping ``path.keep``."""
    for n in range(keep - 1, 0, -1):
        try:
            os.replace(f"{path}.{n}", f"{path}.{n + 1}")
        except FileNotFoundError:
            pass
    os.replace(path, f"{path}.1")


def rotated_paths(path: str) -> list[str]:
    """``path``'s rotated files that exist, oldest first, then ``path`` itself."""
    folder, base = os.path.split(path)
    numbered: list[tuple[int, str]] = []
    try:
        names = os.listdir(folder or ".")
    except OSError:
        names = []
    prefix = base + "."
    for name in names:
        suffix = name[len(prefix):]
        if name.startswith(prefix) and suffix.isdigit():
            numbered.append((int(suffix), os.path.join(folder, name)))
    return [p for _, p in sorted(numbered, reverse=True)] + [path]


def open_all(path: str) -> list[BinaryIO]:
    """Open the live file, then each rotated one, newest first (so a rotation in
    between shows up as the same file twice, not as a gap), and return them
    oldest first without duplicates."""
    handles: list[BinaryIO] = []
    seen: set[tuple[int, int]] = set()
    for p in reversed(rotated_paths(path)):
        try:
            fh = open(p, "rb")  # noqa: SIM115 - the caller closes
        except FileNotFoundError:
            continue
        st = os.fstat(fh.fileno())
        if (st.st_dev, st.st_ino) in seen:
            fh.close()
            continue
        seen.add((st.st_dev, st.st_ino))
        handles.append(fh)
    handles.reverse()
    return handles


def iter_lines(path: str) -> Iterator[bytes]:
    """Every line of ``path`` and its rotated files, oldest first. Lines keep
    their ``\\n``; only a file's final line may lack one (torn or in progress)."""
    handles = open_all(path)
    try:
        for fh in handles:
            yield from fh
    finally:
        for fh in handles:
            fh.close()


def follow_lines(path: str, poll: float = 0.25, from_start: bool = True) -> Iterator[bytes]:
    """Like ``tail -F``: complete lines of the rotated files and the live file,
    then new ones as they are appended, across rotations. The files are opened
    (and, without ``from_start``, the end taken) when this is called, not at the
    first ``next()``: a record appended in between is not lost."""
    handles = open_all(path) if from_start else []
    current: BinaryIO | None = None
    if handles and _is_live(handles[-1], path):
        current = handles.pop()
    if current is None:
        current = _open_or_none(path)
        if current is not None and not from_start:
            current.seek(0, os.SEEK_END)
    return _follow(path, poll, handles, current)


def _follow(path: str, poll: float, handles: list[BinaryIO], current: BinaryIO | None) -> Iterator[bytes]:
    for fh in handles:
        with fh:
            yield from fh
    pending = b""
    try:
        while True:
            chunk = current.read() if current is not None else b""
            if chunk:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    yield line + b"\n"
                continue
            if current is not None and _is_live(current, path):
                time.sleep(poll)
                continue
            # Rotated (or not created yet): whatever the old file got last was read
            # above; a torn tail there is dropped. Every file rotated after it is
            # read in order (several rotations may have passed since the last
            # poll), then the live one from its start.
            later = _files_after(current, path) if current is not None else []
            if current is None:
                first = _open_or_none(path)
                later = [first] if first is not None else []
            if not later:
                time.sleep(poll)
                continue
            if current is not None:
                current.close()
            current, pending = later.pop(), b""
            for fh in later:
                with fh:
                    yield from fh
    finally:
        if current is not None:
            current.close()


def _files_after(fh: BinaryIO, path: str) -> list[BinaryIO]:
    """The files that took over from ``fh`` after it was rotated away, oldest
    first, the live one last: those newer than it, or all of them when it has
    already been dropped (``keep`` rotations passed)."""
    handles = open_all(path)
    st = os.fstat(fh.fileno())
    for i, h in enumerate(handles):
        other = os.fstat(h.fileno())
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            for old in handles[: i + 1]:
                old.close()
            return handles[i + 1:]
    return handles


# ------------------------------------------------------------------ internals


def _open_append(path: str) -> int:
    folder = os.path.dirname(path)
    if folder:
        from tcg.paths import ensure_private_dir

        ensure_private_dir(folder)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        st = os.fstat(fd)
        if not _is_regular(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        if os.name == "posix" and st.st_mode & 0o077:
            os.fchmod(fd, 0o600)  # created by something else: make it private again
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def _write_all(fd: int, data: bytes, cut_back_to: int | None) -> None:
    """Write ``data`` completely; on failure cut the file back to
    ``cut_back_to`` (when the caller holds the lock) and re-raise."""
    view = memoryview(data)
    try:
        while view:
            n = os.write(fd, view)
            if n <= 0:  # pragma: no cover - a regular file reports errors, not 0
                raise OSError(errno.EIO, "short write", None)
            view = view[n:]
    except OSError:
        if cut_back_to is not None:
            try:
                os.ftruncate(fd, cut_back_to)
            except OSError:
                pass
        raise


def _same_file(fd: int, path: str) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def _is_live(fh: BinaryIO, path: str) -> bool:
    return _same_file(fh.fileno(), path)


def _open_or_none(path: str) -> BinaryIO | None:
    try:
        return open(path, "rb")  # noqa: SIM115 - the caller closes
    except FileNotFoundError:
        return None


def _file_size_limit() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def _lock(fd: int) -> bool:
    """Exclusive advisory lock (POSIX); False where there is none or it stays busy.
    Bounded wait: a writer stopped (Ctrl-Z) while holding the lock must not hang
    every other mediated command. Without the lock we only skip the repairs
    (Windows: appends stay whole; readers resync torn lines)."""
    from tcg.osutil import lock_exclusive

    return lock_exclusive(fd, LOCK_WAIT)
