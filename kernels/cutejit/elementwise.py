"""Arithmetic on a thread's registers inside a traced kernel: what an FP8 GEMM does with its accumulators
between the MMAs and before the store (scale, add into a second accumulator, round to a narrower type).

    s = load_scalar(mS, i, j)                  # one float32 of a global matrix, read at run time
    axpy(total, acc, lambda c: s)              # total[c] += acc[c] * s, for every element c
    rD = convert(total, "bfloat16", lambda c: s)   # float32 * s -> bf16 / fp16 registers, two to a register

A scale is a function of the element's coordinate in the fragment: the name of a run-time float (a loaded
scale, or a product of them), or None for 1. Each line the trace writes is one multiply-add per element.
"""

from cutelite import size

from ..expr import src
from .registers import element_type, make_fragment
from .tensor import GTensor, RTensor
from .trace import current

__all__ = ["load_scalar", "multiply", "axpy", "convert"]


def load_scalar(x, i, j, hint="sc"):
    """The float32 x[i, j] of a whole matrix argument x (a kernel's Matrix), loaded where the trace is: the
    name of the run-time value."""
    if not isinstance(x, GTensor) or not x.mem or x.layout is not None or x.dtype != "float32":
        raise TypeError("cutejit: load_scalar reads a float32 Matrix argument, got %r" % (x,))
    t = current()
    name = t.fresh(hint)
    t.emit("%s = %s[%s, %s]" % (name, x.matrix.name, src(i), src(j)))
    return name


def multiply(a, b, hint="sc"):
    """The run-time product a * b of two named floats (None stands for 1)."""
    if a is None or b is None:
        return b if a is None else a
    t = current()
    name = t.fresh(hint)
    t.emit("%s = %s * %s" % (name, a, b))
    return name


def _check_f32(x, what):
    if not isinstance(x, RTensor) or x.dtype != "float32":
        raise TypeError("cutejit: %s takes float32 registers, got %r" % (what, x))


def axpy(y, x, scale=lambda c: None):
    """y[c] += x[c] * scale(c) for every element c of the float32 fragments x and y (the same shape)."""
    _check_f32(x, "axpy")
    _check_f32(y, "axpy")
    if size(x.layout) != size(y.layout):
        raise ValueError("cutejit: axpy of %r into %r: %d and %d elements" % (x, y, size(x.layout), size(y.layout)))
    t = current()
    for c in range(size(x.layout)):
        (xr, _), (yr, _), s = x.element(c), y.element(c), scale(c)
        t.emit("%s = %s + %s" % (yr, yr, xr if s is None else "%s * %s" % (xr, s)))


def convert(x, dtype, scale=lambda c: None, name="cv"):
    """A new fragment of x's layout holding x[c] * scale(c) as `dtype` (float32, or bfloat16 / float16 rounded
    to nearest-even, elements c and c + 1 packed into one register as the tensor cores and 4-byte stores want)."""
    _check_f32(x, "convert")
    e = element_type(dtype, "convert")
    if e.name not in ("float32", "bfloat16", "float16"):
        raise ValueError("cutejit: convert: float32 registers become float32, bfloat16 or float16, got %s" % e.name)
    t = current()
    out = make_fragment(x.layout, e.name, name)
    value = [(lambda r, s: r if s is None else "%s * %s" % (r, s))(x.element(c)[0], scale(c))
             for c in range(size(x.layout))]
    if e.bits == 32:
        for c, v in enumerate(value):
            t.emit("%s = %s" % (out.element(c)[0], v))
        return out
    from .. import instructions
    pack = "pack_bf16x2" if e.name == "bfloat16" else "pack_half2"
    fn = t.use(pack, getattr(instructions, pack))
    t.use("float32", __import__("numpy").float32)
    for c in range(0, size(x.layout), 2):
        reg, part = out.element(c)
        if part != 0 or out.element(c + 1) != (reg, 1):
            raise ValueError("cutejit: convert: elements %d and %d of %r do not share a register" % (c, c + 1, out))
        t.emit("%s = %s(float32(%s), float32(%s))" % (reg, fn, value[c], value[c + 1]))
    return out
