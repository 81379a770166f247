"""Element types on the host (NumPy): how a kernel's arrays hold each type of cutelite.numeric, and values
rounded to a type. NumPy has float16 and float32 but no bfloat16 or 8-bit floats, and the kernels only
compute in float32: a kernel's array holds a narrower float as its bits (uint16, uint8), exactly what the
kernel loads and stores. No numba here.
"""

import numpy as np

from cutelite.numeric import numeric

__all__ = ["storage", "holds", "encode", "decode", "to_bf16_bits", "from_bf16_bits", "as_b32"]


def storage(t):
    """The NumPy dtype (its name) of element type t in a kernel's arrays: a float narrower than 32 bits as
    the unsigned int of its width ("float16" -> "uint16"), every other type as NumPy holds it."""
    t = numeric(t, "storage")
    if t.is_float and t.bits < 32:
        return "uint%d" % t.bits
    if t.numpy is None:
        raise ValueError("storage: %s elements (%d bits) are smaller than a byte; no array holds them one by one"
                         % (t.name, t.bits))
    return t.numpy


def holds(dtype, t):
    """Whether an array of NumPy `dtype` holds elements of type t: an array of t itself (NumPy's float16, or
    ml_dtypes' bfloat16) or of its storage (their bits as uint16)."""
    t = numeric(t, "holds")
    return np.dtype(dtype).name in (t.name, storage(t))


def encode(x, t):
    """The values x rounded to the nearest value of float type t (ties to even; NaN stays NaN; past the
    largest finite value: infinity, or NaN for a type without one), as an array of storage(t).

    Post: decode(encode(x, t), t) == x for every x that t represents exactly.
    """
    t = numeric(t, "encode")
    if not t.is_float:
        raise ValueError("encode: %s is not a float type" % t.name)
    if t.numpy == t.name:                                   # NumPy has the type: its own rounding
        return np.asarray(x).astype(t.name).view(storage(t))
    x = np.asarray(x, dtype=np.float64)
    e, m, top = t.exponent, t.mantissa, (1 << t.exponent) - 1
    bias = top >> 1
    a = np.where(np.isfinite(x), np.abs(x), 0.0)
    k = np.maximum(np.frexp(a)[1] - 1, 1 - bias)            # the exponent of a's leading bit (subnormals: the least)
    q = np.rint(np.ldexp(a, m - k)).astype(np.int64)        # a in units of its last place, rounded to even
    k, q = np.where(q >> (m + 1), k + 1, k), np.where(q >> (m + 1), q >> 1, q)   # rounded up past 2^(m+1)
    normal = q >> m > 0
    bits = np.where(normal, ((k + bias) << m) | (q - (1 << m)), q)
    nan = (top << m) | ((1 << m) - 1 if t.finite else 1 << (m - 1))
    largest = nan - 1 if t.finite else (top << m) - 1
    bits = np.where((bits > largest) | np.isinf(x), nan if t.finite else top << m, bits)
    bits = np.where(np.isnan(x), nan, bits) | (np.signbit(x).astype(np.int64) << (e + m))
    return bits.astype(storage(t))


def decode(b, t):
    """float32 values of type-t elements held as storage(t) (exact for a type narrower than float32)."""
    t = numeric(t, "decode")
    if not t.is_float:
        raise ValueError("decode: %s is not a float type" % t.name)
    b = np.asarray(b, dtype=storage(t))
    if t.numpy == t.name:
        return b.view(t.name).astype(np.float32)
    e, m, top = t.exponent, t.mantissa, (1 << t.exponent) - 1
    bias = top >> 1
    b = b.astype(np.int64)
    field, frac = (b >> m) & top, b & ((1 << m) - 1)
    mag = np.where(field > 0, np.ldexp((frac + (1 << m)).astype(np.float64), field - bias - m),
                   np.ldexp(frac.astype(np.float64), 1 - bias - m))
    if t.finite:
        mag = np.where((field == top) & (frac == (1 << m) - 1), np.nan, mag)
    else:
        mag = np.where(field == top, np.where(frac > 0, np.nan, np.inf), mag)
    return np.where(b >> (e + m) & 1, -mag, mag).astype(np.float32)


def to_bf16_bits(x):
    """float32 array -> uint16 array of bf16 bits, rounded to nearest even (encode)."""
    return encode(x, "bfloat16")


def from_bf16_bits(b):
    """uint16 array of bf16 bits -> float32 array (exact)."""
    return decode(b, "bfloat16")


def as_b32(h):
    """A contiguous array of 16-bit elements (float16 or uint16 bf16 bits) viewed as packed uint32 pairs:
    element 2j in the low half of word j, as the tensor-core registers want them."""
    h = np.ascontiguousarray(h)
    if h.dtype.itemsize != 2 or h.shape[-1] % 2:
        raise ValueError("as_b32: need 16-bit elements and an even last dimension, got %s %s"
                         % (h.dtype, h.shape))
    return h.view(np.uint32)
