"""Documents to text, and text to chunks: what the attachment and knowledge-base sources index.

Input: a file path (``.txt``, ``.md``/``.markdown``, ``.html``/``.htm``, ``.pdf``, ``.docx``).
Output: a :class:`Document` (title + plain text), then :func:`chunk_text`'s chunks.

Readers: text and Markdown as written (UTF-8; Markdown's markup is kept, an LLM reads it fine);
HTML with the standard library's parser, dropping ``script``/``style`` and breaking paragraphs at
block elements; PDF with ``pypdf`` (page text, pages separated by a blank line); DOCX with
``python-docx`` (paragraphs, then table rows as ``a | b | c``). PDF and DOCX need the ``omni``
extra and say so (``MissingExtraError``); an unreadable file raises ``DocumentError`` naming it.

Chunks: paragraphs packed greedily up to ``CHUNK_BUDGET`` units, where a CJK character counts
one unit and any other character a quarter -- about one token each either way, so a chunk holds
roughly as many tokens in Chinese as in English without running the tokenizer at index time. A
paragraph over the budget is split at sentence ends, and a sentence over it at the budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ...errors import DocumentError, MissingExtraError

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx")
CHUNK_BUDGET = 300.0
LATIN_UNIT = 0.25

_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# After CJK sentence punctuation, or after Latin punctuation followed by a space.
_SENTENCE_END = re.compile(r"(?<=[。！？；])|(?<=[.!?;])\s+")
_BLOCK_TAGS = frozenset(
    (
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "pre",
        "blockquote",
        "dd",
        "dt",
    )
)
_HIDDEN_TAGS = frozenset(("script", "style", "noscript", "template", "head"))


@dataclass(frozen=True)
class Document:
    """A file's readable text; ``title`` is the HTML ``<title>`` or the file name."""

    path: Path
    title: str
    text: str


class _HTMLText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._hidden = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HIDDEN_TAGS:
            self._hidden += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _HIDDEN_TAGS:
            self._hidden = max(0, self._hidden - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._hidden:
            self.parts.append(data)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(path, f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc


def _read_html(path: Path) -> tuple[str, str]:
    parser = _HTMLText()
    parser.feed(_read_text(path))
    parser.close()
    return " ".join(parser.title.split()), "".join(parser.parts)


def _read_pdf(path: Path) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError as exc:
        raise MissingExtraError("omni", "reading PDF files", "pypdf") from exc
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise DocumentError(path, "the PDF is encrypted; save an unencrypted copy")
        return "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except (PyPdfError, ValueError, KeyError) as exc:
        raise DocumentError(path, f"not a readable PDF ({exc})") from exc


def _read_docx(path: Path) -> str:
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
    except ImportError as exc:
        raise MissingExtraError("omni", "reading DOCX files", "python-docx") from exc
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, ValueError, KeyError) as exc:
        raise DocumentError(path, f"not a readable DOCX file ({exc})") from exc
    paragraphs = [p.text for p in document.paragraphs]
    rows = [" | ".join(cell.text for cell in row.cells) for table in document.tables for row in table.rows]
    return "\n\n".join(paragraphs + rows)


def read_document(path: Path) -> Document:
    """The text of one supported file (see the module docstring for how each kind is read)."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise DocumentError(path, f"unsupported file type {suffix or '(none)'}; use {', '.join(SUPPORTED_SUFFIXES)}")
    if not path.is_file():
        raise DocumentError(path, "no such file")
    title = path.name
    if suffix in (".html", ".htm"):
        html_title, text = _read_html(path)
        title = html_title or title
    elif suffix == ".pdf":
        text = _read_pdf(path)
    elif suffix == ".docx":
        text = _read_docx(path)
    else:
        text = _read_text(path)
    if not text.strip():
        raise DocumentError(path, "no text could be read from it (a scanned PDF needs OCR first)")
    return Document(path=path, title=title, text=text)


def text_units(text: str) -> float:
    """A chunk's size: one unit per CJK character, ``LATIN_UNIT`` per other character."""
    cjk = len(_CJK_CHAR.findall(text))
    return cjk + LATIN_UNIT * (len(text) - cjk)


def _fitting(sentence: str, budget: float) -> int:
    """How many leading characters of ``sentence`` fit in ``budget`` (at least one)."""
    used = 0.0
    for position, char in enumerate(sentence):
        used += 1.0 if _CJK_CHAR.match(char) else LATIN_UNIT
        if used > budget:
            return max(position, 1)
    return len(sentence)


def _pieces(paragraph: str, budget: float) -> list[str]:
    """A paragraph as pieces within ``budget``: whole, else by sentence, else cut."""
    if text_units(paragraph) <= budget:
        return [paragraph] if paragraph else []
    pieces: list[str] = []
    for sentence in filter(None, (s.strip() for s in _SENTENCE_END.split(paragraph))):
        while sentence:
            cut = _fitting(sentence, budget)
            pieces.append(sentence[:cut])
            sentence = sentence[cut:].lstrip()
    return pieces


def chunk_text(text: str, budget: float = CHUNK_BUDGET) -> list[str]:
    """Whitespace-normalised chunks of ``text`` in reading order, each within ``budget`` units."""
    chunks: list[str] = []
    current = ""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        for piece in _pieces(" ".join(paragraph.split()), budget):
            joined = f"{current}\n{piece}" if current else piece
            if current and text_units(joined) > budget:
                chunks.append(current)
                joined = piece
            current = joined
    if current:
        chunks.append(current)
    return chunks
