"""The book's interactive explorers (ipywidgets): type a layout, see it; pick an algebra operation, see
its result, its picture and how it is derived.

    from cutelite.widgets import layout_explorer, algebra_explorer
    layout_explorer()
    algebra_explorer()

Each explorer is a small class whose `render()` is a plain function of the text boxes (what the tests
time and check) and whose `update()` puts the result on screen. The text comes from
cutelite.teach.explorers, which the live page runs too, so both show the same text for the same input.
Operands are read by cutelite.parse.parse_operand (ast.literal_eval or a small parser; nothing is eval'd).
"""

import html
import time

from ..explain import OPS
from ..layout import Layout, rank
from .explorers import algebra_result, describe_layout, layout_result, make_layout_from_text
from .live import announce, explorer_spec
from .viz import layout_png

__all__ = ["layout_explorer", "algebra_explorer", "tiled_mma_explorer", "LayoutExplorer", "AlgebraExplorer",
           "TiledMMAExplorer",
           "describe_layout"]


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
        return make_layout_from_text(self.shape.value, self.stride.value, self.major.value)

    def render(self):
        """(text, png bytes or None) for the boxes as they are; errors become the text."""
        text, layout = layout_result(self.shape.value, self.stride.value, self.major.value)
        return text, None if layout is None else _picture(layout)



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
        text, result = algebra_result(self.op.value, self.a.value, self.b.value)
        return text, None if result is None else _picture(result)


def layout_explorer(shape="(4,8)", stride="(1,4)"):
    """A widget: type a shape and stride (plain ints are static; stride empty = compact), see the
    layout's print_layout text and its picture."""
    announce(explorer_spec("layout", ("shape", "shape", shape, None), ("stride", "stride", stride, None),
                           ("major", "if no stride", "LayoutLeft", ["LayoutLeft", "LayoutRight"])))
    return LayoutExplorer(shape, stride).widget


def algebra_explorer(op="logical_divide", a="(4,2,3):(2,1,8)", b="4:2"):
    """A widget: pick an algebra operation and operands (e.g. "(4,8):(1,4)", "((4,8),(1,4))", a tiler
    "(3:3,(2,4):(1,8))"), see the result, a step-by-step derivation and the picture."""
    announce(explorer_spec("algebra", ("op", "operation", op, list(OPS)), ("a", "A", a, None),
                           ("b", "B / tiler", b, None)))
    return AlgebraExplorer(op, a, b).widget


class TiledMMAExplorer:
    """Pick an MMA atom, an atom layout, a permutation and a thread; see print(tiled_mma), the TV layouts,
    the thread's partitions and print_latex's picture (A left of C, B above C; the thread outlined)."""

    def __init__(self, atom="SM80_16x8x16_F16F16F16F16_TN", thr="(2,2,1)", perm="(32,32,16)", thread="0"):
        import ipywidgets as w
        from ..atoms import MMA_ATOMS
        self.atom = w.Dropdown(options=list(MMA_ATOMS), value=atom, description="atom")
        self.thr = w.Text(value=thr, description="atom layout")
        self.perm = w.Text(value=perm, description="permutation", placeholder="empty: none")
        self.thread = w.Text(value=thread, description="thread")
        self.out = w.HTML()
        for box in (self.atom, self.thr, self.perm, self.thread):
            box.observe(lambda _change: self.update(), names="value")
        self.update()
        self.widget = w.VBox([self.atom, w.HBox([self.thr, self.perm]), self.thread, self.out])

    def render(self):
        """(text, svg or ""): the same text and picture as the live page's explorer."""
        from .explorers import tiled_mma_result
        from .svg import tiled_mma_svg
        text, case = tiled_mma_result(self.atom.value, self.thr.value, self.perm.value, self.thread.value)
        return text, tiled_mma_svg(*case) if case else ""

    def update(self):
        start = time.perf_counter()
        text, svg = self.render()
        ms = (time.perf_counter() - start) * 1e3
        self.out.value = (f"<pre style='line-height:1.1'>{html.escape(text)}</pre>{svg}"
                          f"<br><small>drawn in {ms:.0f} ms</small>")


def tiled_mma_explorer(atom="SM80_16x8x16_F16F16F16F16_TN", thr="(2,2,1)", perm="(32,32,16)", thread="0"):
    """A widget: an MMA atom, an atom layout (more warps), a permutation of M, N, K (more values per
    thread, or another order; empty for none) and a thread; see print(tiled_mma), its TV layouts, the
    thread's partitions and the picture CuTe's print_latex draws, the thread's cells outlined."""
    from ..atoms import MMA_ATOMS
    announce(explorer_spec("tiled_mma", ("atom", "atom", atom, list(MMA_ATOMS)), ("thr", "atom layout", thr, None),
                           ("perm", "permutation", perm, None), ("thread", "thread", thread, None)))
    return TiledMMAExplorer(atom, thr, perm, thread).widget
