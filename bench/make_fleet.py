"""Build a deterministic fleet of git repositories for the scan benchmark.

No network: file contents come from source text already on this machine (the
Python standard library and installed packages). Every repository gets a
realistic history — an initial import, then commits that edit, add and delete
files, a tag, and in some repositories a side branch — written with
`git fast-import` so a 50k-blob fleet builds in seconds. Known FAKE secrets are
planted in some commits and removed again in later ones (plus a few that stay in
the working tree and a few only on a side branch); `planted.json` lists where
(repository, path, commit number, kind, whether it survives at HEAD) — never
needed by the scanners, only by the recall computation.

    python bench/make_fleet.py OUT --shape seed      # 40 repos, 1,600 files, 10 commits each
    python bench/make_fleet.py OUT --shape big       # 32 repos, >= 50k unique blobs
    python bench/make_fleet.py OUT --repos 5 --files 100 --commits 8
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import string
import subprocess
import sys
import sysconfig
import zlib
from pathlib import Path

SHAPES = {
    # repos, files per repo, commits per repo, files edited per later commit
    "seed": (40, 40, 10, 4),
    "big": (32, 560, 20, 64),
    "tiny": (3, 30, 6, 3),
}
TEXT_EXT = (".py", ".txt", ".rst", ".json", ".md", ".cfg", ".toml", ".c", ".h", ".ini", ".html", ".css", ".js")
MAX_FILE = 200_000
EPOCH = 1_700_000_000

B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits


def corpus_files(limit_bytes: int | None = None) -> list[Path]:
    """Text files from the stdlib and site-packages, sorted (deterministic)."""
    roots = {Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])}
    files: list[Path] = []
    for root in sorted(roots):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith(TEXT_EXT):
                    p = Path(dirpath, name)
                    try:
                        size = p.stat().st_size
                    except OSError:
                        continue
                    if 200 <= size <= MAX_FILE:
                        files.append(p)
    files.sort()
    return files


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b62(n: int, width: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = B62[r] + out
    return out.rjust(width, "0")


def fake_secret(kind: str, rng: random.Random) -> str:
    """Realistically shaped, never valid, values (random; checksummed where the format has one)."""
    if kind == "github-pat":
        body = _rand(rng, ALNUM, 30)
        return "ghp_" + body + _b62(zlib.crc32(body.encode()), 6)
    if kind == "aws-key":
        return "AKIA" + _rand(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    if kind == "slack-bot":
        return f"xoxb-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**11, 10**12)}-{_rand(rng, ALNUM, 24)}"
    if kind == "stripe-live":
        return "sk_live_" + _rand(rng, ALNUM, 24)
    if kind == "gitlab-pat":
        return "glpat-" + _rand(rng, ALNUM, 20)
    raise ValueError(kind)


SECRET_KINDS = ("github-pat", "aws-key", "slack-bot", "stripe-live", "gitlab-pat")


def secret_file(kind: str, value: str, rng: random.Random) -> bytes:
    var = {
        "github-pat": "GITHUB_TOKEN",
        "aws-key": "AWS_ACCESS_KEY_ID",
        "slack-bot": "SLACK_BOT_TOKEN",
        "stripe-live": "STRIPE_SECRET_KEY",
        "gitlab-pat": "GITLAB_TOKEN",
    }[kind]
    lines = [
        '"""Service settings."""',
        "",
        "import os",
        "",
        f"TIMEOUT = {rng.randrange(5, 60)}",
        f'{var} = "{value}"',
        f'REGION = "{rng.choice(["eu-west-1", "us-east-1", "ap-south-1"])}"',
        "",
    ]
    if kind == "aws-key":
        lines.insert(6, f'AWS_SECRET_ACCESS_KEY = "{_rand(rng, ALNUM + "/+", 40)}"')
    return ("\n".join(lines)).encode()


class Stream:
    """Writes a fast-import stream for one repository."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.mark = 0

    def blob(self, data: bytes) -> int:
        self.mark += 1
        self.parts.append(b"blob\nmark :%d\ndata %d\n%s\n" % (self.mark, len(data), data))
        return self.mark

    def commit(self, ref: str, when: int, msg: str, parent: int | None, ops: list[bytes]) -> int:
        self.mark += 1
        m = msg.encode()
        head = b"commit %s\nmark :%d\ncommitter Fleet Bot <fleet@bench.invalid> %d +0000\ndata %d\n%s\n" % (
            ref.encode(), self.mark, when, len(m), m,
        )
        if parent is not None:
            head += b"from :%d\n" % parent
        self.parts.append(head + b"".join(ops) + b"\n")
        return self.mark

    def raw(self, text: str) -> None:
        self.parts.append(text.encode())


def _edit(data: bytes, rng: random.Random, donor: bytes, tag: str) -> bytes:
    """A plausible edit: replace a run of lines with lines from another file, stamp a revision."""
    lines = data.split(b"\n")
    dl = donor.split(b"\n")
    i = rng.randrange(len(lines))
    j = min(len(lines), i + rng.randrange(1, 12))
    k = rng.randrange(len(dl))
    new = dl[k : k + rng.randrange(1, 15)]
    lines[i:j] = new + [b"# " + tag.encode()]
    return b"\n".join(lines)


def build_repo(path: Path, idx: int, corpus: list[Path], files: int, commits: int, edits: int, seed: int) -> list[dict]:
    rng = random.Random(seed * 1_000_003 + idx)
    chosen = rng.sample(range(len(corpus)), files)
    tree: dict[str, bytes] = {}
    prefix = f"pkg{idx:02d}"
    for n, ci in enumerate(chosen):
        src = corpus[ci]
        rel = f"{prefix}/{src.parent.name}/{n:04d}_{src.name}"
        tree[rel] = src.read_bytes()
    s = Stream()
    planted: list[dict] = []
    ops = [b"M 100644 :%d %s\n" % (s.blob(data), rel.encode()) for rel, data in sorted(tree.items())]
    when = EPOCH + idx * 86400
    head = s.commit("refs/heads/main", when, "Initial import", None, ops)
    pending_removal: list[str] = []
    # Which commits plant what: every 3rd repo gets secrets; kinds rotate.
    plant_at = {}
    if idx % 3 == 0 and commits >= 4:
        plant_at[2] = ("removed", SECRET_KINDS[idx % len(SECRET_KINDS)])
        plant_at[commits - 2] = ("removed", SECRET_KINDS[(idx + 1) % len(SECRET_KINDS)])
    if idx % 5 == 1 and commits >= 3:
        plant_at[commits - 1] = ("head", SECRET_KINDS[(idx + 2) % len(SECRET_KINDS)])
    paths = sorted(tree)
    for c in range(1, commits):
        when += 3600
        ops = []
        for rel in pending_removal:
            ops.append(b"D %s\n" % rel.encode())
            tree.pop(rel, None)
        pending_removal = []
        for _ in range(edits):
            rel = rng.choice(paths)
            if rel not in tree:
                continue
            donor = tree[rng.choice(paths)] if rng.random() < 0.9 else b""
            tree[rel] = _edit(tree[rel], rng, donor or b"pass", f"rev {c} of {rel}")
            ops.append(b"M 100644 :%d %s\n" % (s.blob(tree[rel]), rel.encode()))
        if c in plant_at:
            fate, kind = plant_at[c]
            rel = f"{prefix}/config/settings_c{c}.py"
            data = secret_file(kind, fake_secret(kind, rng), rng)
            tree[rel] = data
            ops.append(b"M 100644 :%d %s\n" % (s.blob(data), rel.encode()))
            planted.append({"repo": path.name, "path": rel, "commit": c, "kind": kind, "at_head": fate == "head", "line": 6})
            if fate == "removed":
                pending_removal.append(rel)
        head = s.commit("refs/heads/main", when, f"Change {c}", head, ops)
        if c == commits // 2:
            s.raw(f"reset refs/tags/v0.{c}\nfrom :{head}\n\n")
    # A side branch never merged, carrying a secret only it reaches.
    if idx % 4 == 2:
        kind = SECRET_KINDS[(idx + 3) % len(SECRET_KINDS)]
        rel = f"{prefix}/config/feature_flags.py"
        data = secret_file(kind, fake_secret(kind, rng), rng)
        ops = [b"M 100644 :%d %s\n" % (s.blob(data), rel.encode())]
        s.commit("refs/heads/feature/experiment", when + 60, "Try the new client", head, ops)
        planted.append({"repo": path.name, "path": rel, "commit": -1, "kind": kind, "at_head": False, "line": 6})
    stream = b"".join(s.parts) + b"done\n"
    path.mkdir(parents=True)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    subprocess.run(
        ["git", "-C", str(path), "fast-import", "--quiet", "--done"], input=stream, check=True, env=env
    )
    # A working tree that matches HEAD (plain files; git index refreshed so status is clean).
    subprocess.run(["git", "-C", str(path), "read-tree", "-u", "--reset", "HEAD"], check=True, env=env)
    return planted


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="seed")
    ap.add_argument("--repos", type=int)
    ap.add_argument("--files", type=int, help="files per repository")
    ap.add_argument("--commits", type=int)
    ap.add_argument("--edits", type=int, help="files edited per commit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--force", action="store_true", help="replace OUT if it exists")
    args = ap.parse_args(argv)
    repos, files, commits, edits = SHAPES[args.shape]
    repos = args.repos or repos
    files = args.files or files
    commits = args.commits or commits
    edits = args.edits if args.edits is not None else edits
    if args.out.exists():
        if not args.force:
            print(f"{args.out} exists (use --force)", file=sys.stderr)
            return 2
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    corpus = corpus_files()
    planted: list[dict] = []
    for i in range(repos):
        planted += build_repo(args.out / f"repo{i:02d}", i, corpus, files, commits, edits, args.seed)
    meta = {
        "shape": {"repos": repos, "files": files, "commits": commits, "edits": edits, "seed": args.seed},
        "planted": planted,
    }
    (args.out / "planted.json").write_text(json.dumps(meta, indent=1))
    print(f"{repos} repositories, {repos * files} files at the first commit, {len(planted)} planted secrets -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
