"""An agent's file tool through a symlink, judged by the hook: a link to a secret
store, a guard file or tcg's own files is refused with the reason the direct path
gets (the agent can make the link itself: the station lets `ln -s` through, and a
link's name says nothing about where it leads).

The many cases run through the Claude adapter in this process (the entry point's
``run``, without an interpreter start per call); the refusal-shape tests run the
hook as Claude Code runs it, a process per call."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.agents.test_claude_hook import ENV_VALUE, denial, events, pre, run_in_process
from tests.helpers.leaks import assert_no_secret_written

EDIT = {"old_string": "a", "new_string": "b"}
# tool → (the field holding the path, the rest of its input)
FILE_TOOLS = {
    "Read": ("file_path", {}),
    "NotebookRead": ("notebook_path", {}),
    "Grep": ("path", {"pattern": "PASSWORD"}),
    "Edit": ("file_path", EDIT),
    "MultiEdit": ("file_path", {"edits": [EDIT]}),
    "Write": ("file_path", {"content": "hello"}),
    "NotebookEdit": ("notebook_path", {"new_source": "x"}),
    "read_file": ("absolute_path", {}),  # Qwen Code's names share the same step
    "write_file": ("file_path", {"content": "hello"}),
}
SEARCH_TOOLS = {"Glob": ("path", {"pattern": "**/*"}), "LS": ("path", {})}


@pytest.fixture
def world(tmp_path: Path, hermetic_home: Path) -> dict[str, Path]:
    """A project holding .env, an ordinary file, and links of every shape."""
    home = hermetic_home
    p = tmp_path / "project"
    p.mkdir()
    (p / ".env").write_text(f"DB_PASSWORD={ENV_VALUE}\n")
    (p / "notes.txt").write_text("just notes\n")
    (p / "link.txt").symlink_to(".env")  # a file link, relative
    (p / "chain1").symlink_to("chain2")  # a chain of links
    (p / "chain2").symlink_to(p / "sub" / "chain3")
    (p / "sub").mkdir()
    (p / "sub" / "chain3").symlink_to("../.env")
    (p / "dangling.txt").symlink_to(".env.production")  # a store that does not exist yet
    ssh = home / ".ssh"
    ssh.mkdir()
    (ssh / "config").write_text("Host example\n")  # protected only by its directory, .ssh
    (p / "keys").symlink_to(ssh, target_is_directory=True)  # a directory link
    (p / "docs").symlink_to(p / "sub", target_is_directory=True)  # a harmless one
    (p / "plain.txt").symlink_to("notes.txt")
    (home / ".bashrc").write_text("# rc\n")
    (p / "rc").symlink_to(home / ".bashrc")
    (p / "zprofile").symlink_to(home / ".zprofile")  # dangling: Write would create the guard file
    (p / "claude").symlink_to(home / ".claude", target_is_directory=True)  # dangling directory link
    tcg_home = Path(os.environ["TCG_HOME"])
    (p / "tcgstate").symlink_to(tcg_home / "state", target_is_directory=True)
    return {"p": p, "home": home, "tcg": tcg_home}


def outcome(tool: str, path: str, cwd: Path) -> str:
    """The reason code the hook refuses with, or "allow"."""
    field, rest = {**FILE_TOOLS, **SEARCH_TOOLS}[tool]
    reply, rc = run_in_process("PreToolUse", {"tool_name": tool, "tool_input": {field: path, **rest}}, cwd)
    assert rc == 0, reply
    reason = denial(reply)
    if reason is None:
        return "allow"
    assert reason.startswith("tcg: blocked (") and ENV_VALUE not in reason, reason
    return reason.split("(", 1)[1].split(")", 1)[0]


READS = ("Read", "NotebookRead", "Grep", "Edit", "MultiEdit", "read_file")


@pytest.mark.parametrize("tool", READS)
@pytest.mark.parametrize(("link", "target"), [
    ("link.txt", ".env"),
    ("chain1", ".env"),
    ("keys/config", "~/.ssh/config"),  # a symlinked parent directory
])
def test_a_read_through_a_link_is_refused_as_the_file_itself(tool, link, target, world):
    p, home = world["p"], world["home"]
    direct = outcome(tool, str(home) + target[1:] if target.startswith("~") else str(p / target), p)
    assert direct == "secret-store-read"
    assert outcome(tool, str(p / link), p) == direct
    assert outcome(tool, link, p) == direct  # relative to the call's cwd
    assert_no_secret_written(world["tcg"], [ENV_VALUE])


@pytest.mark.parametrize("tool", ["Read", "Edit", "Write", "read_file", "write_file"])
def test_a_link_then_dotdot_is_judged_as_the_kernel_walks_it(tool, world):
    """``link/../x`` opens x beside the link's target, not beside the link: cleaning the
    path up as text first (``/p/x``) would judge a harmless file (a reviewer's bypass)."""
    p, home = world["p"], world["home"]
    inner = home / ".ssh" / "inner"
    inner.mkdir()
    (p / "k").symlink_to(inner, target_is_directory=True)
    sub = home / "sub"
    sub.mkdir()
    (p / "h").symlink_to(sub, target_is_directory=True)
    refused = 0
    for path, target in (("k/../config", home / ".ssh" / "config"), ("h/../.bashrc", home / ".bashrc")):
        assert os.path.realpath(p / path) == str(target)  # where the kernel goes
        direct = outcome(tool, str(target), p)  # reading ~/.bashrc is allowed; writing it is not
        refused += direct != "allow"
        assert outcome(tool, path, p) == direct, (tool, path)
        assert outcome(tool, str(p) + "/" + path, p) == direct, (tool, path)
    assert refused


@pytest.mark.parametrize("tool", ["Grep", "Glob", "LS"])
def test_a_search_rooted_in_a_linked_directory_is_judged_where_it_leads(tool, world):
    p, home = world["p"], world["home"]
    assert outcome(tool, str(p / "keys"), p) == outcome(tool, str(home / ".ssh"), p)
    assert outcome(tool, str(p / "docs"), p) == "allow"


def test_a_search_filter_under_a_linked_directory_is_judged_where_it_leads(world):
    p = world["p"]
    for path in (world["home"] / ".ssh", p / "keys"):
        reply, _ = run_in_process("PreToolUse", {"tool_name": "Grep", "tool_input": {"pattern": "x", "path": str(path), "glob": "id_*.pub"}}, p)
        reason = denial(reply)
        assert reason is not None and reason.startswith("tcg: blocked (secret-store-read)"), (path, reply)


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit", "write_file"])
def test_a_write_through_a_link_is_refused_as_the_file_itself(tool, world):
    p, home, tcg_home = world["p"], world["home"], world["tcg"]
    cases = [
        ("dangling.txt", p / ".env.production"),  # the write would create the store
        ("rc", home / ".bashrc"),  # guard-tamper must not rest on the CLI refusing
        ("zprofile", home / ".zprofile"),  # dangling: the write would create the rc file
        ("claude/settings.json", home / ".claude" / "settings.json"),  # through a dangling directory link
        ("tcgstate/policy-snapshot", tcg_home / "state" / "policy-snapshot"),  # tcg's own files
    ]
    for link, target in cases:
        direct = outcome(tool, str(target), p)
        assert direct != "allow", (tool, target)
        assert outcome(tool, str(p / link), p) == direct, (tool, link)
    assert not (home / ".zprofile").exists() and not (home / ".claude").exists()


@pytest.mark.parametrize("tool", sorted(FILE_TOOLS))
def test_links_to_ordinary_files_pass(tool, world):
    p = world["p"]
    assert outcome(tool, str(p / "plain.txt"), p) == "allow"
    assert outcome(tool, str(p / "docs" / "x.txt"), p) == "allow"


@pytest.mark.parametrize(("tool", "tool_input", "code"), [
    ("Read", {"file_path": "link.txt"}, "secret-store-read"),
    ("Grep", {"pattern": "x", "path": "keys"}, "secret-store-read"),
    ("Write", {"file_path": "rc", "content": "echo hi"}, "guard-tamper"),
    ("Read", {"file_path": ".env\u0000"}, "unresolved-path"),
])
def test_the_hook_process_refuses_and_says_where_the_link_leads(tool, tool_input, code, world, tcg_home):
    p = world["p"]
    reply, rc, _ = pre(tool, tool_input, p)
    reason = denial(reply)
    assert rc == 0 and reason is not None and reason.startswith(f"tcg: blocked ({code}): "), reply
    if code != "unresolved-path":
        assert f"{tool} through {p / tool_input.get('file_path', tool_input.get('path', ''))} " in reason, reason
    ev = events(tcg_home)[-1]
    assert (ev["decision"], ev["reason"], ev["tool"]) == ("block", code, tool)


@pytest.mark.parametrize("tool", ["Read", "Write", "Grep", "read_file"])
def test_a_path_holding_nul_is_refused(tool, world):
    p = world["p"]
    for path in (".env\u0000", str(p / "notes.txt") + "\u0000", "notes\u0000.txt"):
        assert outcome(tool, path, p) == "unresolved-path", (tool, path)


def test_an_mcp_argument_holding_nul_is_judged_up_to_it(world):
    p = world["p"]
    for path in (".env\u0000", f"{p}/.env\u0000x", f"{p}/link.txt\u0000", "~/.ssh\u0000/id_rsa"):
        reply, _ = run_in_process("PreToolUse", {"tool_name": "mcp__files__read", "tool_input": {"path": path}}, p)
        reason = denial(reply)
        assert reason is not None and reason.startswith("tcg: blocked (protected-resource)"), (path, reply)
    reply, _ = run_in_process("PreToolUse", {"tool_name": "mcp__files__read", "tool_input": {"path": "notes\u0000.txt"}}, p)
    assert reply is None


def test_mcp_arguments_through_links_are_still_refused(world):
    """The MCP request check resolves through the same function: unchanged."""
    p = world["p"]
    for path in ("link.txt", f"{p}/chain1", f"{p}/keys/config", f"{p}/dangling.txt"):
        reply, _ = run_in_process("PreToolUse", {"tool_name": "mcp__files__read", "tool_input": {"path": path}}, p)
        reason = denial(reply)
        assert reason is not None and reason.startswith("tcg: blocked (protected-resource)"), (path, reply)
    assert run_in_process("PreToolUse", {"tool_name": "mcp__files__read", "tool_input": {"path": f"{p}/plain.txt"}}, p)[0] is None
