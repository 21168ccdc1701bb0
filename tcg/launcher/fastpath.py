"""Everything a cache-hit `tcg launch` executes, in one module.

`python -I -m tcg launch claude` (what the shell hook's functions run) must add
no more than ~1.5x a bare interpreter start, and the interpreter plus runpy
already take most of that. So the hit path is: this module, tcg.launcher.wiring,
and tcg's own lean paths/keyhash/events — no click, no TOML, no scanner, no
pathlib/typing/json/hashlib, no git (the stat witness stands in for it). Each
module import costs ~0.1-0.2 ms, hence one module rather than several;
tcg.launcher.{cache,resolve,witness,state,exec,launch} re-export what they
share with it, so every piece has one definition.

Order (tcg.launcher.launch documents the full path):
policy stamp → known agent → agent binary → repository (discover, witness,
gate cache: must say "clean", or no repository) → wiring → event → exec.
Anything unexpected returns None: the full path then decides and explains.
"""

from __future__ import annotations

import os
import sys
from operator import attrgetter  # already imported by runpy (collections)

from tcg.errors import TcgError  # light (os, sys); the event writer needs it anyway
from tcg.paths import ensure_private_dir, get_paths

TYPE_CHECKING = False  # typing costs ~3 ms of import on the cache-hit path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from tcg.keyhash import KeyedHasher
    from tcg.paths import Paths

EXIT_REFUSED = 126
EXIT_NOT_FOUND = 127
EXIT_USAGE = 2

USAGE = "usage: tcg launch [--accept-findings] AGENT [ARG…]\n"


# ------------------------------------------------------------ arguments and entry point


def parse_args(argv: list[str]) -> tuple[bool, str, list[str]]:
    """(accept_findings, agent, agent_args). Raises ValueError on bad usage."""
    accept = False
    args = list(argv)
    while args and args[0].startswith("-"):
        opt = args.pop(0)
        if opt == "--":
            break
        if opt == "--accept-findings":
            accept = True
        else:
            raise ValueError(f"unknown option {opt!r} (options go before AGENT; the agent's own go after it)")
    if not args:
        raise ValueError("missing AGENT")
    return accept, args[0], args[1:]


def main(argv: list[str]) -> int:
    """Entry point of `tcg launch` (``python -m tcg launch …`` comes here without tcg.cli).

    The cache-hit path runs first; everything else (and any surprise on the
    way) takes the full path, tcg.launcher.launch, under tcg's error handler.
    """
    try:
        accept, agent, agent_args = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write(f"tcg launch: {exc}\n{USAGE}")
        return EXIT_USAGE
    if not accept:
        try:
            fast = fast_launch(agent, agent_args, os.environ, os.getcwd())
        except Exception:  # noqa: BLE001 - the full path decides, and explains itself
            fast = None
        if fast is not None:
            return fast
    import gc

    gc.enable()  # tcg/__main__.py turns it off for the cache-hit path
    from tcg.errors import run_with_error_handler
    from tcg.launcher.launch import launch

    return run_with_error_handler(lambda: launch(agent, agent_args, accept_findings=accept, fast=False), prog="tcg")


# ------------------------------------------------------------ private files


PRIVATE_TAG = "launcher-cache/marshal"


def install_key(paths: Paths) -> bytes | None:
    """The install key, or None before it exists (then nothing is cached yet)."""
    from tcg.keyhash import existing_key

    return existing_key(paths)


def load_marshal(path: str | os.PathLike[str], key: bytes | None) -> Any:
    """A marshal file written by tcg (write_private), or None when unreadable.

    The body is read only when its MAC verifies under the install key: the
    cache dir is writable by anything running as the user, and a forged entry
    must neither pass the gate nor reach marshal, which is not hardened
    against malicious data.
    """
    if key is None:
        return None
    import marshal

    from tcg.signed import read_signed

    body = read_signed(path, key, PRIVATE_TAG)
    if body is None:
        return None
    try:
        return marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None


# ------------------------------------------------------------ policy stamp

STAMP_FILE = "launch-policy.stamp"
STAMP_VERSION = 1


def _file_id(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:absent"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def policy_stamp(cwd: str | os.PathLike[str], user_policy: str | os.PathLike[str]) -> str:
    """Identity of every file the effective policy is built from, seen from ``cwd``.

    Mirrors tcg.policy.load: the built-in default (and the loader's code: every
    file of tcg/policy), the user file (or TCG_POLICY), and the repository layer
    found by walking up from ``cwd`` to the first directory holding ``.git``
    (find_repo_policy).
    """
    import tcg
    from tcg.digest import sha256_hex

    pkg = os.path.join(os.path.dirname(os.path.abspath(tcg.__file__)), "policy")
    parts = [tcg.__version__]
    try:
        with os.scandir(pkg) as it:
            code = sorted(e.name for e in it if e.name.endswith((".py", ".toml")))
    except OSError:
        code = ["unreadable"]
    parts += [_file_id(os.path.join(pkg, name)) for name in code]
    parts.append("user=" + _file_id(os.fspath(user_policy)))
    cur = os.path.realpath(cwd)
    while True:
        cand = os.path.join(cur, ".tcg", "policy.toml")
        if os.path.isfile(cand):
            parts.append("repo=" + _file_id(cand))
            break
        if os.path.exists(os.path.join(cur, ".git")):
            parts.append("repo-stop=" + cur)
            break
        parent = os.path.dirname(cur)
        if parent == cur:
            parts.append("repo=none")
            break
        cur = parent
    return sha256_hex("\0".join(parts).encode("utf-8", "surrogateescape"))


def load_stamp(cache_dir: str | os.PathLike[str], stamp: str, key: bytes | None) -> dict[str, Any] | None:
    entry = load_marshal(os.path.join(os.fspath(cache_dir), STAMP_FILE), key)
    if type(entry) is not dict or entry.get("v") != STAMP_VERSION or entry.get("stamp") != stamp:
        return None
    if type(entry.get("fingerprint")) is not str or type(entry.get("snapshot")) is not str:
        return None
    known = entry.get("known")
    if type(known) is not list or not all(type(a) is str for a in known):
        return None
    return entry


# ------------------------------------------------------------ gate cache (read side)

CACHE_VERSION = 2
CACHE_SUFFIX = ".gate"
CACHE_FIELDS = frozenset({
    "v", "repo", "state", "policy", "scanner", "agent", "status", "complete",
    "files", "blobs", "findings", "counts_by_rule", "scanned_at", "duration_ms",
})


def scan_cache_dir(paths: Paths) -> str:
    return os.path.join(paths.cache_dir, "scan")


def cache_path(scan_cache: str | os.PathLike[str], repo_hash: str) -> str:
    return os.path.join(os.fspath(scan_cache), repo_hash + CACHE_SUFFIX)


def load_cached(path: str | os.PathLike[str], state: str, fingerprint: str, scanner: str,
                key: bytes | None) -> dict[str, Any] | None:
    """The cached entry when it matches all three keys; None otherwise (or when unreadable)."""
    entry = load_marshal(path, key)
    if type(entry) is not dict or entry.get("v") != CACHE_VERSION:
        return None
    if (entry.get("state"), entry.get("policy"), entry.get("scanner")) != (state, fingerprint, scanner):
        return None
    if entry.get("status") not in ("clean", "findings", "partial"):
        return None  # errors are never cached: the next launch tries again
    counts = entry.get("counts_by_rule")
    if type(counts) is not dict or not all(type(k) is str and type(v) is int for k, v in counts.items()):
        return None
    if not all(type(entry.get(k, 0)) is int for k in ("files", "blobs")):
        return None
    return entry


def gate_fields(repo: str | None, status: str, cache: str, scanned: bool, files: int, blobs: int,
                counts_by_rule: dict[str, int], complete: bool, duration_ms: int) -> dict[str, Any]:
    """The ``launch_gate`` event's gate fields (no path, no value)."""
    return {
        "repo": repo, "status": status, "cache": cache, "scanned": scanned, "files": files, "blobs": blobs,
        "findings": sum(counts_by_rule.values()), "counts_by_rule": counts_by_rule, "complete": complete,
        "duration_ms": duration_ms,
    }


def scanner_id() -> str:
    """tcg's version and its rule files: a new rule set must not reuse an old 'clean'."""
    import tcg
    from tcg.digest import sha256_hex

    parts = [tcg.__version__]
    rules = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "detect", "rules")
    try:
        with os.scandir(rules) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            st = entry.stat()
            parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        parts.append("rules-unreadable")
    return sha256_hex("\0".join(parts).encode())[:16]


# ------------------------------------------------------------ the agent binary

# Any executable holding this marker in its first bytes is a tcg shim.
SHIM_MARKER = b"tcg-launch-shim"
_SNIFF = 1024


def _is_tcg_shim(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF)
    except OSError:
        return False
    if SHIM_MARKER in head:
        return True
    # A console script of this very tcg install (`tcg`, `tcg_shell`) is never an agent.
    return head.startswith(b"#!") and b"from tcg" in head


def _candidates(name: str, path_env: str | None) -> list[str]:
    exts = [""]
    if os.name == "nt":
        exts = [""] + [e.lower() for e in os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(";") if e]
    out = []
    for d in (path_env if path_env is not None else os.defpath).split(os.pathsep):
        if not d:
            continue  # an empty entry means cwd: never pick an agent from the repo under scan
        for ext in exts:
            out.append(os.path.join(d, name + ext))
    return out


def resolve_agent(name: str, path_env: str | None = None) -> str | None:
    """Absolute path of the first executable ``name`` on PATH that is not a tcg shim."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return None  # agents are names from the policy, never paths
    seen: set[str] = set()
    for cand in _candidates(name, path_env):
        if not os.path.isfile(cand) or not os.access(cand, os.X_OK):
            continue
        real = os.path.realpath(cand)
        if real in seen:
            continue
        seen.add(real)
        if _is_tcg_shim(real):
            continue
        return os.path.abspath(cand)
    return None


def interpreter() -> str:
    """The absolute path of the running Python (what generated helpers exec)."""
    return os.path.abspath(sys.executable)


# ------------------------------------------------------------ repository discovery and the stat witness
# (tcg.launcher.witness documents the witness and records it; this is the read side)

WITNESS_VERSION = 1
WITNESS_SUFFIX = ".witness"
ENV_EXACT = ("HOME", "XDG_CONFIG_HOME")
UNSURE_ENV = ("GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_DIR", "GIT_WORK_TREE",
              "GIT_COMMON_DIR")
_CHUNK = 512  # names stat-ed per comparison
_SHAKE_ABOVE = 1 << 16  # names longer than this: SHAKE-256 keystream (one call) instead of SHA-256 blocks


def discover(cwd: str) -> str | None:
    """The work-tree root git would find from ``cwd``: a path; "" when there is
    certainly no repository; None when unsure (let git decide).

    Mirrors git's discovery for the plain case only: the nearest ``.git`` at or
    above cwd that is a directory. A ``.git`` file (worktree, submodule), cwd
    inside a ``.git`` directory, a bare-repository-shaped directory on the way
    up, or discovery-changing environment → None.
    """
    environ = os.environ
    for var in UNSURE_ENV:
        if environ.get(var):
            return None
    d = os.path.realpath(cwd)
    isdir, join = os.path.isdir, os.path.join
    while True:
        dot = join(d, ".git")
        if os.path.lexists(dot):
            if os.path.islink(dot) or not isdir(dot):
                return None
            return d
        if os.path.basename(d) == ".git" or (
            os.path.isfile(join(d, "HEAD")) and isdir(join(d, "objects")) and isdir(join(d, "refs"))
        ):
            return None  # inside a git dir, or a bare repository: git's answer may differ
        parent = os.path.dirname(d)
        if parent == d:
            return ""
        d = parent


def env_record() -> bytes:
    """The environment that changes what git reports (kept, encrypted, in the witness)."""
    environ = os.environ
    items = sorted(f"{k}={v}" for k, v in environ.items() if k.startswith("GIT_") or k in ENV_EXACT)
    return "\0".join(items).encode("utf-8", "surrogateescape")


# What a witness compares: (mode, dev, inode, size, mtime_ns, ctime_ns).
stat_fields = attrgetter("st_mode", "st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")


def stat_tuple(path: str) -> tuple[int, int, int, int, int, int] | None:
    try:
        return stat_fields(os.lstat(path))
    except OSError:
        return None


def keystream(hasher: KeyedHasher, nonce: bytes, n: int) -> bytes:
    """``n`` bytes of keystream for the witness names: a PRF of the install key and a fresh nonce."""
    seed = bytes.fromhex(hasher.hexdigest(b"tcg witness names\0" + nonce))
    if n > _SHAKE_ABOVE:
        try:
            from _sha3 import shake_256
        except ImportError:  # pragma: no cover - depends on the interpreter build
            from hashlib import shake_256
        return shake_256(seed).digest(n)
    from tcg.digest import sha256

    return b"".join(sha256(seed + i.to_bytes(4, "little")).digest() for i in range((n + 31) // 32))[:n]


def xor(data: bytes, stream: bytes) -> bytes:
    n = len(data)
    return (int.from_bytes(data, "little") ^ int.from_bytes(stream[:n], "little")).to_bytes(n, "little")


def witness_path(scan_cache: str, repo_hash: str) -> str:
    return os.path.join(scan_cache, repo_hash + WITNESS_SUFFIX)


def witness_check(scan_cache: str, repo_hash: str, root: str, hasher: KeyedHasher) -> str | None:
    """The recorded state key when nothing it depends on changed; None otherwise.

    The first ``len(stats)`` names must exist with exactly the recorded stat
    tuples, the remaining ones must still not exist.
    """
    try:
        entry = load_marshal(witness_path(scan_cache, repo_hash), hasher.key)
        if type(entry) is not dict or entry.get("v") != WITNESS_VERSION:
            return None
        sealed, stats, state = entry["names"], entry["stats"], entry["state"]
        plain = xor(sealed, keystream(hasher, entry["nonce"], len(sealed)))
        env, sep, blob = plain.partition(b"\0\0")
        if not sep or env != env_record() or type(stats) is not list or type(state) is not str:
            return None
        prefix = root + "/"
        full = [n if n[:1] == "/" else prefix + n for n in blob.decode("utf-8", "surrogateescape").split("\0")]
        k = len(stats)
        if len(full) < k:
            return None
        lstat, present = os.lstat, full[:k]
        try:
            for i in range(0, k, _CHUNK):  # in chunks: a stale witness fails early (directories come first)
                if list(map(stat_fields, map(lstat, present[i:i + _CHUNK]))) != stats[i:i + _CHUNK]:
                    return None
        except OSError:
            return None  # a file that was there is gone
        if any(map(os.path.lexists, full[k:])):
            return None  # a file that was not there appeared
        return state
    except Exception:  # noqa: BLE001 - a damaged witness is only a miss: git decides
        return None


def witness_key(cwd: str, paths: Paths, key: bytes | None = None
                ) -> tuple[str, str | None, str | None, KeyedHasher | None]:
    """(root, repo hash, state key, hasher) from the witness alone, without git.

    root "" = certainly no repository; root None = unsure (ask git); state key
    None = no valid witness (ask git).
    """
    root = discover(cwd)
    if not root:
        return root, None, None, None
    from tcg.keyhash import KeyedHasher

    hasher = KeyedHasher(key) if key is not None else KeyedHasher.for_install(paths)
    repo_hash = hasher.h16(os.fsencode(root))
    return root, repo_hash, witness_check(scan_cache_dir(paths), repo_hash, root, hasher), hasher


# ------------------------------------------------------------ wiring
# (tcg.launcher.wiring documents it; the code is here because every launch runs it)

PREFIX_NAME = "tcg-claude-prefix"
BASH_ENV_NAME = "tcg-bash-env.sh"
ZDOTDIR_NAME = "zdotdir"

CLAUDE_AGENTS = frozenset({"claude"})
# Agents that run their tool commands through `bash -c` / `zsh -c` child shells.
SHELL_ENV_AGENTS = frozenset({"codex", "qwen", "qwen-code", "cursor-agent", "cursor"})


class WiringError(TcgError):
    """A helper file the agent's wiring needs cannot be created or trusted."""

    exit_code = 126


def _quote(s: str) -> str:
    """shlex.quote without importing shlex (and re): the same result."""
    if not s:
        return "''"
    safe = "@%+=:,./-_" "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    if all(c in safe for c in s) and s.isascii():
        return s
    return "'" + s.replace("'", "'\"'\"'") + "'"


def helper_dir(paths: Paths | None = None) -> str:
    if paths is None:
        paths = get_paths()
    return os.path.join(paths.state_dir, "bin")


def _shebang_ok(python: str) -> bool:
    # Linux passes at most one shebang argument and stops at whitespace;
    # 127 bytes is the historical limit.
    return not any(c.isspace() for c in python) and len(python) < 100


def claude_prefix_text(python: str) -> str:
    """The prefix executable: Python when the interpreter path fits a shebang, else sh."""
    if _shebang_ok(python):
        return (
            f"#!{python} -I\n"
            "# tcg-launch-shim: generated by `tcg launch claude` (CLAUDE_CODE_SHELL_PREFIX).\n"
            "# Claude Code passes the whole shell line as ONE argument; the station decides and runs it.\n"
            "import sys\n"
            "from tcg.launcher.claude_prefix import main\n"
            "sys.exit(main(sys.argv[1:]))\n"
        )
    return (
        "#!/bin/sh\n"
        "# tcg-launch-shim: generated by `tcg launch claude` (CLAUDE_CODE_SHELL_PREFIX).\n"
        f"exec {_quote(python)} -I -c "
        "'import sys; from tcg.launcher.claude_prefix import main; sys.exit(main(sys.argv[1:]))' "
        '"$@"\n'
    )


def bash_env_text(python: str) -> str:
    """Read by every non-interactive bash the agent starts (BASH_ENV)."""
    py = _quote(python)
    return (
        "# shellcheck shell=bash\n"
        "# tcg-launch-shim: generated by `tcg launch` (BASH_ENV for an agent's shells).\n"
        "# A `bash -c LINE` started by the agent re-runs LINE through the station agent,\n"
        "# which checks the policy, runs it, and masks its output. Inside the station\n"
        "# (TCG_MEDIATED set) the user's own BASH_ENV, if any, is read as usual.\n"
        'if [ -z "${TCG_MEDIATED-}" ] && [ -n "${BASH_EXECUTION_STRING-}" ]; then\n'
        "  # `bash -c LINE arg0 arg1 …`: keep the positional parameters ($0 becomes the shell).\n"
        '  if [ "$#" -gt 0 ]; then\n'
        "    printf -v _tcg_args ' %q' \"$@\"\n"
        '    set -- "set --$_tcg_args\n$BASH_EXECUTION_STRING"\n'
        "  else\n"
        '    set -- "$BASH_EXECUTION_STRING"\n'
        "  fi\n"
        f'  exec {py} -I -m tcg.shell_entry run-line --shell "$BASH" -- "$1"\n'
        "fi\n"
        'if [ -n "${TCG_USER_BASH_ENV-}" ] && [ -r "$TCG_USER_BASH_ENV" ]; then\n'
        "  # shellcheck source=/dev/null\n"
        '  . "$TCG_USER_BASH_ENV"\n'
        "fi\n"
    )


def zshenv_text(python: str) -> str:
    """``$ZDOTDIR/.zshenv`` for an agent's zsh: the same choke point as BASH_ENV."""
    py = _quote(python)
    return (
        "# tcg-launch-shim: generated by `tcg launch` (ZDOTDIR for an agent's shells).\n"
        "# First give the user's own ZDOTDIR back, so .zprofile/.zshrc load from it.\n"
        'if [ -n "${TCG_USER_ZDOTDIR-}" ]; then ZDOTDIR=$TCG_USER_ZDOTDIR; else unset ZDOTDIR; fi\n'
        'if [ -z "${TCG_MEDIATED-}" ] && [ -n "${ZSH_EXECUTION_STRING-}" ]; then\n'
        '  if [ "$#" -gt 0 ]; then\n'
        '    set -- "set -- ${(j: :)${(q)@}}\n$ZSH_EXECUTION_STRING"\n'
        "  else\n"
        '    set -- "$ZSH_EXECUTION_STRING"\n'
        "  fi\n"
        f'  exec {py} -I -m tcg.shell_entry run-line --shell "$(whence -p zsh || echo zsh)" -- "$1"\n'
        "fi\n"
        '[ -r "${ZDOTDIR:-$HOME}/.zshenv" ] && . "${ZDOTDIR:-$HOME}/.zshenv"\n'
    )


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _write_verified(path: str, text: str, mode: int) -> str:
    """Make ``path`` hold exactly ``text`` with ``mode``, owned by us; verify it."""
    data = text.encode("utf-8")
    try:
        st = os.lstat(path)
        trusted = (
            not (st.st_mode & 0o170000) == 0o120000  # not a symlink
            and (os.name != "posix" or st.st_uid == os.getuid())
            and (st.st_mode & 0o7777) == mode
            and st.st_size == len(data)
        )
        if trusted and _read(path) == data:
            return path
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise WiringError(f"cannot read {path}: {exc.strerror}", hint="check the tcg state directory (tcg doctor)") from exc
    parent, name = os.path.split(path)
    tmp = os.path.join(parent, f".{name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            os.write(fd, data)
            if os.name == "posix":
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WiringError(
            f"cannot write the agent helper {path}: {exc.strerror}",
            hint="check permissions of the tcg state directory (tcg doctor)",
        ) from exc
    if _read(path) != data or (os.name == "posix" and (os.stat(path).st_mode & 0o7777) != mode):
        raise WiringError(f"the agent helper {path} did not verify", hint="check the tcg state directory (tcg doctor)")
    return path


def _helper_dir(paths: Paths | None) -> str:
    try:
        return ensure_private_dir(helper_dir(paths))
    except OSError as exc:
        raise WiringError(f"cannot create the agent helper directory: {exc.strerror}",
                          hint="check permissions of the tcg state directory (tcg doctor)") from exc


def ensure_claude_prefix(python: str, paths: Paths | None = None) -> str:
    """The CLAUDE_CODE_SHELL_PREFIX executable (0700), created or repaired as needed."""
    d = _helper_dir(paths)
    path = _write_verified(os.path.join(d, PREFIX_NAME), claude_prefix_text(python), 0o700)
    if os.name == "posix" and not os.access(path, os.X_OK):
        raise WiringError(f"the agent helper {path} is not executable",
                          hint="is the tcg state directory on a noexec mount? set TCG_HOME elsewhere")
    return path


def ensure_shell_env(python: str, paths: Paths | None = None) -> tuple[str, str]:
    """(BASH_ENV file, ZDOTDIR directory) for agents that spawn bash/zsh."""
    d = _helper_dir(paths)
    bash_env = _write_verified(os.path.join(d, BASH_ENV_NAME), bash_env_text(python), 0o600)
    try:
        zdot = ensure_private_dir(os.path.join(d, ZDOTDIR_NAME))
    except OSError as exc:
        raise WiringError(f"cannot create {os.path.join(d, ZDOTDIR_NAME)}: {exc.strerror}",
                          hint="check permissions of the tcg state directory (tcg doctor)") from exc
    _write_verified(os.path.join(zdot, ".zshenv"), zshenv_text(python), 0o600)
    return bash_env, zdot


def agent_env(
    agent: str,
    session: str,
    base: Mapping[str, str],
    python: str,
    paths: Paths | None = None,
) -> tuple[dict[str, str], list[str]]:
    """The agent's environment and the names of the mechanisms wired (for the event)."""
    env = dict(base)
    # A mediated shell's marker must not leak into the agent: its own commands are fresh lines.
    for var in ("TCG_MEDIATED", "TCG_MEDIATED_FDS"):
        env.pop(var, None)
    env["TCG_ACTOR"] = "agent"
    env["TCG_AGENT"] = agent
    env["TCG_SESSION"] = session
    wired = ["env"]
    if agent in CLAUDE_AGENTS:
        env["CLAUDE_CODE_SHELL_PREFIX"] = ensure_claude_prefix(python, paths)
        wired.append("claude-shell-prefix")
    elif agent in SHELL_ENV_AGENTS:
        bash_env, zdot = ensure_shell_env(python, paths)
        user_bash_env = base.get("BASH_ENV")
        if user_bash_env and user_bash_env != bash_env:
            env["TCG_USER_BASH_ENV"] = user_bash_env
        env["BASH_ENV"] = bash_env
        user_zdot = base.get("ZDOTDIR")
        if user_zdot and user_zdot != zdot:
            env["TCG_USER_ZDOTDIR"] = user_zdot
        env["ZDOTDIR"] = zdot
        wired += ["bash-env", "zdotdir"]
    return env, wired


# ------------------------------------------------------------ events and exec


def actor(env: Mapping[str, str]) -> str:
    from tcg.events import actor_from_env

    return actor_from_env(env)


def emit(policy_ref: dict[str, str] | None, session: str, who: str, decision: str, reason: str,
         rules: list[str], **fields: Any) -> None:
    """One ``launch_gate`` event; a failure to record it is said once, the decision stands."""
    from tcg.events import EventLog

    try:
        EventLog().emit(
            "launch_gate", surface="launch", actor=who, decision=decision, reason=reason, rules=rules,
            policy=policy_ref, session=session, **fields,
        )
    except Exception as exc:  # noqa: BLE001 - TcgError (EventLogError) or OSError only
        if not isinstance(exc, OSError) and not hasattr(exc, "hint"):
            raise
        sys.stderr.write(f"tcg: warning: the launch decision was not recorded: {getattr(exc, 'message', exc)}\n")


def exec_agent(path: str, argv: list[str], env: Mapping[str, str]) -> int:
    """Replace this process with the agent (POSIX); return its exit code (Windows).

    POSIX: no wrapper process and no PTY between the agent and the terminal — the
    agent inherits the very file descriptors (and controlling terminal) `tcg
    launch` was started with, and keeps its PID. Python ignores SIGPIPE and
    SIGXFSZ, and ignored dispositions survive exec, so they are reset first.
    Windows: os.execv does not replace the process (python/cpython#101191), so the
    agent runs as a child with inherited handles and its exit code is returned.
    Returns only on failure (POSIX): 126 not executable, 127 not found.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import subprocess

        try:
            return subprocess.call([path, *argv[1:]], env=dict(env))
        except OSError as exc:
            sys.stderr.write(f"tcg: cannot start {argv[0]}: {exc.strerror}\n")
            return 126
    import _signal  # the C module: `signal` itself imports enum (~1 ms)

    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(_signal, name):
            _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
    try:
        os.execve(path, argv, dict(env))
    except OSError as exc:
        sys.stderr.write(f"tcg: cannot start {argv[0]} ({path}): {exc.strerror}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    return 127  # pragma: no cover - execve does not return


# ------------------------------------------------------------ the cache-hit launch


def fast_launch(agent: str, agent_args: list[str], environ: Mapping[str, str], here: str) -> int | None:
    """The cache-hit launch: no TOML, no click, no scanner. None = take the full path.

    Taken only when everything is already known and clean: the policy stamp
    matches (same layer files), the agent is known and on PATH, and the gate
    cache holds "clean" for the repository's state key (or there is no
    repository). The key comes from the stat witness — no git at all — or,
    when the witness does not hold, from git (which records a fresh one).
    Anything else — findings, a miss, an error — goes the full way, which
    explains itself and records its own event.
    """
    if environ.get("TCG_POLICY"):
        return None
    import time

    paths = get_paths(environ)
    key = install_key(paths)
    stamp = load_stamp(paths.cache_dir, policy_stamp(here, paths.policy_path), key)
    if stamp is None or agent not in stamp["known"]:
        return None
    path = resolve_agent(agent, environ.get("PATH"))
    if path is None:
        return None
    t0 = time.perf_counter()
    witnessed = witness_key(here, paths, key)
    root, repo_hash, state, _ = witnessed
    if root == "":
        fields = gate_fields(None, "none", "none", False, 0, 0, {}, True, 0)
    elif state is not None and repo_hash is not None:
        hit = load_cached(cache_path(scan_cache_dir(paths), repo_hash), state, stamp["fingerprint"], scanner_id(),
                          key)
        if hit is None or hit["status"] != "clean":
            return None
        fields = gate_fields(repo_hash, "clean", "hit", False, hit.get("files", 0), hit.get("blobs", 0),
                             hit["counts_by_rule"], bool(hit.get("complete", True)),
                             int((time.perf_counter() - t0) * 1000))
    else:  # no witness (a change, racy files, an unusual layout): git computes the key
        from tcg.launcher.gate import lookup

        found, _ = lookup(here, stamp["fingerprint"], paths, witnessed=witnessed)
        if found is None or found.status not in ("clean", "none"):
            return None
        root = found.repo_hash or ""
        fields = found.fields()
    from tcg.events import new_session_id

    session = new_session_id()
    try:
        child_env, wired = agent_env(agent, session, environ, interpreter(), paths)
    except WiringError:
        return None
    policy_ref = {"snapshot": stamp["snapshot"], "fingerprint": stamp["fingerprint"]}
    emit(policy_ref, session, actor(environ), "allow", "allowed" if root else "no-repository", [],
         agent=agent, **fields, accepted=False, wired=wired, exit_code=None)
    return exec_agent(path, [agent, *agent_args], child_env)
