"""The settings check between a session's station and its shell (tcg.runner.session_env):
what counts as a difference, and the hello answer that carries it."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from tcg.runner import session_channel as ch
from tcg.runner.session_decide import SessionDecider
from tcg.runner.session_env import SEP, WATCHED, differing, parse, watched_names


def hello_text(values: dict[str, str | None]) -> str:
    """What the hook sends: NAME=VALUE, or a bare NAME for an unset one, each ended by US."""
    return "".join((f"{k}={v}" if v is not None else k) + SEP for k, v in values.items())


def test_the_names_cover_what_the_station_reads():
    names = watched_names().split(" ")
    for name in ("TCG_HOME", "TCG_POLICY", "TCG_PROJECT", "TCG_SESSION_AUTO", "XDG_CONFIG_HOME",
                 "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR", "HOME"):
        assert name in names
    assert "PWD" not in names  # each request carries its own


values = st.text(alphabet=st.characters(blacklist_characters="\x00\x1f", blacklist_categories=("Cs",)),
                 max_size=12) | st.none()


@given(st.dictionaries(st.sampled_from(WATCHED), values))
def test_a_shell_with_the_stations_values_differs_in_nothing(env):
    station = {k: v for k, v in env.items() if v is not None}
    assert differing(station, hello_text(env)) == []


@given(st.sampled_from([n for n in WATCHED if n not in ("TCG_SESSION_AUTO",)]),
       st.text(alphabet="abc/", min_size=1, max_size=8))
def test_a_changed_value_is_named(name, value):
    shell = "/" + value  # absolute: a path counts for every XDG variable too
    assert differing({name: shell + "x"}, hello_text({name: shell})) == [name]


def test_what_counts_as_the_same():
    """Paths as normalised text; the opt-out as on or off; empty as unset; the
    names zsh sets by itself only where the station has them."""
    same = {"TMPDIR": "/tmp/", "TCG_SESSION_AUTO": "1", "TCG_POLICY": "", "LOGNAME": "me"}
    assert differing({"TMPDIR": "/tmp"}, hello_text(same)) == []
    assert differing({"TCG_SESSION_AUTO": "yes"}, hello_text({"TCG_SESSION_AUTO": None})) == []
    assert differing({}, hello_text({"TCG_SESSION_AUTO": "0"})) == ["TCG_SESSION_AUTO"]
    assert differing({"TMPDIR": "/tmp"}, hello_text({"TMPDIR": None})) == ["TMPDIR"]
    assert differing({"LOGNAME": "you"}, hello_text({"LOGNAME": "me"})) == ["LOGNAME"]
    assert differing({}, hello_text({"USER": "me"})) == ["USER"]  # zsh sets only LOGNAME itself


def test_an_xdg_default_the_station_lacks_is_a_difference():
    """A line's words resolve XDG_CONFIG_HOME as text: a station without it cannot
    place `$XDG_CONFIG_HOME/tcg/policy.toml` (an unknown path), so a shell that
    sets even the default must be told (self-protection would not see the write)."""
    home = os.path.expanduser("~")
    assert differing({"HOME": home}, hello_text({"XDG_CONFIG_HOME": f"{home}/.config"})) == [
        "XDG_CONFIG_HOME"]


def test_a_name_sent_twice_is_a_difference():
    """A value holding the separator could pass for another name's value."""
    text = hello_text({"HOME": "/h"}) + "TMPDIR=/station\x1fTMPDIR=/shell\x1f"
    assert differing({"HOME": "/h", "TMPDIR": "/station"}, text) == ["TMPDIR"]


def test_names_the_station_does_not_watch_and_an_old_hook_are_ignored():
    assert parse(hello_text({"PATH": "/x", "TCG_HOME": "/h"}) + "garbage") == ({"TCG_HOME": "/h"}, set())
    assert differing({"TCG_HOME": "/a"}, hello_text({"PATH": "/x"})) == []
    assert differing({"TCG_HOME": "/a"}, "") == []  # a hook from before the check sends nothing


def test_the_hello_answer_carries_the_differing_names():
    sent: list[bytes] = []
    env = {k: v for k, v in os.environ.items() if k not in WATCHED}
    env.update(HOME=os.path.expanduser("~"), TMPDIR="/station-tmp", XDG_CACHE_HOME="/station-cache")
    d = SessionDecider(env, None, lambda *a: None)
    text = hello_text({"TMPDIR": "/shell-tmp", "XDG_CACHE_HOME": "/station-cache", "TCG_POLICY": None,
                       "TCG_HOME": "/shell-tcg"})
    d.answer(ch.Request("H", "s1", "", os.getcwd(), text), sent.append)
    seq, verdict, _mode, _session, hint = sent[0].decode().rstrip("\n").split("\x1f")
    assert (seq, verdict, hint) == ("s1", "hello", "TCG_HOME, TMPDIR")


def test_the_check_loads_nothing_on_the_first_prompts_path():
    """The hello is answered before the first prompt: the check must not import
    pathlib (tcg.paths' Path views), re or typing (~13 ms of the prompt, measured)."""
    import subprocess
    import sys

    code = ("import sys; from tcg.runner.session_env import differing; "
            "differing({}, 'XDG_CACHE_HOME=/x\\x1fXDG_CONFIG_HOME\\x1fTMPDIR=/t\\x1fHOME=/h\\x1f'); "
            "print(sorted(m for m in ('pathlib', 're', 'typing') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_failing_check_still_answers_the_hello(monkeypatch):
    """The check is advisory: a hello that failed would leave the shell's lines unchecked."""
    from tcg.runner import session_env

    def boom(*_a):
        raise RuntimeError("injected")

    monkeypatch.setattr(session_env, "differing", boom)
    sent: list[bytes] = []
    SessionDecider(dict(os.environ), None, lambda *a: None).answer(
        ch.Request("H", "s1", "", os.getcwd(), hello_text({"TMPDIR": "/x"})), sent.append)
    assert sent[0].decode().split("\x1f")[1:2] == ["hello"]
    assert sent[0].decode().rstrip("\n").split("\x1f")[4] == ""
