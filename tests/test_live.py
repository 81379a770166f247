"""The live page's Python side, in CPython: SVG pictures match the notebook figures' colours, the explorers
show the widgets' text, exercise specs round-trip and run the notebook's checkers."""

import json

import matplotlib
import numpy as np
import pytest

from cutelite import Layout, LayoutRight, Swizzle, composition, make_layout, size
from cutelite.teach import live
from cutelite.teach.announce import decode, encode
from cutelite.teach.svg import layout_svg, thread_colour, tv_svg, viridis
from cutelite.teach.widgets import AlgebraExplorer, LayoutExplorer, PartitionExplorer


def test_colours_are_matplotlibs():
    for x in (0.0, 0.05, 0.37, 0.5, 0.93, 1.0):  # floats: matplotlib reads an int as a LUT index
        want = matplotlib.colormaps["viridis"](x)[:3]
        got = [int(viridis(x)[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        assert max(abs(a - b) for a, b in zip(got, want)) < 16 / 255, x  # 11 stops, linear in between
    tab = list(matplotlib.colormaps["tab20"].colors) + list(matplotlib.colormaps["tab20b"].colors)
    for t in range(40):
        assert matplotlib.colors.to_hex(tab[(t * 3) % 40]) == thread_colour(t, 40)


def test_svg_pictures():
    svg = layout_svg(composition(Swizzle(1, 0, 1), make_layout((2, 2), LayoutRight)))
    assert svg.count("<rect") == 4 and [">0<", ">1<", ">3<", ">2<"] == [f">{v}<" for v in (0, 1, 3, 2)]
    assert layout_svg(Layout((32, 32))).count("<rect") == 1024
    assert "T1" in tv_svg(Layout((2, 2), (2, 1)), (2, 2))
    with pytest.raises(ValueError, match="outside"):
        tv_svg(Layout((2, 2), (2, 1)), (1, 2))


@pytest.mark.parametrize("shape, stride", [("(4,8)", "(1,4)"), ("(4,(2,3))", "(2,(1,8))"), ("(4,8", "")])
def test_layout_view_is_the_widgets_text(shape, stride):
    got = json.loads(live.view("layout", json.dumps({"shape": shape, "stride": stride})))
    assert got["text"] == LayoutExplorer(shape, stride).render()[0]


@pytest.mark.parametrize("op, a, b", [("composition", "(4,6):(1,8)", "3:2"), ("logical_divide", "(4,2,3):(2,1,8)", "4:2")])
def test_algebra_view_is_the_widgets_text(op, a, b):
    got = json.loads(live.view("algebra", json.dumps({"op": op, "a": a, "b": b})))
    assert got["text"] == AlgebraExplorer(op, a, b).render()[0]
    assert (got["svg"] == "") == got["text"].startswith("ValueError")


def test_unknown_view_is_text_not_an_exception():
    assert json.loads(live.view("nope", "{}"))["text"].startswith("ValueError: live: unknown explorer")


def test_exercise_specs_round_trip():
    for value in (Layout((8, 4), (4, 1)), 24, ((1, 3), (1, (1, 1))), [2, 3, 8], "3:2"):
        assert decode(encode(value)) == value
    spec = json.dumps({"live": "exercise", "checker": "value", "name": "e", "expected": encode(24),
                       "hints": [[encode(23), "that is the largest offset"]]})
    assert json.loads(live.check(spec, "24")) == {"ok": True, "message": "PASS e"}
    assert json.loads(live.check(spec, "23"))["message"] == "not yet e: that is the largest offset"
    assert json.loads(live.check(spec, "2 4"))["message"].startswith("not yet e: cannot read '2 4'")


# ---- inputs too large: refused before any work, with the same text in the notebook and on the page ----------
SLOW = [  # the inputs that froze the live page (issue 18): each must come back with a refusal
    ("layout", {"shape": "(3000,3000)", "stride": ""}, "no grid and no picture: 9000000 elements"),
    ("layout", {"shape": "100000000", "stride": ""}, "no grid and no picture: 100000000 elements"),
    ("algebra", {"op": "composition", "a": "100000000:1", "b": "100000000:1"}, "Refused: A = _100000000:_1 has"),
    ("algebra", {"op": "complement", "a": "4:2", "b": "1000000000"}, "Refused: B = 1000000000 has"),
    ("algebra", {"op": "left_inverse", "a": "2:100000", "b": ""}, "Refused: the result of left_inverse has"),
    ("algebra", {"op": "right_inverse", "a": "(" + ",".join(["2"] * 5000) + ")", "b": ""}, "Refused: A is 10001"),
    ("algebra", {"op": "right_inverse", "a": "(" + ",".join(["1"] * 200) + ")", "b": ""}, "has 200 modes"),
    ("banks", {"tile": "32x32 float (4 B)", "pattern": "column, 32-bit", "B": "3", "M": "1000000000", "S": "3"},
     "Refused: M = 1000000000 has 10 digits"),
    ("banks", {"tile": "32x32 float (4 B)", "pattern": "column, 32-bit", "B": "3", "M": "99", "S": "3"},
     "Refused: B = 3, M = 99, S = 3"),
    ("tiled_mma", {"atom": "SM80_16x8x16_F16F16F16F16_TN", "thr": "(32,32,1)", "perm": "", "thread": "0"},
     "Refused: 32768 threads"),
    ("tiled_mma", {"atom": "SM80_16x8x16_F16F16F16F16_TN", "thr": "(2,2,1)", "perm": "(512,512,512)", "thread": "0"},
     "Refused: a 512 x 512 x 512 tile"),
    ("partition", {"kind": "local_partition", "tile": "(3000,3000)", "layout": "(4,8)", "thread": "0"},
     "Refused: the 3000 x 3000 tile"),
    ("partition", {"kind": "TV layout", "tile": "(64,64)", "layout": "(100000,4)", "thread": "0"}, "Refused:"),
    ("fragments", {"atom": "SM80_16x8x8_F32F16F16F32_TN", "mode": "by lane", "lane": "\u0663"},
     "must be a whole number"),
    ("fragments", {"atom": "SM80_16x8x8_F32F16F16F32_TN", "mode": "by lane", "lane": "100000000000000"},
     "Refused: lane = 100000000000000 has 15 digits"),
]


@pytest.mark.parametrize("kind, values, words", SLOW)
def test_too_large_is_refused_in_words(kind, values, words):
    got = json.loads(live.view(kind, json.dumps(values)))
    assert words in got["text"] and got["svg"] == "", got["text"]


def test_refusals_are_the_notebooks_text():
    assert LayoutExplorer("(3000,3000)", "").render() == (json.loads(live.view(
        "layout", json.dumps({"shape": "(3000,3000)", "stride": ""})))["text"], None)
    a = AlgebraExplorer("composition", "100000000:1", "100000000:1").render()
    assert a[0].startswith("Refused: A = _100000000:_1 has 100000000 elements; the explorers compute and draw at "
                           "most 4096") and a[1] is None


def test_the_largest_drawable_layout_is_drawn():
    got = json.loads(live.view("layout", json.dumps({"shape": "(64,64)", "stride": ""})))
    assert got["svg"].count("<rect") == 64 * 64 and "no grid" not in got["text"]


# ---- the partition explorer (chapter 3) ---------------------------------------------------------------------
@pytest.mark.parametrize("tile, thr", [((8, 24), Layout((4, 8))), ((8, 24), make_layout((4, 8), LayoutRight)),
                                       ((16, 64), Layout((2, 16))), ((8, 8), Layout(((2, 2), 4), ((1, 8), 2))),
                                       ((8, 8), Layout(4))])
def test_local_partition_as_a_tv_layout_is_cutes_local_partition(tile, thr):
    """Thread t's elements in the explorer's TV layout are exactly those of cutelite.tensor.local_partition
    of a tensor holding each element's column-major index (which NumPy's Fortran order checks first)."""
    from cutelite.teach.explorers import partition_tv
    from cutelite.tensor import local_partition, make_tensor
    M, N = tile
    index = np.arange(M * N)
    A = make_tensor(index, Layout((M, N)))
    assert np.array_equal(A.to_numpy(), index.reshape((M, N), order="F"))
    tv = partition_tv("local_partition", tile, thr)
    for t in range(size(thr)):
        want = local_partition(A, thr, t).to_numpy().reshape(-1, order="F").tolist()
        assert [tv(t, v) for v in range(size(tv, 1))] == want, t


def test_partition_explorer_text_and_picture():
    e = PartitionExplorer()
    text, svg = e.render()
    assert "thread 13 sits at (1, 3)" in text and "v0=(1, 3), v1=(5, 3), v2=(1, 11)" in text
    got = json.loads(live.view("partition", json.dumps({"kind": "local_partition", "tile": "(8,24)",
                                                        "layout": "(4,8)", "thread": "13"})))
    assert (got["text"], got["svg"]) == (text, svg)
    assert svg.count("<rect") == 8 * 24 + 6                      # every element, and thread 13's 6 outlined
    # the documentation's TV layout: thread 0 holds row 0, columns 0, 1, 4, 5 (CuTe's tensor docs)
    e.kind.value, e.tile.value, e.layout.value, e.thread.value = ("TV layout", "(4,8)",
                                                                  "((2,4),(2,2)):((8,1),(4,16))", "0")
    text, svg = e.render()
    assert "thread 0 holds (m, n): v0=(0, 0), v1=(0, 1), v2=(0, 4), v3=(0, 5)" in text
    assert "<title>(0,4): T0 V2</title>" in svg
    e.layout.value = "(4,8):(1,3)"
    e.kind.value = "local_partition"
    assert e.render() == ("ValueError: local_partition: the thread layout (_4,_8):(_1,_3) must number its 32 "
                          "threads 0..31, each once (a compact layout such as (4,8) or (4,8):(8,1))\n", "")
