"""When a session settles the delete guard's transactions: after the line *and its jobs*.

A line typed in a session runs in the shell, after the station has moved what
it deletes to the trash and left stand-ins (tcg.guard.prepare). Only the
shell knows when the line is over; the station learns it from the shell's next
line. A line may leave a job behind, though — ``rm -rf build &`` or
``(sleep 5; rm -rf build) &`` — and settling then would swap the untouched
stand-in back for the original, which the late ``rm`` deletes for good. So a
transaction is settled only once the shell has sent its next line **and** no
process started by the line is still running: the processes below the shell
that were not there when the line was decided (read from /proc; elsewhere
there is no process table to read and the next line settles, as before).

Meanwhile the station holds the transaction's lock, so no other settle (the
guard's recovery at the next delete, another tcg process) touches it. The
settle records ``guard_settle`` (docs/events.md), as a settle after a
`tcg_shell run-line` command does.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

Proc = tuple[int, int]  # (pid, start time in clock ticks): a pid is reused, the pair is not


def process_table() -> dict[Proc, int] | None:
    """{(pid, start): ppid} of every process we can see; None without /proc."""
    if not os.path.isdir("/proc/self"):
        return None
    table: dict[Proc, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 19:
            table[(int(name), int(fields[19]))] = int(fields[1])
    return table


def descendants(root: int, table: dict[Proc, int] | None) -> set[Proc]:
    """The processes below ``root`` (children, their children …) in ``table``."""
    if table is None:
        return set()
    below: dict[int, list[Proc]] = {}
    for proc, ppid in table.items():
        below.setdefault(ppid, []).append(proc)
    found: set[Proc] = set()
    todo = [root]
    while todo:
        for proc in below.get(todo.pop(), ()):
            if proc not in found:
                found.add(proc)
                todo.append(proc[0])
    return found


class Held:
    __slots__ = ("owner", "before", "jobs", "lock")

    def __init__(self, owner: int, before: set[Proc], lock: int):
        self.owner = owner
        self.before = before  # below the shell when the line was decided
        self.jobs: set[Proc] | None = None  # what the line left running (known at its next line)
        self.lock = lock


class DeferredSettles:
    """The session's transactions that wait for their line (and its jobs) to end."""

    def __init__(self, env: Mapping[str, str], emit: Callable[..., None],
                 table: Callable[[], dict[Proc, int] | None] = process_table):
        self.env = env
        self.emit = emit
        self.table = table
        self.held: dict[str, Held] = {}

    def __bool__(self) -> bool:
        return bool(self.held)

    def snapshot(self, owner: int, requester: int | None = None) -> set[Proc]:
        """What runs below ``owner`` now (taken before its line runs), except the
        ``requester`` and the processes between it and ``owner``: a subshell that
        asks about the line it starts with (bash) is that line's, not an older job."""
        table = self.table()
        found = descendants(owner, table)
        if requester is not None and requester != owner and table:
            parent = {pid: ppid for (pid, _start), ppid in table.items()}
            chain = set()
            pid: int | None = requester
            while pid is not None and pid != owner and pid not in chain and pid > 1:
                chain.add(pid)
                pid = parent.get(pid)
            found = {p for p in found if p[0] not in chain}
        return found

    def add(self, txid: str, owner: int, before: set[Proc]) -> None:
        """Hold ``txid`` (just prepared for ``owner``'s line) until it is due."""
        from tcg.guard.trash import Trash, _try_lock

        lock = _try_lock(Trash.for_install(dict(self.env)).txdir(txid))
        if lock is None:  # someone else is settling it already
            return
        self.held[txid] = Held(owner, before, lock)

    def line_over(self, owner: int) -> None:
        """``owner`` sent its next line: its earlier lines are over, except for
        the jobs they left running."""
        waiting = [h for h in self.held.values() if h.owner == owner and h.jobs is None]
        if not waiting:
            return
        now = descendants(owner, self.table())
        for h in waiting:
            h.jobs = now - h.before

    def poll(self) -> None:
        """Settle what is due: the line is over and none of its jobs still runs."""
        if not self.held:
            return
        table = None
        for txid, h in list(self.held.items()):
            if h.jobs is None:
                continue
            if h.jobs:
                if table is None:
                    table = self.table() or {}
                h.jobs &= table.keys()
                if h.jobs:
                    continue
            self._settle(txid)

    def close(self, shell_gone: bool = True) -> None:
        """The session ends: every line is over; settle what no job holds any more,
        and let go of the rest (the guard's recovery settles it once its owner is
        gone: docs/guard.md)."""
        for h in self.held.values():
            if h.jobs is None:
                h.jobs = set() if shell_gone else None
        self.poll()
        for txid in list(self.held):
            os.close(self.held.pop(txid).lock)

    def _settle(self, txid: str) -> None:
        """Settle ``txid`` (never raises: the trash keeps everything meanwhile)."""
        from tcg.guard.prepare import Prepared
        from tcg.guard.trash import MANIFEST, Transaction, Trash

        h = self.held.pop(txid)
        try:
            trash = Trash.for_install(dict(self.env))
            txdir = trash.txdir(txid)
            manifest = trash.read_doc(txdir, MANIFEST)
            if manifest is not None and trash.state(txdir) == "committed":
                Prepared(Transaction.from_manifest(trash, txdir, manifest), self.emit).settle()
        except Exception:  # noqa: BLE001 - left for the guard's recovery
            if os.environ.get("TCG_DEBUG", "") not in ("", "0"):
                import traceback

                traceback.print_exc()
        finally:
            os.close(h.lock)
