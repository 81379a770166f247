"""The live page's side of cutelite: what the book's pages ask Pyodide to compute (standard library only).

Two halves:

* At build time, in the notebook: each explorer and each unanswered exercise check `announce`s itself
  with a hidden HTML element in its cell's output: `<div class="cutelite-live" data-live="{json}" hidden>`.
  It carries what the page needs to rebuild it: the explorer's kind and fields, or the exercise's checker,
  expected value and hints. In Jupyter or Colab it shows nothing.
* In the reader's browser (book/_static/live/worker.js runs this module in Pyodide): `view(kind, values)`
  recomputes an explorer with the functions the notebook's widgets use (cutelite.teach.explorers), and
  `check(spec, text)` runs the notebook's own checker on the typed answer. Both take and return JSON text
  and never raise: an error becomes cutelite's error text.
"""

import ast
import html
import io
import json
import sys
from contextlib import redirect_stdout

from ..layout import Layout, make_layout
from ..parse import parse_layout, parse_operand
from ..layout import ComposedLayout
from ..swizzle import Swizzle
from . import explorers as ex
from .svg import bank_svg, grid_svg, layout_svg, tiled_mma_svg

__all__ = ["announce", "announce_exercise", "view", "check", "read_answer"]


# ---- build time: the hidden element in the notebook's output ----------------------------------------------
def announce(spec):
    """Display `spec` (a JSON-able dict with "live": "explorer" or "exercise") as a hidden element, when
    running under IPython; elsewhere (plain Python, tests) do nothing."""
    ipython = sys.modules.get("IPython")
    if ipython is None or getattr(ipython, "get_ipython", lambda: None)() is None:
        return
    from IPython.display import display
    attr = html.escape(json.dumps(spec, separators=(",", ":")), quote=True)
    display({"text/html": f'<div class="cutelite-live" data-live="{attr}" hidden></div>', "text/plain": ""},
            raw=True)


def explorer_spec(kind, *fields):
    """The spec of an explorer: its kind and its fields (name, label, initial value, options or None)."""
    return {"live": "explorer", "kind": kind, "fields": [list(f) for f in fields]}


def _plain(x):
    """x as plain Python (NumPy scalars and arrays become ints, floats and lists); None if it cannot be."""
    if hasattr(x, "tolist") and not isinstance(x, (Layout, ComposedLayout)):
        x = x.tolist()
    if isinstance(x, bool) or x is None or isinstance(x, (int, float, str)):
        return x if not isinstance(x, int) or isinstance(x, bool) else int(x)
    if isinstance(x, (tuple, list)):
        items = [_plain(v) for v in x]
        return None if any(v is None for v in items) else type(x)(items)
    return None


def encode(x):
    """A value as JSON: {"layout": CuTe text} for a layout, {"py": Python literal} else; None if neither."""
    if isinstance(x, (Layout, ComposedLayout)):
        return {"layout": str(x)}
    p = _plain(x)
    return None if p is None else {"py": repr(p)}


def decode(v):
    """The inverse of encode (parse_layout keeps static and dynamic ints apart)."""
    return parse_layout(v["layout"]) if "layout" in v else ast.literal_eval(v["py"])


def announce_exercise(checker, name, expected, hints=None, costs=None):
    """Announce an unanswered exercise check, so the page can give it an answer box. Values that cannot
    be written as JSON (there are none in the book) leave the exercise without a box."""
    spec = {"live": "exercise", "checker": checker, "name": name}
    if costs is not None:
        spec["costs"] = costs
    else:
        spec["expected"] = encode(expected)
        spec["hints"] = [[encode(k), h] for k, h in (hints or {}).items()]
        if spec["expected"] is None or any(k is None for k, _ in spec["hints"]):
            return
    announce(spec)


def swizzle_costs(cost, bits=range(0, 6), bases=range(0, 6), shifts=range(-8, 9)):
    """The table a swizzle exercise's page needs: "B,M,S" -> [conflicts, wavefronts, ideal, ways] of
    cost(Swizzle(B, M, S)), or the error text, for every swizzle in range."""
    table = {}
    for b in bits:
        for m in bases:
            for s in shifts:
                try:
                    r = cost(Swizzle(b, m, s))
                    table[f"{b},{m},{s}"] = [r.conflicts, r.wavefronts, r.ideal, r.ways]
                except ValueError as e:
                    table[f"{b},{m},{s}"] = str(e)
    return table


# ---- in the browser: explorers ---------------------------------------------------------------------------
def _fragment_svg(grids):
    parts = []
    names = {"A": "A (M x K)", "B": "B (K x N)", "C": "C/D (M x N)"}
    for op, (labels, marked) in grids.items():
        rows, cols = len(labels), len(labels[0])

        def cell(m, n):
            fill = "#f4a261" if (m, n) in marked else "#ffffff"
            label = labels[m][n]
            return fill, label.replace(".", "\n.") if rows * cols <= 512 else "", f"{op}({m},{n}): {label}"
        parts.append(grid_svg(rows, cols, cell, names[op], size_px=min(30 * cols, 420)))
    return "".join(parts)


def _view(kind, v):
    """(text, svg or "") of explorer `kind` for the field values v."""
    if kind == "layout":
        text, layout = ex.layout_result(v["shape"], v.get("stride", ""), v.get("major", "LayoutLeft"))
        return text, layout_svg(layout) if layout is not None else ""
    if kind == "algebra":
        text, result = ex.algebra_result(v["op"], v["a"], v.get("b", ""))
        return text, layout_svg(result) if result is not None else ""
    if kind == "banks":
        text, case = ex.bank_result(v["tile"], v["pattern"], v["B"], v["M"], v["S"])
        return text, bank_svg(*case, title=text.splitlines()[-1]) if case else ""
    if kind == "fragments":
        text, grids = ex.fragment_result(v["atom"], v["mode"], v.get("lane", 0), v.get("operand", "A"),
                                         v.get("row", 0), v.get("col", 0))
        return text, _fragment_svg(grids) if grids else ""
    if kind == "tiled_mma":
        text, case = ex.tiled_mma_result(v["atom"], v.get("thr", "(2,2,1)"), v.get("perm", ""), v.get("thread", "0"))
        return text, tiled_mma_svg(*case) if case else ""
    raise ValueError(f"live: unknown explorer {kind!r}")


def view(kind, values_json):
    """JSON {"text", "svg"} of explorer `kind` for the field values (a JSON object of strings)."""
    try:
        text, svg = _view(kind, json.loads(values_json))
    except Exception as e:  # noqa: BLE001 - the page shows any error as text, never a JS exception
        text, svg = f"{type(e).__name__}: {e}\n", ""
    return json.dumps({"text": text, "svg": svg})


# ---- in the browser: exercises ---------------------------------------------------------------------------
_CALLS = {"Layout": Layout, "make_layout": make_layout}


def read_answer(text, expected=None):
    """The value a reader typed: empty is None (not answered); Layout(...)/make_layout(...) of literals;
    CuTe's text "(8,4):(4,1)" (plain ints static); any Python literal; for a str answer, the text itself."""
    text = text.strip()
    if not text:
        return None
    if isinstance(expected, str):
        try:
            value = ast.literal_eval(text)
            return value if isinstance(value, str) else text
        except (ValueError, SyntaxError):
            return text
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        tree = None
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id in _CALLS:
        if tree.keywords:
            raise ValueError(f"cannot read {text!r}: write {tree.func.id}(shape, stride)")
        args = [ast.literal_eval(a) for a in tree.args]
        return _CALLS[tree.func.id](*args)
    if ":" in text or "_" in text:
        return parse_operand(text)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as e:
        raise ValueError(f"cannot read {text!r}: type a Python value, e.g. 24, (1, 3) or [0, 4, 2, 6]") from e


class _Cost:
    """A swizzle exercise's cost function, from the table the notebook computed (swizzle_costs)."""

    def __init__(self, table):
        self.table = table

    def __call__(self, sw):
        key = f"{sw.bits},{sw.base},{sw.shift}"
        if key not in self.table:
            raise ValueError(f"{sw} is outside the range this page checks (B 0..5, M 0..5, S -8..8)")
        got = self.table[key]
        if isinstance(got, str):
            raise ValueError(got)
        return type("Report", (), dict(zip(("conflicts", "wavefronts", "ideal", "ways"), got)))()


def _check(spec, text):
    from . import exercises
    checker, name = spec["checker"], spec["name"]
    if checker == "swizzle":
        answer = read_answer(text)
        return exercises.check_swizzle_answer(tuple(answer) if answer is not None else None, _Cost(spec["costs"]), name)
    expected = decode(spec["expected"])
    answer = read_answer(text, expected)
    if checker == "value":
        hints = {_hashable(decode(k)): h for k, h in spec["hints"]}
        return exercises.check_value(answer, expected, name, hints=hints)
    fn = {"layout": exercises.check_layout_answer, "offsets": exercises.check_offsets_answer}[checker]
    return fn(answer, expected, name)


def _hashable(x):
    return tuple(_hashable(v) for v in x) if isinstance(x, list) else x


def check(spec_json, text):
    """JSON {"ok", "message"}: the notebook's checker on the typed answer, and the line it printed."""
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            ok = bool(_check(json.loads(spec_json), text))
    except Exception as e:  # noqa: BLE001 - shown as text
        return json.dumps({"ok": False, "message": f"{type(e).__name__}: {e}"})
    return json.dumps({"ok": ok, "message": out.getvalue().strip()})
