"""Hypothesis strategies for random static layouts (small, typical of GEMM tiles)."""

import random

from hypothesis import strategies as st

from cutelite import Layout
from cutelite.int_tuple import flatten, product

extents = st.sampled_from([1, 2, 2, 3, 4, 4, 6, 8])


def _nest(draw, leaves, max_depth):
    if max_depth == 0 or len(leaves) == 1 or draw(st.booleans()):
        return leaves[0] if len(leaves) == 1 else tuple(leaves)
    cut = draw(st.integers(1, len(leaves) - 1))
    return (_nest(draw, leaves[:cut], max_depth - 1), _nest(draw, leaves[cut:], max_depth - 1))


def _rebuild(profile, values):
    it = iter(values)

    def go(p):
        if isinstance(p, tuple):
            return tuple(go(v) for v in p)
        return next(it)
    return go(profile)


@st.composite
def layouts(draw, max_leaves=4, max_size=256, strides="any"):
    """A random layout. strides: 'any' (0 and non-compact allowed), 'injective' (a permuted compact
    layout with gaps), or 'compact'."""
    n = draw(st.integers(1, max_leaves))
    leaves = [draw(extents) for _ in range(n)]
    while product(tuple(leaves)) > max_size:
        leaves[leaves.index(max(leaves))] //= 2
    shape = _nest(draw, leaves, 2)
    flat = flatten(shape) if isinstance(shape, tuple) else (shape,)
    if strides == "any":
        d = [draw(st.sampled_from([0, 1, 2, 3, 4, 8, 16, 32])) for _ in flat]
    else:
        rng = random.Random(draw(st.integers(0, 2**16)))
        order = list(range(len(flat)))
        rng.shuffle(order)
        d, cur = [0] * len(flat), 1
        for i in order:
            d[i] = cur
            gap = 1 if strides == "compact" else rng.choice([1, 1, 2, 3])
            cur *= flat[i] * gap
    stride = _rebuild(shape, d) if isinstance(shape, tuple) else d[0]
    return Layout(shape, stride)
