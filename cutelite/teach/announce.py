"""How a notebook tells the live page what to make live (standard library only).

When a chapter runs, each explorer and each unanswered exercise check `announce`s itself with a hidden HTML
element in its cell's output: `<div class="cutelite-live" data-live="{json}" hidden>`. It carries what the
page needs to rebuild it: the explorer's kind and fields, or the exercise's checker, expected value and hints
(`encode`d as JSON; the page's Python `decode`s them). In Jupyter or Colab it shows nothing.
book/_static/live/live.js finds these elements; cutelite.teach.live computes for them in the browser.
"""

import ast
import html
import json
import sys

from ..layout import ComposedLayout, Layout
from ..parse import parse_layout

__all__ = ["announce", "explorer_spec", "announce_exercise", "encode", "decode"]


def announce(spec):
    """Display `spec` (a JSON-able dict with "live": "explorer" or "exercise") as a hidden element, when
    running under IPython; elsewhere (plain Python, tests, the browser) do nothing."""
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
    if isinstance(x, bool) or isinstance(x, (float, str)):
        return x
    if isinstance(x, int):
        return int(x)
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


def announce_exercise(checker, name, expected=None, hints=None, costs=None, params=None):
    """Announce an unanswered exercise check, so the page can give it an answer box: `checker` names the
    check in cutelite.teach.live; a swizzle exercise sends its table of costs instead of an expected value;
    `params` (a dict of numbers) are the checker's other arguments. Values that cannot be written as JSON
    (there are none in the book) leave the exercise without a box."""
    spec = {"live": "exercise", "checker": checker, "name": name}
    if params:
        spec["params"] = dict(params)
    if costs is not None:
        spec["costs"] = costs
    else:
        spec["expected"] = encode(expected)
        spec["hints"] = [[encode(k), h] for k, h in (hints or {}).items()]
        if spec["expected"] is None or any(k is None for k, _ in spec["hints"]):
            return
    announce(spec)
