"""The live page's Python side: what the book's pages ask Pyodide to compute (standard library only).

book/_static/live/worker.js runs this module in Pyodide, in a Web Worker, for the elements the notebooks
announced (cutelite.teach.announce):

* `view(kind, values)` recomputes an explorer with the functions the notebook's widgets use
  (cutelite.teach.explorers), and draws its picture as SVG;
* `check(spec, text)` runs the notebook's own checker (cutelite.teach.exercises) on the typed text, which
  it reads exactly as it reads a notebook answer.

Both take and return JSON text and never raise: an error becomes text. The page stops a computation that
runs past its time limit by terminating the worker (live.js); the explorers refuse inputs too large to draw
before computing anything.
"""

import io
import json
from contextlib import redirect_stdout

from . import exercises
from . import explorers as ex
from .announce import decode
from .svg import bank_svg, chunks_svg, grid_svg, layout_svg, softmax_svg, tiled_mma_svg, timeline_svg, tv_svg

__all__ = ["view", "check"]


# ---- explorers ----------------------------------------------------------------------------------------------
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
    if kind == "partition":
        text, case = ex.partition_result(v["kind"], v["tile"], v["layout"], v.get("thread", "0"))
        return text, tv_svg(*case[:2], thread=case[2]) if case else ""
    if kind == "tile_pipeline":
        text, case = ex.tile_pipeline_result(**{f[0]: v[f[0]] for f in ex.TILE_PIPELINE_FIELDS if f[0] in v})
        return text, timeline_svg(*case) if case else ""
    if kind == "gmma_tma":
        text, case = ex.gmma_tma_result(**{f[0]: v[f[0]] for f in ex.GMMA_TMA_FIELDS if f[0] in v})
        return text, chunks_svg(*case) if case else ""
    if kind == "online_softmax":
        text, case = ex.online_softmax_result(**{f[0]: v[f[0]] for f in ex.ONLINE_SOFTMAX_FIELDS if f[0] in v})
        return text, softmax_svg(*case) if case else ""
    raise ValueError(f"live: unknown explorer {kind!r}")


def view(kind, values_json):
    """JSON {"text", "svg"} of explorer `kind` for the field values (a JSON object of strings)."""
    try:
        text, svg = _view(kind, json.loads(values_json))
    except Exception as e:  # noqa: BLE001 - the page shows any error as text, never a JS exception
        text, svg = f"{type(e).__name__}: {e}\n", ""
    return json.dumps({"text": text, "svg": svg})


# ---- exercises ----------------------------------------------------------------------------------------------
class _Cost:
    """A swizzle exercise's cost function, from the table the notebook computed (exercises.swizzle_costs)."""

    def __init__(self, table):
        self.table = table

    def __call__(self, sw):
        got = self.table.get(f"{sw.bits},{sw.base},{sw.shift}")
        if got is None:
            raise ValueError(f"{sw} is outside the range this page checks")
        if isinstance(got, str):
            raise ValueError(got)
        return type("Report", (), dict(zip(("conflicts", "wavefronts", "ideal", "ways"), got)))()


_CHECKERS = {"value": exercises.check_value, "layout": exercises.check_layout_answer,
             "offsets": exercises.check_offsets_answer}


def _check(spec, text):
    name = spec["name"]
    if spec["checker"] == "swizzle":
        return exercises.check_swizzle_answer(text, _Cost(spec["costs"]), name)
    if spec["checker"] == "lbo_sbo":
        return exercises.check_lbo_sbo_answer(text, decode(spec["expected"]), name, lbo_used=False)
    if spec["checker"] == "pipeline_stages":
        return exercises.check_pipeline_stages_answer(text, name=name, **spec["params"])
    hints = {decode(k): h for k, h in spec["hints"]}
    return _CHECKERS[spec["checker"]](text, decode(spec["expected"]), name, hints)


def check(spec_json, text):
    """JSON {"ok", "message"}: the notebook's checker on the typed text, and the line it printed."""
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            ok = bool(_check(json.loads(spec_json), text))
    except Exception as e:  # noqa: BLE001 - shown as text
        return json.dumps({"ok": False, "message": f"{type(e).__name__}: {e}"})
    return json.dumps({"ok": ok, "message": out.getvalue().strip()})
