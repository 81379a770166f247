"""Register fragments: one Python variable per 32-bit register of a thread, named once.

A fragment's layout (CuTe's make_fragment_like, partition_fragment_A/B/C) numbers its elements; element e
lives in register e // (32 / bits). The registers are plain local variables of the generated kernel, so
Numba keeps them in registers: every index into them is resolved when the kernel is traced.
"""

import numpy as np

from cutelite import cosize, make_layout, size
from cutelite import make_fragment_like as _like_layout
from cutelite.numeric import numeric

from .tensor import GTensor, RTensor
from .trace import current

__all__ = ["element_type", "make_fragment", "make_fragment_like", "fill"]


def element_type(dtype, op):
    """The Numeric (cutelite.numeric) that `dtype` names, if cutejit holds it: 8-, 16- or 32-bit elements,
    whole ones to a 32-bit register. A ValueError naming `op` otherwise."""
    t = numeric(dtype, "cutejit: " + op)
    if t.bits not in (8, 16, 32):
        raise ValueError("cutejit: %s: %s elements are %d bits; cutejit holds 8-, 16- and 32-bit elements (whole "
                         "ones to a 32-bit register)" % (op, t.name, t.bits))
    return t


def make_fragment(layout, dtype, name="r"):
    """A register tensor of `layout` holding `dtype` elements (16-bit ones two to a register)."""
    e = element_type(dtype, "make_fragment")
    t = current()
    n = -(-cosize(layout) * e.bits // 32)
    base = t.fresh(name) + "_"
    return RTensor(layout, ["%s%d" % (base, i) for i in range(n)], e.name, e.bits)


def make_fragment_like(x, dtype=None, name="r"):
    """Registers shaped like tensor x (its partition of global or shared memory): CuTe's make_fragment_like,
    a compact layout of x's shape, mode 0 first (a global tensor's layout counts coordinates, not offsets:
    its fragment is simply column-major)."""
    layout = make_layout(x.layout.shape) if isinstance(x, GTensor) else _like_layout(x.layout)
    return make_fragment(layout, dtype or x.dtype, name)


def fill(frag, value):
    """Every register of the fragment set to `value` (for 16-bit elements: both halves, as bits)."""
    t = current()
    if frag.bits == 32 and frag.dtype == "float32":
        t.use("float32", np.float32)
        text = "float32(%r)" % float(value)
    else:
        t.use("uint32", np.uint32)
        if value != 0:
            raise NotImplementedError("cutejit: fill of %s registers with %r" % (frag.dtype, value))
        text = "uint32(0)"
    seen = set()
    for c in range(size(frag.layout)):
        reg, _ = frag.element(c)
        if reg not in seen:
            seen.add(reg)
            t.emit("%s = %s" % (reg, text))
