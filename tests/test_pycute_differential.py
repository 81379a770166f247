"""Differential tests against NVIDIA's pycute (test-only oracle; skipped when it is not installed).

pycute agrees with C++ CuTe on layout evaluation, size, cosize, coalesce, filter, the Swizzle offset
function, and complement / logical_product on inputs C++ accepts; only those are compared here.
pycute prints no static/dynamic marks, so functions (offset tables) and shapes are compared, not text.
"""

import pytest
from hypothesis import given, settings, assume

from cutelite import Layout, Swizzle, coalesce, filter, complement, logical_product, size, cosize
from strategies import layouts

pycute = pytest.importorskip("pycute")
FAST = settings(max_examples=200, deadline=None)


def theirs(layout):
    return pycute.Layout(layout.shape, layout.stride)


def table(layout, n):
    return [layout(i) for i in range(n)]


@FAST
@given(layouts())
def test_evaluation_size_cosize(L):
    P = theirs(L)
    assert size(L) == pycute.size(P)
    assert cosize(L) == pycute.cosize(P)
    assert table(L, size(L)) == table(P, size(L))


@FAST
@given(layouts())
def test_coalesce_and_filter(L):
    for ours, ref in ((coalesce(L), pycute.coalesce(theirs(L))), (filter(L), pycute.filter(theirs(L)))):
        assert size(ours) == pycute.size(ref)
        assert table(ours, size(ours)) == table(ref, size(ours))


@FAST
@given(layouts(strides="injective"))
def test_complement(L):
    ours = complement(L, cosize(L) * 2)
    ref = pycute.complement(theirs(L), cosize(L) * 2)
    assert size(ours) == pycute.size(ref)
    assert table(ours, size(ours)) == table(ref, size(ours))


@FAST
@given(layouts(strides="compact", max_leaves=2, max_size=16), layouts(strides="compact", max_leaves=2, max_size=16))
def test_logical_product(B, T):
    try:
        ours = logical_product(B, T)
    except ValueError:
        assume(False)
    ref = pycute.logical_product(theirs(B), theirs(T))
    assert table(ours, size(ours)) == table(ref, size(ours))


@pytest.mark.parametrize("b, m, s", [(1, 1, 1), (2, 1, 2), (3, 3, 3), (3, 1, 4), (1, 0, -1), (2, 2, -3)])
def test_swizzle_offsets(b, m, s):
    ours, ref = Swizzle(b, m, s), pycute.Swizzle(b, m, s)
    assert [ours(x) for x in range(2048)] == [ref(x) for x in range(2048)]
