"""What ``git push`` would publish, scanned before it runs.

The commits a push sends are those reachable from the refs it pushes and not
already known to be on a remote (``--not --remotes``: the remote-tracking
refs). Their added lines and messages are the payload of the
``git-push-payload`` channel; a secret there blocks the push — nothing leaves,
the remote is unchanged. Reading the remote itself (``ls-remote``) would need
the network and maybe credentials at decision time, so the local view is used:
a commit already pushed through another clone may be scanned again, never one
skipped.
"""

from __future__ import annotations

import bisect
import os
import subprocess

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_COMMITS = 2000
MAX_BYTES = 64 << 20
TIMEOUT_S = 60


def _git(cwd: str, options: tuple[str, ...] | list[str], env: dict[str, str], *args: str,
         limit: int | None = None) -> tuple[int, bytes]:
    full = dict(os.environ)
    full.update(env)
    full.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"})
    proc = subprocess.Popen(["git", *options, *args], cwd=cwd, env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None  # noqa: S101 - stdout=PIPE
    chunks = []
    size = 0
    try:
        while True:
            chunk = proc.stdout.read(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                proc.kill()
                proc.wait()
                return -1, b"".join(chunks)
        return proc.wait(timeout=TIMEOUT_S), b"".join(chunks)
    finally:
        proc.stdout.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def pushed_revisions(refspecs: list[str], push_all: bool, tags: bool) -> list[str]:
    """The local revisions a push sends (before ``--not --remotes``)."""
    revs: list[str] = []
    for spec in refspecs:
        src = spec.split(":", 1)[0]
        if src:
            revs.append(src)
    if push_all:
        revs.append("--branches")
    if tags:
        revs.append("--tags")
    if not revs:
        revs.append("HEAD")
    return revs


def push_findings(cwd: str, options: tuple[str, ...] | list[str], env: dict[str, str], remote: str | None,
                  refspecs: list[str], push_all: bool, tags: bool,
                  policy: Any) -> tuple[list[tuple[str, str]], str | None]:
    """(detail, rule id) for each secret the push would publish, and a problem
    when the payload could not be read in full."""
    from tcg.guard.channels import scan

    options = tuple(options)
    del remote  # see the module docstring: every remote-tracking ref counts as published
    revs = pushed_revisions(refspecs, push_all, tags)
    code, out = _git(cwd, options, env, "rev-list", f"--max-count={MAX_COMMITS + 1}", *revs, "--not",
                     "--remotes", "--")
    if code != 0:
        return [], None  # git itself will refuse this push (unknown ref, not a repository)
    commits = out.decode().split()
    if not commits:
        return [], None
    if len(commits) > MAX_COMMITS:
        return [], f"more than {MAX_COMMITS} commits would be pushed; too many to check before pushing"
    code, log = _git(cwd, options, env, "log", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
                     "-p", "--unified=0", "--format=%x00commit %H%n%B", "--no-walk=unsorted", *commits,
                     limit=MAX_BYTES)
    if code == -1:
        return [], f"the commits to push hold more than {MAX_BYTES >> 20} MiB of changes; too many to check"
    if code != 0:
        return [], "git log failed while reading the commits to push"
    payload, marks = _added_text(log)
    found: list[tuple[str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    starts = [m[0] for m in marks]
    for span in scan(payload, policy):
        k = bisect.bisect_right(starts, span.start) - 1
        commit, path = (marks[k][1], marks[k][2]) if k >= 0 else ("?", "")
        key = (commit, path, span.rule)
        if key in seen:
            continue
        seen.add(key)
        where = f" in {path}" if path else " in its message"
        found.append((f"commit {commit[:12]} adds a secret ({span.rule}){where}", span.rule))
    return found, None


def _added_text(log: bytes) -> tuple[bytes, list[tuple[int, str, str]]]:
    """The messages and added lines of ``git log -p`` output, with (offset,
    commit, path) marks saying where each part came from."""
    out = bytearray()
    marks: list[tuple[int, str, str]] = []
    commit = ""
    path = ""
    in_message = False
    for line in log.split(b"\n"):
        if line.startswith(b"\0commit "):
            commit = line[8:].decode("ascii", "replace")
            path = ""
            in_message = True
            marks.append((len(out), commit, ""))
            continue
        if line.startswith(b"diff --git "):
            in_message = False
            continue
        if line.startswith(b"+++ "):
            name = line[4:]
            path = name[2:].decode("utf-8", "replace") if name.startswith(b"b/") else ""
            marks.append((len(out), commit, path))
            continue
        if in_message:
            out += line + b"\n"
        elif line.startswith(b"+"):
            out += line[1:] + b"\n"
    return bytes(out), marks
