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

from ..atoms import MMA_ATOMS, fragment_grids, fragment_of, owner_of, tile_shape
from ..errors import quote
from ..explain import OPS
from ..layout import Layout, rank
from .explorers import (BANK_PATTERNS, BANK_TILES, GMMA_TMA_FIELDS, ONLINE_SOFTMAX_FIELDS, PARTITIONS,
                        TILE_PIPELINE_FIELDS, algebra_result, bank_case, describe_layout, gmma_tma_result, layout_result,
                        make_layout_from_text, online_softmax_result, partition_result, tile_pipeline_result)
from .announce import announce, explorer_spec
from .svg import chunks_svg, softmax_svg, timeline_svg
from .viz import draw_banks, layout_png

__all__ = ["layout_explorer", "algebra_explorer", "tiled_mma_explorer", "partition_explorer", "LayoutExplorer",
           "AlgebraExplorer", "TiledMMAExplorer", "PartitionExplorer", "describe_layout", "bank_widget",
           "widget_redraw", "fragment_widget", "fragment_html", "tile_pipeline_explorer", "TilePipelineExplorer",
           "gmma_tma_explorer", "GmmaTmaExplorer", "online_softmax_explorer", "OnlineSoftmaxExplorer"]


def _picture(layout):
    """PNG bytes of a rank-1/2 layout, or None when it cannot be drawn (rank 3+: group modes first)."""
    if isinstance(layout, Layout) or hasattr(layout, "layout_b"):
        if rank(layout) <= 2:
            return layout_png(layout)
    return None


def _texts(who, choices=None, **boxes):
    """TypeError or ValueError naming the explorer `who` unless every box's initial value is text (and the
    first one of `choices`, where given): what ipywidgets would otherwise refuse with its own TraitError."""
    for name, value in boxes.items():
        if not isinstance(value, str):
            raise TypeError(f"{who}: {name} must be text (a str), got {quote(value)} ({type(value).__name__})")
    if choices is not None and next(iter(boxes.values())) not in choices:
        raise ValueError(f"{who}: {next(iter(boxes))} must be one of {', '.join(choices)}, "
                         f"got {quote(next(iter(boxes.values())))}")


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
        _texts("LayoutExplorer", shape=shape, stride=stride)
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
        _texts("AlgebraExplorer", OPS, op=op, a=a, b=b)
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
        _texts("TiledMMAExplorer", list(MMA_ATOMS), atom=atom, thr=thr, perm=perm, thread=thread)
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


# ---- chapter 3: which thread owns which element --------------------------------------------------------
class PartitionExplorer:
    """Pick local_partition (a thread layout) or a TV layout, a tile and a thread; see who owns each element
    of the tile and what the thread holds (the same text and picture as the live page's explorer)."""

    def __init__(self, kind="local_partition", tile="(8,24)", layout="(4,8)", thread="13"):
        import ipywidgets as w
        self.kind = w.ToggleButtons(options=list(PARTITIONS), value=kind, description="partition",
                                    style={"button_width": "120px"})
        self.tile = w.Text(value=tile, description="tile (M, N)")
        self.layout = w.Text(value=layout, description="threads / TV")
        self.thread = w.Text(value=thread, description="thread")
        self.out = w.HTML()
        for box in (self.kind, self.tile, self.layout, self.thread):
            box.observe(lambda _change: self.update(), names="value")
        self.update()
        self.widget = w.VBox([self.kind, w.HBox([self.tile, self.layout]), self.thread, self.out])

    def render(self):
        """(text, svg or ""): what partition_result says, and the owners' picture with the thread outlined."""
        from .svg import tv_svg
        text, case = partition_result(self.kind.value, self.tile.value, self.layout.value, self.thread.value)
        return text, tv_svg(*case[:2], thread=case[2]) if case else ""

    def update(self):
        start = time.perf_counter()
        text, svg = self.render()
        ms = (time.perf_counter() - start) * 1e3
        self.out.value = (f"<pre style='line-height:1.1'>{html.escape(text)}</pre>{svg}"
                          f"<br><small>drawn in {ms:.0f} ms</small>")


def partition_explorer(kind="local_partition", tile="(8,24)", layout="(4,8)", thread="13"):
    """A widget: local_partition of an M x N tile by a thread layout, or a TV layout on it; see which thread
    owns each element (colours, T = thread, V = value) and the elements `thread` holds (outlined)."""
    announce(explorer_spec("partition", ("kind", "partition", kind, list(PARTITIONS)),
                           ("tile", "tile (M, N)", tile, None), ("layout", "threads / TV layout", layout, None),
                           ("thread", "thread", thread, None)))
    return PartitionExplorer(kind, tile, layout, thread).widget


# ---- chapter 4: shared-memory banks under a swizzle ----------------------------------------------------
def widget_redraw(tile, pattern, B, M, S, ax=None):
    """Draw one state of the widget; returns (text, report)."""
    _texts("widget_redraw", list(BANK_TILES), tile=tile)
    _texts("widget_redraw", list(BANK_PATTERNS), pattern=pattern)
    for name, v in (("B", B), ("M", M), ("S", S)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"widget_redraw: {name} must be an int, got {quote(v)} ({type(v).__name__})")
    try:
        layout, eb, access, rep = bank_case(tile, pattern, B, M, S)
    except ValueError as e:  # |S| < B, or a vector split by the swizzle
        if ax is not None:
            ax.clear(), ax.set_axis_off(), ax.text(0, 0.5, str(e), wrap=True, fontsize=9)
        return str(e), None
    text = f"{layout}\n{pattern}: {rep}"
    if ax is not None:
        ax.clear()
        draw_banks(layout, eb, access, ax=ax, numbers=False, title=text)
    return text, rep


def bank_widget():
    """Sliders for B, M, S (B = 0: no swizzle), a tile and an access pattern; redraws the bank picture."""
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import display
    announce(explorer_spec("banks", ("tile", "tile", list(BANK_TILES)[0], list(BANK_TILES)),
                           ("pattern", "access", BANK_PATTERNS[0], list(BANK_PATTERNS)),
                           ("B", "B", "0", None), ("M", "M", "0", None), ("S", "S", "5", None)))
    tile = w.Dropdown(options=list(BANK_TILES), description="tile")
    pattern = w.Dropdown(options=list(BANK_PATTERNS), description="access")
    B, M, S = (w.IntSlider(value=v, min=lo, max=hi, description=n)
               for n, v, lo, hi in (("B", 0, 0, 5), ("M", 0, 0, 4), ("S", 5, -6, 6)))
    out = w.Output()

    def redraw(*_):
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(9, 4.5))
            widget_redraw(tile.value, pattern.value, B.value, M.value, S.value, ax=ax)
            plt.show()
    for c in (tile, pattern, B, M, S):
        c.observe(redraw, names="value")
    redraw()
    box = w.VBox([w.HBox([tile, pattern]), w.HBox([B, M, S]), out])
    display(box)
    return box


# ---- chapter 5: which lane holds which fragment element ----------------------------------------------------
def fragment_html(atom, lane=None, element=None):
    """An HTML picture of fragment_grids: three tables, highlighted cells in colour."""
    parts = []
    for op, (labels, mask) in fragment_grids(atom, lane, element).items():
        name = {"A": "A (M x K)", "B": "B (K x N)", "C": "C/D (M x N)"}[op]
        rows = []
        for r in range(labels.shape[0]):
            cells = "".join(
                f'<td style="border:1px solid #ccc;padding:1px 3px;font-size:9px;'
                f'background:{"#f4a261" if mask[r, c] else "#fff"}">{labels[r, c]}</td>'
                for c in range(labels.shape[1]))
            rows.append(f"<tr>{cells}</tr>")
        parts.append(f'<div style="display:inline-block;vertical-align:top;margin-right:12px">'
                     f'<b>{name}</b><table style="border-collapse:collapse">{"".join(rows)}</table></div>')
    return "".join(parts)


def fragment_widget(atom):
    """Core-ipywidgets explorer: pick a lane to see the A, B, C elements it holds (register v is shown as
    T{lane}.{v}); or pick an operand element to see its owner (lane, register)."""
    import ipywidgets as W
    announce(explorer_spec("fragments", ("atom", "atom", atom.name, list(MMA_ATOMS)),
                           ("mode", "mode", "by lane", ["by lane", "by element"]), ("lane", "lane", "0", None),
                           ("operand", "element of", "A", ["A", "B", "C"]), ("row", "row", "0", None),
                           ("col", "col", "0", None)))

    lane = W.IntSlider(value=0, min=0, max=31, description="lane")
    op = W.Dropdown(options=["A", "B", "C"], value="A", description="element of")
    row = W.BoundedIntText(value=0, min=0, max=63, description="row")
    col = W.BoundedIntText(value=0, min=0, max=63, description="col")
    mode = W.ToggleButtons(options=["by lane", "by element"], value="by lane")
    text, picture = W.HTML(), W.HTML()

    def redraw(_=None):
        if mode.value == "by lane":
            held = {o: fragment_of(atom, o, lane.value) for o in "ABC"}
            text.value = "<br>".join(f"lane {lane.value} holds {o}: " +
                                     ", ".join(f"v{v}={rc}" for v, rc in held[o]) for o in "ABC")
            picture.value = fragment_html(atom, lane=lane.value)
        else:
            rows_, cols_ = tile_shape(atom, op.value)
            r, c = min(row.value, rows_ - 1), min(col.value, cols_ - 1)
            ln, v = owner_of(atom, op.value, r, c)
            text.value = f"{op.value}({r}, {c}) is held by lane {ln}, register v{v}"
            picture.value = fragment_html(atom, element=(op.value, r, c))

    for w in (lane, op, row, col, mode):
        w.observe(redraw, names="value")
    redraw()
    return W.VBox([mode, W.HBox([lane]), W.HBox([op, row, col]), text, picture])


# ---- chapters 7 and 8: a kernel's tile and pipeline; a GMMA operand's stage, descriptors and TMA boxes -------
class _FormExplorer:
    """An explorer whose boxes are FIELDS (name, label, options or None), shown with the text and SVG picture
    that `result` (a function of cutelite.teach.explorers, called with the boxes' values by name) and `draw`
    (of cutelite.teach.svg, called with the picture's case) make: the live page's text and picture."""

    FIELDS, result, draw = (), None, None

    def __init__(self, **values):
        import ipywidgets as w
        who = type(self).__name__
        _texts(who, **values)
        for name, _, options in self.FIELDS:
            if options and values[name] not in options:
                raise ValueError(f"{who}: {name} must be one of {', '.join(options)}, got {quote(values[name])}")
        self.boxes = {}
        for name, label, options in self.FIELDS:
            if options:
                self.boxes[name] = w.Dropdown(options=list(options), value=values[name], description=label)
            else:
                self.boxes[name] = w.Text(value=values[name], description=label)
            self.boxes[name].observe(lambda _change: self.update(), names="value")
        self.out = w.HTML()
        self.update()
        boxes = list(self.boxes.values())
        self.widget = w.VBox([w.HBox(boxes[i:i + 3]) for i in range(0, len(boxes), 3)] + [self.out])

    def values(self):
        return {name: box.value for name, box in self.boxes.items()}

    def render(self):
        """(text, svg or "") for the boxes as they are."""
        text, case = self.result(**self.values())
        return text, self.draw(*case) if case else ""

    def update(self):
        start = time.perf_counter()
        text, svg = self.render()
        ms = (time.perf_counter() - start) * 1e3
        self.out.value = (f"<pre style='line-height:1.1'>{html.escape(text)}</pre>{svg}"
                          f"<br><small>drawn in {ms:.0f} ms</small>")


def _form(kind, cls, values):
    """Build explorer `kind`'s widget and announce it for the live page."""
    widget = cls(**values).widget
    announce(explorer_spec(kind, *((name, label, values[name], list(options) if options else None)
                                   for name, label, options in cls.FIELDS)))
    return widget


class TilePipelineExplorer(_FormExplorer):
    """Chapter 7's tensor-core kernel for a tile, stages, warps and atoms: its objects, shared memory and
    registers, CTAs per SM on a T4, A100 and H100, its copies' bank wavefronts and its stages over time."""
    FIELDS, result, draw = TILE_PIPELINE_FIELDS, staticmethod(tile_pipeline_result), staticmethod(timeline_svg)


def tile_pipeline_explorer(kernel="tc_sm80", dtype="float16", tile="(128,128,32)", stages="4", warps="(2,2)",
                           min_blocks="2", a_major="K-major", b_major="N-major"):
    """A widget: pick chapter 7's kernel (its atoms), the inputs, the CTA tile (BM, BN, BK), the stages, the
    warps and the launch bounds' CTAs per SM; see the objects it is built from, its shared memory and
    registers (where recorded), CTAs per SM on a T4, an A100 and an H100, the bank wavefronts of its own
    copies and what each stage holds, iteration by iteration."""
    return _form("tile_pipeline", TilePipelineExplorer, dict(
        kernel=kernel, dtype=dtype, tile=tile, stages=stages, warps=warps, min_blocks=min_blocks, a_major=a_major,
        b_major=b_major))


class GmmaTmaExplorer(_FormExplorer):
    """Chapter 8's operand stage: the GMMA layout atom, tile_to_shape's stage, a descriptor per k-block and the
    TMA boxes that fill the stage."""
    FIELDS, result, draw = GMMA_TMA_FIELDS, staticmethod(gmma_tma_result), staticmethod(chunks_svg)


def gmma_tma_explorer(major="K", swizzle="SW128", dtype="half_t", tile="(128,64)", order="MN first",
                      gmem="(4096,4096)", k_tile="1"):
    """A widget: pick a GMMA operand's major mode, swizzle, element type and stage tile (and the order
    tile_to_shape places the atoms in), and the global tensor a TMA copies it from; see the layout atom,
    the stage's layout, each k-block's descriptor, the TMA box, the tensor map and the boxes of one k-tile."""
    return _form("gmma_tma", GmmaTmaExplorer, dict(major=major, swizzle=swizzle, dtype=dtype, tile=tile,
                                                   order=order, gmem=gmem, k_tile=k_tile))


# ---- chapter 10: one row of the online softmax ---------------------------------------------------------------
class OnlineSoftmaxExplorer(_FormExplorer):
    """Chapter 10's online softmax: a row of scores walked block by block, the running max, rescale and sum
    after each block, and the weights so far beside the softmax of the whole row."""
    FIELDS, result, draw = ONLINE_SOFTMAX_FIELDS, staticmethod(online_softmax_result), staticmethod(softmax_svg)


def online_softmax_explorer(scores="1.0, 0.5, 2.5, -1.0, 3.0, 0.0, 4.5, 1.5", block="3", step="1", scale="1"):
    """A widget: type a row of scores (-inf for a masked key), a block size, a scale and the block to stop
    after; see each block's running max, rescale factor and running sum, and the weight each key seen so far
    would have if the row ended there, beside the softmax of the whole row."""
    return _form("online_softmax", OnlineSoftmaxExplorer, dict(scores=scores, block=block, step=step, scale=scale))
