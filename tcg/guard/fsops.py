"""Filesystem steps of the trash: durable writes, tree copies that are verified,
placeholders, and the identity checks that tell whether a command deleted one.

Every function here either completes or raises OSError with nothing half-done
left behind that the caller does not know about: the trash's write-ahead
manifest (tcg.guard.trash) is what makes the sequence of them recoverable.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# ENOSPC and EDQUOT both mean "the trash is full": never a reason to delete for real.
FULL_ERRNOS = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})
_CHUNK = 1 << 20


def fsync_dir(path: str) -> None:
    """Make a directory's entries (creations, renames) durable. Best effort where
    directories cannot be opened (Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EBADF):  # filesystems without dir fsync
            raise
    finally:
        os.close(fd)


def write_new(path: str, data: bytes, mode: int = 0o600, sync: bool = True) -> None:
    """Create ``path`` with O_EXCL, write ``data`` completely and (``sync``) fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    os.close(fd)


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "special"


def describe(path: str) -> dict[str, object]:
    """What the manifest records about one entry (lstat: a symlink is itself)."""
    st = os.lstat(path)
    kind = kind_of(st.st_mode)
    return {
        "type": kind,
        "mode": stat.S_IMODE(st.st_mode),
        "uid": st.st_uid,
        "gid": st.st_gid,
        "size": st.st_size if kind == "file" else None,
        "mtime_ns": st.st_mtime_ns,
        "atime_ns": st.st_atime_ns,
        "dev": st.st_dev,
        "ino": st.st_ino,
        "link": os.readlink(path) if kind == "symlink" else None,
    }


def walk(path: str) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under ``path`` (itself first), lstat'ed, without following links."""
    st = os.lstat(path)
    yield path, st
    if not stat.S_ISDIR(st.st_mode):
        return
    stack = [path]
    while stack:
        top = stack.pop()
        with os.scandir(top) as it:
            for entry in it:
                est = entry.stat(follow_symlinks=False)
                yield entry.path, est
                if stat.S_ISDIR(est.st_mode):
                    stack.append(entry.path)


def tree_bytes(path: str, limit: int) -> int:
    """Bytes of the regular files under ``path``; stops counting once over ``limit``."""
    total = 0
    for _p, st in walk(path):
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
            if total > limit:
                break
    return total


def free_bytes(path: str) -> int | None:
    try:
        sv = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return sv.f_bavail * sv.f_frsize


def copy_tree(src: str, dst: str) -> None:
    """Copy ``src`` (file, symlink or directory tree) to ``dst``, which must not
    exist: contents, modes and times; symlinks as links. A special file (fifo,
    socket, device) cannot be kept and raises. Every copied file is fsynced."""
    st = os.lstat(src)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(src), dst)
    elif stat.S_ISREG(st.st_mode):
        _copy_file(src, dst, st)
    elif stat.S_ISDIR(st.st_mode):
        os.mkdir(dst, 0o700)
        with os.scandir(src) as it:
            names = [e.name for e in it]
        for name in names:
            copy_tree(os.path.join(src, name), os.path.join(dst, name))
        os.chmod(dst, stat.S_IMODE(st.st_mode) | 0o700)
    else:
        raise OSError(errno.EOPNOTSUPP, "a special file cannot be kept in the trash", src)
    _set_times(dst, st)


def _copy_file(src: str, dst: str, st: os.stat_result) -> None:
    fin = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            copied = False
            if hasattr(os, "copy_file_range"):
                try:  # in-kernel copy (reflink where the filesystem can)
                    left = st.st_size
                    while left > 0:
                        n = os.copy_file_range(fin, fout, min(left, 1 << 30))
                        if n == 0:
                            break
                        left -= n
                    copied = left <= 0
                except OSError as exc:
                    if exc.errno in FULL_ERRNOS:
                        raise
                    os.lseek(fin, 0, os.SEEK_SET)
                    os.ftruncate(fout, 0)
                    os.lseek(fout, 0, os.SEEK_SET)
            if not copied:
                while True:
                    chunk = os.read(fin, _CHUNK)
                    if not chunk:
                        break
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fout, view):]
            os.fchmod(fout, stat.S_IMODE(st.st_mode))
            os.fsync(fout)
        finally:
            os.close(fout)
    finally:
        os.close(fin)


def _set_times(path: str, st: os.stat_result) -> None:
    try:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
    except (NotImplementedError, OSError):
        pass  # symlink times where the platform cannot set them


def same_tree(a: str, b: str) -> bool:
    """True when ``b`` holds the same names, types, link targets and file bytes as ``a``."""
    from tcg.digest import sha256

    def digest(path: str) -> bytes:
        h = sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
        return h.digest()

    try:
        left = {os.path.relpath(p, a): st for p, st in walk(a)}
        right = {os.path.relpath(p, b): st for p, st in walk(b)}
    except OSError:
        return False
    if left.keys() != right.keys():
        return False
    for rel, st in left.items():
        other = right[rel]
        if kind_of(st.st_mode) != kind_of(other.st_mode):
            return False
        pa, pb = os.path.normpath(os.path.join(a, rel)), os.path.normpath(os.path.join(b, rel))
        if stat.S_ISLNK(st.st_mode) and os.readlink(pa) != os.readlink(pb):
            return False
        if stat.S_ISREG(st.st_mode) and (st.st_size != other.st_size or digest(pa) != digest(pb)):
            return False
    return True


def remove_tree(path: str) -> None:
    """Delete ``path`` (a file, link or tree) for good: only ever called on the
    trash's own copies, or on what `tcg gc` was told to expire."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return
    import shutil

    def retry(func, p, _exc):  # type: ignore[no-untyped-def]
        os.chmod(os.path.dirname(p), 0o700)  # read-only directories kept from the original
        func(p)

    shutil.rmtree(path, onerror=retry)


# ------------------------------------------------------------------ placeholders


def make_placeholder(path: str, info: dict[str, object]) -> tuple[int | None, tuple[int, int, int]]:
    """Put a stand-in where a relocated entry was, so the command finds what it
    expects and behaves as it would have: an empty directory, a sparse file of
    the same size, a link to the same target; same mode and times.

    Returns (an fd held on it or None, its identity (dev, ino, ctime_ns)). The
    fd lets the station tell exactly whether the command removed it (the link
    count drops to 0; the inode cannot be reused while it is open)."""
    kind = info["type"]
    mode = int(info["mode"])  # type: ignore[call-overload]
    fd: int | None = None
    if kind == "dir":
        os.mkdir(path, 0o700)
        os.chmod(path, mode)
    elif kind == "file":
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.ftruncate(fd, int(info["size"] or 0))  # type: ignore[call-overload]
            os.fchmod(fd, mode)
        except OSError:
            os.close(fd)
            raise
        os.close(fd)
        fd = None
    elif kind == "symlink":
        os.symlink(str(info["link"]), path)
    else:
        raise OSError(errno.EOPNOTSUPP, "no placeholder for a special file", path)
    try:
        os.utime(path, ns=(int(info["atime_ns"]), int(info["mtime_ns"])),  # type: ignore[call-overload]
                 follow_symlinks=False)
    except (NotImplementedError, OSError):
        pass
    flags = getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_NOFOLLOW", 0)
    if kind == "dir":
        flags |= getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(path, flags)
        st = os.fstat(fd)
    except OSError:
        fd = None
        st = os.lstat(path)
    return fd, (st.st_dev, st.st_ino, st.st_ctime_ns)


def placeholder_state(path: str, fd: int | None, ident: tuple[int, int, int]) -> str:
    """What the command did to a placeholder: ``deleted``, ``untouched`` (still
    there, unchanged), ``changed`` (still there, written to) or ``replaced``
    (something else is at the path now)."""
    if fd is not None:
        try:
            if os.fstat(fd).st_nlink == 0:
                return "deleted"
        except OSError:
            pass
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "deleted"
    if (st.st_dev, st.st_ino) != ident[:2]:
        return "replaced"
    return "untouched" if st.st_ctime_ns == ident[2] else "changed"


def remove_placeholder(path: str, info: dict[str, object]) -> None:
    if info["type"] == "dir":
        os.rmdir(path)
    else:
        os.unlink(path)
