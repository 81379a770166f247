"""From a cutelite layout to code: the layout evaluated at a run-time coordinate, constants folded in.

A kernel cannot call cutelite (Python objects do not exist on the GPU), but a *static* layout is just
arithmetic on constants. `evaluate` runs CuTe's crd2idx on a run-time coordinate, a `kernels.expr.Sym` (the
text of an integer expression), so every shape and stride is folded into the text. It is the one path from a
layout to code: cutejit's tensors index memory with it, and `layout_fn` writes it out as a Numba device
function for the kernels written by hand (the SIMT steps of chapter 7, chapters 1-4):

    >>> print(layout_source(Layout((8, 8), (8, 1))))
    def layout_fn(i):
        # (_8,_8):(_8,_1)
        return (i & 7) * 8 + (i >> 3)

Divisions and remainders by powers of two become shifts and masks; size-1 and stride-0 modes vanish. The
Sym's text brackets every operation; it is printed with the brackets a reader needs (`_text`).
A ComposedLayout adds its offset and applies the outer function (a Swizzle: cutelite's own formula,
o ^ ((o & yyy) >> S), run on the Sym).

Two forms:
  * layout_fn(L)(i): one integer coordinate, split colexicographically over all of L's modes (L(i));
  * layout_fn(L, by_mode=True)(c0, c1, ...): one integer per top-level mode of L (L(c0, c1, ...)),
    each split over that mode's own nested shape.
As in CuTe, the last mode takes whatever is left of the coordinate, without a remainder.
"""

import ast

from cutelite import ComposedLayout, Layout, ScaledBasis, Swizzle, rank

from .expr import Sym, src
from .source import compile_function

__all__ = ["evaluate", "layout_source", "layout_pyfunc", "layout_fn"]


# ---- a static layout at a run-time coordinate ------------------------------------------------------------
def _leaves(shape, stride):
    if isinstance(shape, tuple):
        out = []
        for s, d in zip(shape, stride):
            out += _leaves(s, d)
        return out
    return [(int(shape), stride)]


def _scale(x, d, nroot):
    """x * stride d as a value: an int or Sym for an integer stride, a tuple for a basis stride."""
    if isinstance(d, ScaledBasis):
        if len(d.modes) != 1 or d.modes[0] >= nroot:
            raise NotImplementedError("evaluate: basis stride %s is not a mode of a rank-%d tensor" % (d, nroot))
        out = [0] * nroot
        out[d.modes[0]] = x * int(d.value)
        return tuple(out)
    return x * int(d)


def _add(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        a = a if isinstance(a, tuple) else (a,) * len(b) if a == 0 else a
        b = b if isinstance(b, tuple) else (b,) * len(a) if b == 0 else b
        return tuple(x + y for x, y in zip(a, b))
    return a + b


def evaluate(layout, x, nroot=0):
    """layout(x) for a 1-D coordinate x (an int, or a Sym in [0, size(layout))), as CuTe's crd2idx splits
    it over the modes: an int/Sym for integer strides, a tuple of nroot ints/Syms for basis strides."""
    leaves = _leaves(layout.shape, layout.stride)
    total = 0 if not nroot else (0,) * nroot
    p = 1
    for i, (s, d) in enumerate(leaves):
        if s == 1:
            continue
        xi = x // p
        if i != len(leaves) - 1:
            xi = xi % s
        total = _add(total, _scale(xi, d, nroot))
        p *= s
    return total


def _at(layout, args, by_mode):
    """layout(*args) (by_mode: one coordinate per top-level mode) of a Layout."""
    if not by_mode:
        return evaluate(layout, args[0])
    shape, stride = (layout.shape, layout.stride) if rank(layout) > 1 else ((layout.shape,), (layout.stride,))
    return sum((evaluate(Layout(s, d), c) for c, s, d in zip(args, shape, stride)), 0)


# ---- the value written out as a function -------------------------------------------------------------------
_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.BitAnd: "&",
           ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}


def _text(value):
    """Source of an int or a Sym as a reader writes it: a product inside a sum, and a sum inside a sum (but
    after a minus), without parentheses; every other operand (bitwise ones above all) in parentheses."""
    return _plain(ast.parse(src(value), mode="eval").body)


def _plain(node):
    if not isinstance(node, ast.BinOp):
        return ast.unparse(node)
    left, right = _plain(node.left), _plain(node.right)
    left = left if _bare(node.left, node.op, True) else "(%s)" % left
    right = right if _bare(node.right, node.op, False) else "(%s)" % right
    return "%s %s %s" % (left, _SYMBOL[type(node.op)], right)


def _bare(x, op, first):
    """Whether operand x of op (its first or second) reads right without parentheses."""
    if not isinstance(x, ast.BinOp):
        return True
    sums, products = (ast.Add, ast.Sub), (ast.Mult, ast.FloorDiv, ast.Mod)
    return isinstance(op, sums) and (isinstance(x.op, products) or
                                     isinstance(x.op, sums) and (first or isinstance(op, ast.Add)))


def _composed_lines(composed, args, by_mode):
    """Statements leaving composed(*args) in the variable o: the inner layout plus the offset, then the
    outer function, each with what it applies as a comment."""
    if not isinstance(composed.offset, int) or isinstance(composed.offset, bool):
        raise NotImplementedError("layout_source: only integer offsets in a ComposedLayout, got %r"
                                  % (composed.offset,))
    inner, outer, o = composed.layout_b, composed.layout_a, Sym("o")
    lines = ["o = %s  # %s" % (_text(_at(inner, args, by_mode) + int(composed.offset)), inner)]
    if isinstance(outer, ComposedLayout):
        return lines + _composed_lines(outer, [o], False)
    if isinstance(outer, Swizzle):
        value = outer(o)
    elif isinstance(outer, Layout):
        value = evaluate(outer, o)
    else:
        raise TypeError("layout_source: cannot write out the outer function %r" % (outer,))
    return lines + ["o = %s  # %s" % (_text(value), outer) if value is not o else "# %s: the identity" % outer]


def layout_source(layout, by_mode=False, name="layout_fn"):
    """Python source of a function computing `layout` (a cutelite Layout or ComposedLayout).

    Post: exec'd, the function f satisfies f(i) == layout(i) for 0 <= i < size(layout) (by_mode=False),
          or f(*c) == layout(*c) for every coordinate c with one int per top-level mode (by_mode=True).
    """
    if not isinstance(layout, (Layout, ComposedLayout)):
        raise TypeError("layout_source: expected a Layout or a ComposedLayout, got %r" % (layout,))
    args = [Sym("i")] if not by_mode else [Sym("c%d" % k) for k in range(rank(layout))]
    if isinstance(layout, ComposedLayout):
        body = _composed_lines(layout, args, by_mode) + ["return o"]
    else:
        body = ["return %s" % _text(_at(layout, args, by_mode))]
    header = "def %s(%s):" % (name, ", ".join(a.src for a in args))
    return "\n".join([header, "    # %s" % layout] + ["    " + line for line in body]) + "\n"


def layout_pyfunc(layout, by_mode=False, name="layout_fn"):
    """The generated function as plain Python (for the host, and for tests); its source is
    inspect.getsource-able and kept in `.source`."""
    return compile_function(layout_source(layout, by_mode, name), name, kind="layout_codegen")


def layout_fn(layout, by_mode=False, name="layout_fn"):
    """`layout` as a Numba CUDA device function (coordinate ints -> offset int); `.source` holds its code.

    Call it from a kernel like any device function: `off = f(i)` or, with by_mode=True, `f(m, n)`.
    In Numba's simulator it is the plain Python function: it is integer arithmetic only, and the
    simulator's device-function wrapper takes a lock on every call, which a block of 1024 simulated
    threads queues on (a 32x32x64 shared-memory GEMM took 50 s with it).
    """
    from numba import cuda  # only here: importing this module must not import numba
    from .runtime import in_simulator

    py = layout_pyfunc(layout, by_mode, name)
    if in_simulator():
        return py
    dev = cuda.jit(device=True)(py)
    dev.source = py.source
    return dev
