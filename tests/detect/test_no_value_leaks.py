"""Plant every rule example and grep everything the detection API returns, prints,
logs or writes: no matched value may appear anywhere but in the caller's own input."""

from __future__ import annotations

import base64
import logging
import os
from pathlib import Path

from tcg.detect.engine import load_detector
from tests.helpers.leaks import all_files_under


def test_api_outputs_hold_no_matched_value(all_rules, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    det = load_detector()  # the real path: caches in TCG_HOME (hermetic tmp dir)
    before = _snapshot()
    corpus = "\n".join(ex for r in all_rules for ex in r.examples_match)
    corpus += "\n" + base64.b64encode("\n".join(r.examples_match[0] for r in all_rules[:20]).encode()[:3000]).decode()
    outputs = []
    values: dict[str, str] = {}
    for kw in ({}, {"decode": True}, {"overlapping": True}):
        found = det.find(corpus, **kw)
        assert found
        outputs += [repr(found), str(found)] + [repr(f) + str(f) for f in found]
        for f in found:
            assert set(f._asdict()) == {"start", "end", "rule_id", "category", "encoding"}
            assert not hasattr(f, "__dict__")  # no room for anything else
            assert isinstance(f.start, int) and isinstance(f.end, int)
            value = corpus[f.start:f.end]
            if len(value) >= 6:
                values[value] = f.rule_id
    data = corpus.encode()
    outputs.append(repr(det.find_bytes(data, decode=True)))
    captured = capsys.readouterr()
    outputs += [captured.out, captured.err, caplog.text]
    blob = "\n".join(outputs)
    assert len(values) > len(all_rules) // 2
    for value in values:
        assert value not in blob
    # find() writes nothing: TCG_HOME holds only what load_detector wrote from the rules
    # alone (the compiled hyperscan cache), byte for byte the same as before scanning
    assert _snapshot() == before
    home = Path(os.environ["TCG_HOME"])
    assert all((p.parent.name == "detect" and (p.name.startswith("hs-") or p.name == "analysis.memo"))
               or (p.parent.name == "state" and p.name == "key") for p in before), before
    # the start-up memo holds rule fields without examples: no found value in it
    for path in before:
        if path.name == "analysis.memo":
            raw = path.read_bytes()
            assert not any(v.encode() in raw for v in values), path
    # the cache is compiled regexes (literal parts such as "-----BEGIN " occur in it),
    # built before any input was seen; every other file is grepped for values
    for path in all_files_under(home):
        if path not in before:
            raw = path.read_bytes()
            assert not any(v.encode() in raw for v in values), path


def _snapshot():
    home = Path(os.environ["TCG_HOME"])
    return {p: p.read_bytes() for p in all_files_under(home)} if home.exists() else {}
