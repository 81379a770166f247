"""Layout: a function from coordinates to offsets, given by a shape and a stride; and its algebra.

Every operation is a free function with CuTe's name and CuTe's semantics (C++ CuTe is the ground truth:
same results, same printed text). Each docstring states the operation's post-conditions.
"""

from .int_tuple import (
    is_basis, is_int, is_tuple, is_static, is_static_value, add, sub, mul, div, mod, imin, iabs, signum,
    _ceil_div, product, flatten as flatten_tuple, wrap, unwrap, crd2idx, idx2crd, fmt,
)
from . import int_tuple
from .errors import OutOfRange, check_tree, quote
from .basis import _as_atuple
from .swizzle import MixedBits, Swizzle, mixed_xor, sliced_swizzle_strides, swizzle_bits, to_mixed_bits

__all__ = [
    "Layout", "ComposedLayout", "Underscore", "_", "LayoutLeft", "LayoutRight",
    "make_layout", "make_ordered_layout", "make_layout_like", "make_fragment_like",
    "size", "cosize", "coshape", "coprofile", "rank", "depth", "shape", "stride", "get", "append", "prepend",
    "group", "flatten",
    "select", "take", "coalesce", "filter", "composition", "complement", "right_inverse", "left_inverse",
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
    "max_common_vector", "max_common_layout", "tile_to_shape", "upcast", "downcast",
    "slice_and_offset", "dice", "get_flat_coord", "crd2idx", "idx2crd",
]


class Underscore:
    """CuTe's ``_``: "keep this mode" in a slice, "leave this mode alone" in a tiler."""

    __slots__ = ()

    def __repr__(self):
        return "_"


_ = Underscore()


def _is_free(c):
    return c is None or isinstance(c, Underscore)


class LayoutLeft:
    """Compact column-major: the leftmost mode has stride 1 (CuTe's default)."""


class LayoutRight:
    """Compact row-major: the rightmost mode has stride 1."""


# --------------------------------------------------------------------------------------------------
# The Layout type
# --------------------------------------------------------------------------------------------------

def _check_shape(s, what, op="Layout"):
    """TypeError naming `op` unless s is an int or a (nested) tuple of ints (ValueError past the limits
    of errors.py)."""
    check_tree(s, op, what, is_int, "hold ints")


def _check_stride(d, op="Layout"):
    """TypeError naming `op` unless d is an int, a ScaledBasis or a (nested) tuple of them."""
    check_tree(d, op, "stride", lambda x: is_int(x) or is_basis(x),
               "hold ints or ScaledBasis (E(0), ...)")


def _need_int_strides(layout, op):
    """TypeError naming `op` when the layout has ScaledBasis strides (op is defined on int strides only)."""
    if any(is_basis(d) for d in wrap(flatten_tuple(layout.stride))):
        raise TypeError(f"{op}: {layout} has ScaledBasis strides; {op} needs integer strides")


def _need_layout(x, op, composed=False):
    """TypeError naming `op` unless x is a Layout (or, where `composed`, a swizzled ComposedLayout)."""
    if not (isinstance(x, Layout) or (composed and isinstance(x, ComposedLayout))):
        kind = "a Layout or ComposedLayout" if composed else "a Layout"
        raise TypeError(f"{op}: expected {kind}, got {quote(x)} ({type(x).__name__})")


def _need_coord(c, op, what="coordinate"):
    """TypeError naming `op` unless c is an int, ``_`` (or None) or a (nested) tuple of them."""
    check_tree(c, op, what, lambda x: is_int(x) or _is_free(x), "hold ints or _")


def _need_int(x, op, what, low=None):
    """TypeError naming `op` unless x is an int (ValueError when it is below `low`)."""
    if not is_int(x):
        raise TypeError(f"{op}: {what} must be an int, got {quote(x)} ({type(x).__name__})")
    check_tree(x, op, what, is_int, "be an int")
    if low is not None and x < low:
        raise ValueError(f"{op}: {what} must be at least {low}, got {x}")


class Layout:
    """A layout ``shape:stride``: callable on a coordinate, returns an offset.

    ``Layout((4, 8))`` is compact column-major, ``(_4,_8):(_1,_4)``; ``Layout((4, 8), (8, 1))`` row-major.
    Accepts an int, a natural (flat) coordinate or a hierarchical coordinate; ``_`` or ``None`` in a
    coordinate slices (see ``slice_and_offset``). As in C++, values are not checked against the shape: past
    its size a layout goes on along its last mode (``Layout(4)(6) == 6``).
    """

    __slots__ = ("shape", "stride")

    def __init__(self, shape, stride=None):
        if isinstance(shape, list) or isinstance(stride, list):
            raise TypeError("Layout: use tuples, not lists, for shape and stride")
        _check_shape(shape, "shape")
        for s in flatten_tuple(wrap(shape)):
            if s <= 0:
                raise ValueError(f"Layout: shape {quote(shape, fmt)} has a non-positive extent {s}")
        if stride is None:
            stride = _compact(shape, LayoutLeft)
        _check_stride(stride)
        if not int_tuple._congruent(shape, stride):
            raise ValueError(f"Layout: shape {quote(shape, fmt)} and stride {quote(stride, fmt)} are not congruent")
        self.shape = shape
        self.stride = stride

    @classmethod
    def _make(cls, shape, stride):
        """Trusted constructor for results of the algebra (no validation)."""
        obj = object.__new__(cls)
        obj.shape = shape
        obj.stride = stride
        return obj

    def __call__(self, *coord):
        c = coord[0] if len(coord) == 1 else coord
        if _has_free(c):
            return slice_and_offset(c, self)[0]
        _check_coord(c, self.shape, self)
        value = int_tuple._crd2idx(c, self.shape, self.stride)
        return int(value) if is_int(value) else value   # basis strides: an ArithmeticTuple or ScaledBasis

    def __getitem__(self, key):
        if is_tuple(key) and _has_free(key):
            return self(*key)
        if is_tuple(key):
            return get(self, *key)
        return get(self, key)

    def __iter__(self):
        raise TypeError("Layout is not iterable: use rank(L) and L[i] for modes, or L(i) for offsets")

    def __eq__(self, other):
        return isinstance(other, Layout) and self.shape == other.shape and self.stride == other.stride

    def __hash__(self):
        return hash((self.shape, self.stride))

    def __str__(self):
        return f"{fmt(self.shape)}:{fmt(self.stride)}"

    def __repr__(self):
        return f"Layout({self})"


class ComposedLayout:
    """``layout_a o offset o layout_b``: coordinate c -> layout_a(offset + layout_b(c)).

    Made by ``composition(Swizzle(...), layout)``; the algebra (composition, divides, products,
    slicing) acts on layout_b and keeps the swizzle, as in CuTe.
    """

    __slots__ = ("layout_a", "offset", "layout_b")

    def __init__(self, layout_a, offset, layout_b):
        if not isinstance(layout_b, Layout):
            raise TypeError(f"ComposedLayout: the inner layout must be a Layout, got {layout_b!r}")
        self.layout_a, self.offset, self.layout_b = layout_a, offset, layout_b

    def with_inner(self, layout_b, offset=None):
        """The same swizzle (and offset, unless given) over another inner layout."""
        if not isinstance(layout_b, Layout):
            return layout_b  # e.g. an int from size(); nothing to wrap
        return ComposedLayout(self.layout_a, self.offset if offset is None else offset, layout_b)

    @property
    def shape(self):
        return self.layout_b.shape

    @property
    def stride(self):
        return self.layout_b.stride

    def __call__(self, *coord):
        inner = self.layout_b(*coord)
        if isinstance(inner, Layout):
            c = coord[0] if len(coord) == 1 else coord
            return slice_and_offset(c, self)[0]
        return int(self.layout_a(add(self.offset, inner)))

    def __getitem__(self, key):
        return get(self, *key) if isinstance(key, tuple) else get(self, key)

    def __eq__(self, other):
        return (isinstance(other, ComposedLayout) and self.layout_a == other.layout_a
                and self.offset == other.offset and self.layout_b == other.layout_b)

    def __hash__(self):
        return hash((self.layout_a, self.offset, self.layout_b))

    def __str__(self):
        off = fmt(self.offset) if is_int(self.offset) and not isinstance(self.offset, MixedBits) else str(self.offset)
        return f"{self.layout_a} o {off} o {self.layout_b}"

    def __repr__(self):
        return f"ComposedLayout({self})"


def _has_free(c):
    """Whether coordinate c holds ``_`` (or None) anywhere; without recursion, as c may nest deep."""
    stack = [c]
    while stack:
        x = stack.pop()
        if is_tuple(x):
            stack.extend(x)
        elif _is_free(x):
            return True
    return False


def _check_coord(c, s, layout):
    """Refuse what C++ does not compile: a coordinate with leaves other than ints, ints beyond 64 bits, or
    tuples that do not match the shape's (a tuple where the shape has an int: "Invalid parameters"; another
    rank: "Mismatched Ranks"). The values are not checked, as in C++: an int is split by the sizes of the
    modes before the last, which takes the rest, so a layout extends past its size along its last mode
    (``_4:_1`` at 6 is 6; ``(_4,_3):(_3,_1)`` at 12 is 3, at -1 is -3)."""
    check_tree(c, str(layout), "coordinate", is_int, "hold ints")
    _check_profile(c, s, layout, "coordinate")


def _check_profile(c, s, layout, what):
    """OutOfRange unless coordinate c has the tuples of shape s where it has tuples (C++'s static_asserts)."""
    if is_tuple(c):
        if not is_tuple(s) or len(c) != len(s):
            raise OutOfRange(f"{layout}: {what} {quote(c, fmt)} does not match the shape {fmt(s)}")
        for ci, si in zip(c, s):
            _check_profile(ci, si, layout, what)


def _compact(shape, major, current=1):
    """Compact strides for shape, starting at `current`; static size-1 modes get stride _0."""
    if is_tuple(shape):
        order = range(len(shape)) if major is LayoutLeft else reversed(range(len(shape)))
        out = [None] * len(shape)
        for i in order:
            out[i], current = _compact_step(shape[i], major, current)
        return tuple(out)
    return _compact_step(shape, major, current)[0]


def _compact_step(s, major, current):
    if is_tuple(s):
        strides = _compact(s, major, current)
        return strides, mul(current, product(s))
    if is_static_value(s, 1):
        return 0, current
    return current, mul(current, s)


def make_layout(*args):
    """Build a layout: ``make_layout(shape)``, ``make_layout(shape, stride)``,
    ``make_layout(shape, LayoutLeft | LayoutRight)``, or ``make_layout(L0, L1, ...)`` (layouts as modes).
    """
    if args and all(isinstance(a, Layout) for a in args):
        return Layout._make(tuple(a.shape for a in args), tuple(a.stride for a in args))
    if len(args) in (1, 2):
        _check_shape(args[0], "shape", "make_layout")
        shp, major = (args[0], None) if len(args) == 1 else args
        if major is LayoutLeft or major is LayoutRight:
            return Layout(shp, _compact(shp, major))
        if major is not None:
            _check_stride(major, "make_layout")
        return Layout(shp, major)
    raise TypeError(f"make_layout: expected (shape), (shape, stride) or layouts, got {args!r}")


def make_ordered_layout(shape, order):
    """Compact layout whose modes are laid out in the given order (order[i] = rank of mode i).

    Dynamic entries of `order` count as larger than every static one, ordered left to right (C++).
    Post: modes with smaller order get smaller strides; equal orders share a stride; compact when the
          orders are distinct (cosize == size).
    """
    if order is LayoutLeft or order is LayoutRight:
        return make_layout(shape, order)
    _check_shape(shape, "shape", "make_ordered_layout")
    _check_shape(order, "order", "make_ordered_layout")
    return Layout(shape, _ordered_strides(shape, order, "make_ordered_layout"))


def _ordered_strides(shape, order, name):
    """C++ compact_order(shape, order): compact strides for shape, modes visited by increasing order.
    A dynamic order at flat position i becomes max(0, static orders) + 1 + i."""
    ref_shape = flatten_tuple(wrap(_product_like(shape, order, name)))
    flat_order = flatten_tuple(wrap(order))
    top = max([0] + [o for o in flat_order if is_static(o)])
    ref_order = tuple(o if is_static(o) else top + 1 + i for i, o in enumerate(flat_order))
    return _compact_order(shape, _unflatten(ref_order, order), ref_shape, ref_order)


def _unflatten(values, like):
    """The integers `values` (flat) arranged in the profile of `like`."""
    it = iter(values)

    def go(t):
        return tuple(go(v) for v in t) if is_tuple(t) else next(it)
    return go(like)


def _product_like(shape, guide, name):
    if is_tuple(guide):
        if not is_tuple(shape) or len(shape) != len(guide):
            raise ValueError(f"{name}: order {fmt(guide)} does not match shape {fmt(shape)}")
        return tuple(_product_like(s, g, name) for s, g in zip(shape, guide))
    return product(shape)


def _compact_order(shape, order, ref_shape, ref_order):
    if is_tuple(order):
        return tuple(_compact_order(s, o, ref_shape, ref_order) for s, o in zip(shape, order))
    start = 1
    for s, o in zip(ref_shape, ref_order):
        if o < order:
            start = mul(start, s)
    return _compact(shape, LayoutLeft, start)


def make_layout_like(layout):
    """A compact layout of layout's shape whose strides follow the order of layout's strides (C++).

    Static-0 strides stay _0 (the mode is broadcast, no storage); dynamic strides count as larger than
    every static one, in order from left to right.
    Post: shape(result) == shape(layout); cosize(result) == size(filter(layout)) for distinct strides.
    """
    if not isinstance(layout, Layout):
        raise TypeError(f"make_layout_like: expected a Layout, got {layout!r}")
    kept = _filter_zeros(layout.shape, layout.stride)
    return Layout._make(layout.shape, _ordered_strides(kept, layout.stride, "make_layout_like"))


def make_fragment_like(layout):
    """make_layout_like, except that mode 0 is always compact column-major (static-0 strides kept), as an
    MMA or copy atom's values want it; a shape, a rank-1 layout or one of dynamic shape gives the
    compact column-major layout of its shape. A swizzled layout gives its inner layout's fragment.

    Post: shape(result) == shape(layout) (as a tiled_product's ((mode 0), rest...)).
    """
    if hasattr(layout, "layout_b"):
        return make_fragment_like(layout.layout_b)
    if not isinstance(layout, Layout):
        _check_shape(layout, "shape", "make_fragment_like")
        return make_layout(layout)
    if rank(layout) > 1 and is_static(layout.shape):
        s0, d0 = layout.shape[0], layout.stride[0]
        mode0 = Layout._make(s0, _compact(_filter_zeros(s0, d0), LayoutLeft))
        return tiled_product(mode0, make_ordered_layout(layout.shape[1:], layout.stride[1:]))
    return make_layout(layout.shape)


# --------------------------------------------------------------------------------------------------
# Accessors
# --------------------------------------------------------------------------------------------------

def _shape_of(x, op="size"):
    """The shape of a Layout, ComposedLayout, Tensor, TiledMMA or TiledCopy; a shape (an IntTuple) is its
    own shape; anything else is a TypeError naming `op`."""
    if isinstance(x, Layout) or hasattr(x, "layout_b"):
        return x.shape
    if hasattr(x, "layout"):
        return x.layout.shape
    if hasattr(x, "thr_layout"):  # TiledMMA / TiledCopy: their threads (C++ size(tiled_mma))
        return x.thr_layout.shape
    _check_shape(x, "shape", op)
    return x


def size(x, *modes):
    """Number of coordinates: the product of the shape (of mode `modes`, if given)."""
    s = _shape_of(x, "size")
    for m in modes:
        s = _get_tuple(s, m)
    return product(s)


def cosize(layout, *modes):
    """One past the largest offset: layout(size - 1) + 1 for positive strides; size(coshape(layout))."""
    _need_layout(layout, "cosize", composed=True)
    if hasattr(layout, "layout_b"):
        return cosize(layout.layout_b, *modes)
    return product(coshape(get(layout, *modes) if modes else layout))


def coshape(layout):
    """The codomain's shape: the smallest C with elem_less(layout(c), C) for every coordinate c.

    For integer strides one int, 1 + sum of (extent - 1) * |stride|; for ScaledBasis strides that sum
    taken in each mode of the values (``(_4,_8):(_1@0,_1@1)`` -> ``(_4,_8)``).
    Post: product(coshape(layout)) == cosize(layout).
    """
    _need_layout(layout, "coshape")
    total = 0
    for s, d in zip(flatten_tuple(wrap(layout.shape)), flatten_tuple(wrap(layout.stride))):
        total = add(total, mul(sub(s, 1), iabs(d)))

    def plus_one(t):
        return tuple(plus_one(v) for v in t) if isinstance(t, tuple) else add(t, 1)
    return plus_one(_as_atuple(total))


def coprofile(layout):
    """The profile of the layout's values, as _0s: ``_0`` for integer strides, a tuple for ScaledBasis
    strides (``((_0,_0),_0)`` for the identity layout of ``((2,3),4)``).

    Post: coprofile(layout) has the profile of layout(i) for every i.
    """
    _need_layout(layout, "coprofile")
    total = 0
    for d in flatten_tuple(wrap(layout.stride)):
        total = add(total, d)

    def zeros(t):
        return tuple(zeros(v) for v in t) if isinstance(t, tuple) else 0
    return zeros(_as_atuple(total))


def rank(x, *modes):
    """Number of top-level modes."""
    s = _shape_of(x, "rank")
    for m in modes:
        s = _get_tuple(s, m)
    return int_tuple.rank(s)


def depth(x, *modes):
    """Nesting depth of the shape (0 for an int shape)."""
    s = _shape_of(x, "depth")
    for m in modes:
        s = _get_tuple(s, m)
    return int_tuple.depth(s)


def shape(x, *modes):
    """The shape (of mode `modes`, if given)."""
    s = _shape_of(x, "shape")
    for m in modes:
        s = _get_tuple(s, m)
    return s


def stride(layout, *modes):
    """The stride (of mode `modes`, if given)."""
    _need_layout(layout, "stride")
    d = layout.stride
    for m in modes:
        d = _get_tuple(d, m)
    return d


def _get_tuple(t, i):
    if not is_int(i):
        raise TypeError(f"get: mode index must be an int, got {i!r}")
    if is_tuple(t):
        if not -len(t) <= i < len(t):
            raise OutOfRange(f"get: mode {i} out of range for {fmt(t)} (rank {len(t)})")
        return t[i]
    if i != 0:
        raise OutOfRange(f"get: mode {i} out of range for {fmt(t)} (rank 1)")
    return t


def get(layout, *modes):
    """The sub-layout of mode `modes` (nested indices walk into the hierarchy)."""
    _need_layout(layout, "get", composed=True)
    if hasattr(layout, "layout_b"):
        return layout.with_inner(get(layout.layout_b, *modes))
    s, d = layout.shape, layout.stride
    for m in modes:
        s, d = _get_tuple(s, m), _get_tuple(d, m)
    return Layout._make(s, d)


def take(layout, begin, end):
    """Modes [begin, end) as a layout."""
    _need_layout(layout, "take")
    _need_int(begin, "take", "begin")
    _need_int(end, "take", "end")
    s, d = wrap(layout.shape), wrap(layout.stride)
    if not 0 <= begin < end <= len(s):
        raise OutOfRange(f"take: range [{begin},{end}) out of bounds for rank {len(s)}")
    return Layout._make(s[begin:end], d[begin:end])


def select(layout, *modes):
    """The layout made of the given modes, in the given order."""
    _need_layout(layout, "select")
    for m in modes:
        _need_int(m, "select", "a mode")
    s, d = layout.shape, layout.stride
    return Layout._make(tuple(_get_tuple(s, m) for m in modes), tuple(_get_tuple(d, m) for m in modes))


def flatten(layout):
    """Same function, shape and stride flattened (depth <= 1)."""
    _need_layout(layout, "flatten")
    return Layout._make(flatten_tuple(layout.shape), flatten_tuple(layout.stride))


def _append_tuple(t, x, n=None):
    if n is None:
        return (t + (x,)) if is_tuple(t) else (t, x)
    r = int_tuple.rank(t)
    if n < r:
        raise ValueError(f"append: target rank {n} is less than the rank {r} of {fmt(t)}")
    if n == r:
        return t
    return wrap(t) + (x,) * (n - r)


def _prepend_tuple(t, x, n=None):
    if n is None:
        return ((x,) + t) if is_tuple(t) else (x, t)
    r = int_tuple.rank(t)
    if n < r:
        raise ValueError(f"prepend: target rank {n} is less than the rank {r} of {fmt(t)}")
    if n == r:
        return t
    return (x,) * (n - r) + wrap(t)


def _pad_args(layout, x, n, op):
    """The mode x (default ``_1:_0``) that append/prepend adds, after checking every argument."""
    _need_layout(layout, op)
    if x is None:
        x = Layout._make(1, 0)
    _need_layout(x, op)
    if n is not None:
        _need_int(n, op, "n (the target rank)", low=0)
    return x


def append(layout, x=None, n=None):
    """Append mode x (a Layout, default ``_1:_0``); with n, pad with x up to rank n."""
    x = _pad_args(layout, x, n, "append")
    return Layout._make(_append_tuple(layout.shape, x.shape, n), _append_tuple(layout.stride, x.stride, n))


def prepend(layout, x=None, n=None):
    """Prepend mode x (a Layout, default ``_1:_0``); with n, pad with x in front up to rank n."""
    x = _pad_args(layout, x, n, "prepend")
    return Layout._make(_prepend_tuple(layout.shape, x.shape, n), _prepend_tuple(layout.stride, x.stride, n))


def group(layout, begin, end=None):
    """Group modes [begin, end) into one mode. Post: same function; rank drops by end - begin - 1."""
    _need_layout(layout, "group")
    _need_int(begin, "group", "begin")
    if end is not None:
        _need_int(end, "group", "end")
    s, d = wrap(layout.shape), wrap(layout.stride)
    end = len(s) if end is None or end == -1 else end
    if not 0 <= begin <= end <= len(s):
        raise OutOfRange(f"group: range [{begin},{end}) out of bounds for rank {len(s)}")
    mid_s = (s[begin:end],) if begin < end else ()
    mid_d = (d[begin:end],) if begin < end else ()
    return Layout._make(s[:begin] + mid_s + s[end:], d[:begin] + mid_d + d[end:])


# --------------------------------------------------------------------------------------------------
# Slicing
# --------------------------------------------------------------------------------------------------

def _slice(c, t):
    """The sub-trees of t at the free positions of c, in order (CuTe's slice)."""
    if is_tuple(c):
        if not is_tuple(t) or len(c) != len(t):
            raise OutOfRange(f"slice: coordinate {quote(c, fmt)} does not match the rank of {fmt(t)}")
        out = ()
        for ci, ti in zip(c, t):
            if is_tuple(ci):
                out += _slice(ci, ti)
            elif _is_free(ci):
                out += (ti,)
        return out
    if _is_free(c):
        return t
    return ()


def slice_and_offset(coord, layout):
    """Slice `layout` at a coordinate holding ``_``: the sub-layout of the free modes and the offset of
    the fixed ones. Post: layout(c) == offset + sub(c restricted to the free modes).

    As in C++, a swizzled layout folds into a plain one unless its free modes reach both bits of a
    swizzled pair (a yyy bit and the zzz bit it flips); run-time (dyn) coordinates and offsets make the
    strides and offset they touch run-time ones. Fixing every mode of a swizzled layout is refused.
    C++ XORs a swizzled layout's own offset with the fixed coordinates' bits and assumes it shares no
    bit with the free modes' values, so where the offset adds with a carry the post-condition fails in
    C++ (Sw<2,3,3> o _24 o (_4,_64):(_64,_1) at (_,25): offset 1 + slice(0) = 1, the layout there is 49);
    cutelite does the same.
    """
    _need_layout(layout, "slice_and_offset", composed=True)
    _need_coord(coord, "slice_and_offset")
    if hasattr(layout, "layout_b"):
        if _has_fixed(coord) and isinstance(layout.layout_a, Swizzle):
            _check_profile(coord, layout.shape, layout, "slice coordinate")
            if not _has_free(coord):
                raise ValueError(f"slice_and_offset: {quote(coord, fmt)} fixes every mode of {layout}, leaving no "
                                 "layout (C++ does not compile it); evaluate the layout there instead")
            return _slice_swizzled(coord, layout)
        sub_layout, off = slice_and_offset(coord, layout.layout_b)
        return layout.with_inner(sub_layout, add(layout.offset, off)), 0
    _check_profile(coord, layout.shape, layout, "slice coordinate")
    sub_layout = Layout._make(_slice(coord, layout.shape), _slice(coord, layout.stride))
    return sub_layout, int_tuple._crd2idx(coord, layout.shape, layout.stride)


def dice(proj, x):
    """The modes of x where the projection `proj` is not ``_``: the complement of slicing, flattened as
    C++'s dice does. x is a tuple, an int or a Layout. ``dice((1, _, 1), (32, 64, 4)) == (32, 4)``,
    ``dice(((1, _), 1), ((a, b), c)) == (a, c)``.
    """
    _need_coord(proj, "dice", "proj")
    if isinstance(x, Layout):
        return Layout._make(dice(proj, x.shape), dice(proj, x.stride))
    _need_coord(x, "dice", "x")
    if not is_tuple(proj):
        return () if _is_free(proj) else x
    if not is_tuple(x) or len(x) != len(proj):
        raise ValueError(f"dice: projection {fmt(proj)} and {fmt(x)} have different ranks")

    def kept(p, xi):
        if is_tuple(p):
            if not is_tuple(xi) or len(xi) != len(p):
                raise ValueError(f"dice: projection {fmt(proj)} and {fmt(x)} do not match")
            return sum((kept(pj, xj) for pj, xj in zip(p, xi)), ())
        return () if _is_free(p) else (xi,)
    return kept(proj, x)


def get_flat_coord(layout, idx):
    """The coordinate, one int per top-level mode, at which `layout` takes the value idx (C++
    Layout::get_flat_coord): each leaf is (idx / stride) % shape, each mode's coordinate then its 1-D
    column-major index. A run-time idx (dyn) gives run-time coordinates, except in size-1 modes (_0).
    Post: layout(result) == idx for an idx in the layout's image (layout injective there).
    """
    _need_layout(layout, "get_flat_coord")
    _need_int(idx, "get_flat_coord", "idx")

    def hier(s, d):
        if is_tuple(s):
            return tuple(hier(si, di) for si, di in zip(s, d))
        return 0 if is_static_value(s, 1) or is_static_value(d, 0) else mod(div(idx, d), s)
    h = hier(layout.shape, layout.stride)
    if not is_tuple(layout.shape):
        return h
    return tuple(crd2idx(c, s) for c, s in zip(h, layout.shape))


def _slice_swizzled(coord, layout):
    """slice_and_offset for Swizzle o offset o L with some coordinates fixed (C++ swizzle_layout.hpp).

    Post: for every coordinate c of the free modes, result_layout(c) + result_offset ==
          layout(coord with its free modes set to c), where layout's offset adds without a carry.
    """
    sw, inner = layout.layout_a, layout.layout_b
    B, M, S = sw.bits, sw.base, abs(sw.shift)
    shp = (1 << M, 1 << B, 1 << (S - B), 1 << B, 1)
    anti_zy = Layout(shp, (1, 0, 1 << (M + B), 0, 1 << (M + B + S)))
    only_zy = Layout(shp, (0, 1 << M, 0, 1 << (M + S), 0))
    sliced = Layout._make(_slice(coord, inner.shape), _slice(coord, inner.stride))
    diced = dice(coord, inner)
    diced_coord = dice(coord, coord)
    diced_zy = composition(only_zy, diced)
    offset_only_zy = mixed_xor(layout.offset, to_mixed_bits(diced_zy.shape, diced_zy.stride, diced_coord))
    diced_anti = composition(anti_zy, diced)
    offset_anti_zy = int_tuple._crd2idx(diced_coord, diced_anti.shape, diced_anti.stride)   # keeps Dyn
    sliced_zy = composition(only_zy, sliced)
    active = sliced_zy(size(sliced_zy) - 1)
    if active & ~sw(active):      # the sliced layout reaches a Y bit and its Z bit: keep the swizzle
        return ComposedLayout(sw, offset_only_zy, sliced), offset_anti_zy
    lo, hi = sliced_swizzle_strides(sw, offset_only_zy)
    field = (2,) * B if B > 1 else 2
    folded = Layout((1 << M, field, 1 << (S - B), field, 1),
                    (1, lo if B > 1 else lo[0], 1 << (M + B), hi if B > 1 else hi[0], 1 << (M + B + S)))
    offset_zy = swizzle_bits(sw, offset_only_zy)
    if isinstance(offset_zy, MixedBits):     # C++ adds its uint32_t: a run-time int
        offset_zy = int_tuple.Dyn(int(offset_zy))
    return composition(folded, sliced), add(offset_zy, offset_anti_zy)


def _has_fixed(c):
    """Whether a slicing coordinate fixes any mode (holds anything but _)."""
    return any(_has_fixed(v) for v in c) if is_tuple(c) else not _is_free(c)


# --------------------------------------------------------------------------------------------------
# Coalesce and filter
# --------------------------------------------------------------------------------------------------

def _bw_coalesce(old_shape, old_stride, new_shape, new_stride):
    """Walk old modes back to front, merging each into the front of the new ones when it can."""
    for s, d in zip(reversed(old_shape), reversed(old_stride)):
        if is_static_value(s, 1):
            continue
        if not is_tuple(new_shape) and is_static_value(new_shape, 1):
            new_shape, new_stride = s, d
            continue
        front_s = new_shape[0] if is_tuple(new_shape) else new_shape
        front_d = new_stride[0] if is_tuple(new_stride) else new_stride
        prod = mul(s, d)
        if is_static(front_s) and is_static(prod) and is_static(front_d) and prod == front_d:
            merged = mul(s, front_s)
            new_shape = (merged,) + new_shape[1:] if is_tuple(new_shape) else merged
            new_stride = (d,) + new_stride[1:] if is_tuple(new_stride) else d
        else:
            new_shape = (s,) + new_shape if is_tuple(new_shape) else (s, new_shape)
            new_stride = (d,) + new_stride if is_tuple(new_stride) else (d, new_stride)
    if not is_tuple(new_shape) and is_static_value(new_shape, 1):
        return Layout._make(1, 0)
    return Layout._make(new_shape, new_stride)


def _coalesce_flat(layout, keep_last=False):
    shp, std = wrap(flatten_tuple(layout.shape)), wrap(flatten_tuple(layout.stride))
    last_s = shp[-1]
    if keep_last and is_static_value(last_s, 1):
        last_s = 2  # composition keeps A's last stride, the one its extension beyond size(A) uses
    return _bw_coalesce(shp[:-1], std[:-1], last_s, std[-1])


def _by_mode(layout, profile, fn):
    """C++ transform_layout: fn on the first len(profile) modes, the remaining modes kept."""
    s, d = wrap(layout.shape), wrap(layout.stride)
    if len(profile) > len(s):
        raise ValueError(f"{fn.__name__}: profile {fmt(profile)} has more modes than {layout}")
    modes = [fn(Layout._make(s[i], d[i]), profile[i]) for i in range(len(profile))]
    modes += [Layout._make(s[i], d[i]) for i in range(len(profile), len(s))]
    return make_layout(*modes)


def coalesce(layout, profile=None):
    """Simplify a layout by merging modes where it can.

    Post: size(result) == size(layout); result(i) == layout(i) for all i; depth(result) <= 1.
    With a tuple `profile`, coalesce mode by mode (result is weakly congruent to the profile).
    """
    _need_layout(layout, "coalesce")
    if profile is not None:
        _need_coord(profile, "coalesce", "profile")
    if is_tuple(profile):
        return _by_mode(layout, profile, coalesce)
    return _coalesce_flat(layout)


def _filter_zeros(shp, std):
    if is_tuple(shp):
        return tuple(_filter_zeros(s, d) for s, d in zip(shp, std))
    if is_tuple(std):
        return shp
    return 1 if is_static_value(std, 0) else shp


def filter(layout, profile=None):
    """Remove stride-0 and size-1 modes, then coalesce.

    Post: the image of result equals the image of layout; result has no stride-0 modes (unless size 1).
    """
    _need_layout(layout, "filter")
    if profile is not None:
        _need_coord(profile, "filter", "profile")
    if is_tuple(profile):
        return _by_mode(layout, profile, filter)
    return coalesce(Layout._make(_filter_zeros(layout.shape, layout.stride), layout.stride))


# --------------------------------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------------------------------

def _compose(ls, ld, rs, rd, a, b):
    """A o B on a coalesced A (ls:ld) and one mode of B (rs:rd)."""
    if is_tuple(rs):
        return make_layout(*[_compose(ls, ld, s, d, a, b) for s, d in zip(rs, rd)])
    if is_basis(rd):   # B's stride v@m: compose mode m of A with v (C++ basis_get; _coalesce_x kept m)
        for m in rd.modes:
            ls, ld = ls[m], ld[m]
        return _compose(ls, ld, rs, rd.value, a, b)
    if is_static_value(rd, 0):
        return Layout._make(rs, rd)
    if not is_tuple(ls):
        return Layout._make(rs, mul(rd, ld))
    result_shape, result_stride = [], []
    rest_shape, rest_stride = rs, rd
    for cur_shape, cur_stride in zip(ls[:-1], ld[:-1]):
        if not is_static(rest_stride) and rest_stride == 0:
            raise ValueError(f"composition: B = {b} has a dynamic stride 0, which C++ divides by at run time "
                             f"(A = {a} has several modes)")
        if is_static(cur_shape) and is_static(rest_stride):
            if not (mod(rest_stride, cur_shape) == 0 or rest_stride < cur_shape):
                raise ValueError(
                    f"composition: stride {fmt(rest_stride)} of B = {b} does not divide shape "
                    f"{fmt(cur_shape)} of A = {a} and is not smaller (Stride Divisibility Condition)")
        next_shape = _ceil_div(cur_shape, iabs(rest_stride))
        next_stride = mul(_ceil_div(iabs(rest_stride), cur_shape), signum(rest_stride))
        if is_static_value(next_shape, 1) or is_static_value(rest_shape, 1):
            rest_stride = next_stride
            continue
        new_shape = imin(next_shape, rest_shape)
        if is_static(new_shape) and is_static(rest_shape) and mod(rest_shape, new_shape) != 0:
            raise ValueError(
                f"composition: shape {fmt(rest_shape)} of B = {b} is not divisible by {fmt(new_shape)} "
                f"taken from A = {a} (Shape Divisibility Condition)")
        result_shape.append(new_shape)
        result_stride.append(mul(rest_stride, cur_stride))
        rest_shape = div(rest_shape, new_shape)
        rest_stride = next_stride
    if not result_shape:
        return Layout._make(rest_shape, mul(rest_stride, ld[-1]))
    if is_static_value(rest_shape, 1):
        return Layout._make(unwrap(tuple(result_shape)), unwrap(tuple(result_stride)))
    return Layout._make(tuple(result_shape) + (rest_shape,),
                        tuple(result_stride) + (mul(rest_stride, ld[-1]),))


def _coalesce_x(layout, profile):
    """C++ coalesce_x: coalesce (keeping the function past the domain), mode by mode where the profile of
    B's values (coprofile) is a tuple, so that B's basis strides still name A's modes."""
    if is_tuple(profile):
        if len(profile) > rank(layout):
            raise ValueError(f"composition: B's values have {len(profile)} modes (coprofile {fmt(profile)}), "
                             f"more than the {rank(layout)} of {layout}")
        return _by_mode(layout, profile, _coalesce_x)
    return _coalesce_flat(layout, keep_last=True)


def composition(a, b):
    """Functional composition R = A o B: R(c) = A(B(c)).

    B may be a Layout, an int n (the layout n:1), ``_`` (A unchanged), or a tuple tiler whose modes
    are applied to A's modes one by one (A's modes beyond the tiler's rank are dropped). Either may have
    ScaledBasis strides: A's make R's values tuples; B's stride v@m composes mode m of A with stride v.
    A may be a Swizzle (giving a ComposedLayout; Swizzle<0,M,S> is the identity) or a ComposedLayout (composing its inner layout).
    Post: compatible(shape(B), shape(R)); R(c) == A(B(c)) for every coordinate c of B.
    """
    if hasattr(a, "layout_b"):
        return a.with_inner(composition(a.layout_b, b))
    if not isinstance(a, Layout):
        if isinstance(a, Swizzle):
            if not isinstance(b, Layout):
                raise TypeError(f"composition: a Swizzle composes with a Layout, got {b!r}")
            return b if a.bits == 0 else ComposedLayout(a, 0, b)  # no bits: the identity swizzle
        raise TypeError(f"composition: A must be a Layout, Swizzle or ComposedLayout, got {a!r}")
    if isinstance(b, Layout):
        flat = _coalesce_x(a, coprofile(b))
        return _compose(flat.shape, flat.stride, b.shape, b.stride, a, b)
    _need_tiler(b, "composition")
    if is_tuple(b):
        s, d = wrap(a.shape), wrap(a.stride)
        if len(b) > len(s):
            raise ValueError(f"composition: tiler {_tiler_str(b)} has more modes than {a}")
        if not b:
            raise ValueError("composition: the tiler () has no modes (C++ does not compile it: make_layout())")
        return make_layout(*[composition(Layout._make(s[i], d[i]), b[i]) for i in range(len(b))])
    if _is_free(b):
        return a
    if is_int(b):
        flat = _coalesce_flat(a, keep_last=True)
        return _compose(flat.shape, flat.stride, b, 1, a, Layout._make(b, 1))
    raise TypeError(f"composition: B must be a Layout, an int, _ or a tuple tiler, got {b!r}")


def _need_tiler(t, op):
    """TypeError naming `op` unless t is a tiler: a Layout, an int, _ or a tuple of tilers."""
    check_tree(t, op, "tiler", lambda x: isinstance(x, Layout) or is_int(x) or _is_free(x),
               "be a Layout, an int, _ or a tuple of them")


def _tiler_str(t):
    if is_tuple(t):
        return "(" + ",".join(_tiler_str(v) for v in t) + ")"
    return str(t) if isinstance(t, Layout) else fmt(t)


# --------------------------------------------------------------------------------------------------
# Complement and inverses
# --------------------------------------------------------------------------------------------------

def _coalesce_shape(t):
    """Merge neighbouring integers of a shape that are both static or both dynamic (C++ coalesce(shape))."""
    flat = wrap(flatten_tuple(t))
    out = [flat[0]]
    for v in flat[1:]:
        if is_static(out[-1]) == is_static(v):
            out[-1] = mul(out[-1], v)
        else:
            out.append(v)
    return out[0] if len(out) == 1 else tuple(out)


def complement(layout, cotarget=None):
    """The layout that enumerates the copies of `layout` (the offset where each starts), until they cover
    0..cotarget-1 (default cotarget: cosize(layout)); make_layout(layout, result) reaches each offset below
    size(layout) * size(result) once when layout fits.

    Post: the result is ordered (strides increase) and its image is disjoint from layout's (except 0);
          size(layout) * size(result) >= size(cotarget).
    """
    _need_layout(layout, "complement")
    _need_int_strides(layout, "complement")
    flt = filter(layout)
    cot = cosize(flt) if cotarget is None else _shape_of(cotarget, "complement")
    if cot == ():
        raise ValueError("complement: the cotarget () is empty; give an int, a shape or a Layout")
    shp, std = flt.shape, flt.stride
    if is_static_value(std, 0):
        return make_layout(_coalesce_shape(cot))
    shp, std = list(wrap(shp)), list(wrap(std))
    if len(shp) > 1 and not is_static(tuple(std)):
        raise ValueError(f"complement: {layout} has dynamic strides; C++ supports dynamic-stride "
                         "complement only for rank-1 layouts")
    result_shape, result_stride = [], [1]
    for _i in range(len(shp) - 1):
        min_stride = min(std)
        k = std.index(min_stride)
        new_shape = div(min_stride, result_stride[-1])
        if is_static_value(new_shape, 0):
            raise ValueError(f"complement: {layout} is not injective (Non-injective Layout detected in complement.)")
        result_shape.append(new_shape)
        result_stride.append(mul(min_stride, shp[k]))
        del shp[k], std[k]
    new_shape = div(std[0], result_stride[-1])
    if is_static_value(new_shape, 0):
        raise ValueError(f"complement: {layout} is not injective (Non-injective Layout detected in complement.)")
    result_shape.append(new_shape)
    new_stride = mul(std[0], shp[0])
    rest_shape = _coalesce_shape(_ceil_div(cot, new_stride))
    rest_stride = _compact(rest_shape, LayoutLeft, new_stride)
    return coalesce(Layout._make((tuple(result_shape), rest_shape), (tuple(result_stride), rest_stride)))


def _exchange_sort(keys):
    """Indices of keys sorted as C++ CuTe sorts them (exchange sort, not stable). Distinct keys have one
    sorted order, which Python's sort finds without the exchange sort's n^2 steps."""
    if len(set(keys)) == len(keys):
        return sorted(range(len(keys)), key=keys.__getitem__)
    pairs = [(k, i) for i, k in enumerate(keys)]
    n = len(pairs)
    for i in range(n):
        for j in range(i + 1, n):
            if pairs[j][0] < pairs[i][0]:
                pairs[i], pairs[j] = pairs[j], pairs[i]
    return [i for _, i in pairs]


def _prefix_products(shp):
    out = [1]
    for s in shp:
        out.append(mul(s, out[-1]))
    return out


def right_inverse(layout):
    """A layout R with layout(R(i)) == i for all i < size(R) (the largest such contiguous R).

    Modes with dynamic, zero or non-contiguous strides are skipped.
    """
    if isinstance(layout, Underscore):
        return layout
    _need_layout(layout, "right_inverse")
    _need_int_strides(layout, "right_inverse")
    c = coalesce(layout)
    shp, std = wrap(c.shape), wrap(c.stride)
    pre = _prefix_products(shp)
    static_idx = [i for i in range(len(std)) if is_static(std[i])]
    order = [static_idx[k] for k in _exchange_sort([std[i] for i in static_idx])]
    result_shape, result_stride, current = [1], [0], 1
    for i in order:
        if is_static(current) and std[i] == current:
            result_shape.append(shp[i])
            result_stride.append(pre[i])
            current = mul(shp[i], std[i])
    return coalesce(Layout._make(tuple(result_shape), tuple(result_stride)))


def left_inverse(layout):
    """A layout L with L(layout(i)) == i for all i < size(layout) (layout injective).

    Requires static strides; each stride must be divisible by the size of the modes below it.
    """
    if isinstance(layout, Underscore):
        return layout
    _need_layout(layout, "left_inverse")
    _need_int_strides(layout, "left_inverse")
    c = coalesce(layout)
    shp, std = wrap(c.shape), wrap(c.stride)
    if not is_static(std):
        raise ValueError(f"left_inverse: {layout} has dynamic strides (C++ requires static strides)")
    pre = _prefix_products(shp)
    order = _exchange_sort(list(std))
    result_shape, result_stride = [], [0]
    for i in order:
        d = std[i]
        if d == 0:
            continue
        sz = product(tuple(result_shape))
        if mod(d, sz) != 0:
            raise ValueError(f"left_inverse: stride {fmt(d)} of {layout} is not divisible by {fmt(sz)} "
                             "(Left inverse divisibility condition)")
        result_shape.append(div(d, sz))
        result_stride.append(pre[i])
    result_shape.append(shp[order[-1]])
    return coalesce(Layout._make(tuple(result_shape), tuple(result_stride)))


def max_common_layout(a, b):
    """The largest layout R with a(R(i)) == i and b(R(i)) == i for all i < size(R)."""
    _need_layout(a, "max_common_layout")
    _need_layout(b, "max_common_layout")
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    s0 = wrap(common.shape)[0]
    d0 = wrap(common.stride)[0]
    if is_static(s0) and is_static_value(d0, 1):
        return composition(inv_b, Layout._make(s0, d0))
    return Layout._make(1, 0)


def max_common_vector(a, b):
    """The largest N such that a and b agree on the N contiguous elements 0..N-1 (at least 1)."""
    _need_layout(a, "max_common_vector")
    _need_layout(b, "max_common_vector")
    common = coalesce(composition(a, right_inverse(b)))
    s0 = wrap(common.shape)[0]
    d0 = wrap(common.stride)[0]
    if is_static(s0) and is_static_value(d0, 1):
        return s0
    return 1


# --------------------------------------------------------------------------------------------------
# Divide and product
# --------------------------------------------------------------------------------------------------

def _by_tiler(layout, tiler, fn, name):
    """Apply fn(mode, tiler mode) to the first len(tiler) modes; keep the rest (C++ transform_layout)."""
    s, d = wrap(layout.shape), wrap(layout.stride)
    if len(tiler) > len(s):
        raise ValueError(f"{name}: tiler {_tiler_str(tiler)} has more modes than {layout}")
    modes = [fn(Layout._make(s[i], d[i]), tiler[i]) for i in range(len(tiler))]
    modes += [Layout._make(s[i], d[i]) for i in range(len(tiler), len(s))]
    return make_layout(*modes)


def logical_divide(layout, tiler):
    """Split layout into (tile, rest): R = layout o (tiler, complement(tiler, size(layout))).

    With a tuple tiler, divide mode by mode (modes beyond the tiler are kept as they are).
    Post: rank(R) == 2 for a Layout tiler; R(c, 0) == layout(tiler(c)).
    """
    _need_layout(layout, "logical_divide", composed=True)
    if hasattr(layout, "layout_b"):
        return layout.with_inner(logical_divide(layout.layout_b, tiler))
    if isinstance(tiler, Layout):
        return composition(layout, make_layout(tiler, complement(tiler, coalesce(layout).shape)))
    _need_tiler(tiler, "logical_divide")
    if is_tuple(tiler):
        return _by_tiler(layout, tiler, logical_divide, "logical_divide")
    if _is_free(tiler):
        return layout
    if is_int(tiler):
        return logical_divide(layout, Layout(tiler))
    raise TypeError(f"logical_divide: tiler must be a Layout, an int, _ or a tuple, got {tiler!r}")


def _zip2_by(t, guide):
    if is_tuple(guide):
        if not is_tuple(t) or len(t) < len(guide):
            raise ValueError(f"zip2_by: {fmt(t)} has fewer modes than the tiler")
        split = [_zip2_by(t[i], guide[i]) for i in range(len(guide))]
        return (tuple(p[0] for p in split), tuple(p[1] for p in split) + tuple(t[len(guide):]))
    if not is_tuple(t) or len(t) != 2:
        raise ValueError(f"zip2_by: expected a (tile, rest) pair, got {fmt(t)}")
    return t


def _tile_unzip(layout, tiler):
    if hasattr(layout, "layout_b"):
        return layout.with_inner(_tile_unzip(layout.layout_b, tiler))
    return Layout._make(_zip2_by(layout.shape, tiler), _zip2_by(layout.stride, tiler))


def _repeat_free(n):
    return _ if n == 1 else (_,) * n


def _unpack_rest(r):
    """((tile),(rest0,rest1,...)) -> ((tile), rest0, rest1, ...): the tiled_ form of a zipped_ result."""
    return r(_, _repeat_free(rank(r, 1)))


def _unpack_all(r):
    """((tile0,...),(rest0,...)) -> (tile0, ..., rest0, ...): the flat_ form of a zipped_ result."""
    return r(_repeat_free(rank(r, 0)), _repeat_free(rank(r, 1)))


def zipped_divide(layout, tiler):
    """logical_divide, then gather the tiles into mode 0 and the rests into mode 1: ((tile),(rest))."""
    _need_layout(layout, "zipped_divide", composed=True)
    _need_tiler(tiler, "zipped_divide")
    return _tile_unzip(logical_divide(layout, tiler), tiler)


def tiled_divide(layout, tiler):
    """zipped_divide with the rest modes unpacked: ((tile), rest0, rest1, ...)."""
    _need_layout(layout, "tiled_divide", composed=True)
    _need_tiler(tiler, "tiled_divide")
    return _unpack_rest(zipped_divide(layout, tiler))


def flat_divide(layout, tiler):
    """zipped_divide with both tile and rest modes unpacked: (tile0, tile1, ..., rest0, rest1, ...)."""
    _need_layout(layout, "flat_divide", composed=True)
    _need_tiler(tiler, "flat_divide")
    return _unpack_all(zipped_divide(layout, tiler))


def logical_product(block, tiler):
    """Repeat block as tiler says: R = (block, complement(block, size(block)*cosize(tiler)) o tiler).

    With a tuple tiler, multiply mode by mode (modes beyond the tiler are kept as they are).
    Post: rank(R) == 2 for a Layout tiler; R(c, 0) == block(c).
    """
    _need_layout(block, "logical_product", composed=True)
    if hasattr(block, "layout_b"):
        return block.with_inner(logical_product(block.layout_b, tiler))
    if isinstance(tiler, Layout):
        comp = complement(block, mul(size(block), cosize(tiler)))
        return make_layout(block, composition(comp, tiler))
    _need_tiler(tiler, "logical_product")
    if is_tuple(tiler):
        return _by_tiler(block, tiler, logical_product, "logical_product")
    if _is_free(tiler):
        return block
    if is_int(tiler):
        return logical_product(block, Layout(tiler))
    raise TypeError(f"logical_product: tiler must be a Layout, an int, _ or a tuple, got {tiler!r}")


def zipped_product(block, tiler):
    """logical_product with the block modes gathered into mode 0 and the tiler modes into mode 1."""
    _need_layout(block, "zipped_product", composed=True)
    _need_tiler(tiler, "zipped_product")
    return _tile_unzip(logical_product(block, tiler), tiler)


def tiled_product(block, tiler):
    """zipped_product with the tiler modes unpacked: ((block), rest0, rest1, ...)."""
    _need_layout(block, "tiled_product", composed=True)
    _need_tiler(tiler, "tiled_product")
    return _unpack_rest(zipped_product(block, tiler))


def flat_product(block, tiler):
    """zipped_product with every mode unpacked: (block0, block1, ..., rest0, rest1, ...)."""
    _need_layout(block, "flat_product", composed=True)
    _need_tiler(tiler, "flat_product")
    return _unpack_all(zipped_product(block, tiler))


def _zip_pair(a, b):
    """C++ zip(a, b): pair up modes ((a0,b0),(a1,b1),...); two ints give ((a,b))."""
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise ValueError(f"zip: ranks of {fmt(a)} and {fmt(b)} differ")
        return tuple((x, y) for x, y in zip(a, b))
    return ((a, b),)


def _rank_padded_product(block, tiler, name):
    for x in (block, tiler):
        if not isinstance(x, Layout):
            raise TypeError(f"{name}: expects two Layouts, got {x!r}")
    r = max(rank(block), rank(tiler))
    return logical_product(append(block, n=r), append(tiler, n=r))


def blocked_product(block, tiler):
    """Tile block by tiler, mode by mode, block first: result mode i is (block_i, tiler_i).

    Post: rank(R) == max(rank(block), rank(tiler)); R restricted to the first coordinate of the
    tiler modes is block.
    """
    r = _rank_padded_product(block, tiler, "blocked_product")
    b, t = get(r, 0), get(r, 1)
    return Layout._make(_zip_pair(b.shape, t.shape), _zip_pair(b.stride, t.stride))


def raked_product(block, tiler):
    """Interleave block over tiler, mode by mode, tiler first: result mode i is (tiler_i, block_i)."""
    r = _rank_padded_product(block, tiler, "raked_product")
    b, t = get(r, 0), get(r, 1)
    return Layout._make(_zip_pair(t.shape, b.shape), _zip_pair(t.stride, b.stride))


def tile_to_shape(block, target_shape, order=LayoutLeft):
    """Repeat block (blocked_product) until it covers target_shape; tiles ordered by `order`.

    Post: product_each(shape(result)) == product_each(target_shape). A swizzled block keeps its swizzle.
    """
    _need_layout(block, "tile_to_shape", composed=True)
    _check_shape(target_shape, "target shape", "tile_to_shape")
    if hasattr(block, "layout_b"):
        return block.with_inner(tile_to_shape(block.layout_b, target_shape, order))
    r_target = int_tuple.rank(target_shape)
    if rank(block) > r_target:
        raise ValueError(f"tile_to_shape: rank of {block} exceeds the rank of {fmt(target_shape)}")
    padded = append(block, n=r_target)
    block_shape = int_tuple.product_each(padded.shape)
    trg = int_tuple.product_each(target_shape)
    for t, b in zip(trg, block_shape):
        if is_static(trg) and is_static(b) and t % b != 0:
            raise ValueError(f"tile_to_shape: block shape {fmt(block_shape)} does not divide the target "
                             f"shape {fmt(trg)}")
    return blocked_product(padded, make_ordered_layout(_ceil_div(trg, block_shape), order))


# --------------------------------------------------------------------------------------------------
# Recasting between element widths
# --------------------------------------------------------------------------------------------------

def _upcast(s, d, n):
    if is_tuple(s):
        return make_layout(*[_upcast(si, di, n) for si, di in zip(s, d)])
    if is_static_value(d, 0):
        return Layout._make(s, d)
    if is_static(d):
        if mod(d, n) != 0 and mod(n, d) != 0:
            raise ValueError(f"upcast: stride {fmt(d)} and {n} do not divide one another (Divisibility condition)")
        return Layout._make(_ceil_div(s, _ceil_div(n, iabs(d))), mul(signum(d), _ceil_div(iabs(d), n)))
    return Layout._make(s, div(d, n))


def upcast(layout, n):
    """View a layout of elements as a layout of n-element groups (e.g. 8 halves -> one 128-bit word)."""
    _need_layout(layout, "upcast", composed=True)
    _need_int(n, "upcast", "n", low=1)
    if hasattr(layout, "layout_b"):
        return _recast_composed(layout, n, "upcast")
    _need_int_strides(layout, "upcast")
    return _upcast(layout.shape, layout.stride, n)


def _recast_composed(layout, n, op):
    """upcast / downcast of Sw o offset o L, as C++ does it part by part: the swizzle's M moves by log2(n)
    (upcast below 0 takes the missing bits from B), the offset is divided (must divide) or multiplied by n,
    the inner layout is recast.

    Post: for a swizzle on element offsets, the result swizzles the same bits of the n-times-larger (upcast)
          or smaller (downcast) unit: Sw<3,3,3> on halves is Sw<3,4,3> on bytes (downcast by 2).
    """
    sw, off = layout.layout_a, layout.offset
    if isinstance(sw, Swizzle) and n & (n - 1):
        raise ValueError(f"{op}: a swizzled layout recasts only by a power of two, got {n} (C++: N must be a "
                         "power of two)")
    inner = upcast(layout.layout_b, n) if op == "upcast" else downcast(layout.layout_b, n)
    if not isinstance(sw, Swizzle) or isinstance(off, MixedBits):
        return layout.with_inner(inner)
    log2_n = n.bit_length() - 1
    if op == "downcast":
        return ComposedLayout(Swizzle(sw.bits, sw.base + log2_n, sw.shift), off * n, inner)
    if off % n:
        raise ValueError(f"{op}: the offset {off} of {layout} is not a multiple of {n} (C++: safe_div)")
    new_m = sw.base - log2_n
    new_sw = Swizzle(sw.bits, new_m, sw.shift) if new_m >= 0 else Swizzle(max(sw.bits + new_m, 0), 0, sw.shift)
    return ComposedLayout(new_sw, off // n, inner)


def _downcast(s, d, n):
    if is_tuple(s):
        return make_layout(*[_downcast(si, di, n) for si, di in zip(s, d)])
    if is_static_value(d, 1) or is_static_value(d, -1):
        return Layout._make(mul(s, n), d)
    return Layout._make(s, mul(d, n))


def downcast(layout, n):
    """View a layout of elements as a layout of 1/n-sized pieces: the stride-1 mode grows n times."""
    _need_layout(layout, "downcast", composed=True)
    _need_int(n, "downcast", "n", low=1)
    if hasattr(layout, "layout_b"):
        return _recast_composed(layout, n, "downcast")
    _need_int_strides(layout, "downcast")
    if not any(is_static_value(d, 1) for d in wrap(flatten_tuple(layout.stride))):
        raise ValueError(f"downcast: {layout} has no static stride-1 mode (Downcast requires adjacent elements)")
    return _downcast(layout.shape, layout.stride, n)
