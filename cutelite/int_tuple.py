"""IntTuple: an integer, or a tuple of IntTuples. The recursion every layout operation rides on.

Integers come in two kinds, as in C++ CuTe:

* **static** (known at compile time in C++): plain Python ``int``; printed ``_8``;
* **dynamic** (a run-time value in C++): ``dyn(8)``, an ``int`` subclass; printed ``8``.

Arithmetic keeps the kind: static op static is static, anything with a dynamic operand is dynamic,
except C++'s exact-zero shortcuts (``_0 * d == _0``, ``_0 / d == _0``, ``d % _1 == _0``, ``_0 % d == _0``).
The algebra uses the helpers below (``mul``, ``div``, ...) so that results carry the same kinds, and so
print the same text, as in C++. Division is C++ division: truncation toward zero.
"""

from functools import reduce

from .errors import OutOfRange, check_tree, quote

__all__ = [
    "Dyn", "dyn", "BasisValue", "is_basis", "is_int", "is_tuple", "is_static", "is_static_value",
    "add", "sub", "mul", "div", "mod", "imin", "imax", "iabs", "signum", "ceil_div", "shape_div",
    "rank", "depth", "product", "size", "flatten", "unwrap", "wrap",
    "congruent", "weakly_congruent", "compatible", "crd2idx", "idx2crd",
    "prefix_product", "elem_scale", "inner_product", "product_each", "fmt",
]


class Dyn(int):
    """A dynamic (run-time) integer: same value as an int, printed without the leading underscore."""

    __slots__ = ()

    def __new__(cls, value):
        if not is_int(value):
            raise TypeError(f"Dyn: expected an int (dyn() takes tuples), got {quote(value)} ({type(value).__name__})")
        _need_ints(value, "Dyn", "value")
        return int.__new__(cls, value)

    def __repr__(self):
        return f"dyn({int(self)})"

    def __str__(self):
        return str(int(self))

    # Python operators keep the dynamic kind (the algebra itself uses the helpers below).
    def __add__(self, o): return add(self, o)
    def __radd__(self, o): return add(o, self)
    def __sub__(self, o): return sub(self, o)
    def __rsub__(self, o): return sub(o, self)
    def __mul__(self, o): return mul(self, o)
    def __rmul__(self, o): return mul(o, self)
    def __neg__(self): return _as_dyn(-int(self))


class BasisValue:
    """Base of the values a layout's codomain holds besides ints: cutelite.basis's ScaledBasis (a stride)
    and ArithmeticTuple (a value). The helpers below hand an operation with such an operand to its
    class's ``arith(op, a, b)``, which applies CuTe's rules or raises a TypeError naming the operation."""

    __slots__ = ()


def is_basis(x):
    """True for a ScaledBasis: a stride that is not an int (cutelite.basis)."""
    return isinstance(x, BasisValue) and not isinstance(x, tuple)


def _on_basis(op, a, b=None):
    cls = type(a) if isinstance(a, BasisValue) else type(b)
    return cls.arith(op, a, b)


def dyn(value):
    """Mark an integer (or every integer of an IntTuple) as dynamic: ``dyn(8)`` prints ``8``, not ``_8``."""
    _need_ints(value, "dyn", "value")
    return _dyn(value)


def _dyn(value):
    return tuple(_dyn(v) for v in value) if is_tuple(value) else _as_dyn(value)


def _as_dyn(value):
    """A Dyn of an int the engine computed or checked already (no check: the arithmetic's hot path)."""
    return int.__new__(Dyn, value)


def is_int(x):
    """True for ints (static or dynamic), False for bools and everything else."""
    return type(x) is int or type(x) is Dyn or (isinstance(x, int) and not isinstance(x, bool))


def is_tuple(x):
    return type(x) is tuple


def _need_ints(t, op, what="argument", basis=False):
    """TypeError naming `op` unless t is an int or a (nested) tuple of ints (or, where `basis`, of ints
    and ScaledBasis strides); ValueError past the engine's limits (errors.py: depth, 64-bit ints)."""
    if basis:
        check_tree(t, op, what, lambda x: is_int(x) or is_basis(x), "be an int, a ScaledBasis or a tuple of them")
    else:
        check_tree(t, op, what, is_int, "be an int or a tuple of ints")


def is_static(t):
    """True when every integer of the IntTuple (or of a ScaledBasis/ArithmeticTuple) is static."""
    if type(t) is tuple:
        return all(is_static(v) for v in t)
    if isinstance(t, BasisValue):
        return t.is_static()
    return type(t) is not Dyn


def is_static_value(x, value):
    """C++'s ``is_constant<value, X>``: x is a static int equal to value."""
    return type(x) is int and x == value


# The helpers below take a fast path when both operands are static (plain ints), which is the common
# case; the general path applies C++'s rules for dynamic operands.

def _kind(value, a, b=0):
    return _as_dyn(value) if type(a) is Dyn or type(b) is Dyn else value


def _cdiv(a, b):
    if a >= 0 and b > 0:
        return a // b
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def add(a, b):
    if type(a) is int and type(b) is int:
        return a + b
    if isinstance(a, BasisValue) or isinstance(b, BasisValue):
        return _on_basis("add", a, b)
    return _kind(int(a) + int(b), a, b)


def sub(a, b):
    if type(a) is int and type(b) is int:
        return a - b
    if isinstance(a, BasisValue) or isinstance(b, BasisValue):
        return _on_basis("sub", a, b)
    return _kind(int(a) - int(b), a, b)


def mul(a, b):
    if type(a) is int and type(b) is int:
        return a * b
    if isinstance(a, BasisValue) or isinstance(b, BasisValue):
        return _on_basis("mul", a, b)
    if is_static_value(a, 0) or is_static_value(b, 0):
        return 0
    return _kind(int(a) * int(b), a, b)


def div(a, b):
    """C++ integer division (truncates toward zero)."""
    if b == 0:
        raise ValueError(f"div: division of {fmt(a)} by zero")
    if type(a) is int and type(b) is int:
        return _cdiv(a, b)
    if isinstance(a, BasisValue) or isinstance(b, BasisValue):
        return _on_basis("div", a, b)
    if is_static_value(a, 0):
        return 0
    return _kind(_cdiv(int(a), int(b)), a, b)


def mod(a, b):
    """C++ remainder (sign of the dividend)."""
    if b == 0:
        raise ValueError(f"mod: remainder of {fmt(a)} by zero")
    if type(a) is int and type(b) is int:
        return a % b if a >= 0 and b > 0 else a - _cdiv(a, b) * b
    if isinstance(a, BasisValue) or isinstance(b, BasisValue):
        return _on_basis("mod", a, b)
    if is_static_value(b, 1) or is_static_value(b, -1) or is_static_value(a, 0):
        return 0
    return _kind(int(a) - _cdiv(int(a), int(b)) * int(b), a, b)


def imin(a, b):
    if isinstance(a, BasisValue) or isinstance(b, BasisValue):
        return _on_basis("min", a, b)
    return _kind(min(int(a), int(b)), a, b)


def imax(a, b):
    if isinstance(a, BasisValue) or isinstance(b, BasisValue):
        return _on_basis("max", a, b)
    return _kind(max(int(a), int(b)), a, b)


def iabs(a):
    if isinstance(a, BasisValue):
        return _on_basis("abs", a)
    return abs(a) if type(a) is int else _kind(abs(int(a)), a)


def signum(a):
    if isinstance(a, BasisValue):
        return _on_basis("signum", a)
    return _kind((int(a) > 0) - (int(a) < 0), a)


def _fold_div(a, b, op):
    """Divide the modes of tuple a by int b left to right, b shrinking as modes absorb it:
    (4,5,6) by 40 -> (op(4,40), op(5,10), op(6,2))."""
    out = []
    for ai in a:
        out.append(op(ai, b))
        b = op(b, ai)
    return tuple(out)


def ceil_div(a, b):
    """Ceiling division; for tuples: by mode (tuple, tuple) or folded left to right (tuple, int).
    Division by zero is a ValueError (C++ does not compile a static one)."""
    _need_ints((a, b), "ceil_div")
    return _ceil_div(a, b)


def _ceil_div(a, b):
    if is_tuple(a):
        if is_tuple(b):
            if len(a) < len(b):
                raise ValueError(f"ceil_div: {fmt(a)} has fewer modes than {fmt(b)}")
            b = b + (1,) * (len(a) - len(b))
            return tuple(_ceil_div(x, y) for x, y in zip(a, b))
        return _fold_div(a, b, _ceil_div)
    if is_tuple(b):
        return _ceil_div(a, product(b))
    if b == 0:
        raise ValueError(f"ceil_div: division of {fmt(a)} by zero")
    if type(a) is int and type(b) is int and a >= 0 and b > 0:
        return (a + b - 1) // b
    return div(sub(add(a, b), 1), b)


def shape_div(a, b):
    """Divide shape a by b: mode by mode (tuple, tuple), folded (tuple, int), or ceil_div of ints.

    For two static ints CuTe requires one to divide the other (so neither may be zero).
    """
    _need_ints((a, b), "shape_div")
    return _shape_div(a, b)


def _shape_div(a, b):
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise ValueError(f"shape_div: ranks of {fmt(a)} and {fmt(b)} differ")
            return tuple(_shape_div(x, y) for x, y in zip(a, b))
        return _fold_div(a, b, _shape_div)
    if is_tuple(b):
        return _shape_div(a, product(b))
    if b == 0:
        raise ValueError(f"shape_div: division of {fmt(a)} by zero (Divisibility Condition)")
    if is_static(a) and is_static(b) and a % b != 0 and b % a != 0:
        raise ValueError(f"shape_div: neither of {fmt(a)} and {fmt(b)} divides the other (Divisibility Condition)")
    return _ceil_div(a, b)


def rank(t):
    """Number of top-level modes (an int has rank 1)."""
    return len(t) if is_tuple(t) else 1


def depth(t):
    """Nesting depth: 0 for an int, 1 + max depth of the modes for a tuple."""
    if is_tuple(t):
        return 1 + max((depth(v) for v in t), default=0)
    return 0


def product(t):
    """Product of all integers (1 for the empty tuple)."""
    if is_tuple(t):
        return reduce(mul, (product(v) for v in t), 1)
    return t


size = product


def product_each(t):
    """The product of each top-level mode, as a tuple."""
    return tuple(product(v) for v in wrap(t))


def flatten(t):
    """All the integers of t as a flat tuple (an int stays an int), in order, at any depth."""
    if not is_tuple(t):
        return t
    out, i = list(t), 0
    while i < len(out):          # splice each tuple in place of itself: no recursion, so any depth
        if is_tuple(out[i]):
            out[i:i + 1] = out[i]
        else:
            i += 1
    return tuple(out)


def wrap(t):
    return t if is_tuple(t) else (t,)


def unwrap(t):
    """Strip tuples of one element: ((8,),) -> 8."""
    while is_tuple(t) and len(t) == 1:
        t = t[0]
    return t


def congruent(a, b):
    """Same hierarchical profile (the leaves may be ints or ScaledBasis strides)."""
    _need_ints(a, "congruent", basis=True)
    _need_ints(b, "congruent", basis=True)
    return _congruent(a, b)


def _congruent(a, b):
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(_congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def weakly_congruent(a, b):
    """a's profile is a coarsening of b's (partial order a <= b)."""
    _need_ints(a, "weakly_congruent")
    _need_ints(b, "weakly_congruent")
    return _weakly_congruent(a, b)


def _weakly_congruent(a, b):
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(_weakly_congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a)


def compatible(a, b):
    """Shape a is compatible with shape b: same size, and every coordinate of a is a coordinate of b."""
    _need_ints(a, "compatible")
    _need_ints(b, "compatible")
    return _compatible(a, b)


def _compatible(a, b):
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(_compatible(x, y) for x, y in zip(a, b))
    if is_tuple(a):
        return False
    return a == size(b)


def inner_product(a, b):
    """Sum of products of corresponding integers (a and b congruent)."""
    _need_ints(a, "inner_product")
    _need_ints(b, "inner_product")
    if not congruent(a, b):
        raise ValueError(f"inner_product: {quote(a, fmt)} and {quote(b, fmt)} are not congruent")
    return _inner_product(a, b)


def _inner_product(a, b):
    if is_tuple(a):
        return reduce(add, (_inner_product(x, y) for x, y in zip(a, b)), 0)
    return mul(a, b)


def elem_scale(a, b):
    """a scaled mode by mode by the sizes of b (b has a's profile, or is deeper where a has an int)."""
    _need_ints(a, "elem_scale")
    _need_ints(b, "elem_scale")
    if not weakly_congruent(a, b):
        raise ValueError(f"elem_scale: {quote(b, fmt)} does not have the modes of {quote(a, fmt)}")
    return _elem_scale(a, b)


def _elem_scale(a, b):
    if is_tuple(a):
        return tuple(_elem_scale(x, y) for x, y in zip(a, b))
    return mul(a, product(b))


def prefix_product(a, init=1):
    """Exclusive prefix product, with the profile of a: (2,3,4) -> (1,2,6)."""
    _need_ints(a, "prefix_product")
    _need_ints(init, "prefix_product")
    if is_tuple(a):
        out = []
        for v in a:
            out.append(prefix_product(v, init))
            init = mul(init, product(v))
        return tuple(out)
    return init


def crd2idx(coord, shape, stride=None):
    """Map a coordinate to an index.

    With a stride: the layout function, sum of coordinate * stride (an int coordinate into a tuple shape
    is first split colexicographically). Without a stride: the colexicographic 1-D index in shape.
    A coordinate is not checked against the shape's extents (C++ does not check either).
    """
    check_tree(coord, "crd2idx", "coordinate", lambda c: is_int(c) or c is None or _is_underscore(c),
               "be an int, _ or a tuple of them")
    _need_ints(shape, "crd2idx", "shape")
    if stride is None:
        stride = prefix_product(shape)
    elif _need_ints(stride, "crd2idx", "stride", basis=True) or not congruent(shape, stride):
        raise ValueError(f"crd2idx: shape {fmt(shape)} and stride {fmt(stride)} are not congruent")
    return _crd2idx(coord, shape, stride)


def _crd2idx(coord, shape, stride):
    """crd2idx on checked arguments (the layout function itself calls this)."""
    if is_tuple(coord):
        if not is_tuple(shape) or len(coord) != len(shape):
            raise OutOfRange(f"crd2idx: coordinate {fmt(coord)} does not match shape {fmt(shape)}")
        terms = [_crd2idx(c, s, d) for c, s, d in zip(coord, shape, stride)]
        return reduce(add, terms) if terms else 0      # C++'s left fold, no initial 0 (matters for bases)
    if coord is None or _is_underscore(coord):
        coord = 0  # C++'s _ is a static 0: _0 times each stride (_0@m for a basis stride)
    if is_tuple(shape):
        return _crd2idx_split(coord, shape, stride, 0) if shape else 0
    return mul(coord, stride)


def _crd2idx_split(coord, shape, stride, i):
    """An int coordinate into modes i.. of a tuple shape, summed as C++ does: term_i + (the rest); a
    static 0 coordinate takes no divmod (a mode may have a run-time extent 0)."""
    if i == len(shape) - 1:
        return _crd2idx(coord, shape[i], stride[i])
    if is_static_value(coord, 0):
        rest = reduce(add, (_crd2idx(0, s, d) for s, d in zip(shape[i + 1:], stride[i + 1:])), 0)
        return add(_crd2idx(0, shape[i], stride[i]), rest)
    n = product(shape[i])
    if n == 0:
        raise ValueError(f"crd2idx: mode {i} of shape {fmt(shape)} has size 0; a coordinate cannot be split by it")
    return add(_crd2idx(mod(coord, n), shape[i], stride[i]), _crd2idx_split(div(coord, n), shape, stride, i + 1))


def idx2crd(idx, shape, stride=None):
    """Split a 1-D index into the colexicographic coordinate of shape (the natural coordinate).

    Every mode but the last takes idx modulo its size; the last mode takes the rest of the quotient.
    With a stride, each mode's coordinate is (idx / stride) % shape instead (compact layouts only).
    """
    _need_ints(idx, "idx2crd", "index")
    _need_ints(shape, "idx2crd", "shape")
    if stride is not None:
        _need_ints(stride, "idx2crd", "stride")
        if not congruent(shape, stride):
            raise ValueError(f"idx2crd: shape {fmt(shape)} and stride {fmt(stride)} are not congruent")
    return _idx2crd(idx, shape, stride)


def _idx2crd(idx, shape, stride):
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise ValueError(f"idx2crd: index {fmt(idx)} and shape {fmt(shape)} have different ranks")
        return tuple(_idx2crd(i, s, None if stride is None else d)
                     for i, s, d in zip(idx, shape, stride if stride is not None else shape))
    if stride is not None:
        if is_tuple(shape):
            return tuple(_idx2crd(idx, s, d) for s, d in zip(shape, stride))
        if is_static_value(shape, 1):
            return 0
        if stride == 0:
            raise ValueError(f"idx2crd: stride 0 of shape {fmt(shape)} cannot be divided by (C++ divides by it)")
        return mod(div(idx, stride), shape)
    if not is_tuple(shape):
        return idx
    if not shape:
        raise ValueError("idx2crd: the shape () has no modes to split an index into")
    out = []
    for s in shape[:-1]:
        n = product(s)
        if n == 0:
            raise ValueError(f"idx2crd: shape {fmt(shape)} has a mode of size 0; an index cannot be split by it")
        out.append(_idx2crd(mod(idx, n), s, None))
        idx = div(idx, n)
    out.append(_idx2crd(idx, shape[-1], None))
    return tuple(out)


def _is_underscore(x):
    return type(x).__name__ == "Underscore"


def fmt(t):
    """C++ CuTe's text for an IntTuple: static ints as _N, dynamic as N, tuples as (a,b)."""
    if is_tuple(t):
        return "(" + ",".join(fmt(v) for v in t) + ")"
    if isinstance(t, Dyn):
        return str(int(t))
    if is_int(t):
        return f"_{t}"
    if t is None or _is_underscore(t):
        return "_"
    return str(t)
