"""Swizzle<B,M,S>: an XOR of bit fields of an offset, and ComposedLayout: a swizzle after a layout.

A swizzle keeps the lowest M bits (2^M elements move together), takes the B bits that sit S above
them (the "yyy" mask) and XORs them into the B bits at M (the "zzz" mask). With a negative S the yyy
bits sit below the zzz bits. Because yyy and zzz must not overlap, CuTe requires abs(S) >= B.
"""

from .int_tuple import add, fmt, is_int
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
        off = fmt(self.offset) if is_int(self.offset) else str(self.offset)
        return f"{self.layout_a} o {off} o {self.layout_b}"

    def __repr__(self):
        return f"ComposedLayout({self})"
