"""copy(tiled_copy, src, dst): one thread's share of a copy, one instruction per atom.

As in CuTe, src and dst are a thread's partitions (partition_S / partition_D / retile_D) of the same
values in the same order: mode 0 holds the atom's values first, so value i of src goes to value i of dst,
and each atom call takes the next `num_val_src` source and `num_val_dst` destination values. The copy
atom names the instruction (cp.async, ldmatrix, a 4/8/16-byte load and store), the tensors' kinds say
where the bytes are; every offset that the layouts fix is a constant in the generated code.

    copy(g2s, tAgA[_, _, _, k], tAsA[_, _, _, stage])        # cp.async, 16 bytes a call
    copy(s2r, tXsA[_, _, kb], tXrA[_, _, kb])                # ldmatrix.x4 into registers
    copy(tCrC, tCgC, pred=elem_less(tCcC, shape(mC)))        # no atom: widest aligned accesses
"""

from cutelite import Copy_Atom, TiledCopy, size
from cutelite.numeric import numeric

from ..expr import is_sym
from .instructions import copy_op
from .tensor import GTensor
from .trace import current

__all__ = ["copy", "elem_less", "Predicate"]


class Predicate:
    """elem_less(coordinate tensor, bound), evaluated per atom call: the call's values are all in bounds."""

    def __init__(self, coords, bound):
        if not isinstance(coords, GTensor) or coords.mem:
            raise TypeError("cutejit: elem_less takes a partition of an identity tensor "
                            "(make_identity_tensor), got %r" % (coords,))
        self.coords, self.bound = coords, tuple(bound)

    def at(self, first, n):
        """Run-time condition that values first .. first + n - 1 lie inside the bound."""
        cs = [self.coords.coord(first + v) for v in range(n)]
        cond = None
        for m, b in enumerate(self.bound):
            if b is None:
                continue
            top = max(cs, key=lambda c: _static(c[m]))[m]
            part = top < b if is_sym(top) else (top < b if is_sym(b) else bool(top < b))
            if part is True:
                continue
            if part is False:
                return False
            cond = part if cond is None else cond & part
        return True if cond is None else cond


def _static(x):
    """The constant part of a coordinate term, to find the last of several values (they differ by it)."""
    return x if isinstance(x, int) else 0 if is_sym(x) else int(x)


def elem_less(coords, bound):
    """Predicate: a copy reads or writes only values whose coordinates are < bound in every mode
    (None: no bound in that mode). coords: the same partition of make_identity_tensor as the data's."""
    return Predicate(coords, bound)


def _atom_of(x):
    if isinstance(x, Copy_Atom):
        return x
    inner = getattr(x, "tiled", x)
    if isinstance(inner, TiledCopy):
        return inner.atom
    raise TypeError("cutejit: copy takes a TiledCopy or a Copy_Atom first, got %r" % (x,))


def copy(*args, pred=None):
    """copy(tiled_copy, src, dst) or copy(src, dst) (the widest access both layouts allow)."""
    if len(args) == 3:
        atom, s, d = _atom_of(args[0]), args[1], args[2]
    elif len(args) == 2:
        atom, (s, d) = None, args
    else:
        raise TypeError("cutejit: copy(tiled_copy, src, dst) or copy(src, dst), got %d arguments" % len(args))
    op = copy_op(atom, s, d)
    n = size(s.layout) // op.vs
    if size(s.layout) % op.vs or size(d.layout) != n * op.vd:
        raise ValueError("cutejit: copy of %r to %r: %d and %d values do not make whole calls of %s (%d and %d "
                         "values a call)" % (s, d, size(s.layout), size(d.layout), op.name, op.vs, op.vd))
    if pred is not None and size(pred.coords.layout) != size(s.layout):
        raise ValueError("cutejit: copy: the predicate has %d values, the source %d"
                         % (size(pred.coords.layout), size(s.layout)))
    for x, values in ((s, op.vs), (d, op.vd)):          # what the copy assumes of a matrix, asked at launch
        if isinstance(x, GTensor) and x.mem:
            x.matrix.accessed(values * numeric(x.dtype).bits // 8, pred is not None)
    t = current()
    for i in range(n):
        p = True if pred is None else pred.at(i * op.vs, op.vs)
        if p is False:
            continue
        op.emit(t, s, i * op.vs, d, i * op.vd, p)
