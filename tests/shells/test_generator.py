"""`tcg_shell init`: layers 1 (at rest), 2 (rendered) and the escaping layer.

bash and zsh run for real. PowerShell and cmd.exe cannot run on this Linux CI
(no pwsh, no Windows): their output is checked as exact expected text.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.shells import generator, quoting
from tcg.shells.shells import (
    BEGIN_MARK,
    EARLY_BEGIN_MARK,
    EARLY_END_MARK,
    END_MARK,
    READERS,
    SHELLS,
    Features,
)

AGENTS = ("claude", "codex", "qwen", "qwen-code", "cursor-agent", "cursor")


def features(python: str, *, session: bool = True, launch: bool = False) -> Features:
    return Features(python=python, session=session, launch=launch, agents=AGENTS)


def render(shell: str, early: bool = False, **kw) -> str:
    python = kw.pop("python", sys.executable)
    return SHELLS[shell]().render(features(python, **kw), early=early)

SHELLS_DIR = Path(generator.__file__).parent
TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))
VARIANTS = [(m, lch) for m in (True, False) for lch in (True, False)]

# Values each shell's quoting must read back unchanged: quotes, expansions, control
# characters, leading glob/tilde/dash/hash (NUL and the empty string are tested separately).
VECTORS = {
    "space": "a b", "single_quote": "it's", "double_quote": 'say "hi"',
    "dollar_var": "$HOME ${PATH} $(id) $((1+1))", "backtick": "`id`",
    "backslash_trailing": "C:\\Users\\x\\", "newline": "line1\nline2", "tab_cr": "a\tb\rc",
    "glob": "*.py ?x [ab]", "tilde_lead": "~root", "dash_lead": "-rf", "hash_lead": "#comment",
    "bang": "echo hi!; !!", "metachar": "a; b && c | d > e < f &",
    "non_ascii": "caf\u00e9 \u00fc \u65e5\u672c \U0001f642", "rtl_override": "abc\u202edcba",
    "smart_quotes": "O\u2019Brien \u2018x\u2019 \u201alow\u201b", "control_esc": "\x1b[31mred\x1b[0m\x07",
    "equals_colon": "a=b:c,d@e%f+g", "percent": "%PATH% 100%", "caret": "^& ^| ^^",
    "unicode_space": "a\u00a0b\u2003c", "invalid_utf8": "\udcff\udcfe bad",
}


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed")
    return path


# ---------------------------------------------------------------- layer 1: at rest

AT_REST = [(shell, f"{part}.{shell}") for shell in ("bash", "zsh")
           for part in ("hook", "start", "early")]


def test_hook_files_pass_shellcheck_at_rest():
    need("shellcheck")
    files = [str(SHELLS_DIR / name) for _shell, name in AT_REST]
    r = subprocess.run(["shellcheck", *files], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_zsh_hook_parses_with_zsh_n():
    need("zsh")
    for name in ("hook.zsh", "start.zsh", "early.zsh"):
        r = subprocess.run(["zsh", "-n", str(SHELLS_DIR / name)], capture_output=True, text=True)
        assert (r.returncode, r.stderr) == (0, ""), name


def test_hook_files_at_rest_run_clean_in_their_shell():
    """The unrendered files are valid shell too (placeholders are plain strings)."""
    for shell, name in AT_REST:
        exe = need(shell)
        r = subprocess.run([exe, "-c", f"source {SHELLS_DIR / name}"], capture_output=True, text=True)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", ""), name


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_session_start_is_one_copy_put_into_both_blocks(shell):
    """The hook and the early start block take the same start code (start.SHELL),
    once each; the hook files themselves hold only its slot."""
    start = (SHELLS_DIR / f"start.{shell}").read_text()
    part = start[start.index("# --- START (begin) ---\n") + 23:start.index("# --- START (end) ---")]
    for text in (render(shell), render(shell, early=True)):
        assert text.count(part) == 1
        assert text.count("from tcg.runner.session import lean_main") == 1
        assert "@TCG_" not in text
    for name in (f"hook.{shell}", f"early.{shell}"):
        assert "lean_main" not in (SHELLS_DIR / name).read_text()
    early = render(shell, early=True)
    assert early.startswith(EARLY_BEGIN_MARK + "\n") and early.endswith(EARLY_END_MARK + "\n")


# ---------------------------------------------------------------- layer 2: rendered

def run_rendered(shell: str, src: str, tail: str = "") -> subprocess.CompletedProcess:
    if shell == "bash":
        argv = [need("bash"), "--noprofile", "--norc", "-e", "-u", "-o", "pipefail", "-c", src + tail]
    else:
        argv = [need("zsh"), "-e", "-u", "-o", "pipefail", "--no-globalrcs", "--no-rcs", "-c", src + tail]
    return subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize(("session", "launch", "early"), [(*v, False) for v in VARIANTS]
                         + [(True, False, True), (False, False, True)])
def test_rendered_variant_is_silent_under_strict_mode(shell, session, launch, early):
    src = render(shell, early=early, session=session, launch=launch)
    r = run_rendered(shell, src)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    # Re-sourcing is harmless: twice in a row, still silent and successful.
    r = run_rendered(shell, src + "\n" + src)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize(("session", "launch", "early"), [(*v, False) for v in VARIANTS]
                         + [(True, False, True)])
def test_rendered_variant_passes_shellcheck(shell, session, launch, early):
    need("shellcheck")
    src = render(shell, early=early, session=session, launch=launch)
    r = subprocess.run(["shellcheck", "-s", "bash", "-"], input=src, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_agent_functions_defined_without_interactivity_and_no_reader_aliases(shell):
    """The agent functions are defined before the interactive guard (an agent's
    shell snapshot captures them); bash and zsh get no content-reader aliases
    any more: the session masks every byte, and agents' shells are wired by
    `tcg launch` (BASH_ENV, the shell prefix), not by rc files."""
    src = render(shell, session=True, launch=True)
    listing = "\nalias\ntypeset -f\n" if shell == "zsh" else "\nalias\ndeclare -f\n"
    r = run_rendered(shell, src, listing)
    out = r.stdout.decode()
    for agent in AGENTS:
        assert f"{agent} ()" in out or f"{agent}()" in out, agent
    assert sys.executable in out
    assert "run-argv" not in out and "hook-run" not in out
    assert "__" not in "".join(ln for ln in out.splitlines() if "()" in ln)  # no __* functions
    for reader in READERS:
        assert f"{reader}=" not in out


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_non_interactive_shell_neither_execs_a_session_nor_sets_traps(shell):
    """`bash -c` / `zsh -c` (what agents run) never start a session or install
    the verdict hooks, even with the session installed."""
    src = render(shell, session=True, launch=False)
    tail = "\ntrap -p DEBUG; echo \"[${PS0-}]\"; echo \"[${PROMPT_COMMAND-}]\"\n" if shell == "bash" \
        else "\necho \"[${preexec_functions-}]\"; echo \"[${precmd_functions-}]\"\n"
    r = run_rendered(shell, src, tail)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == "[]\n[]\n"


def test_interpreter_is_absolute_and_not_a_shim():
    py = generator.interpreter()
    assert os.path.isabs(py)
    assert "/shims/" not in py  # pyenv/asdf shims live in .../shims/
    assert py == os.path.abspath(sys.executable)  # a venv symlink is kept, not resolved


# ---------------------------------------------------------------- escaping, for real

def _fake_python(tmp_path: Path, name: str) -> Path:
    d = tmp_path / "d" / name
    d.mkdir(parents=True)
    py = d / "py"
    out = tmp_path / "argv.out"
    py.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{out}'\n")
    py.chmod(0o755)
    return py


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize("vector", sorted(VECTORS))
def test_escaping_vectors_round_trip_through_the_generator(shell, vector, tmp_path):
    """The vectors as (part of) the embedded interpreter path: the shell reads
    back exactly the path, and the agent function executes it."""
    exe = need(shell)
    value = VECTORS[vector]
    py = _fake_python(tmp_path, value.replace("/", "_"))
    src = SHELLS[shell]().render(Features(python=str(py), session=True, launch=True, agents=AGENTS))
    script = tmp_path / "hook.sh"
    script.write_bytes(src.encode("utf-8", "surrogateescape"))
    got = subprocess.run([exe, "-c", f"source '{script}'; printf %s \"$_tcg_py\""],
                         capture_output=True)
    assert got.stdout == os.fsencode(str(py))
    out = tmp_path / "argv.out"
    subprocess.run([exe, "-c", f"source '{script}'\nqwen-code x \"y z\""], check=True)
    assert out.read_text().splitlines() == ["-I", "-m", "tcg", "launch", "qwen-code", "x", "y z"]


@pytest.mark.parametrize("vector", sorted(VECTORS))
def test_powershell_quoting_exact_text(vector):
    """No pwsh here: exact expected text. All five single quotes are doubled."""
    value = VECTORS[vector]
    expected = "'" + "".join(c * 2 if c in "'\u2018\u2019\u201a\u201b" else c for c in value) + "'"
    assert quoting.powershell_quote(value) == expected
    text = SHELLS["powershell"]().render(Features(python=value, session=True, launch=True, agents=AGENTS))
    assert f"$global:_tcg_py = {expected}\n" in text


def test_powershell_render_exact_template_block():
    text = SHELLS["pwsh"]().render(
        Features(python="C:\\Users\\O\u2019Brien\\py.exe", session=True, launch=False, agents=("claude",)))
    assert (
        "$global:_tcg_py = 'C:\\Users\\O\u2019\u2019Brien\\py.exe'\n"
        "$global:_tcg_launch = '0'\n"
        "$global:_tcg_session = '1'\n"
        "$global:_tcg_pkg = '"
    ) in text
    for needle in ("GetBufferState([ref]$ast, [ref]$tok, [ref]$err, [ref]$cur)", "IncompleteInput",
                   "::AcceptLine()", "::AddToHistory($line)", "::RevertLine()", "$global:LASTEXITCODE = 126",
                   "NamedPipeClientStream", "/dev/fd/", "[char]0x1f", "TCG1 $kind $seq",
                   "tcg.shell_entry session --shell"):
        assert needle in text, needle
    for gone in ("hook-run", "TCG_HOOK_LINE", "_tcg_go", "Replace(0"):
        assert gone not in text, gone
    assert "@TCG_" not in text


CMD_BAD = {k for k, v in VECTORS.items() if set(v) & quoting.CMD_FORBIDDEN
           or any(ord(c) < 32 for c in v) or v.endswith("\\")}


@pytest.mark.parametrize("vector", sorted(VECTORS))
def test_cmd_macros_exact_text_or_refusal(vector):
    """No cmd.exe here: a path with a cmd metacharacter is refused, others give exact lines."""
    value = "C:\\tcg\\" + VECTORS[vector]
    f = Features(python=value, session=True, launch=True, agents=("claude", "qwen-code"))
    if vector in CMD_BAD:
        with pytest.raises(quoting.QuotingError):
            SHELLS["cmd"]().render(f)
        return
    text = SHELLS["cmd"]().render(f)
    q = '"' + value.replace("$", "$$") + '"'
    lines = text.split("\r\n")
    assert f"cat={q} -I -m tcg.shell_entry run-argv cat $*" in lines
    assert f"qwen-code={q} -I -m tcg launch qwen-code $*" in lines
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")


def test_cmd_macros_full_expected_text():
    f = Features(python="C:\\Py\\python.exe", session=True, launch=True, agents=("claude",))
    lines = SHELLS["cmd"]().render(f).split("\r\n")
    macros = [ln for ln in lines if ln and not ln.startswith(";=")]
    assert macros == [f'{r}="C:\\Py\\python.exe" -I -m tcg.shell_entry run-argv {r} $*' for r in READERS] + [
        'claude="C:\\Py\\python.exe" -I -m tcg launch claude $*']
    assert all(set(ln) & set('%!^&|<>()') == set() for ln in lines if ln.startswith(";="))


def test_cmd_rejects_bad_agent_names_and_nul():
    with pytest.raises(quoting.QuotingError):
        SHELLS["cmd"]().render(Features(python="C:\\p.exe", session=True, launch=True, agents=("a&b",)))
    for fn in (quoting.posix_quote, quoting.powershell_quote, quoting.cmd_check):
        with pytest.raises(quoting.QuotingError):
            fn("a\x00b")


def test_posix_quote_empty_and_quotes():
    assert quoting.posix_quote("") == "''"
    assert quoting.posix_quote("it's") == "'it'\\''s'"


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_agent_names_from_policy_are_validated(shell):
    with pytest.raises(quoting.QuotingError):
        SHELLS[shell]().render(Features(python="/p", session=True, launch=True, agents=("x;rm -rf ~",)))


# ---------------------------------------------------------------- the command

def run_init(*args, **kw):
    return subprocess.run([TCG_SHELL, "init", *args], capture_output=True, text=True, **kw)


def test_init_fish_exits_2_naming_supported_shells():
    r = run_init("fish")
    assert r.returncode == 2
    assert r.stdout == ""
    for name in ("zsh", "bash", "powershell", "pwsh", "cmd"):
        assert name in r.stderr


def test_init_autodetects_the_calling_shell():
    bash = need("bash")
    r = subprocess.run([bash, "-c", f"'{TCG_SHELL}' init; true"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "tcg hook for bash" in r.stdout


def test_init_unsupported_detected_shell_exits_2():
    sh = need("dash") if shutil.which("dash") else pytest.skip("dash is not installed")
    r = subprocess.run([sh, "-c", f"'{TCG_SHELL}' init; exit $?"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "supported shells: zsh, bash, powershell, pwsh, cmd" in r.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "powershell", "pwsh", "cmd"])
def test_init_each_supported_shell(shell):
    r = run_init(shell)
    assert r.returncode == 0, r.stderr
    assert "@TCG_" not in r.stdout
    assert sys.executable in r.stdout.replace("$$", "$")


def test_uninstall_removes_exactly_what_was_added(tmp_path):
    rc = tmp_path / ".bashrc"
    original = "export EDITOR=vi\n# my stuff\nalias ll='ls -l'\n"
    rc.write_text(original + render("bash") + 'eval "$(tcg_shell init bash)"\n' + "PS1='$ '\n")
    r = run_init("--uninstall", "bash", "--rc", str(rc))
    assert r.returncode == 0, r.stderr
    assert rc.read_text() == original + "PS1='$ '\n"
    assert (tmp_path / ".bashrc.tcg-bak").read_text().startswith(original)
    r = run_init("--uninstall", "zsh")
    assert r.returncode == 0 and BEGIN_MARK in r.stdout and END_MARK in r.stdout
    assert run_init("--uninstall", "fish").returncode == 2


def test_early_block_goes_first_once_and_uninstall_removes_it(tmp_path):
    """`--early --rc FILE` puts the block at the top, keeps FILE.tcg-bak and says
    when the hook itself is missing (a comment naming `tcg_shell init` is no hook);
    `--uninstall` removes it with the hook."""
    rc = tmp_path / ".bashrc"
    original = "export EDITOR=vi\n# see: tcg_shell init bash\nalias ll='ls -l'\n"
    rc.write_text(original)
    r = run_init("bash", "--early", "--rc", str(rc))
    assert r.returncode == 0, r.stderr
    assert "has no tcg hook yet" in r.stdout and f"tcg_shell init bash >> {rc}" in r.stdout
    text = rc.read_text()
    assert text == generator.render("bash", early=True) + original
    assert (tmp_path / ".bashrc.tcg-bak").read_text() == original
    rc.write_text(text + generator.render("bash"))
    r = run_init("bash", "--early", "--rc", str(rc))
    assert r.returncode == 0 and "has no tcg hook" not in r.stdout
    assert rc.read_text() == text + generator.render("bash")  # already there: nothing changes
    r = run_init("--uninstall", "bash", "--rc", str(rc))
    assert r.returncode == 0 and rc.read_text() == original
    missing = tmp_path / "new" / ".zshrc"
    missing.parent.mkdir()
    assert run_init("zsh", "--early", "--rc", str(missing)).returncode == 0
    assert missing.read_text().startswith(EARLY_BEGIN_MARK)
    assert not (missing.parent / ".zshrc.tcg-bak").exists()
    r = run_init("zsh", "--early", "--rc", str(tmp_path / "no-such-dir" / ".zshrc"))
    assert r.returncode != 0 and "cannot write" in r.stderr and "Traceback" not in r.stderr


def test_a_second_run_refreshes_the_block_where_it_is(tmp_path):
    """Settings the user put above the block (as its warning says to) stay above
    it when the block is refreshed after an upgrade; a second block is folded in."""
    rc = tmp_path / ".zshrc"
    stale = generator.render("zsh", early=True).replace(sys.executable, "/old/venv/bin/python")
    above = "export TCG_POLICY=~/strict.toml\n"
    rc.write_text(above + stale + "compinit\n" + stale + generator.render("zsh"))
    r = run_init("zsh", "--early", "--rc", str(rc))
    assert r.returncode == 0 and "(where it was)" in r.stdout
    assert rc.read_text() == above + generator.render("zsh", early=True) + "compinit\n" + generator.render("zsh")


def test_an_old_hook_block_is_brought_up_to_date_with_the_early_block(tmp_path):
    """A new early block beside this shell's hook block of an older version (its
    hook id) would start sessions whose hook does not send the settings check: the
    hook is refreshed. An edited block of this version, or another shell's, stays."""
    rc = tmp_path / ".bashrc"
    current = generator.SHELLS["bash"]().hook_id
    old_hook = generator.render("bash").replace(current, "tcg-shell-hook-v2")
    rc.write_text("alias ll='ls -l'\n" + old_hook)
    r = run_init("bash", "--early", "--rc", str(rc))
    assert r.returncode == 0 and "brought up to date" in r.stdout
    assert rc.read_text() == (generator.render("bash", early=True) + "alias ll='ls -l'\n"
                              + generator.render("bash"))
    edited = generator.render("bash").replace("_tcg_agents=", "_tcg_agents_mine=1 _tcg_agents=")
    zsh_in_bashrc = generator.render("zsh").replace(generator.SHELLS["zsh"]().hook_id, "tcg-shell-hook-v2")
    newer = generator.render("bash").replace(current, "tcg-shell-hook-v99")
    two = old_hook + "x=1\n" + old_hook  # which one is the user's? (both stay)
    for kept in (edited, zsh_in_bashrc, newer, two):
        rc.write_text(kept)
        r = run_init("bash", "--early", "--rc", str(rc))
        assert r.returncode == 0 and "brought up to date" not in r.stdout
        assert rc.read_text() == generator.render("bash", early=True) + kept


def test_the_rc_file_keeps_its_line_ends_and_gets_a_last_newline(tmp_path):
    rc = tmp_path / ".bashrc"
    rc.write_bytes(b"a=1\r\nb=2\rc=3")
    assert run_init("bash", "--early", "--rc", str(rc)).returncode == 0
    assert rc.read_bytes().endswith(b"\na=1\r\nb=2\rc=3\n")  # `>> FILE` then starts a line
    assert (tmp_path / ".bashrc.tcg-bak").read_bytes() == b"a=1\r\nb=2\rc=3"


def test_a_file_of_another_user_or_read_only_is_refused(tmp_path):
    """The new text is a new file renamed over the old: for another user's file (or
    a new one in another user's directory) it would become ours, and a read-only
    one would be replaced. All are refused, nothing changed."""
    rc = tmp_path / ".bashrc"
    rc.write_text("x=1\n")
    rc.chmod(0o444)
    r = run_init("bash", "--early", "--rc", str(rc))
    assert r.returncode != 0 and "read-only" in r.stderr, r.stderr
    rc.chmod(0o644)
    if os.geteuid() == 0:  # only root can give files away
        os.chown(rc, 65534, 65534)
        r = run_init("bash", "--early", "--rc", str(rc))
        assert r.returncode != 0 and "belongs to another user" in r.stderr, r.stderr
        theirs = tmp_path / "theirs"
        theirs.mkdir()
        os.chown(theirs, 65534, 65534)
        r = run_init("bash", "--early", "--rc", str(theirs / ".bashrc"))
        assert r.returncode != 0 and "belongs to another user" in r.stderr, r.stderr
        assert list(theirs.iterdir()) == []
    assert rc.read_text() == "x=1\n" and not (tmp_path / ".bashrc.tcg-bak").exists()


@pytest.mark.parametrize("kind", ["directory", "symlink-loop"])
def test_an_rc_path_that_is_no_file_is_a_clear_error(tmp_path, kind):
    rc = tmp_path / "rc"
    if kind == "directory":
        rc.mkdir()
    else:
        rc.symlink_to(tmp_path / "other")
        (tmp_path / "other").symlink_to(rc)
    r = run_init("bash", "--early", "--rc", str(rc))
    assert r.returncode != 0 and f"cannot read {rc}" in r.stderr, r.stderr
    assert "internal error" not in r.stderr


def test_a_new_rc_file_follows_the_umask(tmp_path):
    code = (f"import os, sys; os.umask(0o077); sys.argv = ['tcg_shell', 'init', 'zsh', '--early', "
            f"'--rc', {str(tmp_path / '.zshrc')!r}]; from tcg.shell_entry import main; sys.exit(main())")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    assert (tmp_path / ".zshrc").stat().st_mode & 0o777 == 0o600


def test_the_rc_file_keeps_its_mode_and_its_symlink(tmp_path):
    """rc files hold tokens: the new text and the backup keep the file's mode; a
    symlinked rc file (dotfile managers) is written through to its target."""
    target = tmp_path / "dotfiles" / "bashrc"
    target.parent.mkdir()
    target.write_text("export TOKEN=not-a-real-one\n")
    target.chmod(0o600)
    link = tmp_path / ".bashrc"
    link.symlink_to(target)
    assert run_init("bash", "--early", "--rc", str(link)).returncode == 0
    assert link.is_symlink() and target.read_text().startswith(EARLY_BEGIN_MARK)
    assert target.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / ".bashrc.tcg-bak").stat().st_mode & 0o777 == 0o600
    assert run_init("--uninstall", "bash", "--rc", str(link)).returncode == 0
    assert link.is_symlink() and target.read_text() == "export TOKEN=not-a-real-one\n"
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["bashrc"]  # no temporary file left


@pytest.mark.parametrize("args", [["powershell", "--early"], ["cmd", "--early"],
                                  ["bash", "--early", "--rc"], ["bash", "--rc", "x"],
                                  ["bash", "--early", "--rc", "--early"],
                                  ["bash", "--bogus"]])
def test_early_block_usage_errors(args):
    r = run_init(*args)
    assert r.returncode == 2 and r.stdout == "", (args, r.stdout, r.stderr)


def test_uninstall_refuses_a_torn_block(tmp_path):
    rc = tmp_path / ".zshrc"
    rc.write_text("a\n" + BEGIN_MARK + "\nb\n")
    r = run_init("--uninstall", "zsh", "--rc", str(rc))
    assert r.returncode != 0 and rc.read_text() == "a\n" + BEGIN_MARK + "\nb\n"


def test_features_follow_the_installation():
    f = generator.current_features()
    assert f.python == os.path.abspath(sys.executable)
    assert f.agents  # from the policy's agents.known
    assert set(AGENTS) <= set(f.agents)
    assert isinstance(features("/p").launch, bool)
