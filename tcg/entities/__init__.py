"""Business-entity aliases: client, person and project names the model never sees.

registry (the per-project file), morph/suffixes/translit (surface forms, made when
an entity is registered), normal/matcher (finding forms in text), endings (case
endings on aliases), stream/objects (real -> alias on output), restore/contexts
(alias -> real on what an agent writes), hooks (the Claude Code transforms),
runtime (compiled data), transcript (the proof on a transcript). `tcg verify`
(tcg.cli.verify) drives them end to end. docs/entities.md describes the behaviour.
"""


def has_alias_like(text: str) -> bool:
    """Does ``text`` hold anything alias-shaped (``ctxg_`` in any case) or a secret
    placeholder? Kept here, free of imports, so a hook can skip the restore
    machinery for inputs that cannot need it."""
    return "ctxg_" in text.lower() or "<SECRET:" in text or "<PII:" in text
