"""book/references.bib: every entry well formed and complete, every citation of the book in it.

A missing closing brace does not fail loudly where it happens: the next entry is swallowed into the open one,
and the book build then stops on a BibTeX syntax error or cites a source it no longer has. So each entry is
checked on its own here (balanced braces, closed before the next `@`), with the fields CONTRIBUTING asks for
(author, title, a link), and every `{cite}` key of the chapters, the solutions and the book pages must name
one. Where pybtex is installed (the book build's parser), it must read the whole file.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "book" / "references.bib"
CITE = re.compile(r"\{cite(?::\w+)?\}`([^`]+)`")


def entries():
    """[(key, text)] of the bibliography, split where a line starts with `@`."""
    text = BIB.read_text()
    starts = [m.start() for m in re.finditer(r"^@", text, re.M)]
    chunks = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    return [(re.match(r"@\w+\{([^,\s]+),", c).group(1), c) for c in chunks]


def test_every_entry_is_closed_before_the_next():
    for key, text in entries():
        depth, closed_at = 0, None
        for i, ch in enumerate(text):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if depth == 0 and ch == "}":
                closed_at = i
                break
        assert closed_at is not None, f"references.bib: entry {key} is never closed (a '}}' is missing)"
        assert text[closed_at + 1:].strip() == "", f"references.bib: text after the end of entry {key}"


def test_keys_are_unique_and_entries_complete():
    keys = [key for key, _ in entries()]
    assert len(keys) == len(set(keys)), f"references.bib: duplicate keys {sorted(k for k in keys if keys.count(k) > 1)}"
    for key, text in entries():
        for field in ("author", "title", "url"):
            assert re.search(rf"^\s*{field}\s*=", text, re.M), f"references.bib: entry {key} has no {field}"


def test_every_citation_is_in_the_bibliography():
    keys = {key for key, _ in entries()}
    pages = sorted(ROOT.glob("chapters/*.ipynb")) + sorted(ROOT.glob("book/**/*.ipynb")) + sorted(ROOT.glob("book/*.md"))
    missing = {}
    for page in pages:
        for group in CITE.findall(page.read_text()):
            for key in (k.strip() for k in group.split(",")):
                if key not in keys:
                    missing.setdefault(key, []).append(page.relative_to(ROOT).as_posix())
    assert not missing, f"cited but not in references.bib: {missing}"


def test_pybtex_reads_the_whole_file():
    pybtex = pytest.importorskip("pybtex.database", reason="pybtex (the book build's BibTeX parser) not installed")
    assert set(pybtex.parse_file(str(BIB)).entries) == {key for key, _ in entries()}
