"""Identity (coordinate) tensors: layouts with ScaledBasis strides over a counting iterator.

``make_identity_tensor((M, N))`` is ``ArithTuple(_0,_0) o (M,N):(_1@0,_1@1)``: its element at (m, n) is the
coordinate (m, n) itself. Partition it exactly as the data is partitioned (local_tile, local_partition,
TiledCopy.partition_S/D, TiledMMA.partition_A/B/C) and each thread learns which coordinates of the whole
tensor its values have; ``elem_less(coord, shape)`` then tells which of them are in bounds (predication).
Nothing here is special-cased: the layout algebra carries the basis strides, the tensor the iterator.
"""

from .basis import ArithmeticTupleIterator, as_arithmetic_tuple, make_basis_like
from .layout import Layout, _check_shape, _need_layout, coprofile
from .tensor import Tensor

__all__ = ["make_identity_layout", "make_coord_tensor", "make_identity_tensor"]


def make_identity_layout(shape):
    """The layout of `shape` whose strides are its basis (make_basis_like): it maps a coordinate to itself.

    Post: L(i) == idx2crd(i, shape) (an ArithmeticTuple; for an int shape, an int), e.g.
    make_identity_layout((4, 8)) == (_4,_8):(_1@0,_1@1) and maps 9 to (1, 2).
    """
    _check_shape(shape, "shape", "make_identity_layout")
    return Layout(shape, make_basis_like(shape))


def make_coord_tensor(layout):
    """The tensor whose element c is layout(c): layout over a counting iterator that starts at the zero
    of the layout's coprofile.

    Post: T(c) == layout(c); str(T) == "ArithTuple" + coprofile + " o " + str(layout).
    """
    _need_layout(layout, "make_coord_tensor")
    return Tensor(ArithmeticTupleIterator(as_arithmetic_tuple(coprofile(layout))), layout)


def make_identity_tensor(shape):
    """make_coord_tensor(make_identity_layout(shape)): the element at coordinate c is c.

    Post: str(make_identity_tensor((4, 8))) == "ArithTuple(_0,_0) o (_4,_8):(_1@0,_1@1)"; T(9) == (1, 2).
    """
    _check_shape(shape, "shape", "make_identity_tensor")
    return make_coord_tensor(make_identity_layout(shape))
