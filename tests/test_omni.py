"""Omni-retrieval on real parts: real files in tmp_path (a PDF and a DOCX made with pypdf and
python-docx), the real SQLite chunk and triple stores, real threads with a source that sleeps
and one that raises, the real tokenizer."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from skillpilot.config import Settings
from skillpilot.errors import DocumentError, SourceUnavailableError
from skillpilot.omni import (
    IntentClassifier,
    OmniItem,
    OmniRequest,
    SourceName,
    attach_files,
    build_knowledge_base,
    load_triples,
    omni_retrieve,
)
from skillpilot.omni.classify import keyword_hits
from skillpilot.omni.fetch import FetchPolicy, fetch_all
from skillpilot.omni.fuse import fit, merge
from skillpilot.omni.model import SourceOutcome
from skillpilot.omni.pipeline import graph_store
from skillpilot.omni.sources.documents import chunk_text, read_document, text_units
from skillpilot.omni.sources.graph import GraphSource, read_triples
from skillpilot.tokens import TokenCounter

KEYWORDS_ONLY = IntentClassifier()


def write_pdf(path: Path, text: str) -> Path:
    from pypdf import PdfWriter
    from pypdf.generic import ContentStream, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(width=612, height=792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
    )
    content = ContentStream(None, writer)
    content.set_data(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("latin-1"))
    page.replace_contents(content)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def write_docx(path: Path, paragraphs: list[str], table: list[list[str]]) -> Path:
    import docx

    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    grid = document.add_table(rows=len(table), cols=len(table[0]))
    for r, row in enumerate(table):
        for c, value in enumerate(row):
            grid.cell(r, c).text = value
    document.save(str(path))
    return path


@pytest.fixture()
def settings(isolated_home: Path) -> Settings:
    return Settings(home=isolated_home, enable_semantic=False)


@pytest.fixture()
def kb_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    (folder / "ops").mkdir(parents=True)
    (folder / "ops" / "nginx.md").write_text(
        "# Nginx 反向代理\n\n在 nginx.conf 的 server 块里用 proxy_pass 指向上游服务，然后执行 nginx -s reload。\n",
        encoding="utf-8",
    )
    (folder / "redis.txt").write_text(
        "The maxmemory parameter caps the memory Redis may use; maxmemory-policy decides which keys go.",
        encoding="utf-8",
    )
    (folder / "sso.html").write_text(
        "<html><head><title>SSO setup</title><style>p {color: red}</style></head><body>"
        "<h1>Single sign-on</h1><p>Configure SSO in the admin console under Security &amp; Login.</p>"
        "<script>var ignored = 1;</script></body></html>",
        encoding="utf-8",
    )
    write_pdf(folder / "release.pdf", "Release checklist: run the migrations before the deploy.")
    write_docx(
        folder / "policy.docx",
        ["Refund policy: annual plans are refunded pro rata."],
        [["plan", "refund"], ["annual", "pro rata"]],
    )
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "secret.md").write_text("never indexed", encoding="utf-8")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    return folder


@pytest.fixture()
def triples_csv(tmp_path: Path) -> Path:
    path = tmp_path / "triples.csv"
    path.write_text(
        "subject,predicate,object,subject_type,object_type\n"
        "张三,参与,项目A,人物,项目\n"
        "李四,参与,项目A,人物,项目\n"
        "李四,隶属,研发部,人物,部门\n"
        "王五,管理,研发部,人物,部门\n"
        "Alice Smith,works on,Project Apollo,Person,Project\n"
        "Bob,works on,Project Apollo,Person,Project\n",
        encoding="utf-8",
    )
    return path


# -- documents -----------------------------------------------------------------------------


def test_every_supported_document_kind_is_read(kb_folder: Path) -> None:
    html = read_document(kb_folder / "sso.html")
    assert html.title == "SSO setup"
    assert " ".join(html.text.split()) == "Single sign-on Configure SSO in the admin console under Security & Login."
    assert read_document(kb_folder / "release.pdf").text == "Release checklist: run the migrations before the deploy."
    docx_text = read_document(kb_folder / "policy.docx").text
    assert docx_text.splitlines()[0] == "Refund policy: annual plans are refunded pro rata."
    assert "annual | pro rata" in docx_text
    assert read_document(kb_folder / "ops" / "nginx.md").title == "nginx.md"
    with pytest.raises(DocumentError, match=r"broken\.pdf: not a readable PDF"):
        read_document(kb_folder / "broken.pdf")
    with pytest.raises(DocumentError, match=r"unsupported file type \.xlsx"):
        read_document(kb_folder / "sheet.xlsx")


def test_chunks_respect_the_budget_and_keep_every_character() -> None:
    text = "第一段。" * 10 + "\n\n" + "Hello world. " * 200 + "\n\n" + "长" * 700
    chunks = chunk_text(text)
    assert all(text_units(c) <= 300 for c in chunks)
    assert "".join(c.replace("\n", "").replace(" ", "") for c in chunks) == "".join(text.split())
    assert chunk_text("a\n\n\n\nb") == ["a\nb"]


# -- knowledge base and attachments ---------------------------------------------------------


def test_knowledge_base_build_is_incremental_and_skips_bad_files(settings: Settings, kb_folder: Path) -> None:
    report = build_knowledge_base(settings, "ops", kb_folder)
    assert report.added == ["ops/nginx.md", "policy.docx", "redis.txt", "release.pdf", "sso.html"]
    assert [s["path"] for s in report.skipped] == [str(kb_folder / "broken.pdf")]
    (kb_folder / "redis.txt").write_text("Redis maxmemory: the memory cap.", encoding="utf-8")
    (kb_folder / "sso.html").unlink()
    again = build_knowledge_base(settings, "ops", kb_folder)
    assert (again.updated, again.removed, again.chunks) == (["redis.txt"], ["sso.html"], 1)
    assert again.unchanged == ["ops/nginx.md", "policy.docx", "release.pdf"]


def test_knowledge_search_finds_chinese_and_english_chunks(settings: Settings, kb_folder: Path) -> None:
    build_knowledge_base(settings, "ops", kb_folder)
    chinese = omni_retrieve(OmniRequest("怎么配置 nginx 反向代理？"), settings, classifier=KEYWORDS_ONLY)
    assert (chinese.intent, chinese.sources) == ("KNOWLEDGE", ("knowledge",))
    assert chinese.items[0].chunk_id == "ops:ops/nginx.md:chunk-0"
    english = omni_retrieve(
        OmniRequest("What is the refund policy for annual plans?"), settings, classifier=KEYWORDS_ONLY
    )
    top = english.items[0]
    assert (top.source, top.title, top.chunk_id) == (
        "knowledge",
        "ops/policy.docx",
        "ops:policy.docx:chunk-0",
    )
    assert 0 < top.score <= 1
    missing = omni_retrieve(OmniRequest("怎么配置 nginx", knowledge_base="nope"), settings, classifier=KEYWORDS_ONLY)
    assert missing.warnings == ("knowledge: unavailable: no knowledge base 'nope'; built: ops",)


def test_attachments_belong_to_their_session(settings: Settings, tmp_path: Path) -> None:
    doc = tmp_path / "需求文档v2.txt"
    doc.write_text("项目A的交付日期是2024年6月30日。\n\n预算为120万元。", encoding="utf-8")
    pdf = write_pdf(tmp_path / "memo.pdf", "The Apollo budget is 2 million dollars.")
    assert attach_files(settings, "s1", [doc, pdf]).added == ["需求文档v2.txt", "memo.pdf"]
    result = omni_retrieve(
        OmniRequest("附件里项目A的交付日期是哪天", session_id="s1"), settings, classifier=KEYWORDS_ONLY
    )
    assert result.intent == "ATTACHMENT"
    assert [(i.title, i.chunk_id) for i in result.items][0] == ("需求文档v2.txt", "s1:需求文档v2.txt:chunk-0")
    other = omni_retrieve(
        OmniRequest("附件里项目A的交付日期是哪天", session_id="s2"), settings, classifier=KEYWORDS_ONLY
    )
    assert other.items == ()
    assert other.warnings == (
        "attachment: unavailable: session 's2' has no attachments; add some with `skillpilot attach s2 FILE...`",
    )
    with pytest.raises(DocumentError, match="no such file"):
        attach_files(settings, "s1", [tmp_path / "gone.txt"])


# -- graph ---------------------------------------------------------------------------------


def test_graph_entities_neighbours_and_paths(settings: Settings, triples_csv: Path) -> None:
    report = load_triples(settings, triples_csv, "default")
    assert (report.read, report.added, report.entities, report.triples) == (6, 6, 8, 6)
    assert load_triples(settings, triples_csv, "default").added == 0
    source = GraphSource(graph_store(settings), "default")
    relation = source.fetch("张三和李四是什么关系？", 5)
    assert relation[0].to_json() == {
        "source": "graph",
        "score": 1.0,
        "entityName": "张三",
        "entityType": "人物",
        "snippet": "张三 → 参与 → 项目A ← 参与 ← 李四",
    }
    assert [i.key for i in relation[1:3]] == ["entity:张三", "entity:李四"]
    assert relation[2].snippet == "李四 → 参与 → 项目A; 李四 → 隶属 → 研发部"
    # Two hops from 李四: 王五 manages 李四's department, a fact no named entity's item shows.
    assert [(i.key, i.snippet, i.score) for i in relation[3:]] == [("entity:研发部", "王五 → 管理 → 研发部", 0.4)]
    partial = source.fetch("Who worked on Apollo?", 5)
    assert partial[0].entity_name == "Project Apollo"
    assert partial[0].snippet == "Alice Smith → works on → Project Apollo; Bob → works on → Project Apollo"
    assert partial[0].score == pytest.approx(0.4)
    assert source.fetch("nothing named here", 5) == []
    with pytest.raises(SourceUnavailableError, match="graph space 'other' holds no triples"):
        GraphSource(graph_store(settings), "other").fetch("张三", 5)


def test_triples_load_from_json_and_bad_rows_are_named(settings: Settings, tmp_path: Path) -> None:
    good = tmp_path / "t.json"
    good.write_text(json.dumps([{"subject": "Acme", "predicate": "supplies", "object": "Globex"}]), encoding="utf-8")
    report = load_triples(settings, good, "biz", replace=True)
    assert (report.space, report.triples, report.replaced) == ("biz", 1, True)
    bad = tmp_path / "bad.csv"
    bad.write_text("subject,predicate,object\nA,knows,B\nC,knows,\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"row 2: missing object"):
        read_triples(bad)


# -- classification ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("这个文件里说了什么", "ATTACHMENT"),
        ("怎么配置 Nginx？", "KNOWLEDGE"),
        ("张三和李四的关系", "GRAPH"),
        ("附件里的张三和李四是什么关系", "MIXED"),
        ("What does the uploaded file say?", "ATTACHMENT"),
        ("How do I configure SSO?", "KNOWLEDGE"),
        ("How is Alice connected to Bob?", "GRAPH"),
        ("讲个笑话", "UNKNOWN"),
    ],
)
def test_keyword_rules(query: str, intent: str) -> None:
    assert KEYWORDS_ONLY.classify(query).intent == intent


def test_keywords_match_longest_first_without_overlap() -> None:
    assert keyword_hits("文档里怎么写") == {"attachment": ("文档里",)}
    assert keyword_hits("官方文档") == {"knowledge": ("官方", "文档")}


@pytest.mark.slow
def test_embedding_classifier_reads_questions_without_keywords() -> None:
    from skillpilot.omni.pipeline import encoders_for

    classifier = IntentClassifier(encoders_for(Settings()))
    assert classifier.classify("帮我总结一下刚发的合同").intent == "ATTACHMENT"
    assert classifier.classify("Who reports to the head of sales?").intent == "GRAPH"
    assert classifier.classify("早上好呀").intent == "UNKNOWN"
    mixed = classifier.classify("附件里提到的王五和张三是什么关系")
    assert mixed.intent == "MIXED"
    assert max(mixed.weights.values()) == 1.0


# -- parallel fetch, timeouts, retry -------------------------------------------------------


class Sleepy:
    name: SourceName = "knowledge"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls = 0

    def fetch(self, query: str, top_k: int) -> list[OmniItem]:
        self.calls += 1
        time.sleep(self.seconds)
        return [OmniItem("knowledge", "late", 1.0, "too late")]


class Broken:
    name: SourceName = "attachment"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.lock = threading.Lock()

    def fetch(self, query: str, top_k: int) -> list[OmniItem]:
        with self.lock:
            self.calls += 1
            if self.calls <= self.failures:
                raise ConnectionError("upstream reset")
        return [OmniItem("attachment", "a#0", 0.9, "recovered", title="a.txt", chunk_id="a#0")]


class Fixed:
    def __init__(self, name: SourceName, items: list[OmniItem]) -> None:
        self.name = name
        self.items = items

    def fetch(self, query: str, top_k: int) -> list[OmniItem]:
        return self.items[:top_k]


POLICY = FetchPolicy(timeouts={"attachment": 2.0, "knowledge": 0.2, "graph": 2.0}, overall=5.0, retry=1)
GRAPH_ITEM = OmniItem("graph", "entity:张三", 0.8, "张三 → 参与 → 项目A", entity_name="张三", entity_type="人物")


def test_a_slow_source_is_skipped_and_a_failing_one_retried_once() -> None:
    sleepy, broken = Sleepy(3.0), Broken(failures=5)
    outcomes = fetch_all(
        {"attachment": broken, "knowledge": sleepy, "graph": Fixed("graph", [GRAPH_ITEM])}, "q", 5, POLICY
    )
    by_source = {o.source: o for o in outcomes}
    assert [o.source for o in outcomes] == ["attachment", "knowledge", "graph"]
    assert (by_source["graph"].status, by_source["graph"].items) == ("ok", (GRAPH_ITEM,))
    assert by_source["knowledge"].warning == "knowledge: timeout: no answer within 200 ms; skipped"
    assert by_source["attachment"].warning == ("attachment: error after 2 attempts: ConnectionError: upstream reset")
    assert (broken.calls, sleepy.calls) == (2, 1)  # retried once; the timed-out source never


def test_a_source_that_fails_once_recovers_on_the_retry() -> None:
    broken = Broken(failures=1)
    (outcome,) = fetch_all({"attachment": broken}, "q", 5, POLICY)
    assert (outcome.status, outcome.attempts, outcome.items[0].snippet) == ("ok", 2, "recovered")


def test_all_sources_failing_gives_an_empty_context_with_the_reasons(settings: Settings) -> None:
    fast = Settings(home=settings.home, enable_semantic=False, omni_knowledge_timeout_ms=200)
    result = omni_retrieve(
        OmniRequest("anything", sources=("attachment", "knowledge", "graph")),
        fast,
        sources={"attachment": Broken(failures=9), "knowledge": Sleepy(2.0)},
        classifier=KEYWORDS_ONLY,
    )
    assert result.to_json() == {
        "intent": "UNKNOWN",
        "sources": ["attachment", "knowledge", "graph"],
        "items": [],
        "contextText": "",
        "warnings": [
            "attachment: error after 2 attempts: ConnectionError: upstream reset",
            "knowledge: timeout: no answer within 200 ms; skipped",
            "graph: unavailable: graph space 'default' holds no triples; load some with "
            "`skillpilot graph load FILE --space default`",
        ],
        "truncated": False,
    }


# -- fusion --------------------------------------------------------------------------------


def test_fusion_weights_dedupes_and_cites_across_sections() -> None:
    chunk = OmniItem("attachment", "a#0", 0.9, "项目A的交付日期是6月30日。", title="需求文档v2.pdf", chunk_id="a#0")
    outcomes = [
        SourceOutcome("attachment", "ok", (chunk, OmniItem("attachment", "a#0", 0.5, "dup", chunk_id="a#0"))),
        SourceOutcome("knowledge", "ok", (OmniItem("knowledge", "k#12", 0.8, "交付流程见规范。", chunk_id="k#12"),)),
        SourceOutcome("graph", "ok", (GRAPH_ITEM,)),
    ]
    ranked = merge(outcomes, {"attachment": 1.0, "knowledge": 0.5, "graph": 1.0})
    assert [(i.key, round(i.score, 2)) for i in ranked] == [("a#0", 0.9), ("entity:张三", 0.8), ("k#12", 0.4)]
    fused = fit(ranked, 2000, TokenCounter())
    assert fused.context_text == (
        "【附件摘要】\n[1] 需求文档v2.pdf: 项目A的交付日期是6月30日。\n\n"
        "【知识库片段】\n[3] k#12: 交付流程见规范。\n\n"
        "【图谱关联】\n[2] 张三（人物）: 张三 → 参与 → 项目A"
    )
    assert not fused.truncated


def test_context_is_cut_to_max_tokens_with_the_real_tokenizer() -> None:
    counter = TokenCounter()
    long = OmniItem("knowledge", "k#1", 0.9, "The deploy runs the database migrations first. " * 40, chunk_id="k#1")
    short = OmniItem("graph", "entity:bob", 0.5, "Bob → works on → Project Apollo", entity_name="Bob")
    whole = fit([long, short], 5000, counter)
    assert not whole.truncated and len(whole.items) == 2
    for budget in (60, 120, 300):
        cut = fit([long, short], budget, counter)
        assert cut.truncated
        assert counter.count(cut.context_text) <= budget
        assert [i.key for i in cut.items] == ["k#1"]
        assert cut.items[0].snippet.endswith("…")
    assert fit([long], 10, counter).items == ()


# -- the library call, end to end ----------------------------------------------------------


def test_omni_retrieve_mixed_end_to_end_in_the_seed_shape(
    settings: Settings, kb_folder: Path, tmp_path: Path, triples_csv: Path
) -> None:
    build_knowledge_base(settings, "ops", kb_folder)
    load_triples(settings, triples_csv, "default")
    memo = tmp_path / "memo.txt"
    memo.write_text("张三和李四下周一起评审项目A。", encoding="utf-8")
    attach_files(settings, "s1", [memo])
    request = OmniRequest.from_json({"query": "附件里的张三和李四是什么关系？", "sessionId": "s1", "maxTokens": 300})
    result = omni_retrieve(request, settings, classifier=KEYWORDS_ONLY)
    data = result.to_json()
    assert list(data) == ["intent", "sources", "items", "contextText", "warnings", "truncated"]
    assert (data["intent"], data["sources"], data["warnings"]) == (
        "MIXED",
        ["attachment", "knowledge", "graph"],
        [],
    )
    assert {item["source"] for item in data["items"]} == {"attachment", "graph"}
    assert data["items"][0] == {
        "source": "graph",
        "score": 1.0,
        "entityName": "张三",
        "entityType": "人物",
        "snippet": "张三 → 参与 → 项目A ← 参与 ← 李四",
    }
    assert data["contextText"].startswith("【附件摘要】\n[")
    assert "【图谱关联】\n[1] 张三（人物）: 张三 → 参与 → 项目A ← 参与 ← 李四" in data["contextText"]
    assert TokenCounter().count(data["contextText"]) <= 300
    with pytest.raises(ValueError, match="unknown field"):
        OmniRequest.from_json({"query": "q", "topk": 3})


def test_unknown_intent_asks_every_source_with_top_k_three(settings: Settings) -> None:
    many = [OmniItem("knowledge", f"k#{i}", 1 - i / 10, f"chunk {i}", chunk_id=f"k#{i}") for i in range(6)]
    result = omni_retrieve(
        OmniRequest("讲个笑话", session_id="s1"),
        settings,
        classifier=KEYWORDS_ONLY,
        sources={"knowledge": Fixed("knowledge", many)},
    )
    assert (result.intent, result.sources) == ("UNKNOWN", ("attachment", "knowledge", "graph"))
    assert [i.key for i in result.items] == ["k#0", "k#1", "k#2"]
