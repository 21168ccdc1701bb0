"""Build real-looking git repositories from real code: one repository per package, one commit
per released version (oldest first, each tagged), from the packages' own source
distributions.

    python bench/make_release_repos.py OUT [--packages attrs,click,...] [--releases 6]

The code and its evolution are the maintainers' (what changed between releases is what a
long-lived repository holds in its history); only the commit boundaries are per release.
The sdists are fetched with pip (``pip download --no-binary :all:``, the ordinary client;
cached under OUT/.sdists, so a second build needs no network) and nothing of them enters
tcg's own repository. Nothing is planted: the scan benchmark reports what each tool finds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

DEFAULT_PACKAGES = ("attrs", "click", "packaging", "pluggy", "jinja2", "requests", "idna", "httpx",
                    "itsdangerous", "pyyaml")
GIT_ENV = {"GIT_AUTHOR_NAME": "release", "GIT_AUTHOR_EMAIL": "release@bench.invalid",
           "GIT_COMMITTER_NAME": "release", "GIT_COMMITTER_EMAIL": "release@bench.invalid",
           "GIT_CONFIG_NOSYSTEM": "1"}
_STABLE = re.compile(r"^\d+(?:\.\d+)*$")


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, check=False)


def releases(package: str, count: int) -> list[str]:
    """The last ``count`` stable versions, oldest first (``pip index versions``)."""
    out = pip("index", "versions", package).stdout
    m = re.search(r"Available versions:\s*(.+)", out)
    if not m:
        raise SystemExit(f"pip cannot list the versions of {package}: {out.strip()[:200]}")
    stable = [v.strip() for v in m.group(1).split(",") if _STABLE.match(v.strip())]
    return list(reversed(stable[:count]))


def sdist(package: str, version: str, cache: Path) -> Path | None:
    name = re.sub(r"[-_.]+", "[-_.]", package)
    pat = re.compile(rf"(?i)^{name}-{re.escape(version)}\.(tar\.gz|zip)$")
    for p in cache.glob("*"):
        if pat.match(p.name):
            return p
    proc = pip("download", "--no-deps", "--no-binary", ":all:", "-d", str(cache), f"{package}=={version}")
    if proc.returncode != 0:
        print(f"  skip {package} {version}: no sdist ({proc.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        return None
    return next((p for p in cache.glob("*") if pat.match(p.name)), None)


def unpack(archive: Path, dest: Path) -> Path:
    """The sdist's top directory, unpacked under ``dest``."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(dest)
    else:
        with tarfile.open(archive) as t:
            t.extractall(dest, filter="data") if sys.version_info >= (3, 12) else t.extractall(dest)  # noqa: S202
    tops = [p for p in dest.iterdir() if p.is_dir()]
    return tops[0] if len(tops) == 1 else dest


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})


def build(package: str, versions: list[str], out: Path, cache: Path) -> dict[str, object] | None:
    repo = out / package
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    done = []
    for version in versions:
        archive = sdist(package, version, cache)
        if archive is None:
            continue
        with tempfile.TemporaryDirectory() as td:
            top = unpack(archive, Path(td))
            for child in repo.iterdir():  # the release replaces the tree (deletions included)
                if child.name != ".git":
                    shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
            for child in top.iterdir():
                target = repo / child.name
                shutil.copytree(child, target, symlinks=True) if child.is_dir() else shutil.copy2(child, target)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "-m", f"{package} {version}")
        git(repo, "tag", f"v{version}")
        done.append(version)
    if not done:
        shutil.rmtree(repo)
        return None
    return {"repo": package, "releases": done}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--packages", default=",".join(DEFAULT_PACKAGES))
    ap.add_argument("--releases", type=int, default=6)
    args = ap.parse_args(argv)
    out: Path = args.out
    cache = out / ".sdists"
    cache.mkdir(parents=True, exist_ok=True)
    built = []
    for package in [p for p in args.packages.split(",") if p]:
        versions = releases(package, args.releases)
        info = build(package, versions, out, cache)
        if info:
            built.append(info)
            print(f"{package}: {len(info['releases'])} releases ({', '.join(info['releases'])})")  # type: ignore[arg-type]
    (out / "repos.json").write_text(json.dumps(built, indent=1) + "\n")
    print(f"{len(built)} repositories under {out}")
    return 0 if built else 1


if __name__ == "__main__":
    raise SystemExit(main())
