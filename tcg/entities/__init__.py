"""Business-entity aliases: client, person and project names the model never sees.

registry (the per-project file), morph/suffixes/translit (surface forms, made when
an entity is registered), normal/matcher (finding forms in text), endings (case
endings on aliases), stream/objects (real -> alias on output), restore/contexts
(alias -> real on what an agent writes), hooks (the Claude Code transforms),
runtime (compiled data), verify and transcript (the proofs). docs/entities.md
describes the behaviour.
"""
