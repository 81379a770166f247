"""Step-by-step derivations of the layout algebra, for the book and the algebra explorer.

    result, steps = explain("logical_divide", Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2))

Each step is one line of text built from cutelite's own operations (so the steps are as exact as the
algebra), and the last step checks the result's defining property numerically.
"""

from .int_tuple import fmt, is_tuple, wrap
from .layout import (
    Layout, make_layout, size, cosize, rank, get, flatten, coalesce, composition, complement,
    right_inverse, left_inverse, logical_divide, zipped_divide, tiled_divide, flat_divide,
    logical_product, blocked_product, raked_product, append, _is_free,
)

__all__ = ["OPS", "UNARY", "explain", "operand_text"]


def operand_text(x):
    """Text of an operand: a layout, an int, _ or a tuple tiler."""
    if isinstance(x, tuple):
        return "(" + ", ".join(operand_text(v) for v in x) + ")"
    if _is_free(x):
        return "_"
    return str(x)


def _modes(layout):
    """The flat modes of a layout as 's:d' strings."""
    f = flatten(layout)
    return [f"{fmt(s)}:{fmt(d)}" for s, d in zip(wrap(f.shape), wrap(f.stride))]


def _coalesce_steps(a):
    r = coalesce(a)
    steps = [f"flatten {a} to its modes {', '.join(_modes(a))}",
             "drop size-1 modes; merge neighbours i, i+1 when shape_i * stride_i == stride_(i+1) "
             "(the second mode continues where the first stops)"]
    f = flatten(a)
    prev = None
    for s, d in zip(wrap(f.shape), wrap(f.stride)):
        if s == 1:
            continue
        if prev is not None:
            ps, pd = prev
            verdict = "merge" if ps * pd == d else "keep apart"
            steps.append(f"  {fmt(ps)}:{fmt(pd)} then {fmt(s)}:{fmt(d)}: {fmt(ps)}*{fmt(pd)} = {ps * pd}"
                         f" {'==' if ps * pd == d else '!='} {fmt(d)} -> {verdict}")
            prev = (ps * s, pd) if ps * pd == d else (s, d)
        else:
            prev = (s, d)
    steps.append(f"result {r}: same function on 0..{size(a) - 1}, fewest modes")
    return r, steps


def _check_composition(r, a, b):
    ok = all(r(i) == a(b(i)) for i in range(size(b)))
    return f"check: R(i) == A(B(i)) for all i < {size(b)}: {ok}"


def _composition_steps(a, b):
    r = composition(a, b)
    if isinstance(b, Layout):
        steps = [f"R = A o B means R(c) = A(B(c)); R has B's shape {fmt(b.shape)}",
                 f"coalesce A: {coalesce(a)} (same function, simpler to walk)"]
        f = flatten(b)
        for s, d in zip(wrap(f.shape), wrap(f.stride)):
            piece = Layout._make(s, d)
            steps.append(f"  B's mode {piece}: A o {piece} = {composition(a, piece)} "
                         f"(A read every {fmt(d)}, {fmt(s)} times)")
        steps.append(f"put the pieces in B's shape: R = {r}")
        steps.append(_check_composition(r, a, b))
        return r, steps
    if isinstance(b, int):
        return r, [f"an int n as B means the layout n:_1 (the first n offsets of A)",
                   f"R = A o {b}:_1 = {r}", _check_composition(r, a, Layout(b, 1))]
    if is_tuple(b):
        steps = [f"a tuple tiler composes mode by mode: R_i = A_i o B_i"]
        for i, bi in enumerate(b):
            steps.append(f"  mode {i}: {get(a, i)} o {operand_text(bi)} = {composition(get(a, i), bi)}")
        if len(b) < rank(a):
            dropped = ", ".join(str(get(a, i)) for i in range(len(b), rank(a)))
            steps.append(f"A's modes beyond the tiler ({dropped}) are DROPPED: R has the tiler's rank "
                         f"{len(b)} (logical_divide would keep them)")
        steps.append(f"result {r}")
        return r, steps
    return r, [f"B = _ leaves A as it is: {r}"]


def _complement_steps(a, cotarget=None):
    r = complement(a, cotarget)
    bound = cosize(a) if cotarget is None else cotarget
    f = flatten(coalesce(a))
    pairs = sorted(zip(wrap(f.shape), wrap(f.stride)), key=lambda p: p[1])
    steps = [f"complement({a}, {operand_text(bound)}): the layout of the offsets A does not reach, "
             f"in order, up to {operand_text(bound)}",
             f"A's modes sorted by stride: {', '.join(f'{fmt(s)}:{fmt(d)}' for s, d in pairs if d != 0)}"]
    current = 1
    for s, d in pairs:
        if d == 0 or s == 1:
            continue
        gap = f"fill the gap below stride {d} with mode {d // current}:{current}; " if d > current else ""
        steps.append(f"  {gap}A's mode {fmt(s)}:{fmt(d)} then covers offsets up to {s * d}")
        current = s * d
    steps.append(f"  the rest up to {operand_text(bound)}: ceil({operand_text(bound)} / {current}) copies, stride {current}")
    steps.append(f"coalesced: {r}")
    image_a = {a(i) for i in range(size(a))}
    image_r = {r(i) for i in range(size(r))}
    steps.append(f"check: A and the complement share only offset 0: {image_a & image_r <= {0}}; "
                 f"size(A) * size(R) = {size(a) * size(r)} >= {operand_text(bound)}")
    return r, steps


def _inverse_steps(op, a):
    fn = right_inverse if op == "right_inverse" else left_inverse
    r = fn(a)
    steps = [f"coalesce A: {coalesce(a)}; sort its modes by stride"]
    if op == "right_inverse":
        steps.append("take modes while their stride continues the contiguous run 1, s0*d0, ...; R maps "
                     "offset i back to the index that reaches it")
        ok = all(a(r(i)) == i for i in range(size(r)))
        steps += [f"result {r}", f"check: A(R(i)) == i for all i < {size(r)}: {ok}"]
    else:
        steps.append("each mode of A (by stride) becomes a mode of R: R(A(i)) == i")
        ok = all(r(a(i)) == i for i in range(size(a)))
        steps += [f"result {r}", f"check: R(A(i)) == i for all i < {size(a)}: {ok}"]
    return r, steps


def _divide_steps(op, a, t):
    steps = []
    if isinstance(t, Layout):
        c = complement(t, size(a))
        steps += [f"complement of the tiler up to size(A) = {size(a)}: complement({t}, {size(a)}) = {c}"
                  " (it enumerates the tiles)",
                  f"(tiler, complement) = {make_layout(t, c)}",
                  f"logical_divide = A o (tiler, complement) = {logical_divide(a, t)}: "
                  "mode 0 walks one tile, mode 1 picks the tile"]
    elif is_tuple(t):
        steps.append("a tuple tiler divides mode by mode:")
        for i, ti in enumerate(t):
            steps.append(f"  mode {i}: logical_divide({get(a, i)}, {operand_text(ti)}) = {logical_divide(get(a, i), ti)}")
        if len(t) < rank(a):
            steps.append(f"  modes {len(t)}..{rank(a) - 1} of A are KEPT as they are")
        steps.append(f"logical_divide = {logical_divide(a, t)}")
    else:
        steps.append(f"logical_divide = {logical_divide(a, t)}")
    fn = {"zipped_divide": zipped_divide, "tiled_divide": tiled_divide, "flat_divide": flat_divide}.get(op)
    if fn is None:
        return logical_divide(a, t), steps
    r = fn(a, t)
    how = {"zipped_divide": "gather every tile mode into mode 0 and every rest mode into mode 1",
           "tiled_divide": "as zipped_divide, then unpack the rest modes: ((tile), rest0, rest1, ...)",
           "flat_divide": "unpack everything: (tile0, tile1, ..., rest0, rest1, ...)"}[op]
    steps += [f"{op}: {how}", f"result {r}"]
    return r, steps


def _product_steps(op, a, t):
    if op == "logical_product":
        if not isinstance(t, Layout):
            return logical_product(a, t), [f"a tuple tiler multiplies mode by mode: {logical_product(a, t)}"]
        n = size(a) * cosize(t)
        c = complement(a, n)
        r = logical_product(a, t)
        return r, [f"complement of the block up to size(A) * cosize(B) = {n}: {c} (where copies can go)",
                   f"complement o B = {composition(c, t)}: B chooses which copies, in its order",
                   f"logical_product = (A, complement o B) = {r}"]
    r = (blocked_product if op == "blocked_product" else raked_product)(a, t)  # its errors first
    rr = max(rank(a), rank(t))
    pa, pt = append(a, n=rr), append(t, n=rr)
    lp = logical_product(pa, pt)
    order = "(block_i, tiler_i): the block's elements stay together" if op == "blocked_product" else \
        "(tiler_i, block_i): the copies are interleaved, one element of each in turn"
    return r, [f"pad both to rank {rr}: {pa} and {pt}",
               f"logical_product = {lp}",
               f"zip the modes: result mode i is {order}",
               f"result {r}"]


OPS = ("coalesce", "composition", "complement", "right_inverse", "left_inverse", "logical_divide",
       "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "blocked_product", "raked_product")
UNARY = ("coalesce", "right_inverse", "left_inverse")


def explain(op, a, b=None):
    """Apply the algebra operation `op` to a (and b) and return (result, steps), steps a list of lines.

    Post: result is exactly what cutelite's `op` returns; the last step checks its defining property
    where it has a simple one. Errors of the operation (e.g. composition's divisibility conditions)
    propagate unchanged.
    """
    if op not in OPS:
        raise ValueError(f"explain: unknown operation {op!r}; choose one of {', '.join(OPS)}")
    if op == "coalesce":
        return _coalesce_steps(a)
    if op == "composition":
        return _composition_steps(a, b)
    if op == "complement":
        return _complement_steps(a, b)
    if op in ("right_inverse", "left_inverse"):
        return _inverse_steps(op, a)
    if op.endswith("divide"):
        return _divide_steps(op, a, b)
    return _product_steps(op, a, b)
