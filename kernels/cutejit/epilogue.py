"""The epilogue: what a GEMM does to its float32 accumulators on their way out, in registers.

    D = activation(alpha * acc + beta * C + bias)        converted to D's type (float32, float16, bfloat16)

C is D's old contents (read only when beta is on), bias one value per row (length M) or per column (length N),
the activation ReLU or GELU in its tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), with the
GPU's tanh.approx.f32. `Epilogue` says which of these a kernel computes, once, for every kernel that has
one: the CuTe-layer kernels (chapter 7's tensor-core steps, chapter 8's Hopper kernel) through `epilogue`
below, the SIMT kernel through the same `value` text. It is a build-time option: a kernel built without one
(None) is the kernel it was before.

The bias is read as a whole (M, N) matrix with stride 0 along the mode it does not depend on (CuTe's
broadcast: a column bias has stride (0, 1)), so it is partitioned and copied exactly as C is.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from cutelite import Major, make_layout, size
from cutelite.numeric import numeric

from .copy import copy
from .elementwise import convert
from .kernel import Matrix, Scalar
from .registers import make_fragment
from .tensor import local_tile
from .trace import current

__all__ = ["Epilogue", "OUT_TYPES", "ACTIVATIONS", "BIAS_MODES", "epilogue", "GELU_K0", "GELU_K1"]

OUT_TYPES = ("float32", "float16", "bfloat16")
ACTIVATIONS = (None, "relu", "gelu")
BIAS_MODES = (None, "row", "col")
GELU_K0 = 0.7978845608028654           # sqrt(2 / pi)
GELU_K1 = GELU_K0 * 0.044715


@dataclass(frozen=True)
class Epilogue:
    """Which epilogue a kernel is built with. alpha / beta: the accumulators are scaled by a run-time alpha /
    beta times C is added (C read); bias: "row" or "col" (its element type `bias_dtype`); activation: None,
    "relu" or "gelu" (tanh form); out: D's element type."""
    out: str = "float32"
    alpha: bool = False
    beta: bool = False
    bias: Optional[str] = None
    bias_dtype: str = "float32"
    activation: Optional[str] = None

    def __post_init__(self):
        for what, value, allowed in (("out", self.out, OUT_TYPES), ("bias", self.bias, BIAS_MODES),
                                     ("bias_dtype", self.bias_dtype, OUT_TYPES),
                                     ("activation", self.activation, ACTIVATIONS)):
            if value not in allowed:
                raise ValueError("Epilogue: %s must be one of %s, got %r" % (what, ", ".join(map(repr, allowed)), value))

    @property
    def plain(self) -> bool:
        """Whether it computes D = acc in float32: no epilogue at all."""
        return self == Epilogue()

    def matrices(self):
        """The kernel's run-time arguments this epilogue reads, after D: (C, bias, alpha, beta) specs, None for
        each one it does not read (C as D is, row-major; the bias a stride-0 (M, N) view, unit stride along
        the mode it varies in)."""
        return (Matrix(self.out, Major.K) if self.beta else None,
                Matrix(self.bias_dtype, Major.MN if self.bias == "row" else Major.K) if self.bias else None,
                Scalar("float32") if self.alpha else None,
                Scalar("float32") if self.beta else None)

    def value(self, acc, c="c", bias="b", alpha="alpha", beta="beta", tmp="v"):
        """(source lines, result): Python text computing D's float32 value from the texts of the accumulator,
        C's value, the bias, alpha and beta (float32 each). The lines bind `tmp` to the value before the
        activation where the activation reads it more than once."""
        v = "%s * %s" % (alpha, acc) if self.alpha else acc
        if self.beta:
            v = "%s + %s * %s" % (v, beta, c)
        if self.bias:
            v = "%s + %s" % (v, bias)
        if self.activation == "relu":
            return [], "max(%s, float32(0.0))" % v
        if self.activation == "gelu":
            return (["%s = %s" % (tmp, v)],
                    "{0} * (float32(0.5) + float32(0.5) * tanh_approx({0} * (float32({1!r}) + float32({2!r}) * {0} * {0})))"
                    .format(tmp, GELU_K0, GELU_K1))
        return [], v


def _floats(frag):
    """The float32 texts of a fragment's elements, in order (16-bit pairs unpacked once a register)."""
    from .. import instructions
    t = current()
    if frag.dtype == "float32":
        return [frag.element(c)[0] for c in range(size(frag.layout))]
    unpack = {"float16": "unpack_half2", "bfloat16": "unpack_bf16x2"}[frag.dtype]
    t.use(unpack, getattr(instructions, unpack))
    names = {}
    out = []
    for c in range(size(frag.layout)):
        reg, part = frag.element(c)
        if reg not in names:
            names[reg] = (t.fresh("lo"), t.fresh("hi"))
            t.emit("%s, %s = %s(%s)" % (names[reg] + (unpack, reg)))
        out.append(names[reg][part])
    return out


def epilogue(epi, acc, partition, tile, coord, mC, mBias, alpha, beta, pred=None):
    """The registers of D's values for a thread's float32 accumulators `acc` (a fragment, or part of one):
    epi's D = activation(alpha * acc + beta * C + bias), in epi.out. `partition` is the thread's partition
    of a (rows, cols) `tile` (thr_mma.partition_C, say), `coord` the tile's place in the (M, N) matrices: C's
    and the bias's values are copied from the same partition of their tiles (where `pred` holds: the tile's
    edge). The caller copies the result to D's partition."""
    from .. import instructions
    t = current()
    t.use("float32", np.float32)
    out = numeric(epi.out)
    n = size(acc.layout)
    inputs = {}
    for name, m in (("c", mC), ("b", mBias)):
        if m is not None:
            src = partition(local_tile(m, tile, coord))
            regs = make_fragment(make_layout(src.layout.shape), m.dtype, name="r" + name)
            copy(src, regs, pred=pred)
            inputs[name] = _floats(regs)
    if epi.activation == "gelu":
        t.use("tanh_approx", instructions.tanh_approx)
    d = make_fragment(make_layout(acc.layout.shape), "float32", name="rE")      # D's values in float32
    a = _floats(acc)
    for c in range(n):
        lines, result = epi.value(a[c], inputs.get("c", [None] * n)[c], inputs.get("b", [None] * n)[c],
                                  alpha.src if alpha is not None else "alpha", beta.src if beta is not None else "beta",
                                  t.fresh("pre") if epi.activation == "gelu" else None)
        for line in lines:
            t.emit(line)
        t.emit("%s = %s" % (d.element(c)[0], result))
    return d if out.bits == 32 else convert(d, out.name, name="rD")     # 16-bit: rounded, two to a register
