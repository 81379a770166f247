"""ScaledBasis strides and ArithmeticTuple values: what lets a layout count coordinates instead of offsets.

A layout's strides need not be integers. CuTe also allows a *scaled basis* ``v@m``: the value v in mode
m of a tuple. ``E(0)`` is ``_1@0``, ``E(1)`` is ``_1@1``; ``E(1, 0)`` is mode 0 of mode 1 (CuTe prints the
modes innermost first: ``_1@0@1``); ``E()`` (no mode) prints as its value, ``_1``. With such strides a
layout maps an index to a tuple, an ``ArithmeticTuple``:

    make_identity_layout((4, 8))      (_4,_8):(_1@0,_1@1)      index 9 -> (_1,_2): the coordinate itself

An identity tensor (identity.py) is such a layout over a counting iterator (ArithmeticTupleIterator,
printed ``ArithTuple(_0,_0)``); ``elem_less(coord, shape)`` predicates the accesses out of bounds.

Arithmetic follows CuTe's numeric/arithmetic_tuple.hpp (kinds kept as in int_tuple):
``n * v@m == (n*v)@m``; a sum of bases is an ArithmeticTuple (``_1@0 + _1@1 == (_1,_1)``); tuples add
mode by mode, the shorter padded with ``_0``; only a static ``_0`` adds to a basis or a tuple.
"""

from .errors import MAX_RANK, check_depth, check_tree, quote
from .int_tuple import BasisValue, add, fmt, iabs, is_int, is_static, is_tuple, mul

__all__ = ["ScaledBasis", "E", "ArithmeticTuple", "Iterator", "ArithmeticTupleIterator", "as_arithmetic_tuple",
           "make_basis_like", "elem_less"]


class ScaledBasis(BasisValue):
    """``value@modes``: the integer `value` at the position `modes` (outermost first) of a tuple.

    Post: str() is CuTe's print: the value, then each mode innermost first (``E(1, 0)`` -> ``_1@0@1``).
    """

    __slots__ = ("value", "modes")

    def __init__(self, value, modes=()):
        if not is_int(value):
            raise TypeError(f"ScaledBasis: the value must be an int, got {quote(value)} ({type(value).__name__})")
        check_tree(value, "ScaledBasis", "the value", is_int, "be an int")
        self.value, self.modes = value, _modes(modes, "ScaledBasis")

    def is_static(self):
        return is_static(self.value)

    def __eq__(self, other):
        return isinstance(other, ScaledBasis) and self.modes == other.modes and self.value == other.value

    def __hash__(self):
        return hash((int(self.value), self.modes))

    def __str__(self):
        return fmt(self.value) + "".join(f"@{m}" for m in reversed(self.modes))

    def __repr__(self):
        return f"ScaledBasis({self})"

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __mul__(self, other):
        return mul(self, other)

    def __rmul__(self, other):
        return mul(other, self)

    @classmethod
    def arith(cls, op, a, b):
        return _arith(op, a, b)


def _modes(modes, op):
    """The modes of a basis element as a tuple of mode indices: ints in 0..MAX_RANK-1, at most MAX_DEPTH."""
    if not isinstance(modes, (tuple, list)):
        raise TypeError(f"{op}: modes must be a tuple of ints >= 0, got {quote(modes)}")
    modes = tuple(modes)
    check_depth(modes, op, "modes")
    if not all(type(m) is int and 0 <= m < MAX_RANK for m in modes) or len(modes) > MAX_RANK:
        raise TypeError(f"{op}: modes must be ints in 0..{MAX_RANK - 1}, got {quote(modes)}")
    return modes


def E(*modes):
    """The unit basis element of mode `modes` (outermost first): ``E(1)`` is ``_1@1``, ``E()`` is ``_1``."""
    return ScaledBasis(1, _modes(modes, "E"))


class ArithmeticTuple(BasisValue, tuple):
    """A tuple that adds mode by mode (CuTe's ArithmeticTuple): the values of a layout with basis strides.

    Equal to the plain tuple of the same values; str() is CuTe's print, e.g. ``(_1,2)``.
    """

    __slots__ = ()

    def is_static(self):
        return all(is_static(v) for v in self)

    def __str__(self):
        return "(" + ",".join(fmt(v) for v in self) + ")"

    def __repr__(self):
        return f"ArithmeticTuple{self}"

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    @classmethod
    def arith(cls, op, a, b):
        return _arith(op, a, b)


def as_arithmetic_tuple(x):
    """x as an ArithmeticTuple: a tuple element by element; ``v@(m, ...)`` as ``(_0, ..., _0, v@(...))``
    with m zeros in front; a basis without modes as its value; an int stays an int."""
    check_depth(x, "as_arithmetic_tuple", "the value")
    check_tree(x, "as_arithmetic_tuple", "the value", lambda v: is_int(v) or isinstance(v, BasisValue),
               "be an int, a ScaledBasis or a tuple of them")
    return _as_atuple(x)


def _as_atuple(x):
    if isinstance(x, ScaledBasis):
        if not x.modes:
            return x.value
        inner = _as_atuple(ScaledBasis(x.value, x.modes[1:]))
        return ArithmeticTuple((0,) * x.modes[0] + (inner,))
    if isinstance(x, tuple):
        return ArithmeticTuple(_as_atuple(v) for v in x)
    return x


def _is_atuple(x):
    return isinstance(x, tuple)


def _add(a, b):
    if _is_atuple(a) and _is_atuple(b):
        n = max(len(a), len(b))
        a, b = tuple(a) + (0,) * (n - len(a)), tuple(b) + (0,) * (n - len(b))
        return ArithmeticTuple(add(x, y) for x, y in zip(a, b))
    if isinstance(a, ScaledBasis) and isinstance(b, ScaledBasis):
        return add(_as_atuple(a), _as_atuple(b))
    if isinstance(a, ScaledBasis) and _is_atuple(b) or _is_atuple(a) and isinstance(b, ScaledBasis):
        return add(_as_atuple(a), _as_atuple(b))
    # one side an int: only a static int adds to a basis (as its value when it has no modes; else only _0),
    # and only _0 to a tuple
    x, n = (b, a) if is_int(a) else (a, b)
    if type(n) is int and isinstance(x, ScaledBasis) and not x.modes:
        return add(n, x.value)
    if type(n) is int and n == 0:
        return x
    raise TypeError(f"add: CuTe adds only a static _0 to {x} (ScaledBasis/ArithmeticTuple), got {fmt(n)}")


def _arith(op, a, b):
    """op ('add', 'mul', 'abs') of a and b, at least one of them a ScaledBasis or ArithmeticTuple."""
    if op == "add":
        return _add(a, b)
    if op == "mul":
        if isinstance(a, ScaledBasis) and is_int(b):
            return ScaledBasis(mul(a.value, b), a.modes)
        if isinstance(b, ScaledBasis) and is_int(a):
            return ScaledBasis(mul(a, b.value), b.modes)
    if op == "abs" and isinstance(a, ScaledBasis):
        return ScaledBasis(iabs(a.value), a.modes)
    what = f"{op}({a}, {b})" if b is not None else f"{op}({a})"
    raise TypeError(f"{what}: CuTe defines no such operation on ScaledBasis/ArithmeticTuple values")


class Iterator:
    """An engine whose elements are computed, not stored (C++: an iterator that is not a pointer):
    ``it + offset`` is the iterator moved by offset, ``it[offset]`` the element there. A Tensor over one
    (tensor.py) reads element c as ``it[layout(c)]``. Kinds: ArithmeticTupleIterator (coordinates),
    gmma.DescriptorIterator (wgmma descriptors)."""

    __slots__ = ()


class ArithmeticTupleIterator(Iterator):
    """CuTe's counting iterator: dereferences to its coordinate; ``it + offset`` moves the coordinate.

    Post: str() is CuTe's print, ``ArithTuple`` followed by the coordinate (``ArithTuple(_0,_0)``).
    """

    __slots__ = ("coord",)

    def __init__(self, coord):
        self.coord = coord

    def __add__(self, offset):
        check_tree(offset, "ArithmeticTupleIterator", "the offset", lambda v: is_int(v) or isinstance(v, BasisValue),
                   "be an int, a ScaledBasis or an ArithmeticTuple")
        if type(offset) is tuple:
            raise TypeError(f"ArithmeticTupleIterator: a tuple offset must be an ArithmeticTuple "
                            f"(as_arithmetic_tuple), got {quote(offset)}")
        return ArithmeticTupleIterator(add(self.coord, offset))

    def __getitem__(self, offset):
        return add(self.coord, offset)

    def __eq__(self, other):
        return isinstance(other, ArithmeticTupleIterator) and self.coord == other.coord

    def __hash__(self):
        return hash(self.coord)

    def __str__(self):
        return "ArithTuple" + (str(self.coord) if isinstance(self.coord, tuple) else fmt(self.coord))

    def __repr__(self):
        return f"ArithmeticTupleIterator({self})"


def make_basis_like(shape, _modes=()):
    """The unit basis elements of shape's positions: ``((2,3),4)`` -> ``((E(0,0),E(0,1)),E(1))``."""
    if not _modes:
        check_tree(shape, "make_basis_like", "shape", is_int, "hold ints")
    if is_tuple(shape):
        return tuple(make_basis_like(s, _modes + (i,)) for i, s in enumerate(shape))
    if not is_int(shape):
        raise TypeError(f"make_basis_like: shape must hold ints, got {shape!r} ({type(shape).__name__})")
    return ScaledBasis(1, _modes)


def elem_less(a, b):
    """CuTe's elem_less: every element of a is less than the corresponding element of b (a tuple longer
    than b is not less; ints compare as ints). The predicate of ``elem_less(tCcC(i), shape(C))``."""
    check_depth(a, "elem_less", "a")
    check_depth(b, "elem_less", "b")
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) > len(b):
            return False
        return all(elem_less(x, y) for x, y in zip(a, b))
    if is_int(a) and is_int(b):
        return int(a) < int(b)
    raise TypeError(f"elem_less: expected two ints or two tuples, got {fmt(a)} and {fmt(b)}")

