"""Optional classifier for the inbound gate (the ``tcg[ml]`` extra): an ONNX model
loaded with onnxruntime from a path the user provides. Nothing is downloaded.

No PyPI package ships a prompt-injection classifier that runs offline, and the
good ones (Llama Prompt Guard 2) are gated downloads under their own licence;
so tcg brings the loading code and the user brings the model:

- a Prompt Guard 2 style model: ``model.onnx`` with ``tokenizer.json`` beside it
  (the ``tokenizers`` package), inputs ``input_ids``/``attention_mask``, output
  logits ``[batch, 2]`` (benign, malicious). Texts longer than one window are
  split into windows of WINDOW tokens (overlapping by STRIDE) and the highest
  score counts;
- a feature model: ``model.onnx`` alone, one float input ``[1, D]`` of hashed
  character 3-grams (:func:`features`; D from the model's input shape), output a
  probability ``[1, 1]`` or ``[1, 2]``. What a scikit-learn linear model
  exported with skl2onnx looks like.

The gate adds the rule id ``ml-classifier`` (kind ``injection``) when the score
reaches the threshold. Policy: ``inbound.ml.model`` (path), ``inbound.ml.threshold``
(default 0.9). A model that cannot be loaded is an error of the gate, which
fails closed (docs/inbound.md).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

RULE_ID = "ml-classifier"
WINDOW = 512
STRIDE = 448
DEFAULT_THRESHOLD = 0.9


class ClassifierError(RuntimeError):
    """The configured model cannot be used (missing file, package or bad shape)."""


def features(text: str, dim: int) -> list[float]:
    """Hashed character 3-grams of the lower-cased text, L2-normalized (stable across
    runs and platforms: blake2b, not Python's salted hash)."""
    vec = [0.0] * dim
    t = f" {text.lower()} "
    for i in range(len(t) - 2):
        h = int.from_bytes(hashlib.blake2b(t[i:i + 3].encode("utf-8", "surrogatepass"),
                                           digest_size=8).digest(), "little")
        vec[h % dim] += 1.0
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


@dataclass
class Classifier:
    """A loaded model; :meth:`score` returns the probability that a text is an attack."""

    session: Any
    tokenizer: Any = None
    dim: int = 0

    def score(self, text: str) -> float:
        import numpy as np

        if self.tokenizer is None:
            x = np.asarray([features(text, self.dim)], dtype=np.float32)
            out = self.session.run(None, {self.session.get_inputs()[0].name: x})[0]
            return _probability(np.asarray(out))
        ids = self.tokenizer.encode(text).ids or [0]
        best = 0.0
        start = 0
        while True:
            window = ids[start:start + WINDOW]
            feed = {"input_ids": np.asarray([window], dtype=np.int64),
                    "attention_mask": np.ones((1, len(window)), dtype=np.int64)}
            names = {i.name for i in self.session.get_inputs()}
            logits = self.session.run(None, {k: v for k, v in feed.items() if k in names})[0]
            best = max(best, _softmax_last(np.asarray(logits)))
            if start + WINDOW >= len(ids):
                return best
            start += STRIDE


def _probability(out: Any) -> float:
    flat = out.reshape(-1)
    return float(flat[-1]) if flat.size <= 2 else float(flat.max())


def _softmax_last(logits: Any) -> float:
    import numpy as np

    row = logits.reshape(-1)
    e = np.exp(row - row.max())
    return float(e[-1] / e.sum())


@lru_cache(maxsize=2)
def load(path: str) -> Classifier:
    """Load ``path`` (an .onnx file); raises ClassifierError with a hint-worthy message."""
    try:
        import onnxruntime
    except ImportError:
        raise ClassifierError("inbound.ml.model is set but onnxruntime is not installed "
                              "(pip install 'tcg[ml]')") from None
    if not os.path.isfile(path):
        raise ClassifierError(f"inbound.ml.model: no such file: {path}")
    try:
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - any load failure is the same user problem
        raise ClassifierError(f"inbound.ml.model: cannot load {path}: {type(exc).__name__}") from None
    tok_path = os.path.join(os.path.dirname(path), "tokenizer.json")
    if os.path.isfile(tok_path):
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise ClassifierError("the model has a tokenizer.json but the tokenizers package is "
                                  "not installed (pip install 'tcg[ml]')") from None
        return Classifier(session, tokenizer=Tokenizer.from_file(tok_path))
    shape = session.get_inputs()[0].shape
    dim = shape[-1] if shape and isinstance(shape[-1], int) else 0
    if dim <= 0:
        raise ClassifierError(f"inbound.ml.model: {path} needs a fixed feature size "
                              "(input [1, D]) or a tokenizer.json beside it")
    return Classifier(session, dim=dim)


def configured(policy: Any) -> tuple[Classifier, float] | None:
    """The policy's classifier and threshold, or None when none is configured."""
    if policy is None:
        return None
    settings = policy.model.inbound
    path = settings.ml_model
    if not path:
        return None
    threshold = settings.ml_threshold if settings.ml_threshold is not None else DEFAULT_THRESHOLD
    return load(os.path.expanduser(path)), float(threshold)
