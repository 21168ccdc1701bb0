"""What the delete-guard copies before a line runs, and when it cannot.

A command that replaces an existing file's bytes (``> file``, ``truncate``,
``shred``, ``dd of=``, ``cp``/``install``/``ln``/``tee``/``sed -i``/``curl -o`` over
it) gets ``overwrite-snapshot``: a copy is kept in the trash first. A copy is
refused when it would exceed the trash's copy budget (``snapshot-too-large``), or
when the file holds a secret (``unsaved-secret``: nothing tcg writes may hold one);
the latter also applies to a delete whose target must be copied across devices
(tcg.guard.rules). Functions of the line's review (tcg.guard.rules), like the
git forms in tcg.guard.gitrules.
"""

from __future__ import annotations

import os
import posixpath

from tcg.guard.plan import Copy
from tcg.guard.wording import show
from tcg.policy.cmdline import Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tcg.guard.rules import _Review
    from tcg.policy.cmdline import Redirect, SimpleCommand


def overwrites(rv: _Review, cmd: SimpleCommand, name: str) -> None:
    """Commands that replace or rewrite an existing file's bytes."""
    from tcg.policy.commands import RW, WRITE, classify

    vals = [w.value for w in cmd.args]
    if name == "tee" and any(v in ("-a", "--append") for v in vals):
        return
    if name in ("cp", "install") and any(v in ("-n", "--no-clobber", "--update=none") for v in vals):
        return
    if name == "truncate" and any(v.startswith(("-s+", "-s>", "--size=+", "--size=>")) for v in vals):
        return
    if name == "truncate":
        for i, v in enumerate(vals[:-1]):
            if v in ("-s", "--size") and vals[i + 1].startswith(("+", ">")):
                return
    targets: list[Word] = []
    if name == "shred":
        targets = [w for w in cmd.args if not (w.is_literal and w.value.startswith("-"))]
        targets = [w for i, w in enumerate(targets)
                   if not (i > 0 and cmd.args and _after_option(cmd.args, w, ("-n", "-s", "--iterations",
                                                                              "--size", "--random-source")))]
    else:
        words = classify(cmd, name)
        for w, access in words:
            if access == WRITE or (access == RW and name in ("sed", "perl")):
                targets.append(w)
        if name in ("cp", "install", "ln"):
            targets = _into_dir(rv, words, targets)
    where = f"{name} " + " ".join(show(v) for v in vals)
    paths = []
    for w in targets:
        if not w.static or w.glob:
            continue
        path = rv.resolve(w.value)
        if path is None:
            continue
        if path.startswith("/dev/") and name == "dd" and not path.startswith(("/dev/null", "/dev/shm/")):
            rv.add("overwrite-device", f"{where}: writes onto the device {show(path)}", "dd-device")
            continue
        paths.append(path)
    snapshot_files(rv, where, paths)


def _into_dir(rv: _Review, words: list[tuple[Word, str]], targets: list[Word]) -> list[Word]:
    """``cp a b dir/``: the files overwritten are dir/a and dir/b."""
    from tcg.policy.commands import WRITE

    if len(targets) != 1 or not targets[0].static:
        return targets
    dest = rv.resolve(targets[0].value)
    if dest is None or not os.path.isdir(dest):
        return targets
    return [Word(posixpath.join(dest, posixpath.basename(w.value.rstrip("/"))))
            for w, access in words if access != WRITE and w.static and not w.glob]


def snapshot_files(rv: _Review, where: str, paths: list[str]) -> None:
    if rv.start is None:
        return
    import stat as st_mod

    copies = []
    total = 0
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not st_mod.S_ISREG(st.st_mode) or st.st_size == 0:
            continue  # nothing to lose: new, empty, or not a regular file
        copies.append(Copy(path))
        total += st.st_size
    if not copies:
        return
    from tcg.guard.trash import copy_budget

    budget = copy_budget(rv.policy)
    if total > budget:
        rv.add("snapshot-too-large", f"{where}: {total} bytes would be overwritten, over the copy budget "
                 f"({budget})", "snapshot-budget")
        return
    if refuse_copying_secrets(rv, where, [c.path for c in copies]):
        return
    rv.add("overwrite-snapshot", f"{where}: a copy is kept in the trash first", "overwrite-snapshot",
             tuple(dict.fromkeys(copies)))


def redirect(rv: _Review, red: Redirect, cmd: SimpleCommand | None) -> bool:
    """A truncating redirection onto an existing file. True when it writes a file."""
    if red.target is None or red.is_fd_dup or not red.writes:
        return False
    w = red.target
    if not w.static or w.glob:
        return True
    if w.value in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty") or w.value.startswith("/dev/fd/"):
        return False
    if red.op in (">", ">|", "&>"):
        path = rv.resolve(w.value)
        if path is not None:
            who = cmd.name if cmd is not None and cmd.name else "the line"
            snapshot_files(rv, f"{who} {red.op} {show(w.value)}", [path])
    return True


def refuse_copying_secrets(rv: _Review, where: str, paths: list[str]) -> bool:
    """tcg keeps no copy of a secret (nothing it writes may hold one): a file
    that would be copied into the trash and holds a secret makes the line ASK
    ``unsaved-secret``. True when that was the case."""
    from tcg.guard import fsops

    for path in paths:
        try:
            files = [p for p, st in fsops.walk(path) if fsops.kind_of(st.st_mode) == "file"]
        except OSError:
            continue
        for f in files:
            rule = _secret_in(f, rv.policy)
            if rule is not None:
                rv.add("unsaved-secret", f"{where}: {show(os.path.basename(f))} holds a secret ({rule}); "
                         "tcg keeps no copy of it, so this cannot be undone", "unsaved-secret")
                return True
    return False


def _secret_in(path: str, policy: Any) -> str | None:
    """The rule id of a secret in the file's bytes, or None (read up to the copy budget)."""
    from tcg.detect.engine import load_detector
    from tcg.guard.trash import copy_budget

    try:
        with open(path, "rb") as fh:
            data = fh.read(copy_budget(policy))
    except OSError:
        return None
    for f in load_detector(policy).find_bytes(data, decode=True):
        if f.category == "secret":
            return f.rule_id
    return None


def _after_option(args: tuple[Word, ...], w: Word, options: tuple[str, ...]) -> bool:
    for i, a in enumerate(args[:-1]):
        if a.value in options and args[i + 1] is w:
            return True
    return False
