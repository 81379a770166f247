"""Pictures, the derivations behind the algebra explorer, and the explorers themselves (incl. speed)."""

import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from cutelite import Layout, Swizzle, composition, make_layout, LayoutRight  # noqa: E402
from cutelite import logical_divide, blocked_product  # noqa: E402
from cutelite.explain import OPS, explain  # noqa: E402
from cutelite.teach.viz import (_tiles_of, draw_layout, draw_tiles, draw_tv_layout, draw_warp_access, layout_grid,  # noqa: E402
                          segments_of)
from cutelite.teach.widgets import AlgebraExplorer, LayoutExplorer  # noqa: E402


def teardown_function():
    plt.close("all")


def texts(ax):
    return [t.get_text() for t in ax.texts]


def test_layout_grid_and_labels():
    lay = Layout((2, 3), (3, 1))
    assert layout_grid(lay).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert layout_grid(Layout(4, 2)).tolist() == [[0, 2, 4, 6]]  # rank 1: one row
    ax = draw_layout(lay)
    assert texts(ax) == ["0", "1", "2", "3", "4", "5"] and ax.get_title() == str(lay)
    with pytest.raises(ValueError, match="rank"):
        draw_layout(Layout((2, 2, 2)))


def test_swizzled_layout_is_drawn_with_its_offsets():
    sw = composition(Swizzle(1, 0, 1), make_layout((2, 2), LayoutRight))
    assert layout_grid(sw).tolist() == [[0, 1], [3, 2]]
    assert texts(draw_layout(sw)) == ["0", "1", "3", "2"]


def test_tv_layout_labels():
    tv = Layout((2, 2), (2, 1))  # thread t owns elements 2t, 2t+1 of a 2x2 tile
    ax = draw_tv_layout(tv, (2, 2))
    # tile (m, n) has index m + 2n: (0,0)=0 T0V0, (0,1)=2 T1V0, (1,0)=1 T0V1, (1,1)=3 T1V1
    assert texts(ax) == ["T0\nV0", "T1\nV0", "T0\nV1", "T1\nV1"]
    with pytest.raises(ValueError, match="outside"):
        draw_tv_layout(tv, (1, 2))


def test_tiles_of_a_divide_and_a_product():
    ax = draw_tiles(Layout((4, 4)), (Layout(2), Layout(2)))
    assert texts(ax)[:4] == ["0", "4", "8", "12"]
    ax = draw_tiles(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3)), op="blocked_product")
    assert len(ax.texts) == 6 * 20 or len(ax.texts) == 0  # 120 cells: labels only up to MAX_LABELS
    ax = draw_warp_access([32 * lane for lane in range(32)])
    assert ax.get_title() == "32 lanes touch 32 sectors"
    assert segments_of(range(32)) == [0, 1, 2, 3]


def test_tiles_that_reach_past_the_layout_are_counted_in_the_title_not_drawn_elsewhere():
    """6 rows in tiles of 4: the second tile's rows 6 and 7 (4 columns: 8 elements) are past the layout. By
    1-D index row 6 of column 0 would be row 0 of column 1, which must keep tile 0 of its own column."""
    tile_of, past = _tiles_of((6, 4), (4, 4))
    assert past == 2 * 4
    assert tile_of.reshape(4, 6).T.tolist() == [[0] * 4] * 4 + [[1] * 4] * 2
    ax = draw_tiles(Layout((6, 4)), (4, 4))
    assert ax.get_title().endswith("8 elements of the tiles fall past the layout's 24 (not drawn)")
    assert _tiles_of(6, Layout(4))[1] == 2          # a Layout tiler acts on the 1-D index: indices 6 and 7


@pytest.mark.parametrize("op, a, b, expected", [
    ("composition", Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5)), "(_5,(_2,_2)):(_16,(_80,_4))"),
    ("complement", Layout((2, 2), (1, 6)), 24, "(_3,_2):(_2,_12)"),
    ("logical_divide", Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2), "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))"),
    ("zipped_divide", Layout((9, (4, 8)), (59, (13, 1))), (Layout(3, 3), Layout((2, 4), (1, 8))),
     "((_3,(_2,_4)),(_3,(_2,_2))):((_177,(_13,_2)),(_59,(_26,_1)))"),
    ("blocked_product", Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3)), "((_2,_3),(_5,_4)):((_5,_10),(_1,_30))"),
    ("raked_product", Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3)), "((_3,_2),(_4,_5)):((_10,_5),(_30,_1))"),
    ("coalesce", Layout((2, (1, 6)), (1, (6, 2))), None, "_12:_1"),
    ("right_inverse", Layout((4, 8), (8, 1)), None, "(_8,_4):(_4,_1)"),
])
def test_explain_gives_cutelite_results_and_checks_them(op, a, b, expected):
    result, steps = explain(op, a, b)
    assert str(result) == expected
    assert all(isinstance(s, str) and s for s in steps)
    assert not any(s.endswith("False") or ": False;" in s for s in steps)


def test_explain_covers_every_op_and_rejects_unknown():
    a, b = Layout((4, 8), (1, 4)), Layout(4, 1)
    for op in OPS:
        result, steps = explain(op, a, None if op in ("coalesce", "right_inverse", "left_inverse") else b)
        assert steps and (result is not None)
    with pytest.raises(ValueError, match="unknown operation"):
        explain("transpose", a)


def test_explain_by_mode_composition_says_modes_are_dropped():
    result, steps = explain("composition", Layout((4, 6, 8)), (2, 3))
    assert str(result) == "(_2,_3):(_1,_4)"
    assert any("DROPPED" in s for s in steps)
    assert str(logical_divide(Layout((4, 6, 8)), (2, 3))).count(",") > str(result).count(",")


def test_layout_explorer_shows_text_and_picture():
    e = LayoutExplorer("(4,8)", "(1,4)")
    text, png = e.render()
    assert "(_4,_8):(_1,_4)" in text and png.startswith(b"\x89PNG")
    e.stride.value = ""
    e.major.value = "LayoutRight"
    assert "(_4,_8):(_8,_1)" in e.render()[0]
    e.shape.value = "(4,8"
    text, png = e.render()
    assert text.startswith("ValueError") and png is None
    assert "ValueError" in e.text.value  # update() ran on the change and shows the error


def test_algebra_explorer_ops_and_errors():
    e = AlgebraExplorer("composition", "(10,2):(16,4)", "(5,4):(1,5)")
    assert "= (_5,(_2,_2)):(_16,(_80,_4))" in e.render()[0]
    e.op.value = "zipped_divide"
    e.a.value, e.b.value = "(9,(4,8)):(59,(13,1))", "(3:3, (2,4):(1,8))"
    assert "((_3,(_2,_4)),(_3,(_2,_2))):((_177,(_13,_2)),(_59,(_26,_1)))" in e.render()[0]
    e.op.value = "composition"
    e.a.value, e.b.value = "(4,6):(1,8)", "3:6"
    text, png = e.render()
    assert text.startswith("ValueError: composition") and "Divisibility Condition" in text
    e.op.value = "coalesce"
    e.a.value = "((4,8),(1,4))"
    assert "= _32:_1" in e.render()[0]


@pytest.mark.parametrize("explorer", ["layout", "algebra"])
def test_redraw_of_a_32x32_layout(explorer):
    if explorer == "layout":
        e = LayoutExplorer("(32,32)", "(32,1)")
        change = lambda k: setattr(e.stride, "value", f"({32 - k % 2 * 31},{1 + k % 2 * 31})")  # noqa: E731
    else:
        e = AlgebraExplorer("blocked_product", "(8,8):(8,1)", "(4,4):(1,4)")
        change = lambda k: setattr(e.b, "value", f"(4,4):({1 + k % 2 * 3},{4 - k % 2 * 3})")  # noqa: E731
    times = []
    for k in range(5):
        start = time.perf_counter()
        change(k)  # observe -> update(): parse, compute, text, PNG
        times.append(time.perf_counter() - start)
    assert bytes(e.image.value).startswith(b"\x89PNG")
    print(f"{explorer} explorer, 32x32 redraw: median {1e3 * np.median(times):.1f} ms (target < 100 ms)")
