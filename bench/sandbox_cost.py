#!/usr/bin/env python3
"""What the agent's sandbox view adds to one command.

`tcg_shell run-line LINE` as the agent would run it (stdin /dev/null, pipes), in a
temporary HOME holding the usual secret stores and a project with a `.env`:

- baseline: the same station as a human (`TCG_ACTOR=human`: same decision, same pipe
  mode and strict masker, no view, no scrubbing);
- agent, view built by tcg's namespaces (`sandbox.mechanism = "namespaces"`);
- agent, view built by bubblewrap (`sandbox.mechanism = "bwrap"`), when installed.

Runs interleave the variants (the machine is shared and noisy) and report medians per
round; "added" is agent minus baseline within a round. `--extra-stores N` plants N
more `.env` files in the project, to see the cost per covered store.

    .venv/bin/python bench/sandbox_cost.py [--runs 40] [--rounds 3] [--extra-stores 0] [--line true]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.sandbox.world import build  # noqa: E402 - the same planted machine the tests use

TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))
BASH = shutil.which("bash") or "/bin/bash"


def once(line: str, env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    r = subprocess.run([TCG_SHELL, "run-line", "--shell", BASH, line], cwd=cwd, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"run-line failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--extra-stores", type=int, default=0)
    ap.add_argument("--line", default="true")
    a = ap.parse_args()

    base = Path(tempfile.mkdtemp(prefix="tcg-sandbox-bench-"))
    home = base / "home"
    tcg_home = base / "tcg-home"
    (tcg_home / "state").mkdir(parents=True)
    os.environ.update({"HOME": str(home), "TCG_HOME": str(tcg_home), "GIT_AUTHOR_NAME": "bench",
                       "GIT_AUTHOR_EMAIL": "bench@tcg.invalid", "GIT_COMMITTER_NAME": "bench",
                       "GIT_COMMITTER_EMAIL": "bench@tcg.invalid"})
    world = build(home, base / "w")
    for i in range(a.extra_stores):
        d = world.project / "services" / f"svc{i}"
        d.mkdir(parents=True)
        (d / ".env").write_text(f"SERVICE_TOKEN=t{i}\n")
    env = {**world.env, "HOME": str(home), "TCG_HOME": str(tcg_home)}
    # What users get: an installed package has its bytecode compiled (pip does it).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "tcg")], check=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    policies = {}
    for mech in ("namespaces", "bwrap"):
        p = base / f"{mech}.toml"
        p.write_text(f'[sandbox]\nmechanism = "{mech}"\n')
        policies[mech] = str(p)
    variants = {"human (baseline)": {**env, "TCG_ACTOR": "human"},
                "agent, namespaces": {**env, "TCG_POLICY": policies["namespaces"]}}
    if shutil.which("bwrap"):
        variants["agent, bwrap"] = {**env, "TCG_POLICY": policies["bwrap"]}
    for v in variants.values():  # warm up: install key, detector, policy snapshot, walks, twins
        for line in ("echo warm", a.line, a.line):
            once(line, v, world.project)
    hidden = subprocess.run([TCG_SHELL, "run-line", "--shell", BASH, "grep -c ' /proc/\\| / ' /proc/self/mountinfo"],
                            cwd=world.project, env=variants["agent, namespaces"], capture_output=True)
    print(f"line: {a.line!r}; project {world.project}; extra stores: {a.extra_stores}; "
          f"mounts seen inside: {hidden.stdout.decode().strip()}")
    print(f"{'round':>5}  " + "  ".join(f"{k:>20}" for k in variants) + "   added (namespaces)  added (bwrap)")
    for rnd in range(a.rounds):
        times: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(a.runs):
            for k, v in variants.items():
                times[k].append(once(a.line, v, world.project))
        med = {k: statistics.median(t) * 1000 for k, t in times.items()}
        base_ms = med["human (baseline)"]
        added = med["agent, namespaces"] - base_ms
        added_b = med.get("agent, bwrap", float("nan")) - base_ms
        print(f"{rnd + 1:>5}  " + "  ".join(f"{med[k]:>17.1f} ms" for k in variants)
              + f"   {added:>+14.1f} ms  {added_b:>+10.1f} ms")
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
