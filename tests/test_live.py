"""The live page's Python side, in CPython: SVG pictures match the notebook figures' colours, the explorers
show the widgets' text, exercise specs round-trip and run the notebook's checkers."""

import json

import matplotlib
import pytest

from cutelite import Layout, Swizzle, composition, make_layout, LayoutRight
from cutelite.teach import live
from cutelite.teach.announce import decode, encode
from cutelite.teach.svg import layout_svg, thread_colour, tv_svg, viridis
from cutelite.teach.widgets import AlgebraExplorer, LayoutExplorer


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
