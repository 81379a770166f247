"""Host-side (NumPy) helpers for 16-bit floats: bf16 has no NumPy dtype, so we keep bf16 data as uint16
bit patterns, exactly the bits a kernel sees. No numba here.
"""

import numpy as np


def to_bf16_bits(x):
    """float32 array -> uint16 array of bf16 bits, rounded to nearest even (NaN stays a quiet NaN).

    Post: from_bf16_bits(to_bf16_bits(x)) is within half a bf16 ulp of x (bit-exact for bf16 values).
    """
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    is_nan = (u & 0x7FFFFFFF) > 0x7F800000
    return np.where(is_nan, (u >> 16) | 0x40, rounded).astype(np.uint16)


def from_bf16_bits(b):
    """uint16 array of bf16 bits -> float32 array (exact)."""
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def as_b32(h):
    """A contiguous array of 16-bit elements (float16 or uint16 bf16 bits) viewed as packed uint32 pairs:
    element 2j in the low half of word j, as the tensor-core registers want them."""
    h = np.ascontiguousarray(h)
    if h.dtype.itemsize != 2 or h.shape[-1] % 2:
        raise ValueError("as_b32: need 16-bit elements and an even last dimension, got %s %s"
                         % (h.dtype, h.shape))
    return h.view(np.uint32)
