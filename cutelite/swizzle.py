"""Swizzle<B,M,S>: an XOR of bit fields of an offset, and ComposedLayout: a swizzle after a layout.

A swizzle keeps the lowest M bits (2^M elements move together), takes the B bits that sit S above
them (the "yyy" mask) and XORs them into the B bits at M (the "zzz" mask). With a negative S the yyy
bits sit below the zzz bits. Because yyy and zzz must not overlap, CuTe requires abs(S) >= B.
"""

from .int_tuple import Dyn, add, fmt, is_int
from .layout import Layout

__all__ = ["Swizzle", "ComposedLayout"]


class Swizzle:
    """``Swizzle(B, M, S)``: offset -> offset ^ ((offset & yyy_msk) >> S)  (a left shift when S < 0).

    Post: a bijection that is its own inverse; only the bits of zzz_msk change.
    """

    __slots__ = ("bits", "base", "shift")

    def __init__(self, bits, base, shift=None):
        shift = bits if shift is None else shift
        for name, v in (("BBits", bits), ("MBase", base), ("SShift", shift)):
            if not is_int(v):
                raise TypeError(f"Swizzle: {name} must be an int, got {v!r}")
        if bits < 0:
            raise ValueError(f"Swizzle<{bits},{base},{shift}>: BBits must be positive.")
        if base < 0:
            raise ValueError(f"Swizzle<{bits},{base},{shift}>: MBase must be positive.")
        if abs(shift) < bits:
            raise ValueError(f"Swizzle<{bits},{base},{shift}>: abs(SShift) must be more than BBits. "
                             f"(|{shift}| < {bits}: the yyy and zzz masks would overlap)")
        self.bits, self.base, self.shift = int(bits), int(base), int(shift)

    @property
    def yyy_msk(self):
        """The bits that are read (B bits starting at M + max(0, S))."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_msk(self):
        """The bits that are flipped (B bits starting at M - min(0, S))."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, offset):
        y = offset & self.yyy_msk
        moved = y >> self.shift if self.shift >= 0 else y << -self.shift
        return offset ^ moved

    def __eq__(self, other):
        return isinstance(other, Swizzle) and (self.bits, self.base, self.shift) == (other.bits, other.base, other.shift)

    def __hash__(self):
        return hash((self.bits, self.base, self.shift))

    def __str__(self):
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    __repr__ = __str__


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
            from .layout import slice_and_offset
            c = coord[0] if len(coord) == 1 else coord
            return slice_and_offset(c, self)[0]
        return int(self.layout_a(add(self.offset, inner)))

    def __getitem__(self, key):
        from .layout import get
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


# ---- slicing a swizzled layout ------------------------------------------------------------------------
# Slicing fixes some coordinates; their offset goes through the swizzle with the rest. When the sliced
# layout cannot reach a Y bit and its Z partner both, CuTe folds the swizzle into the strides and the
# pointer (the result is a plain Layout); otherwise it keeps the swizzle with the fixed bits as its offset.
# A fixed coordinate that is only known at run time (a thread index) makes some of those bits dynamic:
# MixedBits tracks which, exactly as C++ does, because it decides which strides print as static.

class MixedBits(int):
    """An int with static bits `s` and run-time bits `d` under the mask `f` (s & f == 0): C++ MixedBits."""

    def __new__(cls, s, f, d):
        obj = super().__new__(cls, s | d)
        obj.s, obj.f, obj.d = s, f, d
        return obj

    def __str__(self):
        return f"M_{self.s}|({self.d}&{self.f})={int(self)}"

    __repr__ = __str__


def _bits(x):
    """(static bits, dynamic mask, dynamic value) of an int, Dyn or MixedBits."""
    if isinstance(x, MixedBits):
        return x.s, x.f, x.d
    if type(x) is int:
        return x, 0, 0
    return 0, 0xFFFFFFFF, int(x) & 0xFFFFFFFF  # a plain run-time int: every bit is dynamic


def _make_mixed(s, d, f):
    """C++ make_mixed_bits: static s | (d & f), a plain int when no dynamic bit is left."""
    f &= ~s
    return s | (d & f) if f == 0 else MixedBits(s, f, d & f)


def _xor(a, b):
    s0, f0, d0 = _bits(a)
    s1, f1, d1 = _bits(b)
    return _make_mixed((~s0 & s1 & ~f0) | (s0 & ~s1 & ~f1), (s0 | d0) ^ (s1 | d1), f0 | f1)


def _and(a, b):
    s0, f0, d0 = _bits(a)
    s1, f1, d1 = _bits(b)
    return _make_mixed(s0 & s1, ((s1 & f0) & d0) | ((s0 & f1) & d1) | (d0 & d1),
                       (s1 & f0) | (s0 & f1) | (f0 & f1))


def _shift_right(a, n):
    s, f, d = _bits(a)
    return _make_mixed(s >> n, d >> n, f >> n) if n >= 0 else _make_mixed(s << -n, d << -n, f << -n)


def _swizzle_bits(sw, x):
    """sw(x) for an int or MixedBits (C++ Swizzle::apply with its MixedBits operators)."""
    return _xor(x, _shift_right(_and(x, sw.yyy_msk), sw.shift))


def _to_mixed_bits(layout, coord):
    """XOR of coord_i * stride_i over the leaves of a power-of-two layout, static where coord_i is."""
    from .int_tuple import idx2crd, flatten
    shape, stride = flatten(layout.shape), flatten(layout.stride)
    crd = flatten(idx2crd(coord, layout.shape))
    out = 0
    for s, d, c in zip(shape, stride, crd):
        mask = (int(s) - 1) * int(d)
        leaf = int(c) * int(d) & mask if type(c) is int else _make_mixed(0, int(c) * int(d), mask)
        out = _xor(out, leaf)
    return out


def _pick(cond, a, b):
    """C++ conditional_return: static when the condition is, else a run-time int."""
    if isinstance(cond, bool):
        return a if cond else b
    return Dyn(a if bool(cond) else b)


def _is_zero(x):
    """x == 0 as C++ decides it: a bool when x is static, else a run-time truth value (an int 0/1)."""
    if type(x) is int:
        return x == 0
    return int(int(x) == 0)


def _swizzle_strides(z_lower, z, y, offset, bits):
    """The strides of the B bits of one swizzle field after slicing at `offset` (C++ make_swizzle_strides)."""
    if z_lower:
        return tuple(_pick(_is_zero(_and(offset, y << i)), z << i, -(z << i)) for i in range(bits))
    return tuple(_pick(_is_zero(_and(offset, z << i)), (y + z) << i, (y - z) << i) for i in range(bits))


def slice_swizzled(coord, layout):
    """slice_and_offset for Swizzle o offset o L with some coordinates fixed (C++ swizzle_layout.hpp).

    Post: for every coordinate c of the free modes, result_layout(c) + result_offset ==
          layout(coord with its free modes set to c).
    """
    from .layout import Layout, _slice as slice_tuple, composition, dice, size
    sw, inner = layout.layout_a, layout.layout_b
    B, M, S = sw.bits, sw.base, abs(sw.shift)
    shp = (1 << M, 1 << B, 1 << (S - B), 1 << B, 1)
    anti_zy = Layout(shp, (1, 0, 1 << (M + B), 0, 1 << (M + B + S)))
    only_zy = Layout(shp, (0, 1 << M, 0, 1 << (M + S), 0))
    sliced = Layout._make(slice_tuple(coord, inner.shape), slice_tuple(coord, inner.stride))
    diced = dice(coord, inner)
    diced_coord = dice(coord, coord)
    offset_only_zy = _xor(layout.offset, _to_mixed_bits(composition(only_zy, diced), diced_coord))
    offset_anti_zy = composition(anti_zy, diced)(diced_coord)
    sliced_zy = composition(only_zy, sliced)
    active = sliced_zy(size(sliced_zy) - 1)
    if active & ~sw(active):      # the sliced layout reaches a Y bit and its Z bit: keep the swizzle
        return ComposedLayout(sw, offset_only_zy, sliced), int(offset_anti_zy)
    z = sw.zzz_msk & -sw.zzz_msk
    y = sw.yyy_msk & -sw.yyy_msk
    lo = _swizzle_strides(z < y, z, y, offset_only_zy, B)
    hi = _swizzle_strides(z > y, z, y, offset_only_zy, B)
    field = (2,) * B if B > 1 else 2
    folded = Layout((1 << M, field, 1 << (S - B), field, 1),
                    (1, lo if B > 1 else lo[0], 1 << (M + B), hi if B > 1 else hi[0], 1 << (M + B + S)))
    return composition(folded, sliced), int(_swizzle_bits(sw, offset_only_zy)) + int(offset_anti_zy)
