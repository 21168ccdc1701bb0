"""Which commands touch which of their words as files: the command tables and the
classifier the line engine (tcg.decide.line) and the delete-guard (tcg.guard.rules)
ask.

Data plus one pure function: :func:`classify` takes a parsed simple command and its
name, and returns each argument word with the access kind the command applies to it
(read, write, read-write, modify, use, list). The model is documented in
docs/parser.md; adding a command is a table edit here.
"""

from __future__ import annotations

from tcg.policy.access import (  # the access kinds (defined there)
    LIST,
    MODIFY,
    READ,
    RW,
    USE,
    WRITE,
)
from tcg.policy.cmdline import SimpleCommand, Word

# --------------------------------------------------------------- access model


LISTING = frozenset({"ls", "dir", "vdir", "tree", "exa", "eza", "lsd", "find", "fd", "fdfind", "du"})
NON_READING = frozenset(
    {
        "stat", "file", "test", "[", "realpath", "readlink", "basename", "dirname", "which", "type",
        "whereis", "cd", "pushd", "popd", "echo", "printf", "print", "wc", "md5sum", "sha1sum",
        "sha256sum", "sha512sum", "b2sum", "cksum", "lsattr", "getfacl", "namei", ":", "true",
        "false", "export", "declare", "typeset", "local", "readonly", "unset", "alias", "set",
        "shopt", "umask", "sleep", "kill", "pwd", "date", "whoami", "id", "hostname", "uname",
        "ssh", "mosh", "exit", "return", "hash", "history", "jobs", "wait", "trap", "ulimit",
    }
)
MODIFYING = frozenset(
    {"rm", "rmdir", "unlink", "shred", "touch", "chmod", "chown", "chgrp", "chattr", "setfacl",
     "mkdir", "mkfifo", "mknod", "srm"}
)
# Commands whose file arguments are routinely read: a dynamic argument here is
# "unresolved" (for other commands a dynamic word is assumed not to be a file).
FILE_READERS = frozenset(
    {
        "cat", "tac", "nl", "less", "more", "most", "head", "tail", "bat", "batcat", "view", "vi",
        "vim", "nvim", "nano", "emacs", "ed", "grep", "egrep", "fgrep", "rg", "ag", "ack", "awk",
        "gawk", "mawk", "sed", "cut", "sort", "uniq", "strings", "od", "xxd", "hexdump", "hd",
        "base64", "base32", "basenc", "cp", "mv", "ln", "scp", "rsync", "tar", "zip", "7z", "gzip",
        "bzip2", "xz", "zstd", "openssl", "gpg", "source", ".", "diff", "cmp", "comm", "paste",
        "join", "jq", "yq", "iconv", "dd", "tee", "split", "fold", "fmt", "pr", "column", "look",
        "xclip", "xsel", "wl-copy", "pbcopy", "nc", "ncat", "socat", "install", "code", "open",
        "xdg-open", "python", "python3", "node", "perl", "ruby", "php", "bash", "sh", "zsh", "sqlite3",
    }
)
PATTERN_FIRST = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk", "mawk", "sed", "jq", "yq"}
)
GIT_READING = frozenset(
    {"show", "diff", "log", "blame", "annotate", "cat-file", "grep", "archive", "format-patch",
     "difftool", "whatchanged", "apply", "am"}
)
INTERPRETERS = {
    "python": ("-c",), "python3": ("-c",), "python2": ("-c",), "pypy": ("-c",), "pypy3": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "bun": ("-e", "--eval"),
    "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",), "osascript": ("-e",),
    "pwsh": ("-c", "-Command"), "powershell": ("-c", "-Command"),
}
# Options whose value is a credential the tool uses without printing it.
USE_OPTIONS: dict[str, frozenset[str]] = {
    "ssh": frozenset({"-i", "-F", "-S"}),
    "scp": frozenset({"-i", "-F", "-S"}),
    "sftp": frozenset({"-i", "-F"}),
    "curl": frozenset({"--cert", "-E", "--key", "--cacert", "--capath", "--netrc-file", "--proxy-cert",
                       "--proxy-key"}),
    "docker": frozenset({"--env-file", "--tlscert", "--tlskey", "--tlscacert", "--config"}),
    "podman": frozenset({"--env-file"}),
    "docker-compose": frozenset({"--env-file"}),
    "node": frozenset({"--env-file", "--env-file-if-exists"}),
    "bun": frozenset({"--env-file"}),
    "deno": frozenset({"--env-file", "--env"}),
    "kubectl": frozenset({"--kubeconfig", "--client-key", "--client-certificate", "--certificate-authority"}),
    "helm": frozenset({"--kubeconfig", "--key-file", "--cert-file", "--ca-file"}),
    "oc": frozenset({"--kubeconfig"}),
    "gcloud": frozenset({"--key-file", "--cred-file"}),
    "terraform": frozenset({"-var-file", "--var-file"}),
    "tofu": frozenset({"-var-file", "--var-file"}),
    "openssl": frozenset({"-cert", "-key", "-CAfile", "-passin", "-inkey"}),
    "ansible": frozenset({"--private-key", "--key-file", "--vault-password-file"}),
    "ansible-playbook": frozenset({"--private-key", "--key-file", "--vault-password-file"}),
    "git": frozenset({"--git-dir"}),
    "uv": frozenset({"--env-file"}),
    "dotenv": frozenset({"-f", "-e"}),
    "psql": frozenset({"--passfile"}),
    "mysql": frozenset({"--defaults-file", "--defaults-extra-file"}),
}
USE_COMMANDS = frozenset({"ssh-add", "ssh-keygen", "ssh-copy-id", "ssh-keyscan"})
# Commands whose reads hide in URLs, SQL, object ids or directories (tcg.policy.readers).
HIDDEN_READERS = frozenset({"curl", "sqlite3", "sqlite", "git", "grep", "egrep", "fgrep", "rgrep", "tar", "bsdtar",
                             "zip", "rsync", "cp", "scp", "rg"})
PRINTING = frozenset({"echo", "printf", "print"})


# --------------------------------------------------------------- classification


def classify(cmd: SimpleCommand, name: str) -> list[tuple[Word, str]]:
    """Each argument word with what the command does to it as a file."""
    args = list(cmd.args)
    out: list[tuple[Word, str]] = []
    if name in PRINTING or name in NON_READING:
        return []
    if name in LISTING:
        return [(w, LIST) for w in _positionals(args)]
    if name in MODIFYING:
        return [(w, MODIFY) for w in _positionals(args)]
    if name in USE_COMMANDS:
        return [(w, USE) for w in args]
    if name == "git":
        return _classify_git(args)
    if name in ("curl", "wget"):
        return _classify_fetch(name, args)
    if name == "dd":
        for w in args:
            key, eq, val = w.value.partition("=")
            if eq and key in ("if", "of"):
                out.append((Word(val, w.static, w.glob, w.pattern, w.vars, w.source), READ if key == "if" else WRITE))
        return out
    use = USE_OPTIONS.get(name, frozenset())
    pos: list[Word] = []
    i = 0
    pattern_given = False
    in_place = False
    target_dir: Word | None = None
    while i < len(args):
        w = args[i]
        v = w.value
        if w.is_literal and v.startswith("-") and len(v) > 1:
            opt, eq, val = v.partition("=")
            if opt in use:
                if eq:
                    out.append((Word(val, w.static, w.glob, w.pattern, w.vars, w.source), USE))
                elif i + 1 < len(args):
                    out.append((args[i + 1], USE))
                    i += 1
                i += 1
                continue
            if name in PATTERN_FIRST and opt in ("-e", "--regexp", "--expression", "-f", "--file"):
                pattern_given = True
                if opt in ("-f", "--file"):
                    target = Word(val, w.static) if eq else (args[i + 1] if i + 1 < len(args) else None)
                    if target is not None:
                        out.append((target, READ))
                if not eq:
                    i += 1
                i += 1
                continue
            if name in ("sed", "perl") and (opt in ("-i", "--in-place") or (opt.startswith("-i") and name == "sed")
                                            or (name == "perl" and opt.startswith("-") and "i" in opt[1:3])):
                in_place = True
            if name in ("cp", "mv", "install", "ln") and opt in ("-t", "--target-directory"):
                if eq:
                    target_dir = Word(val, w.static)
                elif i + 1 < len(args):
                    target_dir = args[i + 1]
                    i += 1
                i += 1
                continue
            if name in ("docker", "podman") and opt in ("-v", "--volume", "--mount") :
                src = val if eq else (args[i + 1].value if i + 1 < len(args) else "")
                src = src.split(",")[0].replace("source=", "").replace("src=", "").split(":")[0]
                out.append((Word(src), READ))
                if not eq:
                    i += 1
                i += 1
                continue
            if eq and opt in ("--exclude", "--include", "--exclude-dir", "--include-dir"):
                i += 1  # a glob of names to skip or keep, not a file that is read
                continue
            if eq:  # --file=PATH: the value may be a path
                out.append((Word(val, w.static, w.glob, w.pattern, w.vars, w.source), READ))
            i += 1
            continue
        if v == "--" and w.is_literal:
            pos.extend(args[i + 1 :])
            break
        pos.append(w)
        i += 1
    if name in PATTERN_FIRST and not pattern_given and pos:
        pos = pos[1:]  # grep PATTERN FILE…: the pattern is not a file
    if name in ("tee",):
        return out + [(w, WRITE) for w in pos]
    if name == "truncate":
        return out + [(w, WRITE) for w in pos]
    if name in ("cp", "install", "rsync", "scp", "mv", "ln"):
        src_access = RW if name in ("mv", "ln") else READ
        if target_dir is not None:
            return out + [(w, src_access) for w in pos] + [(target_dir, WRITE)]
        if len(pos) >= 2:
            return out + [(w, src_access) for w in pos[:-1]] + [(pos[-1], WRITE)]
        return out + [(w, src_access) for w in pos]
    if in_place:
        return out + [(w, RW) for w in pos]
    if name in INTERPRETERS:
        # skip the code string after -c/-e: it is checked as code
        opts = INTERPRETERS[name]
        keep: list[Word] = []
        skip = False
        for w in args:
            if skip:
                skip = False
                continue
            if w.value in opts:
                skip = True
                continue
            if not w.value.startswith("-"):
                keep.append(w)
        return out + [(w, READ) for w in keep]
    # key=value arguments (make VAR=x, dd-style) may carry a path after '='
    extra: list[tuple[Word, str]] = []
    for w in pos:
        if "=" in w.value and w.static and not w.value.startswith("="):
            val = w.value.split("=", 1)[1]
            extra.append((Word(val, w.static, False, None, w.vars, w.source), READ))
    return out + [(w, READ) for w in pos] + extra


def _positionals(args: list[Word]) -> list[Word]:
    return [w for w in args if not (w.is_literal and w.value.startswith("-") and len(w.value) > 1)]


def _classify_git(args: list[Word]) -> list[tuple[Word, str]]:
    i = 0
    while i < len(args) and args[i].value.startswith("-"):
        if args[i].value in ("-C", "-c", "--git-dir", "--work-tree", "--namespace"):
            i += 1
        i += 1
    if i >= len(args):
        return []
    sub = args[i].value
    if sub not in GIT_READING:
        return []
    out: list[tuple[Word, str]] = []
    for w in _positionals(args[i + 1 :]):
        out.append((w, READ))
        if ":" in w.value:  # HEAD:.env
            out.append((Word(w.value.split(":", 1)[1], w.static, w.glob, w.pattern, w.vars, w.source), READ))
    return out


def _classify_fetch(name: str, args: list[Word]) -> list[tuple[Word, str]]:
    """curl/wget: URLs are not files; uploads (-d @f, -F x=@f, -T f) read, -o writes."""
    out: list[tuple[Word, str]] = []
    reads_at = {"-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--json", "-F", "--form"}
    reads = {"-T", "--upload-file", "-K", "--config", "--post-file", "--body-file", "-i", "--input-file"}
    writes = {"-o", "--output", "-O", "--output-document", "-c", "--cookie-jar"}
    use = USE_OPTIONS.get(name, frozenset())
    for i, w in enumerate(args):
        opt, eq, val = w.value.partition("=") if w.value.startswith("--") else (w.value, "", "")
        nxt = Word(val, w.static) if eq else (args[i + 1] if i + 1 < len(args) else None)
        if nxt is None:
            continue
        if opt in reads_at and "@" in nxt.value:
            path = nxt.value.split("@", 1)[1].split(";", 1)[0]
            out.append((Word(path, nxt.static, vars=nxt.vars), READ))
        elif opt in reads:
            out.append((nxt, READ))
        elif opt in writes and not (name == "wget" and opt == "-O" and nxt.value == "-"):
            if not (name == "curl" and opt == "-O"):
                out.append((nxt, WRITE))
        elif opt in use:
            out.append((nxt, USE))
    return out
