"""code_fingerprint(): which tcg code wrote a cache.

Every start-up cache (policy snapshots, the gate's clean results, masked command
lines, the detector's rule analysis and hyperscan databases, entity and inbound
tables, the sandbox's twins) holds results of tcg's code. One identity of that
code keys them all (tcg.cachestore binds it into each file's MAC), so no cache
lists the modules it depends on by hand — a list that drifted before: editing
``detect/regex.py`` left masked lines stale.

The source of the identity, chosen by what it costs per process (CPU time of the
first call, CPython 3.11, shared 2-core machine; bench/hot_paths.py times the
commands around it):

- an installed wheel: the package version and the bytes of its
  ``tcg-<version>.dist-info/RECORD``, which already holds a SHA-256 of every
  installed file — one small read, ~0.2 ms. Files edited in site-packages
  after installation are not seen (their RECORD hashes no longer match: pip
  treats that install as damaged too);
- anything else (an editable install, a source checkout): the version and the
  path, size, mtime and inode of every file under the package directory — what
  Python itself checks (size + mtime) before reusing a byte-code file —
  ~1.1-1.4 ms for ~210 files. Reading and hashing their contents instead costs
  ~14 ms, on every command.

Computed once per process and memoised.
"""

from __future__ import annotations

import os

_memo: str | None = None


def code_fingerprint() -> str:
    """32 hex digits naming the installed tcg code (version + its files)."""
    global _memo
    if _memo is None:
        import tcg

        _memo = fingerprint_of(os.path.dirname(os.path.abspath(tcg.__file__)), tcg.__version__)
    return _memo


def fingerprint_of(package_dir: str, version: str) -> str:
    """The fingerprint of the package installed at ``package_dir``."""
    from tcg.digest import blake2b_256

    h = blake2b_256(b"tcg-code\0" + version.encode("utf-8") + b"\0")
    h.update(code_state(package_dir, version))
    return h.hexdigest()[:32]


def code_state(package_dir: str, version: str) -> bytes:
    """What names the code at ``package_dir`` (above): a wheel's RECORD, else the
    state of every file. The masking fork server compares it at each request
    (tcg.runner.maskserver: a server whose code changed on disk must not serve)."""
    record = _wheel_record(package_dir, version)
    if record is not None:
        return b"record\0" + record
    return b"tree\0" + _tree_stamp(package_dir)


def _wheel_record(package_dir: str, version: str) -> bytes | None:
    """The RECORD of the wheel that installed ``package_dir``, when there is one
    and it lists this package's files (an editable install's lists only a .pth)."""
    name = os.path.basename(package_dir)
    path = os.path.join(os.path.dirname(package_dir), f"{name}-{version}.dist-info", "RECORD")
    try:
        with open(path, "rb") as fh:
            record = fh.read()
    except OSError:
        return None
    return record if f"\n{name}/__init__.py,".encode() in b"\n" + record else None


def _tree_stamp(package_dir: str) -> bytes:
    """Path, size, mtime and inode of every file below ``package_dir`` (byte-code
    caches excluded): an edit, a checkout or a new file changes it."""
    rows: list[str] = []
    stack = [package_dir]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError:
            rows.append(f"{top}\0unreadable\0{os.urandom(8).hex()}")  # never reuse a cache
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                    continue
                if entry.name.endswith((".pyc", ".pyo")):
                    continue
                st = entry.stat()
            except OSError:
                rows.append(f"{entry.path}\0unreadable\0{os.urandom(8).hex()}")
                continue
            rows.append(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}")
    rows.sort()
    return "\n".join(rows).encode("utf-8", "surrogateescape")
