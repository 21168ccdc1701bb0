"""Time of the inbound rule pass over a 5 MB MCP result, against baselines measured in
the same run: parsing the same result as JSON (what the proxy pays anyway) and one
case-insensitive Python ``re`` search for a phrase over the same text (what a single
rule costs without a prefilter); and the start-up of ``tcg inbound check`` against
``python -c pass``.

Inputs are real text nobody here wrote: Python's own standard library sources
(the running interpreter's, tests excluded), cut to 5 MB —
- ``mcp-json``: the tool-result frame as JSON (ASCII: non-ASCII escaped), checked as
  one string, the worst case for the rules (every line a candidate window);
- ``source-text``: the same sources as text (some non-ASCII: the nfkc, skeleton and
  invisible paths run too);
- ``ru-prose``: four plain Russian sentences, each holding «инструкций» (a word several
  Russian rules' literals hold; a rule whose prefilter were that word alone would
  report every sentence), repeated to 5 MB;
- ``ru-negatives``: the Russian hard negatives of bench/data/inbound_corpus.jsonl, each
  followed by a sentence holding «инструкций», repeated to 5 MB: the words of several
  rules' literal pairs close together, line after line;
- ``rule-words``: all hard negatives of that corpus (EN, RU, UZ tutorial and UI
  phrasing that shares its words with the rules) repeated to 5 MB.
Prints medians of several runs, in ms, of wall time and of CPU time (the process's
own: on a shared machine it moves less than wall time), and the ratios to json.loads
of the text as a JSON string (what the MCP proxy does to every result before the gate
sees it) and to the plain ``re`` search. ``--startup`` adds the start-up of ``python -m
tcg inbound check`` on a short text (warm caches, bytecode compiled as after an install;
the runs alternate with ``python -c pass``). ``--baseline-tree DIR`` times the rule pass of
another checkout of tcg (the code before a change) in the same run: one worker process per
tree, rounds alternating between them, each timing its own CPU; the two must give the same
verdict on every input. The machine may be shared: compare ratios, not absolute times, between runs.
Run: ``python bench/inbound_speed.py [--runs N] [--startup] [--baseline-tree DIR]``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import sysconfig
import time

SIZE = 5_000_000
CASES = ("mcp-json", "source-text", "ru-prose", "ru-negatives", "rule-words")


def corpus() -> str:
    root = sysconfig.get_paths()["stdlib"]
    parts, size = [], 0
    for path in sorted(glob.glob(root + "/**/*.py", recursive=True)):
        if "/test" in path:
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            parts.append(fh.read())
        size += len(parts[-1])
        if size > SIZE:
            break
    return "".join(parts)[:SIZE]


def medians_ms(fn, runs: int) -> tuple[float, float]:
    """(wall, CPU) medians in ms."""
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def startup(runs: int) -> None:
    """Medians of ``python -m tcg inbound check`` and ``python -c pass``, alternating."""
    check = [sys.executable, "-m", "tcg", "inbound", "check"]
    times: dict[str, list[float]] = {"python -c pass": [], "tcg inbound check": []}
    # an installed package has its bytecode compiled; PYTHONDONTWRITEBYTECODE would make
    # every run compile every module again
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(check, input=b"warm the cache", capture_output=True, check=False, env=env)
    for _ in range(runs):
        for name, cmd in (("python -c pass", [sys.executable, "-c", "pass"]),
                          ("tcg inbound check", check)):
            start = time.perf_counter()
            subprocess.run(cmd, input=b"hello world", capture_output=True, check=False, env=env)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["python -c pass"]) * 1000
    gate = statistics.median(times["tcg inbound check"]) * 1000
    print(f"start-up     tcg inbound check {gate:7.1f} ms  python -c pass {base:7.1f} ms  "
          f"ratio {gate / base:5.2f}")


def hard_negatives(lang: str | None = None) -> list[str]:
    """The benign rows of tcg's own inbound corpus (all languages, or ``lang``)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "inbound_corpus.jsonl")
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [r["text"] for r in rows if r["label"] != "attack" and lang in (None, r["lang"])]


def repeated(sentences: list[str]) -> str:
    """The sentences, one a line, repeated to SIZE bytes of UTF-8 (cut at a character)."""
    block = "\n".join(sentences) + "\n"
    text = block * (SIZE // len(block.encode("utf-8")) + 1)
    return text.encode("utf-8")[:SIZE].decode("utf-8", "ignore")


def cases() -> dict[str, str]:
    """The inputs by name: the MCP result frame, the source text, Russian prose with a
    rule word in every sentence, the Russian hard negatives with it, and the hard
    negatives of all languages."""
    src = corpus()
    frame = json.dumps({"jsonrpc": "2.0", "id": 1,
                        "result": {"content": [{"type": "text", "text": src}]}})[:SIZE]
    prose = ["Полный список инструкций приведён в приложении.",
             "Пароль из инструкций должен содержать не менее 12 символов.",
             "В разделе инструкций описаны параметры сервера.",
             "Перед обновлением сервера изучите раздел инструкций целиком."]
    ru = [s + " Полный список инструкций приведён в приложении." for s in hard_negatives("ru")]
    return {"mcp-json": frame, "source-text": src, "ru-prose": repeated(prose),
            "ru-negatives": repeated(ru), "rule-words": repeated(hard_negatives())}


def worker() -> int:
    """Serve timings of the rule pass of the tcg on ``sys.path``: read a case name a
    line, answer one JSON line (wall and CPU ms of one pass, and the verdict)."""
    from tcg.inbound.engine import load_engine
    from tcg.inbound.inspect import inspect

    engine = load_engine()
    texts = cases()
    for text in texts.values():
        inspect(engine, text)  # warm: first-use tables and patterns
    import tcg

    print("ready", os.path.dirname(os.path.dirname(os.path.abspath(tcg.__file__))), flush=True)
    for line in sys.stdin:
        text = texts[line.strip()]
        w, c = time.perf_counter(), time.process_time()
        found = inspect(engine, text)
        cpu, wall = time.process_time() - c, time.perf_counter() - w
        print(json.dumps({"wall": wall * 1000, "cpu": cpu * 1000, "rules": found.rules,
                          "where": found.where}), flush=True)
    return 0


def ab(baseline: str, runs: int) -> None:
    """The rule pass of this tree and of ``baseline``, rounds alternating, in the same run."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    procs = {}
    for name, tree in (("baseline", os.path.abspath(baseline)), ("this tree", here)):
        env = dict(os.environ, PYTHONPATH=tree,
                   # no bytecode written into the other checkout
                   PYTHONPYCACHEPREFIX=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tcg-bench-pycache"))
        procs[name] = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                       cwd=tree, env=env, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True)
    try:
        for name, p in procs.items():
            tree = os.path.abspath(baseline) if name == "baseline" else here
            if p.stdout.readline().split() != ["ready", tree]:  # type: ignore[union-attr]
                raise SystemExit(f"the {name} worker did not start on {tree}")
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        verdicts: dict[tuple[str, str], str] = {}
        for _ in range(runs):
            for case in CASES:
                for name, p in procs.items():
                    p.stdin.write(case + "\n")  # type: ignore[union-attr]
                    p.stdin.flush()  # type: ignore[union-attr]
                    got = json.loads(p.stdout.readline())  # type: ignore[union-attr]
                    times.setdefault((case, name), []).append((got["wall"], got["cpu"]))
                    verdicts[(case, name)] = json.dumps([got["rules"], got["where"]], sort_keys=True)
        for case in CASES:
            same = verdicts[(case, "baseline")] == verdicts[(case, "this tree")]
            row = []
            for name in procs:
                wall = statistics.median(t[0] for t in times[(case, name)])
                cpu = statistics.median(t[1] for t in times[(case, name)])
                row.append(f"{name} {wall:6.1f} ({cpu:5.1f})")
            base = statistics.median(t[1] for t in times[(case, "baseline")])
            this = statistics.median(t[1] for t in times[(case, "this tree")])
            print(f"{case:<12} rule pass, wall ms (CPU ms): {'  '.join(row)}  CPU ratio {this / base:4.2f}  "
                  f"CPU runs this tree {sorted(round(t[1], 1) for t in times[(case, 'this tree')])}  "
                  f"same verdict: {'yes' if same else 'NO'}")
            if not same:
                raise SystemExit(f"{case}: the two trees give different verdicts")
    finally:
        for p in procs.values():
            p.stdin.close()  # type: ignore[union-attr]
            p.wait(timeout=60)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--startup", action="store_true", help="also time the command's start-up")
    ap.add_argument("--baseline-tree", metavar="DIR",
                    help="also time the rule pass of this other tcg checkout, rounds alternating")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker()
    from tcg.inbound.engine import load_engine
    from tcg.inbound.inspect import inspect

    engine = load_engine()
    phrase = re.compile(r"ignore\s+(?:all\s+)?previous\s+instructions", re.IGNORECASE)
    print(f"engine {engine.engine}; {len(engine.rules)} rules; median of {args.runs} runs; "
          "wall ms (CPU ms)", file=sys.stderr)
    for name, text in cases().items():
        inspect(engine, text)  # warm: first-use tables and patterns
        gate, gate_cpu = medians_ms(lambda t=text: inspect(engine, t), args.runs)
        encoded = json.dumps({"t": text})
        base, base_cpu = medians_ms(lambda e=encoded: json.loads(e), args.runs)
        plain, plain_cpu = medians_ms(lambda t=text: phrase.search(t), args.runs)
        print(f"{name:<12} {len(text.encode()):>9} bytes  rule pass {gate:6.1f} ({gate_cpu:5.1f})  "
              f"json.loads {base:5.1f} ({base_cpu:5.1f})  plain re {plain:6.1f} ({plain_cpu:5.1f})  "
              f"ratio to json {gate_cpu / base_cpu:5.2f}  to re {gate_cpu / plain_cpu:5.2f} (CPU)")
    if args.baseline_tree:
        ab(args.baseline_tree, args.runs)
    if args.startup:
        startup(args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
