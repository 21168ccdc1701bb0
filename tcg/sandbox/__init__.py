"""The second layer of an agent's enforcement: the OS view its command runs in.

The line policy (first layer) judges the command line; it cannot see what a
program opens at run time. For actor ``agent`` every command therefore also runs

- where secret stores cannot be read: each is covered by an empty file or by a
  masked twin (Linux namespaces, tcg.sandbox.linux or bubblewrap; macOS Seatbelt
  denies reading them);
- with an environment that holds no secret (tcg.sandbox.envscrub), on every
  platform;

and everything it prints still goes through the strict masker (third layer).
docs/policy.md ("The sandbox view") describes what is covered and what is not.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from tcg.policy.compiled import SandboxSettings

MECHANISMS = ("auto", "namespaces", "bwrap")
FAIL_MODES = ("block", "warn")
DEFAULT_MAX_DIRS = 20000
TWIN_MAX_BYTES = 1 << 20  # a larger store is covered by the empty file
UNAVAILABLE_HINT = (
    "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; "
    "user.max_user_namespaces > 0), or install bubblewrap and set sandbox.mechanism = \"bwrap\"; "
    "sandbox.on-unavailable = \"warn\" runs agent commands with the line policy and masking only"
)


class Unavailable(Exception):
    """The view cannot be built here; ``sandbox.on-unavailable`` decides what happens."""


class Prepared:
    """Everything the station needs to start one agent command in its view."""

    def __init__(self, mechanism: str, env: dict[str, str], removed: list[str]):
        self.mechanism = mechanism  # "namespaces" | "bwrap" | "seatbelt" | "none"
        self.env = env
        self.removed = removed
        self.view: Any = None  # tcg.sandbox.linux.View (namespaces)
        self.wrap: Callable[[list[str]], list[str]] | None = None  # bwrap / seatbelt argv prefix
        # exit code → "the wrapper gave up before the command started" (bwrap)
        self.setup_failed: Callable[[int], bool] | None = None
        self.hidden = 0
        self.twins = 0
        self.partial = False
        self.cleanup: list[Callable[[], None]] = []

    def event(self) -> dict[str, Any]:
        """The ``sandbox`` field of the command_decision event: counts and variable names."""
        return {
            "layer": self.mechanism,
            "hidden": self.hidden,
            "twins": self.twins,
            "partial": self.partial,
            "env_removed": self.removed,
        }

    def close(self) -> None:
        for fn in self.cleanup:
            fn()
        self.cleanup.clear()


def settings(policy: Any) -> SandboxSettings:
    from tcg.sandbox.stores import settings as read

    return read(policy)


def fail_mode(policy: Any) -> str:
    mode = settings(policy).on_unavailable or "block"
    return mode if mode in FAIL_MODES else "block"


def platform_layer() -> str:
    """Which view this platform gets: namespaces (Linux), seatbelt (macOS), none (Windows)."""
    if sys.platform.startswith("linux"):
        return "namespaces"
    if sys.platform == "darwin":
        return "seatbelt"
    return "none"


def prepare(policy: Any, env: Mapping[str, str], cwd: str) -> Prepared:
    """Scrub ``env`` and plan the view for a command started in ``cwd``.

    Raises Unavailable when the platform should have a view and cannot build one.
    """
    from tcg.paths import get_paths
    from tcg.policy.access import secret_store_rules

    conf = settings(policy)
    rules = secret_store_rules(policy, env)
    paths = get_paths(dict(env))
    key = _install_key(paths)
    env_out, removed = _scrub(policy, env, rules, conf, paths.cache_dir, key)
    layer = platform_layer()
    prepared = Prepared(layer, env_out, removed)
    if layer == "none":
        return prepared
    mechanism = (conf.mechanism or "auto")
    if mechanism not in MECHANISMS:
        raise Unavailable(f"sandbox.mechanism = {mechanism!r} is not one of {', '.join(MECHANISMS)}")
    home = env.get("HOME") or None
    if layer == "seatbelt":
        from tcg.sandbox.seatbelt import profile_for, wrap_argv

        prepared.wrap = wrap_argv(profile_for(policy, home, str(paths.key_path)))
        return prepared
    targets, twins, partial = _plan(policy, rules, conf, env, cwd, home, paths, key)
    prepared.hidden, prepared.twins, prepared.partial = len(targets), len(twins), partial
    from tcg.sandbox.linux import View, supported

    view = View(targets, twins)
    if mechanism == "bwrap":
        _use_bwrap(prepared, conf, view)
        return prepared
    why = supported()
    if why is not None:
        if mechanism == "auto" and _bwrap_path(conf) is not None:
            _use_bwrap(prepared, conf, view)
            return prepared
        raise Unavailable(why)
    prepared.view = view
    return prepared


def scrubbed_only(policy: Any, env: Mapping[str, str]) -> Prepared:
    """No view, only the scrubbed environment (``on-unavailable = "warn"``)."""
    from tcg.paths import get_paths
    from tcg.policy.access import secret_store_rules

    paths = get_paths(dict(env))
    scrubbed, removed = _scrub(policy, env, secret_store_rules(policy, env), settings(policy), paths.cache_dir,
                               _install_key(paths))
    return Prepared("none", scrubbed, removed)


def probe(policy: Any) -> tuple[str, str | None]:
    """(the layer agent commands would get, why not the view — None when it works).
    Builds a real, empty view and runs ``true`` in it (`tcg doctor`)."""
    layer = platform_layer()
    if layer == "none":
        return "none", "Windows has no sandbox view: agent commands get the line policy, a scrubbed environment and masking"
    if layer == "seatbelt":
        from tcg.sandbox.seatbelt import SANDBOX_EXEC

        return ("seatbelt", None) if os.access(SANDBOX_EXEC, os.X_OK) else ("none", f"{SANDBOX_EXEC} is missing")
    conf = settings(policy)
    mechanism = (conf.mechanism or "auto")
    problem = None
    if mechanism in ("auto", "namespaces"):
        problem = _try_namespaces()
        if problem is None:
            return "namespaces", None
        if mechanism == "namespaces":
            return "none", problem
    exe = _bwrap_path(conf)
    if exe is None:
        return "none", problem or f"bubblewrap ({conf.bwrap or 'bwrap'!r}) was not found"
    import subprocess

    argv = [exe, "--dev-bind", "/", "/", *(() if os.geteuid() == 0 else ("--unshare-user",)),
            "--unshare-pid", "--proc", "/proc", "true"]
    try:
        r = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return "none", f"bubblewrap failed to start ({exc})"
    if r.returncode != 0:
        return "none", "bubblewrap failed: " + r.stderr.decode(errors="replace").strip()[:200]
    return "bwrap", None


def _try_namespaces() -> str | None:
    from tcg.sandbox.linux import SetupFailed, View, spawn_pipes, supported

    why = supported()
    if why is not None:
        return why
    try:
        pid, out_r, err_r = spawn_pipes(["true"], {"PATH": os.defpath}, View([], []))
    except SetupFailed as exc:
        return f"namespace setup failed at {exc}"
    except Exception as exc:  # noqa: BLE001 - a probe reports, it does not crash
        return f"namespace setup failed ({type(exc).__name__})"
    os.close(out_r)
    os.close(err_r)
    _, status = os.waitpid(pid, 0)
    return None if os.waitstatus_to_exitcode(status) == 0 else "a command in the view did not run"


def fall_back_to_bwrap(prepared: Prepared, policy: Any) -> bool:
    """After the namespaces failed at spawn time: switch to bwrap when the policy's
    mechanism is ``auto`` and bwrap is installed (True), else False."""
    conf = settings(policy)
    if (conf.mechanism or "auto") != "auto" or prepared.view is None or _bwrap_path(conf) is None:
        return False
    view, prepared.view = prepared.view, None
    _use_bwrap(prepared, conf, view)
    return True


def _bwrap_path(conf: SandboxSettings) -> str | None:
    from tcg.osutil import which

    name = conf.bwrap if conf.bwrap is not None else "bwrap"
    return which(name, os.environ.get("PATH")) if name else None


def _use_bwrap(prepared: Prepared, conf: SandboxSettings, view: Any) -> None:
    from tcg.sandbox.bwrap import Wrapper

    exe = _bwrap_path(conf)
    if exe is None:
        raise Unavailable(f"bubblewrap ({conf.bwrap or 'bwrap'!r}) was not found")
    prepared.mechanism = "bwrap"
    w = Wrapper(exe, view)
    prepared.wrap, prepared.setup_failed = w.wrap, w.setup_failed
    prepared.cleanup.append(w.release)


def _install_key(paths: Any) -> bytes | None:
    from tcg.keyhash import existing_key

    return existing_key(paths)


def _scrub(policy: Any, env: Mapping[str, str], rules: Any, conf: SandboxSettings, cache_dir: str,
           key: bytes | None) -> tuple[dict[str, str], list[str]]:
    from tcg.sandbox.envscrub import ValueVerdicts, scrub

    keep = list(conf.allow_env)
    verdicts = ValueVerdicts(policy, cache_dir, key)
    ident, removed = verdicts.whole(env, keep)
    if removed is not None:
        gone = set(removed)
        return {k: v for k, v in env.items() if k not in gone}, sorted(gone)
    out, removed = scrub(env, rules.secret_var, keep, verdicts)
    verdicts.remember(ident, removed)
    return out, removed


def _plan(policy: Any, rules: Any, conf: SandboxSettings, env: Mapping[str, str], cwd: str,
          home: str | None, paths: Any, key: bytes | None) -> tuple[list[tuple[str, int]], list[bytes], bool]:
    """(targets, twin contents, partial): every store found and how it is covered."""
    from tcg.sandbox.stores import WalkCache, expand_home, find_stores, matcher_for, roots_for

    skip = frozenset(s.lower() for s in conf.skip_dirs)
    max_dirs = conf.max_dirs if conf.max_dirs is not None else DEFAULT_MAX_DIRS
    extra = [expand_home(r, home) for r in conf.roots]
    path_globs = list(rules.paths)  # the compiled secret stores' path globs, ~ expanded
    roots = roots_for(os.path.realpath(cwd), home, rules.segments, path_globs, extra)
    salt = f"{policy.fingerprint}\0{sorted(skip)}"
    cache = WalkCache(paths.cache_dir, key, salt)

    def is_store(path: str) -> bool:
        return rules.store_match(path) is not None

    stores, partial = find_stores(roots, is_store, skip, cache, max_dirs)
    key_file = str(paths.key_path)
    if os.path.isfile(key_file) and key_file not in stores:
        stores.append(key_file)
    twin_of = matcher_for(list(conf.allow_twins), home)
    targets: list[tuple[str, int]] = []
    twins: list[bytes] = []
    maker = _TwinMaker(policy, rules, paths.cache_dir, key)
    for path in stores:
        twin = maker.twin(path) if path != key_file and twin_of(path) else None
        if twin is None:
            targets.append((path, -1))
        else:
            targets.append((path, len(twins)))
            twins.append(twin)
    return targets, twins, partial


class _TwinMaker:
    """Masked twins, remembered by the store's identity (inode, size, mtime, ctime)
    and the policy, signed with the install key (a twin holds no secret, but a forged
    one must not pass for tcg's)."""

    TAG = "sandbox-twin/v1"

    def __init__(self, policy: Any, rules: Any, cache_dir: str, key: bytes | None):
        self.policy = policy
        self.rules = rules
        self.dir = os.path.join(cache_dir, "sandbox", "twins")
        self.key = key
        self._hasher: Any = None

    def twin(self, path: str) -> bytes | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_size > TWIN_MAX_BYTES:
            return None
        ident = f"{self.policy.fingerprint}\0{path}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"
        entry = None
        if self.key is not None:
            from tcg.cachestore import read_cache
            from tcg.digest import hmac_sha256

            entry = os.path.join(self.dir, hmac_sha256(self.key, ident.encode("utf-8", "surrogateescape"))[:24])
            cached = read_cache(entry, self.key, self.TAG)
            if cached is not None:
                return cached
        try:
            with open(path, "rb") as fh:
                data = fh.read(TWIN_MAX_BYTES + 1)
        except OSError:
            return None
        if len(data) > TWIN_MAX_BYTES:
            return None
        twin = self.build(os.path.basename(path), data)
        if entry is not None and self.key is not None:
            from tcg.cachestore import write_cache

            write_cache(entry, self.key, self.TAG, twin)
        return twin

    def build(self, name: str, data: bytes) -> bytes:
        from tcg.mask import masker_for
        from tcg.sandbox.twin import ValueMasker, make_twin, store_key_is_secret

        if self._hasher is None:
            from tcg.keyhash import KeyedHasher

            self._hasher = KeyedHasher.for_install()
        twin = make_twin(data, name, lambda k: store_key_is_secret(k, self.rules.secret_var),
                         ValueMasker(self._hasher.h8))
        masker = masker_for(self.policy, "strict", hasher=self._hasher)  # keys can hold secrets too
        return masker.feed(twin) + masker.flush()
