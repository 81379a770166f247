"""The classroom grader (cutelite.teach.grade) on notebooks made here: right, wrong, empty, malicious,
malformed, another chapter's. Expected verdicts follow from CuTe's definitions (a row-major 8 x 4 layout is
(8,4):(4,1)); the grader must never run what a submission holds."""

import csv
import io
import json
import os

import pytest

from cutelite.teach import grade
from cutelite.teach.announce import encode
from cutelite.layout import Layout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _announce_html(spec):
    import html
    return f'<div class="cutelite-live" data-live="{html.escape(json.dumps(spec), quote=True)}" hidden></div>'


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text, outputs=()):
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "source": text,
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"text/html": o}} for o in outputs]}


ROW_MAJOR = {"live": "exercise", "checker": "layout", "name": "row-major 8x4",
             "expected": encode(Layout((8, 4), (4, 1))), "hints": []}
COSIZE = {"live": "exercise", "checker": "value", "name": "cosize", "expected": encode(24),
          "hints": [[encode(23), "that is the largest offset; cosize is one more"]]}


def _chapter(answer_a="None", answer_b="None", answer_c=None):
    """A chapter notebook with two exercises; as built by the book (outputs) when answers are None."""
    built = answer_a == "None"
    cells = [_md("# A chapter\n"),
             _md(":::{exercise} Row-major\n:label: ex-99-row\nThe row-major 8 x 4 layout.\n:::\n"),
             _code(f"answer = {answer_a}\ncheck_layout_answer(answer, ...)\n",
                   [_announce_html(ROW_MAJOR)] if built else []),
             _md("```{exercise} Cosize\n:label: ex-99-cosize\nThe cosize of (4,(2,3)):(2,(1,8)).\n```\n"),
             _code(f"answer_c = {answer_b}\ncheck_value(answer_c, ...)\n", [_announce_html(COSIZE)] if built else [])]
    if answer_c is not None:
        cells[4] = _code(answer_c)
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def key(tmp_path):
    chapters = tmp_path / "built" / "chapters"
    chapters.mkdir(parents=True)
    (chapters / "99_test.ipynb").write_text(json.dumps(_chapter()))
    other = _chapter()
    other["cells"][1]["source"] = other["cells"][1]["source"].replace("ex-99-row", "ex-98-row")
    other["cells"][3]["source"] = other["cells"][3]["source"].replace("ex-99-cosize", "ex-98-cosize")
    (chapters / "98_other.ipynb").write_text(json.dumps(other))
    return grade.make_key(str(tmp_path / "built"))


def _submit(tmp_path, name, nb):
    path = tmp_path / name
    path.write_text(nb if isinstance(nb, str) else json.dumps(nb))
    return str(path)


def _statuses(rows):
    return [(r["exercise"], r["status"]) for r in rows]


def test_key_holds_each_exercise_with_its_check(key):
    assert [e["label"] for e in key["99_test"]] == ["ex-99-row", "ex-99-cosize"]
    assert key["99_test"][1]["answers"] == [{"variable": "answer_c", "spec": COSIZE}]


def test_right_wrong_and_empty(tmp_path, key):
    right = _submit(tmp_path, "alice.ipynb", _chapter("make_layout(make_shape(8, 4), make_stride(4, 1))", "24"))
    wrong = _submit(tmp_path, "bob.ipynb", _chapter("Layout((8, 4), (1, 8))", "23"))
    empty = _submit(tmp_path, "carol.ipynb", _chapter())
    rows = grade.grade([right, wrong, empty], key)
    assert _statuses(rows) == [("ex-99-row", "right"), ("ex-99-cosize", "right"),
                               ("ex-99-row", "wrong"), ("ex-99-cosize", "wrong"),
                               ("ex-99-row", "unanswered"), ("ex-99-cosize", "unanswered")]
    assert rows[3]["message"].endswith("that is the largest offset; cosize is one more")


def test_dsl_spelling_and_a_tuple_assignment(tmp_path, key):
    nb = _chapter("(8,4):(4,1)", answer_c="x = 1\nanswer_c, other = 4 * 6, None\n")
    rows = grade.grade([_submit(tmp_path, "dave.ipynb", nb)], key)
    assert _statuses(rows) == [("ex-99-row", "right"), ("ex-99-cosize", "right")]


def test_code_is_read_never_run(tmp_path, key):
    marker = tmp_path / "ran"
    evil = f"__import__('os').system('touch {marker}')"
    nb = _chapter(evil, f"open('{marker}', 'w').write('x')")
    nb["cells"].insert(2, _code(f"import os\nos.system('touch {marker}')\n"))
    rows = grade.grade([_submit(tmp_path, "eve.ipynb", nb)], key)
    assert not marker.exists()
    assert [r["status"] for r in rows] == ["unreadable", "unreadable"]


def test_unparsable_cell_is_read_line_by_line(tmp_path, key):
    nb = _chapter(answer_c="answer_c = 24\nthis is not python (\n")
    rows = grade.grade([_submit(tmp_path, "frank.ipynb", nb)], key)
    assert rows[1]["status"] == "right"


@pytest.mark.parametrize("text, why", [("{not json", "JSONDecodeError"), ('{"cells": 3}', "not a notebook"),
                                       (json.dumps({"cells": [_md("# notes\n")]}), "no exercise")])
def test_files_that_are_not_submissions(tmp_path, key, text, why):
    rows = grade.grade([_submit(tmp_path, "x.ipynb", text)], key)
    assert len(rows) == 1 and rows[0]["status"] == "not graded" and why in rows[0]["message"]


def test_another_chapter_is_graded_as_that_chapter(tmp_path, key):
    nb = _chapter("(8,4):(4,1)")
    for c in nb["cells"]:
        c["source"] = c["source"].replace("ex-99", "ex-98")
    rows = grade.grade([_submit(tmp_path, "gina.ipynb", nb)], key)
    assert {r["chapter"] for r in rows} == {"98_other"} and rows[0]["status"] == "right"


def test_missing_answer_cell(tmp_path, key):
    nb = _chapter("(8,4):(4,1)")
    del nb["cells"][4]
    rows = grade.grade([_submit(tmp_path, "hank.ipynb", nb)], key)
    assert _statuses(rows) == [("ex-99-row", "right"), ("ex-99-cosize", "missing")]


def test_reports_escape_what_students_wrote(tmp_path, key):
    nb = _chapter("'<script>alert(1)</script>'", "=HYPERLINK(\"x\")")
    rows = grade.grade([_submit(tmp_path, "<b>ivan<b>.ipynb", nb)], key)
    page = io.StringIO()
    grade.write_html(rows, page)
    assert "<script>" not in page.getvalue() and "<b>ivan" not in page.getvalue()
    table = io.StringIO()
    grade.write_csv(rows, table)
    fields = [row["text"] for row in csv.DictReader(io.StringIO(table.getvalue()))]
    assert not any(f.startswith("=") for f in fields)


def test_command_line_writes_csv_and_html(tmp_path, key):
    key_path = tmp_path / "key.json"
    key_path.write_text(json.dumps(key))
    sub = _submit(tmp_path, "judy.ipynb", _chapter("(8,4):(4,1)", "24"))
    assert grade.main([sub, "--key", str(key_path), "--csv", str(tmp_path / "g.csv"),
                       "--html", str(tmp_path / "g.html")]) == 0
    rows = list(csv.DictReader(open(tmp_path / "g.csv")))
    assert [r["status"] for r in rows] == ["right", "right"]
    assert "2 / 2" in (tmp_path / "g.html").read_text()


def test_shipped_key_covers_every_exercise_of_the_book():
    """The committed key has each exercise label of the chapters (regenerate it with --make-key after a build)."""
    key = grade.load_key()
    for name in sorted(os.listdir(os.path.join(ROOT, "chapters"))):
        if name.endswith(".ipynb"):
            with open(os.path.join(ROOT, "chapters", name)) as f:
                labels = [label for label, _, _ in grade.exercises_of(json.load(f))]
            assert [e["label"] for e in key.get(name[:-6], [])] == labels, name


def test_teaching_page_lists_every_exercise():
    """book/teaching.md's table has one row per chapter, naming as many exercises (separated by ';') as the
    chapter has."""
    rows = {}
    with open(os.path.join(ROOT, "book", "teaching.md")) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 3 and cells[0][:1].isdigit():
                rows[int(cells[0].split()[0])] = cells[1].count(";") + 1
    for name in sorted(os.listdir(os.path.join(ROOT, "chapters"))):
        if name.endswith(".ipynb"):
            with open(os.path.join(ROOT, "chapters", name)) as f:
                assert rows.get(int(name[:2])) == len(grade.exercises_of(json.load(f))), name
