"""The "In the CuTe DSL" boxes: a snippet of examples.py and what the DSL printed for it, folded.

The snippet's source is read from examples.py as text (no import: the box shows it where the DSL is not
installed too). Its output comes from running it with the DSL when the DSL imports here, otherwise from
snippets.json (the output of the same function, recorded with the DSL), labelled as recorded. In the book
the box is an admonition with the dropdown class, folded until the reader opens it; in a plain terminal it is text.
"""

import ast
import html
import json
import os

from . import host

__all__ = ["CALLS", "calls", "snippets", "source", "call", "output", "box", "side_by_side"]

# The argument tuples each snippet is called with in the book (the rest are called once, with none).
CALLS = {"ch1_static_dynamic": [(16,)], "ch2_runtime": [(64,)], "ch9_static_dynamic": [(16, 8)],
         "ch9_compile": [("gemm_tile",), ("tc_sm80",)]}

def _functions(module):
    with open(os.path.join(os.path.dirname(__file__), f"{module}.py")) as f:
        text = f.read()
    return text, [node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)]


def snippets():
    """The names of the snippets in examples.py, in file order."""
    return [node.name for node in _functions("examples")[1]]


def source(name, module="examples"):
    """The source of function `name` of kernels/dsl/<module>.py, decorator included, as written (read from
    the file: the DSL need not be installed)."""
    text, nodes = _functions(module)
    for node in nodes:
        if node.name == name:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            return "\n".join(text.splitlines()[first - 1:node.end_lineno])
    raise ValueError(f"box: {module}.py has no function {name!r}; it has {', '.join(n.name for n in nodes)}")


def call(name, *args):
    """How the snippet is called, as a reader would type it (the key of its recorded output)."""
    return f"{name}({', '.join(map(repr, args))})"


def calls():
    """Every (name, args) the book calls, in file order: what record.py records."""
    return [(name, args) for name in snippets() for args in CALLS.get(name, [()])]


RECORDED = "snippets.json"
ABOUT = ("What the CuTe DSL printed for each snippet of kernels/dsl/examples.py, keyed by the call as a reader "
         "types it; written by `python -m kernels.dsl.record` where the DSL is installed (tests/test_dsl_boxes.py "
         "checks it against the DSL there). The boxes show these texts, labelled RECORDED, where the DSL cannot run.")


def recorded():
    """The recorded texts: {"about", "version", "output": {call: text}} (data, as the live pages read it)."""
    with open(os.path.join(os.path.dirname(__file__), RECORDED), encoding="utf-8") as f:
        return json.load(f)


def output(name, *args):
    """(what the snippet printed, where from): run here when the DSL imports, else the recorded text."""
    why = host.missing()
    if why is None:
        from . import examples
        return host.run(getattr(examples, name), *args), "printed by the CuTe DSL, run here"
    texts = recorded()["output"]
    if call(name, *args) not in texts:
        raise ValueError(f"box: no recorded output for {call(name, *args)}; run python -m kernels.dsl.record "
                         "where the DSL is installed")
    return texts[call(name, *args)], f"RECORDED from nvidia-cutlass-dsl {host.VERSION}: the DSL does not run here"


def _code_html(code):
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
        return highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))
    except ImportError:
        return html.escape(code)


class Box:
    """A box: title, the snippet and its call, what it printed and where that comes from; folded (a
    dropdown) unless folded=False."""

    def __init__(self, name, args, title, folded):
        self.title, self.folded = title, folded
        self.code = source(name) + "\n\n" + call(name, *args)
        self.printed, self.origin = output(name, *args)

    def _repr_html_(self):
        pre = '<div class="highlight"><pre>{}</pre></div>'
        kind = "admonition dropdown dsl-box" if self.folded else "admonition dsl-box"
        return (f'<div class="{kind}"><p class="admonition-title">{html.escape(self.title)}</p>'
                + pre.format(_code_html(self.code))
                + f"<p>{html.escape(self.origin)}:</p>"
                + pre.format(html.escape(self.printed)) + "</div>")

    def __repr__(self):
        return f"{self.title}\n\n{self.code}\n\n{self.origin}:\n{self.printed}"


def box(name, *args, title="In the CuTe DSL", folded=True):
    """The box for examples.<name>(*args): display it as a cell's last expression."""
    return Box(name, args, title, folded)


class SideBySide:
    """Two listings in two columns (one after the other as text)."""

    def __init__(self, left, right):
        self.left, self.right = left, right

    def _repr_html_(self):
        cell = ('<td style="vertical-align:top;text-align:left"><p><b>{}</b></p>'
                '<div class="highlight"><pre>{}</pre></div></td>')
        return ('<table class="dsl-side-by-side"><tr>' + "".join(cell.format(html.escape(t), _code_html(c))
                                                                for t, c in (self.left, self.right)) + "</tr></table>")

    def __repr__(self):
        return "\n\n".join(f"{t}\n{c}" for t, c in (self.left, self.right))


def side_by_side(left_title, left_code, right_title, right_code):
    """Display two listings side by side (ours and the DSL's)."""
    return SideBySide((left_title, left_code), (right_title, right_code))
