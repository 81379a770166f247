"""cutelite: a pure-Python CuTe engine, exact to C++ CuTe (results and printed text)."""

from .int_tuple import dyn, Dyn, shape_div, ceil_div, prefix_product, elem_scale, inner_product
from .int_tuple import congruent, weakly_congruent, compatible
from .layout import (
    Layout, Underscore, _, LayoutLeft, LayoutRight, make_layout, make_ordered_layout, make_layout_like,
    size, cosize, rank, depth, shape, stride, get, take, append, prepend, group, flatten, select,
    coalesce, filter, composition, complement, right_inverse, left_inverse,
    logical_divide, zipped_divide, tiled_divide, flat_divide,
    logical_product, zipped_product, tiled_product, flat_product, blocked_product, raked_product,
    max_common_vector, max_common_layout, tile_to_shape, upcast, downcast,
    slice_and_offset, crd2idx, idx2crd, coshape, coprofile,
)
from .basis import ScaledBasis, E, ArithmeticTuple, ArithmeticTupleIterator, as_arithmetic_tuple, make_basis_like, elem_less
from .layout import ComposedLayout
from .swizzle import Swizzle
from .printing import format_layout, print_layout
from .teach.checks import check, check_close
from .tensor import (
    Tensor, make_tensor, is_tensor, local_tile, local_partition, inner_partition, outer_partition,
    tv_partition, owner_table, dice, get_flat_coord, offsets_of,
    # the algebra extended to tensors (on layouts these are exactly the layout functions)
    make_fragment_like, make_tensor_like, composition, logical_divide, zipped_divide, tiled_divide, flat_divide,
)
from .identity import make_identity_layout, make_coord_tensor, make_identity_tensor
from .atoms import (
    Major, MMA_Atom, MMA_ATOMS, make_mma_atom, print_atom, tile_shape, fragment_of, owner_of,
    gather_fragments, scatter_fragments, mma_reference, quadpair_lanes,
)
from .gmma import GMMA_Atom, make_gmma_atom, make_gmma_layout_atom, make_gmma_desc, gmma_desc_blocks, tile_to_smem
from .copy_atoms import Copy_Atom, COPY_OPS, make_copy_atom
from .tma import (
    TMA_OPS, TMA_Atom, TensorMapParams, make_tma_atom, make_tma_copy, tma_partition, tensor_map_params,
    multicast_mask,
)
from .tiled import (
    TiledMMA, ThrMMA, TiledCopy, ThrCopy, make_tiled_mma, make_tiled_copy, make_tiled_copy_A,
    make_tiled_copy_B, make_tiled_copy_C, make_tiled_copy_S, make_tiled_copy_D, make_tiled_copy_C_atom,
    tile_shape, tile_size, thr_size, partition_shape_A, partition_shape_B, partition_shape_C,
)
from .bank_conflicts import (
    bank_of, wavefronts, ldmatrix_wavefronts, analyse, analyse_ldmatrix, swizzle_for,
)

from .errors import OutOfRange

__all__ = [
    # integers and IntTuples
    "dyn", "Dyn", "shape_div", "ceil_div", "prefix_product", "elem_scale", "inner_product",
    "congruent", "weakly_congruent", "compatible", "crd2idx", "idx2crd",
    # layouts and their algebra
    "Layout", "ComposedLayout", "Underscore", "_", "LayoutLeft", "LayoutRight", "Swizzle",
    "make_layout", "make_ordered_layout", "make_layout_like", "make_fragment_like", "make_tensor_like",
    "size", "cosize", "coshape", "coprofile", "rank", "depth", "shape", "stride", "get", "take", "select",
    "append", "prepend", "group", "flatten", "slice_and_offset", "dice", "get_flat_coord",
    "coalesce", "filter", "composition", "complement", "right_inverse", "left_inverse",
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
    "max_common_vector", "max_common_layout", "tile_to_shape", "upcast", "downcast",
    "ScaledBasis", "E", "ArithmeticTuple", "ArithmeticTupleIterator", "as_arithmetic_tuple",
    "make_basis_like", "elem_less",
    "format_layout", "print_layout", "check", "check_close", "OutOfRange",
    # tensors and partitions
    "Tensor", "make_tensor", "is_tensor", "local_tile", "local_partition", "inner_partition",
    "outer_partition", "tv_partition", "owner_table", "offsets_of",
    "make_identity_layout", "make_coord_tensor", "make_identity_tensor",
    # atoms, tiled atoms, shared memory
    "Major", "MMA_Atom", "MMA_ATOMS", "make_mma_atom", "print_atom", "fragment_of", "owner_of",
    "gather_fragments", "scatter_fragments", "mma_reference", "quadpair_lanes",
    "GMMA_Atom", "make_gmma_atom", "make_gmma_layout_atom", "make_gmma_desc", "gmma_desc_blocks", "tile_to_smem",
    "Copy_Atom", "COPY_OPS", "make_copy_atom",
    "TMA_OPS", "TMA_Atom", "TensorMapParams", "make_tma_atom", "make_tma_copy", "tma_partition",
    "tensor_map_params", "multicast_mask",
    "TiledMMA", "ThrMMA", "TiledCopy", "ThrCopy", "make_tiled_mma", "make_tiled_copy", "make_tiled_copy_A",
    "make_tiled_copy_B", "make_tiled_copy_C", "make_tiled_copy_S", "make_tiled_copy_D", "make_tiled_copy_C_atom",
    "tile_shape", "tile_size", "thr_size", "partition_shape_A", "partition_shape_B", "partition_shape_C",
    "bank_of", "wavefronts", "ldmatrix_wavefronts", "analyse", "analyse_ldmatrix", "swizzle_for",
]
