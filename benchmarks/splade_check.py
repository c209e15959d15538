"""Check ``splade_model.py`` against an independent reference: the same BERT-MLM + SPLADE written
token by token and head by head in float64 (``math.erf`` GELU, explicit softmax), no batching.

    python benchmarks/splade_check.py DIR

Encodes two texts of different lengths in one padded batch with ``SpladeModel`` and each alone
with the reference; prints the largest difference per text and the heaviest terms of the first,
and exits 1 if a difference exceeds ``TOLERANCE`` or the non-zero terms differ.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))

from splade_model import SpladeModel, read_safetensors  # noqa: E402

TEXTS = ("convert a pdf to text", "Deploy the Kubernetes manifests to the staging cluster, then run the smoke tests.")
TOLERANCE = 1e-4


def reference(folder: Path, text: str) -> np.ndarray:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    t = {k: v.astype(np.float64) for k, v in read_safetensors(folder / "model.safetensors").items()}
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    ids = tokenizer.encode(text).ids
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    width = hidden // heads

    def norm(v: np.ndarray, name: str) -> np.ndarray:
        mean = v.mean()
        return (v - mean) / math.sqrt(((v - mean) ** 2).mean() + config["layer_norm_eps"]) * t[f"{name}.gamma"] + t[
            f"{name}.beta"
        ]

    def gelu(v: np.ndarray) -> np.ndarray:
        return np.array([0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in v])

    def dense(name: str, v: np.ndarray) -> np.ndarray:
        return t[f"{name}.weight"] @ v + t[f"{name}.bias"]

    e = "bert.embeddings"
    xs = [
        norm(
            t[f"{e}.word_embeddings.weight"][token]
            + t[f"{e}.position_embeddings.weight"][i]
            + t[f"{e}.token_type_embeddings.weight"][0],
            f"{e}.LayerNorm",
        )
        for i, token in enumerate(ids)
    ]
    for n in range(config["num_hidden_layers"]):
        layer = f"bert.encoder.layer.{n}"
        q = [dense(f"{layer}.attention.self.query", x) for x in xs]
        k = [dense(f"{layer}.attention.self.key", x) for x in xs]
        v = [dense(f"{layer}.attention.self.value", x) for x in xs]
        out = []
        for i, x in enumerate(xs):
            context = np.zeros(hidden)
            for h in range(heads):
                cut = slice(h * width, (h + 1) * width)
                s = np.array([q[i][cut] @ k[j][cut] / math.sqrt(width) for j in range(len(xs))])
                p = np.exp(s - s.max())
                p /= p.sum()
                context[cut] = sum(p[j] * v[j][cut] for j in range(len(xs)))
            a = norm(x + dense(f"{layer}.attention.output.dense", context), f"{layer}.attention.output.LayerNorm")
            f = dense(f"{layer}.output.dense", gelu(dense(f"{layer}.intermediate.dense", a)))
            out.append(norm(a + f, f"{layer}.output.LayerNorm"))
        xs = out
    vector = np.zeros(config["vocab_size"])
    for x in xs:
        state = norm(gelu(dense("cls.predictions.transform.dense", x)), "cls.predictions.transform.LayerNorm")
        logits = t[f"{e}.word_embeddings.weight"] @ state + t["cls.predictions.bias"]
        vector = np.maximum(vector, np.log1p(np.maximum(logits, 0.0)))
    return vector


def main() -> None:
    folder = Path(sys.argv[1])
    model = SpladeModel(folder)
    batch = model.encode(list(TEXTS))
    worst = 0.0
    for text, row in zip(TEXTS, batch, strict=True):
        expected = reference(folder, text)
        difference = float(np.abs(expected - row).max())
        same_terms = set(np.flatnonzero(expected > TOLERANCE)) <= set(np.flatnonzero(row > 0))
        worst = max(worst, difference if same_terms else math.inf)
        print(f"{text!r}: max |difference| {difference:.1e}, {int((row > 0).sum())} terms, same terms: {same_terms}")
    print("top terms of", repr(TEXTS[0]), model.terms(batch[0], 8))
    sys.exit(0 if worst <= TOLERANCE else 1)


if __name__ == "__main__":
    main()
