"""The station's side of an agent's view: prepare it, start the command in it, and
apply ``sandbox.on-unavailable`` when it cannot be built (tcg.runner.station calls
these for actor ``agent``).

In the runner, not in tcg.sandbox: it starts the command through the runner's PTY
and pipe loops, and the sandbox (which builds views) must not depend on the runner
that uses them."""

from __future__ import annotations

import os
import sys

from tcg.runner.invocation import SANDBOXED  # the station's own check reads it

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from tcg.sandbox import Prepared



class Refused(Exception):
    """The command was not started: the view could not be built and the policy blocks."""


def prepare_for_agent(policy: Any, env: dict[str, str], debug: Callable[[], None]) -> Prepared | str:
    """The prepared view (tcg.sandbox.Prepared), or a refusal detail (str) when it cannot
    be built and the policy says block. With ``on-unavailable = "warn"`` a warning is
    printed and a view-less Prepared (environment still scrubbed) comes back. Any error
    while preparing fails closed."""
    try:
        from tcg.sandbox import Unavailable, fail_mode, prepare

        try:
            box = prepare(policy, env, os.getcwd())
        except Unavailable as exc:
            if fail_mode(policy) != "warn":
                return _detail(str(exc))
            box = _without_view(policy, env, str(exc))
    except Exception as exc:  # noqa: BLE001 - fail closed: no view, no run
        debug()
        return f"preparing the sandbox view failed ({type(exc).__name__})"
    box.env[SANDBOXED] = box.mechanism
    return box


def _detail(why: str) -> str:
    return f"the sandbox view for agent commands is unavailable: {why}"


def _without_view(policy: Any, env: dict[str, str], why: str) -> Prepared:
    """Warn, and keep only the scrubbed environment."""
    from tcg.sandbox import UNAVAILABLE_HINT, scrubbed_only

    sys.stderr.write(f"tcg: warning: {_detail(why)}; running with the line policy and masking only\n"
                     f"hint: {UNAVAILABLE_HINT}\n")
    return scrubbed_only(policy, env)


def run(argv: list[str], env: dict[str, str], mode: str, filters: list[Any], box: Prepared | None,
        policy: Any, channel_var: str) -> int:
    """Run the command (in ``box``'s view when there is one); its exit code. A view that
    fails at spawn time (before anything ran) falls back to bubblewrap under ``auto``;
    when no view can be built — bubblewrap too may give up before the command starts —
    raises Refused (``block``) or runs without it after a warning (``warn``)."""
    if box is None:  # no view (a person's command): nothing here can fail to set up
        return _start(argv, env, mode, filters, None, channel_var)
    from tcg.sandbox.linux import SetupFailed

    try:
        code = _start(argv, env, mode, filters, box, channel_var)
    except SetupFailed as exc:
        from tcg.sandbox import fall_back_to_bwrap

        why = f"namespace setup failed at {exc}"
        if not fall_back_to_bwrap(box, policy):
            return _unavailable(argv, env, mode, filters, box, policy, channel_var, why)
        code = _start(argv, box.env, mode, filters, box, channel_var)
        if _wrapper_gave_up(box, code):
            return _unavailable(argv, env, mode, filters, box, policy, channel_var,
                                f"{why}, and bubblewrap could not create its namespaces either")
        return code
    if _wrapper_gave_up(box, code):
        return _unavailable(argv, env, mode, filters, box, policy, channel_var,
                            "bubblewrap could not build the view (it gave up before starting the command)")
    return code


def _wrapper_gave_up(box: Prepared, code: int) -> bool:
    return box.setup_failed is not None and box.setup_failed(code)


def _unavailable(argv: list[str], env: dict[str, str], mode: str, filters: list[Any], box: Prepared,
                 policy: Any, channel_var: str, why: str) -> int:
    """No view could be built and nothing ran: ``sandbox.on-unavailable`` decides."""
    from tcg.sandbox import fail_mode

    if fail_mode(policy) != "warn":
        raise Refused(_detail(why))
    bare = _without_view(policy, env, why)
    bare.env[SANDBOXED] = "none"
    box.close()
    box.mechanism, box.view, box.wrap, box.setup_failed, box.env = "none", None, None, None, bare.env
    return _start(argv, box.env, mode, filters, None, channel_var)


def _start(argv: list[str], env: dict[str, str], mode: str, filters: list[Any], box: Prepared | None,
           channel_var: str) -> int:
    view = box.view if box is not None else None
    if box is not None and box.wrap is not None:
        argv = box.wrap(argv)
    if mode == "pty":
        from tcg.runner.loop import run_pty

        child_exec = None
        if view is not None:
            from tcg.sandbox.linux import pty_child_exec

            child_exec = pty_child_exec(view)
        return run_pty(argv, env, filters[0], channel_var=channel_var, child_exec=child_exec)
    from tcg.runner.pipes import run_pipes

    spawn = None
    if view is not None:
        from tcg.sandbox.linux import spawn_pipes

        def spawn(argv: list[str], env: dict[str, str], *, channel_var: str | None = None) -> Any:
            return spawn_pipes(argv, env, view, channel_var=channel_var)

    return run_pipes(argv, env, filters[0], filters[1], channel_var=channel_var, spawn=spawn)


def store_value_filter(inner: Any, mode: str, policy: Any, env: Any, h8: Callable[[bytes], str]) -> Any:
    """Masking for a command that reads a secret store: values of secret-named keys are
    masked whatever their shape (tcg.sandbox.twin.StoreValueFilter)."""
    from tcg.policy.access import secret_store_rules
    from tcg.sandbox.twin import StoreValueFilter, ValueMasker, store_key_is_secret

    rules = secret_store_rules(policy, env)
    hold = None
    if mode == "pty":
        from tcg.mask import hold_ms_of

        hold = hold_ms_of(policy) / 1000
    return StoreValueFilter(inner, lambda k: store_key_is_secret(k, rules.secret_var), ValueMasker(h8), hold)
