"""From a cutelite layout to a Numba device function: coordinate -> offset, constants folded in.

A kernel cannot call cutelite (Python objects do not exist on the GPU), but a *static* layout is just
arithmetic on constants. So we write that arithmetic out as Python source, exactly as CuTe's crd2idx
evaluates it, and compile it with cuda.jit(device=True):

    >>> print(layout_source(Layout((8, 8), (8, 1))))
    def layout_fn(i):
        # (_8,_8):(_8,_1)
        return (i & 7) * 8 + (i >> 3)

Divisions and remainders by powers of two become shifts and masks; size-1 and stride-0 modes vanish.
A ComposedLayout adds its offset and applies the outer function (a Swizzle: o ^ ((o & yyy) >> S)).

Two forms:
  * layout_fn(L)(i): one integer coordinate, split colexicographically over all of L's modes (L(i));
  * layout_fn(L, by_mode=True)(c0, c1, ...): one integer per top-level mode of L (L(c0, c1, ...)),
    each split over that mode's own nested shape.
As in CuTe, the last mode takes whatever is left of the coordinate, without a remainder.
"""

from .source import compile_function

__all__ = ["layout_source", "layout_pyfunc", "layout_fn"]


# ---- reading a layout (duck-typed on cutelite's attributes) --------------------------------------------
def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _as_layout(obj):
    """(shape, stride) of a Layout-like object or of a (shape, stride) pair; None otherwise."""
    if hasattr(obj, "layout_b"):
        return None
    if hasattr(obj, "shape") and hasattr(obj, "stride"):
        return obj.shape, obj.stride
    if isinstance(obj, tuple) and len(obj) == 2:
        return obj
    return None


def _product(s):
    if _is_int(s):
        return int(s)
    p = 1
    for x in s:
        p *= _product(x)
    return p


def _describe(obj):
    return str(obj) if not isinstance(obj, tuple) else "%s:%s" % obj


# ---- integer expressions with constants folded -----------------------------------------------------------
def _pow2(n):
    return n > 0 and n & (n - 1) == 0


def _div(e, p):
    if p == 1:
        return e
    return "(%s >> %d)" % (e, p.bit_length() - 1) if _pow2(p) else "(%s // %d)" % (e, p)


def _mod(e, n):
    if _pow2(n):
        inner = _masked(e)
        if inner is not None and inner[1] >= n - 1:   # (x & 7) & 1 == x & 1
            return "(%s & %d)" % (inner[0], n - 1)
        return "(%s & %d)" % (e, n - 1)
    return "(%s %% %d)" % (e, n)


def _masked(e):
    """(x, m) if e is the text "(x & m)", else None."""
    if e.startswith("(") and e.endswith(")") and " & " in e:
        x, _, m = e[1:-1].rpartition(" & ")
        if m.isdigit() and _balanced(x) and _pow2(int(m) + 1):
            return x, int(m)
    return None


def _strip(e):
    return e[1:-1] if e.startswith("(") and e.endswith(")") and _balanced(e[1:-1]) else e


def _balanced(e):
    depth = 0
    for ch in e:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def _terms(c, shape, stride, bounded):
    """Terms of crd2idx(c, shape, stride) for an int coordinate expression `c`.

    bounded: c is known to lie in [0, size(shape)), so size-1 modes contribute nothing.
    """
    if _is_int(shape):
        shape, stride = int(shape), int(stride)
        if stride == 0 or (shape == 1 and bounded):
            return []
        return [c if stride == 1 else "%s * %d" % (c, stride)]
    terms, p = [], 1
    last = len(shape) - 1
    for i, (s, d) in enumerate(zip(shape, stride)):
        n = _product(s)
        sub = _div(c, p)
        if i != last:
            sub = _mod(sub, n) if n > 1 else "0"
            if n > 1:
                terms += _terms(sub, s, d, True)
        else:
            terms += _terms(sub, s, d, bounded)
        p *= n
    return terms


def _sum(terms):
    return " + ".join(_strip(t) if len(terms) == 1 else t for t in terms) if terms else "0"


class _Code:
    """Source text of an int, for cutelite's Swizzle to apply its own formula to: o ^ ((o & yyy) >> S)."""

    def __init__(self, text):
        self.text = text

    def __and__(self, mask):
        return _Code("(%s & %d)" % (self.text, mask))

    def __rshift__(self, n):
        return _Code("%s >> %d" % (self.text, n))

    def __lshift__(self, n):
        return _Code("%s << %d" % (self.text, n))

    def __xor__(self, other):
        return _Code("%s ^ (%s)" % (self.text, other.text))

    def __index__(self):
        raise TypeError("layout_codegen: %s is source text, known when the kernel runs" % self.text)


def _outer_lines(var, outer):
    """Statements applying the outer function of a ComposedLayout to the offset in `var`."""
    if hasattr(outer, "yyy_msk"):  # a Swizzle
        if outer.bits == 0:
            return ["# %s: no bits swizzled" % outer]
        return ["%s = %s  # %s" % (var, outer(_Code(var)).text, outer)]
    if hasattr(outer, "layout_b"):  # a ComposedLayout used as an outer function
        return _composed_lines(var, outer, [var], by_mode=False)
    lay = _as_layout(outer)
    if lay is None:
        raise TypeError("layout_codegen: cannot compile the outer function %r" % (outer,))
    return ["%s = %s  # %s" % (var, _sum(_terms(var, lay[0], lay[1], False)), _describe(outer))]


def _composed_lines(var, composed, args, by_mode):
    offset = composed.offset
    if not _is_int(offset):
        raise NotImplementedError("layout_codegen: only integer offsets in a ComposedLayout, got %r"
                                  % (offset,))
    inner = composed.layout_b
    terms = _inner_terms(inner.shape, inner.stride, args, by_mode)
    if int(offset):
        terms.append(str(int(offset)))
    return ["%s = %s  # %s" % (var, _sum(terms), inner)] + _outer_lines(var, composed.layout_a)


def _inner_terms(shape, stride, args, by_mode):
    if not by_mode:
        return _terms(args[0], shape, stride, False)
    if _is_int(shape):
        shape, stride = (shape,), (stride,)
    terms = []
    for a, s, d in zip(args, shape, stride):
        terms += _terms(a, s, d, False)
    return terms


# ---- public API ----------------------------------------------------------------------------------------
def _rank(layout):
    shape = layout.shape if hasattr(layout, "shape") else _as_layout(layout)[0]
    return 1 if _is_int(shape) else len(shape)


def layout_source(layout, by_mode=False, name="layout_fn"):
    """Python source of a function computing `layout` (a cutelite Layout, ComposedLayout, or a
    (shape, stride) pair of nested int tuples).

    Post: exec'd, the function f satisfies f(i) == layout(i) for 0 <= i < size(layout) (by_mode=False),
          or f(*c) == layout(*c) for every coordinate c with one int per top-level mode (by_mode=True).
    """
    args = ["i"] if not by_mode else ["c%d" % k for k in range(_rank(layout))]
    header = "def %s(%s):" % (name, ", ".join(args))
    if hasattr(layout, "layout_b"):
        body = _composed_lines("o", layout, args, by_mode) + ["return o"]
        return "\n".join([header, "    # %s" % layout] + ["    " + line for line in body]) + "\n"
    lay = _as_layout(layout)
    if lay is None:
        raise TypeError("layout_source: expected a Layout, a ComposedLayout or (shape, stride), got %r"
                        % (layout,))
    expr = _sum(_inner_terms(lay[0], lay[1], args, by_mode))
    return "%s\n    # %s\n    return %s\n" % (header, _describe(layout), expr)


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
