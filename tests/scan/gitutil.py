"""Real git repositories for scanner tests (built in tmp_path with the git CLI)."""

from __future__ import annotations

import random
import string
import subprocess
from pathlib import Path

ALNUM = string.ascii_letters + string.digits


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=input, capture_output=True, check=True
    )
    return proc.stdout.decode().strip()


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit_file(repo: Path, rel: str, content: str | bytes, msg: str = "edit") -> str:
    p = repo / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        p.write_text(content)
    else:
        p.write_bytes(content)
    git(repo, "add", "--", rel)
    git(repo, "commit", "-q", "-m", msg)
    return git(repo, "rev-parse", "HEAD")


def remove_file(repo: Path, rel: str, msg: str = "remove") -> str:
    git(repo, "rm", "-q", "--", rel)
    git(repo, "commit", "-q", "-m", msg)
    return git(repo, "rev-parse", "HEAD")


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def fake_secrets(seed: int = 7) -> dict[str, str]:
    """Fake, realistically shaped values the packaged rules detect (rule id -> value)."""
    rng = random.Random(seed)
    return {
        "github-pat-classic": "ghp_" + _rand(rng, ALNUM, 36),
        "aws-access-key-id": "AKIA" + _rand(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
        "slack-bot-token": f"xoxb-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**11, 10**12)}-"
        + _rand(rng, ALNUM, 24),
    }
