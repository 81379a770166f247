"""Swizzle<B,M,S>: an XOR of bit fields of an offset (a ComposedLayout, in layout.py, puts one after a layout).

A swizzle keeps the lowest M bits (2^M elements move together), takes the B bits that sit S above
them (the "yyy" mask) and XORs them into the B bits at M (the "zzz" mask). With a negative S the yyy
bits sit below the zzz bits. Because yyy and zzz must not overlap, CuTe requires abs(S) >= B. Its masks
are C++ ints, so both must fit in 32 bits: B + M + abs(S) <= 32, and a shift M + abs(S) <= 31.
"""

from .errors import quote
from .int_tuple import Dyn, flatten, idx2crd, is_int

__all__ = ["Swizzle", "MixedBits", "mixed_xor", "to_mixed_bits", "swizzle_bits", "sliced_swizzle_strides"]


class Swizzle:
    """``Swizzle(B, M, S)``: offset -> offset ^ ((offset & yyy_msk) >> S)  (a left shift when S < 0).

    The offset may be an int, a NumPy array of them, or anything that stands for an int and has the int's
    operators (&, >>, <<, ^) and __index__: the kernels' run-time values and source text apply this formula too.

    Post: a bijection that is its own inverse; only the bits of zzz_msk change.
    """

    __slots__ = ("bits", "base", "shift")

    def __init__(self, bits, base, shift=None):
        shift = bits if shift is None else shift
        for name, v in (("BBits", bits), ("MBase", base), ("SShift", shift)):
            if not is_int(v):
                raise TypeError(f"Swizzle: {name} must be an int, got {quote(v)} ({type(v).__name__})")
            if not -(1 << 31) <= v < 1 << 31:
                raise ValueError(f"Swizzle: {name} = {quote(v)} is outside C++'s 32-bit int")
        if bits < 0:
            raise ValueError(f"Swizzle<{bits},{base},{shift}>: BBits must be positive.")
        if base < 0:
            raise ValueError(f"Swizzle<{bits},{base},{shift}>: MBase must be positive.")
        if abs(shift) < bits:
            raise ValueError(f"Swizzle<{bits},{base},{shift}>: abs(SShift) must be more than BBits. "
                             f"(|{shift}| < {bits}: the yyy and zzz masks would overlap)")
        if base + abs(shift) > 31 or bits + base + abs(shift) > 32:
            raise ValueError(f"Swizzle<{bits},{base},{shift}>: its masks do not fit C++'s 32-bit int (C++ CuTe "
                             "does not compile it): BBits + MBase + abs(SShift) must be at most 32, and "
                             "MBase + abs(SShift) at most 31")
        self.bits, self.base, self.shift = int(bits), int(base), int(shift)

    @property
    def yyy_msk(self):
        """The bits that are read (B bits starting at M + max(0, S))."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_msk(self):
        """The bits that are flipped (B bits starting at M - min(0, S))."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    @property
    def period(self):
        """The smallest power of two P the swizzle commutes with: sw(x + j P) == sw(x) + j P (2 to the bit
        just above every bit it reads and flips)."""
        return 1 << (self.yyy_msk | self.zzz_msk).bit_length()

    def __call__(self, offset):
        if not hasattr(offset, "__index__") or isinstance(offset, bool):
            raise TypeError(f"Swizzle: an offset must be an int, got {quote(offset)} ({type(offset).__name__})")
        if not self.bits:
            return offset
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


# ---- the bits of a sliced swizzle ---------------------------------------------------------------------
# Slicing a swizzled layout (layout.py) fixes some coordinates; their offset goes through the swizzle with
# the rest. A fixed coordinate that is only known at run time (a thread index) makes some of those bits
# dynamic: MixedBits tracks which, exactly as C++ does, because it decides which strides print as static.

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


def mixed_xor(a, b):
    """a ^ b, static bit by bit where both are (C++ MixedBits operator^). With a plain run-time int (Dyn)
    the result is one too: C++ has no MixedBits operator for it and XORs the integers."""
    if type(a) is Dyn or type(b) is Dyn:
        return Dyn(int(a) ^ int(b))
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


def swizzle_bits(sw, x):
    """sw(x) for an int, a Dyn or MixedBits (C++ Swizzle::apply, with its MixedBits operators)."""
    if type(x) is Dyn:
        return Dyn(sw(int(x)))
    return mixed_xor(x, _shift_right(_and(x, sw.yyy_msk), sw.shift))


def to_mixed_bits(shape, stride, coord):
    """XOR of coord_i * stride_i over the leaves of a power-of-two layout, static where coord_i is."""
    crd = flatten(idx2crd(coord, shape))
    shape, stride = flatten(shape), flatten(stride)
    out = 0
    for s, d, c in zip(shape, stride, crd):
        mask = (int(s) - 1) * int(d)
        leaf = int(c) * int(d) & mask if type(c) is int else _make_mixed(0, int(c) * int(d), mask)
        out = mixed_xor(out, leaf)
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


def _field_strides(z_lower, z, y, offset, bits):
    """The strides of the B bits of one swizzle field after slicing at `offset` (C++ make_swizzle_strides)."""
    if z_lower:
        return tuple(_pick(_is_zero(_and(offset, y << i)), z << i, -(z << i)) for i in range(bits))
    return tuple(_pick(_is_zero(_and(offset, z << i)), (y + z) << i, (y - z) << i) for i in range(bits))


def sliced_swizzle_strides(sw, offset):
    """The strides of the swizzle's lower and upper B-bit fields once the fixed bits `offset` are known:
    what slicing a Swizzle o layout folds into a plain layout (C++ slice_and_offset of a swizzled layout)."""
    z = sw.zzz_msk & -sw.zzz_msk
    y = sw.yyy_msk & -sw.yyy_msk
    return (_field_strides(z < y, z, y, offset, sw.bits), _field_strides(z > y, z, y, offset, sw.bits))
