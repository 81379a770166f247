"""Which instruction a copy or an MMA atom is, and how the traced kernel calls it.

A Copy_Atom names its instruction (cutelite's op name, as C++ spells it) and how many values one call
moves; the tensors say where the bytes are. So the choice is made here, once per copy call:

    SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>   global -> shared     cp.async.cg 16 bytes
    SM80_CP_ASYNC_CACHEALWAYS<T>           global -> shared     cp.async.ca 4/8/16 bytes
    SM75_U32x{1,2,4}_LDSM_N                shared -> registers  ldmatrix.x{1,2,4}
    SM75_U16x{2,4,8}_LDSM_T                shared -> registers  ldmatrix.x{1,2,4}.trans
    UniversalCopy<T>, AutoVectorizing...    anything            ld/st of 4, 8 or 16 bytes (.v2, .v4)

An MMA atom's instruction is its PTX (`atom.ptx`); the operand registers are its value counts times the
element width (kernels.instructions.mma_for).
"""

import re

import numpy as np

from cutelite import size
from cutelite.numeric import numeric

from ..expr import src
from .tensor import GTensor, RTensor, STensor

__all__ = ["copy_op", "CopyOp"]


def _intrinsic(t, name):
    from .. import instructions
    return t.use(name, getattr(instructions, name))


def _space(x):
    if isinstance(x, GTensor):
        if not x.mem:
            raise TypeError("cutejit: copy: %r is a tensor of coordinates, not memory" % (x,))
        return "global"
    if isinstance(x, STensor):
        return "shared"
    if isinstance(x, RTensor):
        return "registers"
    raise TypeError("cutejit: copy: expected a global, shared or register tensor, got %r" % (x,))


def _dtype_bits(x):
    return numeric(x.dtype).bits


def _mem(x):
    return x.matrix.name if isinstance(x, GTensor) else x.mem


class CopyOp:
    """One instruction: `vs` source and `vd` destination values a call; emit() writes one call."""

    def __init__(self, name, vs, vd):
        self.name, self.vs, self.vd = name, vs, vd

    def __repr__(self):
        return "CopyOp(%s, %d -> %d values)" % (self.name, self.vs, self.vd)


class Move(CopyOp):
    """A plain load and store of `nbytes` (4, 8 or 16) a call, between any two memories."""

    def __init__(self, nbytes, bits):
        n = nbytes * 8 // bits
        super().__init__("%d-byte move" % nbytes, n, n)
        self.words, self.bits = nbytes // 4, bits

    def emit(self, t, s, si, d, di, p):
        kind = "f32" if "float32" in (s.dtype, d.dtype) else "b32"
        _contiguous(s, si, self.vs, "source")
        _contiguous(d, di, self.vd, "destination")
        n = self.words
        if isinstance(s, RTensor):
            regs = s.words(si, self.vs)
            value = "(%s)" % ", ".join(regs) + ("," if n == 1 else "") if n > 1 else regs[0]
        else:
            ld = _intrinsic(t, "ld_%s_v%d_%s" % (_space(s), n, kind))
            value = "%s(%s, %s)" % (ld, _mem(s), src(s.offset(si)))
        if isinstance(d, RTensor):
            regs = d.words(di, self.vd)
            line = "%s = %s" % (", ".join(regs), value)
            zero = _zero(t, kind)
            if p is True:
                t.emit(line)
            else:
                with t.if_(p):
                    t.emit(line)
                with t.else_():
                    t.emit("%s = %s" % (" = ".join(regs), zero))
            return
        st = _intrinsic(t, "st_%s_v%d_%s" % (_space(d), n, kind))
        line = "%s(%s, %s, %s)" % (st, _mem(d), src(d.offset(di)), value)
        if p is True:
            t.emit(line)
        else:
            with t.if_(p):
                t.emit(line)


def _zero(t, kind):
    if kind == "f32":
        t.use("float32", np.float32)
        return "float32(0.0)"
    t.use("uint32", np.uint32)
    return "uint32(0)"


class CpAsync(CopyOp):
    """cp.async global -> shared, `nbytes` a call (.cg: 16 bytes, L1 bypassed); zero-filled where the
    predicate is false."""

    def __init__(self, nbytes, bits, cache):
        n = nbytes * 8 // bits
        super().__init__("cp.async.%s %d bytes" % (cache, nbytes), n, n)
        self.nbytes, self.cache = nbytes, cache

    def emit(self, t, s, si, d, di, p):
        if not (isinstance(s, GTensor) and isinstance(d, STensor)):
            raise TypeError("cutejit: %s copies global to shared memory, got %r -> %r" % (self.name, s, d))
        _contiguous(s, si, self.vs, "source")
        _contiguous(d, di, self.vd, "destination")
        so, do = src(s.offset(si)), src(d.offset(di))
        if p is True:
            fn = _intrinsic(t, "cp_async_%s_%d" % (self.cache, self.nbytes))
            t.emit("%s(%s, %s, %s, %s)" % (fn, d.mem, do, s.matrix.name, so))
        else:
            if self.nbytes != 16 or self.cache != "cg":
                raise NotImplementedError("cutejit: a predicated %s (only cp.async.cg 16 bytes zero-fills)"
                                          % self.name)
            fn = _intrinsic(t, "cp_async_cg_16_zfill")
            pv = t.let(p, "p")
            t.emit("%s(%s, %s, %s, %s if %s else 0, %s)" % (fn, d.mem, do, s.matrix.name, so, src(pv), src(pv)))


class LdMatrix(CopyOp):
    """ldmatrix.x{num}[.trans]: each lane gives the address of one 16-byte row; the lanes receive the
    8x8 matrices spread as the MMA wants them."""

    def __init__(self, atom):
        super().__init__(atom.op, atom.num_val_src, atom.num_val_dst)
        self.atom = atom

    def emit(self, t, s, si, d, di, p):
        if not (isinstance(s, STensor) and isinstance(d, RTensor)):
            raise TypeError("cutejit: %s reads shared memory into registers, got %r -> %r" % (self.name, s, d))
        if p is not True:
            raise NotImplementedError("cutejit: a predicated ldmatrix")
        _contiguous(s, si, 8, "source row")
        from .. import instructions
        ld = instructions.ldmatrix_for(self.atom)
        fn = t.use(ld.__name__, ld)
        regs = d.words(di, self.vd)
        t.emit("%s = %s(%s, %s)" % (", ".join(regs), fn, s.mem, src(s.offset(si))))


def _contiguous(x, first, n, what):
    """The n values from `first` are n consecutive elements in memory, the first at a multiple of n (else no
    single instruction). C++ CuTe refuses the first to compile (copy_unpack); it does not check the second,
    and a misaligned vector access faults on the GPU when it runs: cutejit refuses both when it builds."""
    if isinstance(x, RTensor):
        return
    values = "%s values %d..%d of %r" % (what, first, first + n - 1, x)
    if not x.contiguous(first, n, aligned=False):
        raise ValueError("cutejit: copy: %s are not %d consecutive elements (C++ CuTe does not compile such a "
                         "copy either)" % (values, n))
    if not x.contiguous(first, n):
        raise ValueError("cutejit: copy: %s are %d consecutive elements that do not start at a multiple of %d: "
                         "C++ CuTe compiles such a copy (it does not check alignment) and it faults when it runs"
                         % (values, n, n))


_LDSM = re.compile(r"SM75_U(32|16)x(\d)_LDSM_(N|T)$")


def copy_op(atom, s, d):
    """The instruction for one call of `atom` (a Copy_Atom, or None: the widest access both tensors allow)
    from s to d."""
    bits = _dtype_bits(s)
    if bits != _dtype_bits(d):
        raise TypeError("cutejit: copy between %d-bit and %d-bit elements (%r -> %r)" % (bits, _dtype_bits(d), s, d))
    if atom is None:
        return _widest(s, d, bits)
    if atom.bits != bits:
        raise TypeError("cutejit: %r copies %s, the tensors hold %d-bit elements" % (atom, atom.value_type, bits))
    op = atom.op
    if _LDSM.match(op):
        return LdMatrix(atom)
    nbytes = atom.num_val_src * bits // 8
    if op.startswith("SM80_CP_ASYNC_CACHEGLOBAL"):
        return CpAsync(nbytes, bits, "cg")
    if op.startswith("SM80_CP_ASYNC_CACHEALWAYS"):
        return CpAsync(nbytes, bits, "ca")
    if op.startswith(("UniversalCopy", "AutoVectorizing", "DefaultCopy")):
        if op.startswith("UniversalCopy") and nbytes in (4, 8, 16):
            return Move(nbytes, bits)
        return _widest(s, d, bits)
    raise NotImplementedError("cutejit: no instruction for %r yet" % (atom,))


def _widest(s, d, bits):
    """Move of the widest of 16, 8, 4 bytes that every call of both tensors can make."""
    for nbytes in (16, 8, 4):
        n = nbytes * 8 // bits
        if n == 0 or size(s.layout) % n:
            continue
        try:
            for first in range(0, size(s.layout), n):
                _contiguous(s, first, n, "source")
                _contiguous(d, first, n, "destination")
                if isinstance(s, RTensor):
                    s.words(first, n)
                if isinstance(d, RTensor):
                    d.words(first, n)
        except ValueError:
            continue
        return Move(nbytes, bits)
    raise NotImplementedError("cutejit: copy of %r to %r needs accesses narrower than 4 bytes" % (s, d))
