"""Step-by-step derivations of the layout algebra, for the book and the algebra explorer.

    result, steps = explain("logical_divide", Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2))

Each step is one line of text built from cutelite's own operations (so the steps are as exact as the
algebra), and the last step checks the result's defining property numerically, by trying every coordinate.

C++ CuTe checks weaker conditions than correctness needs, and cutelite returns what C++ returns. Where the
check fails, the steps say in words why the result is not what its name promises: a composition whose
stride and shape divide neither one another (C++ only asks that the stride be a multiple of the shape, or
less than it), the "left inverse" of a layout that is not injective, a complement that cannot fill the
gaps between strides that are not multiples of one another, a tiler that does not divide the layout.
"""

from collections import Counter
from itertools import islice

from .int_tuple import fmt, idx2crd, is_int, is_tuple, wrap
from .layout import (
    Layout, make_layout, size, cosize, rank, get, flatten, filter, coalesce, composition, complement,
    right_inverse, left_inverse, logical_divide, zipped_divide, tiled_divide, flat_divide,
    logical_product, blocked_product, raked_product, append, _is_free, _coalesce_flat,
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


# ---- checking a result by trying every coordinate, and saying why it fails ------------------------------
MAX_CHECKED = 1 << 14   # coordinates a check tries (a 128 x 128 tile); a larger result is derived, not checked


def _plain(*layouts):
    """Whether every operand is a Layout with integer strides (what the checks below evaluate)."""
    return all(isinstance(x, Layout) and all(is_int(d) for d in wrap(flatten(x).stride)) for x in layouts)


def _list(values, limit=8):
    values = list(values)
    shown = ",".join(str(v) for v in values[:limit])
    return f"[{shown}{',...' if len(values) > limit else ''}]"


def _stride_fault(a, b, name="B"):
    """Where B's stride meets a shape of A that it neither divides nor is a multiple of, walking the modes
    as composition does: the strong condition correctness needs, of which C++ checks only the weak part
    ("a multiple of the shape, or less than it"). A sentence, or None when every stride passes."""
    flat = _coalesce_flat(a, keep_last=True)
    shapes, strides = wrap(flat.shape)[:-1], wrap(flat.stride)[:-1]
    fb = flatten(b)
    for bs, bd in zip(wrap(fb.shape), wrap(fb.stride)):
        rest_shape, rest = bs, abs(bd)
        for k, (s, d) in enumerate(zip(shapes, strides)):
            if rest == 0 or rest_shape == 1:
                break
            if rest % s and s % rest:
                what = f"{name}'s stride {rest}" if k == 0 else \
                    f"{name}'s stride {abs(bd)}, divided by A's shapes before it, is {rest}:"
                accepted = (f"C++ accepts it because {rest} < {s} (its check is only 'a multiple of the shape, "
                            "or less than it')" if rest < s else "C++ does not check run-time values")
                return (f"{what} and A's shape {s} (its mode {s}:{d}) divide neither one another. {accepted}, "
                        f"but {name}'s steps of {rest} then wrap around that mode of {s} unevenly")
            nxt = -(-s // rest)
            if nxt > 1:
                taken = min(nxt, rest_shape)
                if rest_shape % taken:
                    return (f"{name}'s shape {rest_shape} is not a multiple of the {taken} elements it can take from "
                            f"A's mode {s}:{d} (Shape Divisibility Condition, which C++ checks for static values only)")
                rest_shape //= taken
            rest = -(-rest // s)
    return None


def _check_composition(r, a, b, name="B"):
    """The check line of R = A o B (B called `name` in the text), and, when R is not A o B, the lines that
    say why."""
    n = size(b)
    if not _plain(a, b) or n > MAX_CHECKED:
        return [f"check skipped: {f'R has {n} coordinates' if n > MAX_CHECKED else 'strides that are not ints'}"]
    reach = [b(i) for i in range(n)]
    want = [a(j) for j in reach]   # past A's indices, A goes on along its last mode (C++ evaluates it so)
    got = [r(i) for i in range(n)]
    lines = []
    if max(reach) >= size(a):
        lines.append(f"{name} reaches index {max(reach)}, past A's last index {size(a) - 1}: there A({name}(i)) "
                     "goes on along A's last mode, as C++ extends A")
    if min(reach) < 0:
        lines.append(f"{name} reaches index {min(reach)}, below A's first index 0: there A({name}(i)) is A's "
                     "function continued to negative indices, as C++ evaluates it (C++ division truncates)")
    lines.append(f"check: R(i) == A({name}(i)) for all i < {n}: {got == want}")
    if got != want:
        why = _stride_fault(a, b, name) or _carry_fault(a, b, got, want, reach, name)
        lines.append(f"not A o {name}: {why}; so R's offsets {_list(got)} differ from A({name}(i)) = {_list(want)}")
    return lines


def _carry_fault(a, b, got, want, reach, name):
    """Why R differs from A o B when every stride passes: B's modes, each composed exactly, do not add up."""
    i = next(k for k in range(len(got)) if got[k] != want[k])
    c = fmt(idx2crd(i, b.shape)).replace("_", "")
    f = flatten(b)
    modes = [Layout._make(s, d) for s, d in zip(wrap(f.shape), wrap(f.stride))]
    alone = all(composition(a, m)(k) == a(m(k)) for m in modes for k in range(size(m)))
    if alone and len(modes) > 1:
        return (f"each mode of {name} composes exactly on its own, but R adds its modes' offsets while "
                f"{name}{c} = {reach[i]} carries from one mode of A into the next, so A({name}{c}) = {want[i]}, "
                f"not R{c} = {got[i]} (C++ composes {name} mode by mode and does not check that the modes add up)")
    return f"R{c} = {got[i]} but A({name}{c}) = {want[i]}"


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
        return r, steps + _check_composition(r, a, b)
    if is_int(b):
        steps = ["an int n as B means the layout n:_1 (the first n offsets of A)", f"R = A o {b}:_1 = {r}"]
        if b <= 0:
            return r, steps + [f"not A o B: {b}:_1 has {'no' if b == 0 else 'a negative'} size, so it has no "
                               f"coordinates and R = {r} describes no elements; C++ computes it without a check"]
        return r, steps + _check_composition(r, a, Layout._make(b, 1))
    if is_tuple(b):
        steps = [f"a tuple tiler composes mode by mode: R_i = A_i o B_i"]
        for i, bi in enumerate(b):
            ai = get(a, i)
            steps.append(f"  mode {i}: {ai} o {operand_text(bi)} = {composition(ai, bi)}")
            if isinstance(bi, Layout) or is_int(bi) and bi > 0:
                bl = bi if isinstance(bi, Layout) else Layout._make(bi, 1)
                steps += [f"    {line}" for line in _check_composition(composition(ai, bl), ai, bl)
                          if not line.startswith("check: ") or line.endswith("False")]
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
    n = bound if is_int(bound) else size(bound)
    f = flatten(coalesce(a))
    pairs = sorted(zip(wrap(f.shape), wrap(f.stride)), key=lambda p: p[1])
    steps = [f"complement({a}, {operand_text(bound)}): the layout that enumerates the copies of A (the offset "
             f"where each starts), in order, until they cover 0..{n - 1}",
             f"A's modes sorted by stride: {', '.join(f'{fmt(s)}:{fmt(d)}' for s, d in pairs if d != 0)}"]
    current, uneven = 1, None
    for s, d in pairs:
        if d == 0 or s == 1:
            continue
        gap = f"fill the gap below stride {d} with mode {d // current}:{current}; " if d > current else ""
        steps.append(f"  {gap}A's mode {fmt(s)}:{fmt(d)} then covers offsets up to {s * d}")
        if is_int(d) and is_int(current) and d % current and uneven is None:
            uneven = (f"A's stride {d} is not a multiple of {current}, where the modes below it end: the gap "
                      f"holds {d / current:.3g} copies of them, which complement rounds down to {d // current} "
                      "(C++ refuses only 0, as non-injective)")
        current = s * d
    steps.append(f"  the rest up to {operand_text(bound)}: ceil({operand_text(bound)} / {current}) copies, stride {current}")
    steps.append(f"coalesced: {r}")
    return r, steps + _check_complement(a, r, n, uneven)


def _check_complement(a, r, n, uneven):
    """Check that (A, R) (A without its stride-0 modes) is a bijection onto [0, size(A) * size(R)) and
    size(A) * size(R) >= n; if not, say why."""
    pair = make_layout(filter(a), r)
    if not _plain(pair) or size(pair) > MAX_CHECKED:
        return ["check skipped: " + ("strides that are not ints" if size(pair) <= MAX_CHECKED
                                     else f"(A, R) has {size(pair)} coordinates")]
    image = [pair(i) for i in range(size(pair))]
    seen = Counter(image)
    missing = list(islice((o for o in range(max(len(image), n)) if o not in seen), 9))
    twice = sorted(o for o, k in seen.items() if k > 1)
    ok = not missing and not twice
    lines = [f"check: (A, R) reaches every offset below size(A) * size(R) = {len(image)} once, and "
             f"{len(image)} >= {n}: {ok}"]
    if not ok:
        what = (f"offsets {_list(missing)} are reached by neither A nor R" if missing else
                f"offsets {_list(twice)} are reached by both A and R")
        lines.append(f"not a complement of A up to {n}: {uneven + '; so ' if uneven else ''}{what}")
    return lines


def _inverse_steps(op, a):
    fn = right_inverse if op == "right_inverse" else left_inverse
    r = fn(a)
    steps = [f"coalesce A: {coalesce(a)}; sort its modes by stride"]
    if not _plain(a, r) or size(a) > MAX_CHECKED or size(r) > MAX_CHECKED:
        return r, steps + [f"result {r}", "check skipped: strides that are not ints, or too many coordinates"]
    image = [a(i) for i in range(size(a))]
    if op == "right_inverse":
        steps.append("take modes while their stride continues the contiguous run 1, s0*d0, ...; R maps "
                     "offset i back to the index that reaches it")
        ok = all(a(r(i)) == i for i in range(size(r)))
        reached = set(image)
        gap = next(o for o in range(len(image) + 1) if o not in reached)
        steps += [f"result {r}", f"check: A(R(i)) == i for all i < {size(r)}: {ok}"]
        if size(r) == gap:
            steps.append(f"size(R) = {size(r)}: A reaches every offset below {gap} but not {gap}, so no right "
                         "inverse is longer")
        else:
            steps.append(f"size(R) = {size(r)}: A reaches every offset below {gap}, but the run of strides "
                         f"1, s0*d0, ... stops at {size(r)}")
        return r, steps
    steps.append("each mode of A (by stride) becomes a mode of R: R(A(i)) == i")
    back = [r(o) if 0 <= o < size(r) else None for o in image]
    ok = back == list(range(len(image)))
    steps += [f"result {r}", f"check: R(A(i)) == i for all i < {size(a)}: {ok}"]
    if not ok:
        first = {}
        twice = next(((first[o], i, o) for i, o in enumerate(image) if first.setdefault(o, i) != i), None)
        if twice:
            i0, i1, o = twice
            steps.append(f"not a left inverse: A is not injective: A({i0}) = A({i1}) = {o}, and no layout R can "
                         f"give back both {i0} and {i1} from offset {o} (C++ does not check; it returns {r})")
        else:
            i = next(k for k in range(len(image)) if back[k] != k)
            steps.append(f"not a left inverse: A({i}) = {image[i]} but R({image[i]}) = {back[i]}")
    return r, steps


def _divide_steps(op, a, t):
    steps = []
    if isinstance(t, Layout):
        c = complement(t, coalesce(a).shape)
        steps += [f"complement of the tiler up to size(A) = {size(a)}: complement({t}, {size(a)}) = {c}"
                  " (it enumerates the tiles)",
                  f"T = (tiler, complement) = {make_layout(t, c)}",
                  f"logical_divide = A o T = {logical_divide(a, t)}: "
                  "mode 0 walks one tile, mode 1 picks the tile"]
        if is_int(size(a)) and is_int(size(t)) and size(a) % size(t):
            steps.append(f"size(A) = {size(a)} is not a multiple of the tile's size {size(t)}: the last tile "
                         "reaches past A's end (C++ does not check)")
        steps += _check_composition(logical_divide(a, t), a, make_layout(t, c), "T")
    elif is_tuple(t):
        steps.append("a tuple tiler divides mode by mode:")
        for i, ti in enumerate(t):
            ai = get(a, i)
            steps.append(f"  mode {i}: logical_divide({ai}, {operand_text(ti)}) = {logical_divide(ai, ti)}")
            if isinstance(ti, Layout) or is_int(ti) and ti > 0:
                tl = ti if isinstance(ti, Layout) else Layout._make(ti, 1)
                ct = complement(tl, coalesce(ai).shape)
                steps += [f"    {line}" for line in _check_composition(logical_divide(ai, tl), ai, make_layout(tl, ct),
                                                                      f"T{i}")
                          if not line.startswith("check: ") or line.endswith("False")]
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
                   f"logical_product = (A, complement o B) = {r}"] + [
            line for line in _check_composition(composition(c, t), c, t) if not line.startswith("check: ")
            or line.endswith("False")]
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
