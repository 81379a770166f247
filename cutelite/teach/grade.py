"""Grade a class's chapter notebooks with the book's own checkers, executing nothing a student wrote.

    python -m cutelite.teach.grade SUBMISSION.ipynb ... [--csv grades.csv] [--html grades.html]

Each submission is a chapter notebook a student filled in. For every exercise of its chapter the grader finds
the student's answer cell (the `answer_... = ...` assignment under the exercise) and reads the right-hand side
*as text*, with the parser the live page's answer box uses (cutelite.teach.answers): a value, a layout in any
spelling the book teaches, a word. Nothing is imported, evaluated or run, so `__import__('os')...` is
reported as an answer the parser cannot read. The verdict is the one the book prints: right, not yet with the
book's hint, not answered, or not readable.

What is right comes from the book, not from the submission: the answer key (answer_key.json beside this
module) holds, for every exercise, the check the chapter announced when the book was built (checker, expected
value, hints; cutelite.teach.announce). `python -m cutelite.teach.grade --make-key _build/jupyter_execute`
writes it again from the executed chapters of a book build. Standard library only.
"""

import argparse
import ast
import csv
import html
import json
import os
import re
import sys

from . import live
from .answers import AnswerError, read

__all__ = ["KEY_PATH", "load_key", "make_key", "exercises_of", "grade_notebook", "grade", "write_csv",
           "write_html", "main"]

KEY_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "answer_key.json")
MAX_NOTEBOOK = 20 * 2 ** 20   # bytes: a chapter notebook with outputs is a few MB at most

_EXERCISE = re.compile(r"^(?:`{3,}|:{3,})\{exercise\}[ \t]*(?P<title>[^\n]*)\n(?P<opts>(?:[ \t]*:[\w-]+:[^\n]*\n)*)",
                       re.M)
_LABEL = re.compile(r":label:[ \t]*(\S+)")
_LIVE = re.compile(r'class="cutelite-live" data-live="([^"]*)"')


class SubmissionError(ValueError):
    """A submission that is not a notebook the grader can read (the message says why)."""


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _cells(nb):
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise SubmissionError("not a notebook: no list of cells")
    return [c for c in cells if isinstance(c, dict)]


def exercises_of(nb):
    """[(label, title, [code cells under it])] of a notebook, in order: the code cells between an exercise
    and the next exercise or heading."""
    found, current = [], None
    for cell in _cells(nb):
        text = _source(cell)
        if cell.get("cell_type") == "markdown":
            m = _EXERCISE.search(text)
            if m:
                label = _LABEL.search(m.group("opts") or "")
                current = (label.group(1) if label else "", m.group("title").strip(), [])
                found.append(current)
            elif re.match(r"\s*#", text) or "{solution" in text:
                current = None
        elif cell.get("cell_type") == "code" and current is not None:
            current[2].append(cell)
    return found


# ---- the key: what the book announced ------------------------------------------------------------------------
def _announced(cell):
    """The exercise specs a cell's outputs announced (cutelite.teach.announce), in order."""
    specs = []
    for out in cell.get("outputs", []):
        data = out.get("data", {}).get("text/html", "")
        for attr in _LIVE.findall("".join(data) if isinstance(data, list) else data):
            spec = json.loads(html.unescape(attr))
            if spec.get("live") == "exercise":
                specs.append(spec)
    return specs


def make_key(executed_dir):
    """The answer key from a book build's executed chapters (`_build/jupyter_execute`): for each chapter,
    its exercises in order, each with its answer variables and the spec each one's check announced."""
    key = {}
    chapters = os.path.join(executed_dir, "chapters")
    for name in sorted(os.listdir(chapters)):
        if not name.endswith(".ipynb"):
            continue
        with open(os.path.join(chapters, name), encoding="utf-8") as f:
            nb = json.load(f)
        entries = []
        for label, title, cells in exercises_of(nb):
            answers = []
            for cell in cells:
                names, specs = [v for v, _ in _assignments(_source(cell))], _announced(cell)
                if len(names) != len(specs):
                    raise ValueError(f"make_key: {name} {label}: {len(names)} answer variables but "
                                     f"{len(specs)} announced checks in one cell")
                answers += [{"variable": v, "spec": s} for v, s in zip(names, specs)]
            if answers:
                entries.append({"label": label, "title": title, "answers": answers})
        key[name[:-len(".ipynb")]] = entries
    return key


def load_key(path=KEY_PATH):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ---- a submission ---------------------------------------------------------------------------------------------
def _assignments(src):
    """[(variable, text of its value)] of the cell's top-level `answer... = value` statements, in order
    (`answer_a, answer_b = x, y` gives two). The cell is parsed, never run; IPython's % and ! lines are
    dropped, and a cell Python cannot parse is read line by line."""
    src = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [(m.group(1), m.group(2).strip())
                for m in re.finditer(r"^(answer\w*)[ \t]*=(?!=)[ \t]*(.*)$", src, re.M)]
    found = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name):
            pairs = [(target, value)]
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            pairs = list(zip(target.elts, value.elts))
        else:
            continue
        found += [(t.id, ast.get_source_segment(src, v)) for t, v in pairs
                  if isinstance(t, ast.Name) and t.id.startswith("answer")]
    return found


def _answer_text(cells, variable):
    """The text of the last `variable = ...` among the cells, or None when there is none."""
    text = None
    for cell in cells:
        for name, value in _assignments(_source(cell)):
            if name == variable:
                text = value
    return text


def _verdict(spec, text):
    """(status, message) of one answer text under the book's check."""
    if text is None:
        return "missing", "no `answer = ...` cell under this exercise"
    if text.strip() in ("", "None"):
        return "unanswered", "not answered yet"
    try:
        read(text)
    except AnswerError as e:
        return "unreadable", str(e)
    reply = json.loads(live.check(json.dumps(spec), text))
    message = reply["message"].splitlines()[-1] if reply["message"] else ""
    return ("right" if reply["ok"] else "wrong"), message


def _chapter_of(nb, key):
    labels = {label for label, _, _ in exercises_of(nb)}
    best = max(key, key=lambda ch: len(labels & {e["label"] for e in key[ch]}), default=None)
    if best is None or not labels & {e["label"] for e in key[best]}:
        return None
    return best


def grade_notebook(path, key):
    """Rows (dicts) for one submission: one per answer of its chapter's exercises, or one row saying why
    the file could not be graded."""
    base = {"submission": path}
    try:
        if os.path.getsize(path) > MAX_NOTEBOOK:
            raise SubmissionError(f"larger than {MAX_NOTEBOOK // 2 ** 20} MB")
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        chapter = _chapter_of(nb, key)
        if chapter is None:
            raise SubmissionError("no exercise of any chapter of the book in it")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, SubmissionError, RecursionError) as e:
        why = f"{type(e).__name__}: {e}" if not isinstance(e, SubmissionError) else str(e)
        return [dict(base, chapter="", exercise="", answer="", status="not graded", message=why)]
    cells = {label: cs for label, _, cs in exercises_of(nb)}
    rows = []
    for entry in key[chapter]:
        for ans in entry["answers"]:
            text = _answer_text(cells.get(entry["label"], []), ans["variable"])
            status, message = _verdict(ans["spec"], text)
            rows.append(dict(base, chapter=chapter, exercise=entry["label"], answer=ans["variable"],
                             status=status, message=message, text=text or ""))
    return rows


def grade(paths, key=None):
    key = load_key() if key is None else key
    return [row for p in paths for row in grade_notebook(p, key)]


# ---- reports ---------------------------------------------------------------------------------------------------
COLUMNS = ["submission", "chapter", "exercise", "answer", "status", "message", "text"]


def _cell(value):
    """A CSV field a spreadsheet shows as text: a leading = + - @ would start a formula."""
    value = str(value)
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def write_csv(rows, out):
    writer = csv.DictWriter(out, COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _cell(row.get(c, "")) for c in COLUMNS})


_COLOURS = {"right": "#d8f3dc", "wrong": "#ffe5d9", "unreadable": "#fde2e4", "unanswered": "#f1f3f5",
            "missing": "#f1f3f5", "not graded": "#fde2e4"}


def write_html(rows, out):
    """One self-contained page (no script, no outside resource): a summary per submission, then every row."""
    esc = html.escape
    totals = {}
    for row in rows:
        t = totals.setdefault(row["submission"], [0, 0])
        t[0] += row["status"] == "right"
        t[1] += row["status"] != "not graded"
    out.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Grades</title>\n<style>"
              "body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
              "padding:2px 6px;vertical-align:top}code{white-space:pre-wrap}</style></head><body>\n"
              "<h1>Grades</h1>\n<table><tr><th>submission</th><th>right</th></tr>\n")
    for sub, (right, total) in totals.items():
        out.write(f"<tr><td>{esc(sub)}</td><td>{right} / {total}</td></tr>\n")
    out.write("</table>\n<h2>Every answer</h2>\n<table><tr>"
              + "".join(f"<th>{c}</th>" for c in COLUMNS) + "</tr>\n")
    for row in rows:
        colour = _COLOURS.get(row["status"], "#ffffff")
        cells = "".join(f"<td><code>{esc(str(row.get(c, '')))}</code></td>" for c in COLUMNS)
        out.write(f'<tr style="background:{colour}">{cells}</tr>\n')
    out.write("</table>\n</body></html>\n")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m cutelite.teach.grade", description=__doc__.split("\n\n")[0])
    p.add_argument("submissions", nargs="*", help="students' chapter notebooks (.ipynb)")
    p.add_argument("--key", default=KEY_PATH, help="the answer key (default: the one shipped with the book)")
    p.add_argument("--csv", help="write the table as CSV here")
    p.add_argument("--html", help="write the table as a self-contained HTML page here")
    p.add_argument("--make-key", metavar="EXECUTED_DIR",
                   help="write the answer key from a book build's executed chapters (_build/jupyter_execute)")
    args = p.parse_args(argv)
    if args.make_key:
        with open(args.key, "w", encoding="utf-8") as f:
            json.dump(make_key(args.make_key), f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {args.key}")
        return 0
    if not args.submissions:
        p.error("no submissions given")
    rows = grade(args.submissions, load_key(args.key))
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            write_csv(rows, f)
    if args.html:
        with open(args.html, "w", encoding="utf-8") as f:
            write_html(rows, f)
    if not args.csv and not args.html:
        write_csv(rows, sys.stdout)
    right = sum(r["status"] == "right" for r in rows)
    print(f"{len(args.submissions)} submissions, {right} of {len(rows)} answers right", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
