"""The exercise checkers: 'not answered yet' for None, PASS when right, a specific hint when wrong;
they return a bool and never raise on a wrong answer."""

import numpy as np
import pytest

from cutelite import Layout, dyn
from cutelite.teach.exercises import check_layout_answer, check_offsets_answer, check_value

L = Layout((4, 8), (1, 4))


def run(capsys, fn, *args, **kw):
    ok = fn(*args, **kw)
    return ok, capsys.readouterr().out.strip()


def test_unanswered(capsys):
    for fn, expected in ((check_layout_answer, L), (check_offsets_answer, L), (check_value, 3)):
        ok, out = run(capsys, fn, None, expected, name="ex")
        assert ok is False and out == "ex: not answered yet"


def test_pass(capsys):
    assert run(capsys, check_layout_answer, Layout((4, 8), (1, 4)), L, "ex") == (True, "PASS ex")
    assert run(capsys, check_layout_answer, "(_4,_8):(_1,_4)", L, "ex") == (True, "PASS ex")
    assert run(capsys, check_offsets_answer, [L(i) for i in range(32)], L, "ex") == (True, "PASS ex")
    assert run(capsys, check_offsets_answer, [[L(m, n) for n in range(8)] for m in range(4)], L, "ex")[0]
    assert run(capsys, check_value, (1, 2), (1, 2), "ex") == (True, "PASS ex")


@pytest.mark.parametrize("answer, words", [
    (Layout((4, 8), (8, 1)), "mode 0 (_4) has stride _8; it should be _1"),
    (Layout((8, 4), (8, 1)), "mode 0 has shape _8; it should be _4"),
    (Layout((4, 4), (1, 4)), "size 16 should be 32"),
    (Layout(32, 1), "same offsets as the expected layout, different form"),
    (Layout((dyn(4), 8), (1, 4)), "static ints print _N, dynamic (dyn) ones N"),
    ((4, 8), "expected a Layout"),
    ("(4,8", "cannot read the text"),
])
def test_layout_hints(capsys, answer, words):
    ok, out = run(capsys, check_layout_answer, answer, L, "ex")
    assert ok is False and out.startswith("not yet ex:") and words in out


def test_offsets_hints(capsys):
    row_major = Layout((4, 8), (8, 1))
    ok, out = run(capsys, check_offsets_answer, list(range(32)), row_major)
    assert not ok and "row by row" in out
    grid = np.array([[L(m, n) for n in range(8)] for m in range(4)])
    ok, out = run(capsys, check_offsets_answer, grid.T, L)
    assert not ok and "transposed" in out
    wrong = grid.copy()
    wrong[2, 3] = 99
    ok, out = run(capsys, check_offsets_answer, wrong, L)
    assert not ok and "(2,3) should be 14, you have 99" in out
    ok, out = run(capsys, check_offsets_answer, [1, 2], L)
    assert not ok and "expected 32 offsets, you have 2" in out


def test_value_hints(capsys):
    ok, out = run(capsys, check_value, 64, 32, "cosize", hints={64: "that is size(L)"})
    assert not ok and out == "not yet cosize: that is size(L)"
    ok, out = run(capsys, check_value, 31, 32, "cosize")
    assert not ok and "too small" in out
    ok, out = run(capsys, check_value, (1, 3), (1, 2), "crd")
    assert not ok and "entry 1" in out
    ok, out = run(capsys, check_value, Layout(32, 1), L, "as layout")
    assert not ok and "different form" in out
