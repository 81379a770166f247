"""The book's interactive explorers (ipywidgets): type a layout, see it; pick an algebra operation, see
its result, its picture and how it is derived.

    from cutelite.widgets import layout_explorer, algebra_explorer
    layout_explorer()
    algebra_explorer()

Each explorer is a small class whose `render()` is a plain function of the text boxes (what the tests
time and check) and whose `update()` puts the result on screen. Operands are read by
cutelite.parse.parse_operand (ast.literal_eval or a small parser; nothing is eval'd).
"""

import html
import time

from .explain import OPS, UNARY, explain, operand_text
from .layout import Layout, cosize, make_layout, rank, size
from .parse import parse_operand
from .printing import format_layout
from .viz import layout_png

__all__ = ["layout_explorer", "algebra_explorer", "LayoutExplorer", "AlgebraExplorer", "describe_layout"]


def describe_layout(layout):
    """The text a widget shows for a layout: print_layout's grid for rank 2, else the layout, size, cosize."""
    head = f"size {size(layout)}, cosize {cosize(layout)}, rank {rank(layout)}\n"
    if rank(layout) == 2:
        return head + format_layout(layout)
    return head + str(layout) + "\n"


def _picture(layout):
    """PNG bytes of a rank-1/2 layout, or None when it cannot be drawn (rank 3+: group modes first)."""
    if isinstance(layout, Layout) or hasattr(layout, "layout_b"):
        if rank(layout) <= 2:
            return layout_png(layout)
    return None


class _Explorer:
    """What both explorers share: render() gives (text, png or None); update() shows them."""

    def _build(self, controls):
        import ipywidgets as w
        self.text = w.HTML()
        self.image = w.Image(format="png")
        for box in controls:
            box.observe(lambda _change: self.update(), names="value")
        self.update()

    def update(self):
        start = time.perf_counter()
        text, png = self.render()
        self.image.value = png or b""
        self.image.layout.display = None if png else "none"
        ms = (time.perf_counter() - start) * 1e3
        self.text.value = (f"<pre style='line-height:1.1'>{html.escape(text)}</pre>"
                           f"<small>drawn in {ms:.0f} ms</small>")


class LayoutExplorer(_Explorer):
    """Type a shape and a stride; see the layout's text (print_layout) and its picture."""

    def __init__(self, shape="(4,8)", stride="(1,4)"):
        import ipywidgets as w
        self.shape = w.Text(value=shape, description="shape")
        self.stride = w.Text(value=stride, description="stride", placeholder="empty: column-major")
        self.major = w.ToggleButtons(options=["LayoutLeft", "LayoutRight"], value="LayoutLeft",
                                     description="if no stride", style={"button_width": "90px"})
        self._build((self.shape, self.stride, self.major))
        self.widget = w.VBox([w.HBox([self.shape, self.stride]), self.major, self.text, self.image])

    def layout(self):
        from .layout import LayoutLeft, LayoutRight
        shape = parse_operand(self.shape.value)
        if isinstance(shape, Layout):
            return shape
        if self.stride.value.strip():
            return make_layout(shape, parse_operand(self.stride.value))
        return make_layout(shape, LayoutLeft if self.major.value == "LayoutLeft" else LayoutRight)

    def render(self):
        """(text, png bytes or None) for the boxes as they are; errors become the text."""
        try:
            layout = self.layout()
            return describe_layout(layout), _picture(layout)
        except (ValueError, TypeError, IndexError) as e:
            return f"{type(e).__name__}: {e}\n", None



class AlgebraExplorer(_Explorer):
    """Pick an operation and its operands; see the result, its picture and the derivation."""

    def __init__(self, op="logical_divide", a="(4,2,3):(2,1,8)", b="4:2"):
        import ipywidgets as w
        self.op = w.Dropdown(options=list(OPS), value=op, description="operation")
        self.a = w.Text(value=a, description="A")
        self.b = w.Text(value=b, description="B / tiler")
        self._build((self.op, self.a, self.b))
        self.widget = w.VBox([self.op, w.HBox([self.a, self.b]), self.text, self.image])

    def render(self):
        """(text, png bytes or None): the result, the steps of its derivation, and its picture."""
        op = self.op.value
        try:
            a = parse_operand(self.a.value)
            if not isinstance(a, Layout):
                a = Layout(a)  # a shape alone: the compact column-major layout
            b = None if op in UNARY or (op == "complement" and not self.b.value.strip()) \
                else parse_operand(self.b.value)
            result, steps = explain(op, a, b)
        except (ValueError, TypeError, IndexError) as e:
            return f"{type(e).__name__}: {e}\n", None
        call = f"{op}({a})" if b is None else f"{op}({a}, {operand_text(b)})"
        text = f"{call}\n  = {result}\n\nHow:\n" + "\n".join(f"  {s}" for s in steps) + "\n"
        try:
            png = _picture(result)
        except (ValueError, TypeError, IndexError):
            png = None
        if png is None:
            text += f"\n(no picture: rank {rank(result)}; pictures are for rank 1 and 2)\n"
        return text, png



def layout_explorer(shape="(4,8)", stride="(1,4)"):
    """A widget: type a shape and stride (plain ints are static; stride empty = compact), see the
    layout's print_layout text and its picture."""
    return LayoutExplorer(shape, stride).widget


def algebra_explorer(op="logical_divide", a="(4,2,3):(2,1,8)", b="4:2"):
    """A widget: pick an algebra operation and operands (e.g. "(4,8):(1,4)", "((4,8),(1,4))", a tiler
    "(3:3,(2,4):(1,8))"), see the result, a step-by-step derivation and the picture."""
    return AlgebraExplorer(op, a, b).widget
