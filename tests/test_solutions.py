"""Exercises in the chapters, solutions in book/solutions/: a reader who opens a chapter (in Colab, say) finds
no solution in it, and the book still has each solution one click away, checked by the build.

- no chapter notebook holds a solution directive, and each exercise's answer cell starts unanswered;
- each exercise is a `:::{exercise}` fence (its body is Markdown in Colab and Jupyter too) whose last line
  links to its solution, `../book/solutions/NN.ipynb#sol-NAME` for the label `ex-NAME`;
- book/solutions/NN.ipynb has exactly one solution for each exercise of chapters/NN, in the same order,
  labelled `sol-NAME`, and is in _toc.yml;
- each solution's code runs the chapter's check: every statement of the exercise's answer cell (imports,
  the values the check needs, the check itself) is in the solution's cell, the check asserted, with the same
  arguments (hints aside); so the book's build verifies the solution against the chapter's own check.

The notebooks are read as JSON; nothing is executed here (the book build and tests/run_chapter.py run them).
"""

import ast
import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
EXERCISE = re.compile(r"^:::\{exercise\} .+\n:label: (ex-[\w-]+)\n", re.M)
SOLUTION = re.compile(r"^:::\{solution-start\} (ex-[\w-]+)\n:label: (sol-[\w-]+)\n:::\n", re.M)


def cells(path):
    return [(c["cell_type"], "".join(c["source"])) for c in json.loads(path.read_text())["cells"]]


def exercises(path):
    """(label, markdown, [code of the cells up to the next markdown cell]) for each exercise of a notebook."""
    found, nb = [], cells(path)
    for i, (kind, text) in enumerate(nb):
        for label in EXERCISE.findall(text) if kind == "markdown" else []:
            code = []
            for kind2, text2 in nb[i + 1:]:
                if kind2 != "code":
                    break
                code.append(text2)
            found.append((label, text, code))
    return found


def solutions_of(chapter):
    return ROOT / "book" / "solutions" / chapter.name


def solutions(path):
    """(exercise label, solution label, the code cell that follows) for each solution of a solutions page."""
    nb, found = cells(path), []
    for i, (kind, text) in enumerate(nb):
        for target, label in SOLUTION.findall(text) if kind == "markdown" else []:
            assert nb[i + 1][0] == "code" and nb[i + 2] == ("markdown", ":::{solution-end}\n:::"), (path.name, label)
            found.append((target, label, nb[i + 1][1]))
    return found


def test_the_chapters_are_found():
    assert len(CHAPTERS) >= 9 and all(exercises(c) for c in CHAPTERS)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_chapter_holds_a_solution(chapter):
    for kind, text in cells(chapter):
        assert "{solution" not in text, (chapter.name, text[:200])
        assert "```{exercise}" not in text, (chapter.name, "an exercise fenced with backticks reads as code in Colab")
    for label, _, code in exercises(chapter):
        assert code, (chapter.name, label, "no answer cell")
        assert any(_is_none_assignment(n) for n in ast.parse(code[-1]).body), \
            (chapter.name, label, "the answer cell must leave the answer None")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_links_to_its_one_solution(chapter):
    page = solutions_of(chapter)
    assert page.exists(), f"{page.relative_to(ROOT)} is missing"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part.get("chapters", [])]
    assert f"book/solutions/{chapter.stem}" in files
    labels = [label for label, _, _ in exercises(chapter)]
    sols = solutions(page)
    assert [target for target, _, _ in sols] == labels, (chapter.name, "one solution per exercise, in order")
    for (label, text, _), (_, sol_label, _) in zip(exercises(chapter), sols):
        assert sol_label == "sol-" + label.removeprefix("ex-")
        link = f"[Solution](../book/solutions/{chapter.name}#{sol_label})"
        assert text.rstrip().endswith(f"{link}\n:::"), (chapter.name, label, "the exercise ends with " + link)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_a_solutions_page_starts_as_a_chapter_does(chapter):
    nb = cells(solutions_of(chapter))
    first_code = next(text for kind, text in nb if kind == "code")
    assert first_code == next(text for kind, text in cells(chapter) if kind == "code")
    assert all(not c["outputs"] and c["execution_count"] is None
               for c in json.loads(solutions_of(chapter).read_text())["cells"] if c["cell_type"] == "code")


def _is_none_assignment(node):
    """`answer = None` or `a, b = None, None`: the answer cell's unanswered answer."""
    if not isinstance(node, ast.Assign):
        return False
    values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    return all(isinstance(v, ast.Constant) and v.value is None for v in values)


def _check_call(node):
    """The check a statement calls (`check_*(...)`, as an expression or asserted), or None."""
    call = node.test if isinstance(node, ast.Assert) else node.value if isinstance(node, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_"):
        return call
    return None


def _same_check(a, b):
    """The same checker with the same arguments; hints only change what a wrong answer is told."""
    keywords = lambda c: [ast.dump(k) for k in c.keywords if k.arg != "hints"]     # noqa: E731
    return (ast.dump(a.func) == ast.dump(b.func) and [ast.dump(x) for x in a.args] == [ast.dump(x) for x in b.args]
            and keywords(a) == keywords(b))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_solution_asserts_the_chapters_check(chapter):
    for (label, _, code), (_, _, solution) in zip(exercises(chapter), solutions(solutions_of(chapter))):
        mine = ast.parse(solution).body
        asserted = [_check_call(n) for n in mine if isinstance(n, ast.Assert) and _check_call(n)]
        for node in ast.parse(code[-1]).body:
            if _is_none_assignment(node):
                continue
            call = _check_call(node)
            if call is not None:
                assert any(_same_check(call, a) for a in asserted), \
                    (chapter.name, label, "the solution does not assert " + ast.unparse(call)[:120])
            elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign)):
                assert any(ast.dump(node) == ast.dump(n) for n in mine), \
                    (chapter.name, label, "the solution does not do " + ast.unparse(node)[:120])
