"""A wrong kind of argument to a public function of the engine is a TypeError (or ValueError) that names
the operation, never an AttributeError, IndexError or KeyError from deep inside it.

Each function is called with valid arguments in which one argument at a time is replaced by a string, a
float, a list or None (None only where it is not CuTe's `_`)."""

import numpy as np
import pytest

import cutelite as cl
from cutelite import atoms, basis, copy_atoms, identity, int_tuple, layout, printing, tensor, tiled

LAY = cl.Layout((4, 8), (8, 1))
ATOM = cl.make_mma_atom("SM80_16x8x8_F16F16F16F16_TN")
TENSOR = cl.make_tensor(np.zeros(32), LAY)
MMA = cl.make_tiled_mma(ATOM, cl.Layout((2, 2, 1)))
MMA16 = cl.make_tiled_mma(cl.make_mma_atom("SM80_16x8x16_F16F16F16F16_TN"), cl.Layout((2, 2, 1)), (32, 32, 16))
COPY = cl.make_copy_atom("UniversalCopy<uint32_t>", "half_t")
LDSM = cl.make_copy_atom("SM75_U32x4_LDSM_N", "half_t")
TILED_COPY = cl.make_tiled_copy(COPY, cl.Layout((16, 8), (8, 1)), cl.Layout((1, 4)))

# name -> (function, valid arguments, positions where None is valid: CuTe's `_`, or the default)
CALLS = {
    "make_layout": (layout.make_layout, ((4, 8), (1, 4)), (1,)),
    "make_ordered_layout": (layout.make_ordered_layout, ((4, 8), (1, 0)), ()),
    "make_layout_like": (layout.make_layout_like, (LAY,), ()),
    "make_fragment_like": (tensor.make_fragment_like, (LAY,), ()),
    "make_tensor_like": (tensor.make_tensor_like, (TENSOR,), ()),
    "size": (layout.size, (LAY,), ()), "cosize": (layout.cosize, (LAY,), ()),
    "coshape": (layout.coshape, (LAY,), ()), "coprofile": (layout.coprofile, (LAY,), ()),
    "rank": (layout.rank, (LAY,), ()), "depth": (layout.depth, (LAY,), ()),
    "shape": (layout.shape, (LAY,), ()), "stride": (layout.stride, (LAY,), ()),
    "get": (layout.get, (LAY, 0), ()), "take": (layout.take, (LAY, 0, 1), ()),
    "select": (layout.select, (LAY, 1, 0), ()), "flatten": (layout.flatten, (LAY,), ()),
    "append": (layout.append, (LAY,), ()), "prepend": (layout.prepend, (LAY,), ()),
    "group": (layout.group, (LAY, 0, 2), (2,)),
    "coalesce": (layout.coalesce, (LAY,), ()), "filter": (layout.filter, (LAY,), ()),
    "composition": (tensor.composition, (LAY, cl.Layout(4, 2)), (1,)),
    "complement": (layout.complement, (LAY, 64), (1,)),
    "right_inverse": (layout.right_inverse, (LAY,), ()), "left_inverse": (layout.left_inverse, (LAY,), ()),
    "max_common_vector": (layout.max_common_vector, (LAY, LAY), ()),
    "max_common_layout": (layout.max_common_layout, (LAY, LAY), ()),
    "tile_to_shape": (layout.tile_to_shape, (LAY, (8, 16)), ()),
    "upcast": (layout.upcast, (LAY, 2), ()), "downcast": (layout.downcast, (LAY, 2), ()),
    "slice_and_offset": (layout.slice_and_offset, ((cl._, 1), LAY), (0,)),
    **{op: (getattr(cl, op), (LAY, (2, 4)), (1,)) for op in [
        "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
        "logical_product", "zipped_product", "tiled_product", "flat_product"]},
    "blocked_product": (layout.blocked_product, (LAY, cl.Layout(2)), ()),
    "raked_product": (layout.raked_product, (LAY, cl.Layout(2)), ()),
    "crd2idx": (int_tuple.crd2idx, ((1, 2), (4, 8)), (0,)),
    "idx2crd": (int_tuple.idx2crd, (5, (4, 8)), ()),
    "shape_div": (int_tuple.shape_div, ((4, 8), 2), ()), "ceil_div": (int_tuple.ceil_div, ((4, 8), 3), ()),
    "prefix_product": (int_tuple.prefix_product, ((4, 8),), ()),
    "elem_scale": (int_tuple.elem_scale, ((4, 8), (2, 2)), ()),
    "inner_product": (int_tuple.inner_product, ((4, 8), (1, 4)), ()),
    "congruent": (int_tuple.congruent, ((4, 8), (1, 4)), ()),
    "weakly_congruent": (int_tuple.weakly_congruent, (4, (1, 4)), ()),
    "compatible": (int_tuple.compatible, (32, (4, 8)), ()),
    "dyn": (int_tuple.dyn, (4,), ()), "Dyn": (int_tuple.Dyn, (4,), ()),
    # identity tensors
    "E": (basis.E, (1, 0), ()), "as_arithmetic_tuple": (basis.as_arithmetic_tuple, ((1, basis.E(1)),), ()),
    "make_basis_like": (basis.make_basis_like, ((4, 8),), ()), "elem_less": (basis.elem_less, ((1, 2), (4, 8)), ()),
    "make_identity_layout": (identity.make_identity_layout, ((4, 8),), ()),
    "make_identity_tensor": (identity.make_identity_tensor, ((4, 8),), ()),
    "make_coord_tensor": (identity.make_coord_tensor, (LAY,), ()),
    "format_layout": (printing.format_layout, (LAY,), ()), "print_layout": (printing.print_layout, (LAY,), ()),
    "make_tensor": (tensor.make_tensor, (LAY,), ()),
    "offsets_of": (tensor.offsets_of, (LAY,), ()),
    "get_flat_coord": (tensor.get_flat_coord, (LAY, 3), ()),
    "dice": (tensor.dice, ((1, cl._), (4, 8)), (0, 1)),
    "inner_partition": (tensor.inner_partition, (TENSOR, (2, 4), (0, 1)), (1, 2)),
    "outer_partition": (tensor.outer_partition, (TENSOR, (2, 4), (0, 1)), (1, 2)),
    "local_tile": (tensor.local_tile, (TENSOR, (2, 4), (0, 1)), (1, 2)),
    "local_partition": (tensor.local_partition, (TENSOR, cl.Layout((2, 4)), 3), ()),
    "tv_partition": (tensor.tv_partition, (TENSOR, cl.Layout((8, 4), (4, 1)), 2), ()),
    "owner_table": (tensor.owner_table, (cl.Layout((8, 4), (4, 1)), (4, 8)), ()),
    "make_mma_atom": (atoms.make_mma_atom, ("SM61_DP4A",), ()),
    "print_atom": (atoms.print_atom, (ATOM,), ()),
    "tile_shape": (atoms.tile_shape, (ATOM, "A"), ()),
    "fragment_of": (atoms.fragment_of, (ATOM, "A", 3), ()),
    "owner_of": (atoms.owner_of, (ATOM, "A", 1, 2), ()),
    "gather_fragments": (atoms.gather_fragments, (ATOM, "C", np.zeros((16, 8))), ()),
    "scatter_fragments": (atoms.scatter_fragments, (ATOM, "C", np.zeros((32, 4))), ()),
    "mma_reference": (atoms.mma_reference, (ATOM, np.zeros((32, 4)), np.zeros((32, 2)), np.zeros((32, 4))), ()),
    "quadpair_lanes": (atoms.quadpair_lanes, (1,), ()),
    "fragment_grids": (atoms.fragment_grids, (ATOM, 3), (1,)),
    # TiledMMA / TiledCopy
    "make_copy_atom": (copy_atoms.make_copy_atom, ("SM75_U16x8_LDSM_T", "half_t"), ()),
    "make_tiled_mma": (tiled.make_tiled_mma, (ATOM, cl.Layout((2, 2, 1)), (32, 16, 8)), (1, 2)),
    "make_tiled_copy": (tiled.make_tiled_copy, (COPY, cl.Layout((16, 8), (8, 1)), cl.Layout((1, 4))), (2,)),
    **{f"make_tiled_copy_{x}": (getattr(tiled, f"make_tiled_copy_{x}"), (LDSM if x != "C" else COPY, MMA16), ())
       for x in "ABC"},
    "make_tiled_copy_C_atom": (tiled.make_tiled_copy_C_atom, (COPY, MMA), ()),
    "make_tiled_copy_S": (tiled.make_tiled_copy_S, (COPY, TILED_COPY), ()),
    "make_tiled_copy_D": (tiled.make_tiled_copy_D, (COPY, TILED_COPY), ()),
    "tiled.tile_shape": (tiled.tile_shape, (MMA,), (1,)),
    "tile_size": (tiled.tile_size, (MMA, 0), ()),
    "thr_size": (tiled.thr_size, (MMA,), ()),
    **{f"partition_shape_{x}": (getattr(tiled, f"partition_shape_{x}"), (MMA, (64, 64)), ()) for x in "ABC"},
}
DEEP = 2
for _ in range(40):
    DEEP = (DEEP,)  # nested past the engine's depth limit
BAD = ["x", 1.5, [4, 8], None, DEEP, 2 ** 70]


def test_every_engine_export_is_covered():
    """Every public function of the engine's modules that cutelite exports has a row in CALLS (tiled, copy
    atoms, GMMA, pipelines and the teaching layer have their own owners and tests)."""
    mods = {"cutelite.layout", "cutelite.int_tuple", "cutelite.tensor", "cutelite.atoms", "cutelite.printing",
            "cutelite.tiled", "cutelite.copy_atoms", "cutelite.basis", "cutelite.identity"}
    classes = {"Layout", "Tensor", "Major", "MMA_Atom", "Underscore", "LayoutLeft", "LayoutRight",
               "TiledMMA", "ThrMMA", "TiledCopy", "ThrCopy", "Copy_Atom", "ComposedLayout",
               "ScaledBasis", "ArithmeticTuple", "ArithmeticTupleIterator"}
    exported = {n for n in cl.__all__ if callable(getattr(cl, n)) and getattr(cl, n).__module__ in mods}
    assert exported - classes - {"is_tensor"} <= set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_wrong_kind_names_the_operation(name, capsys):
    fn, args, underscore_ok = CALLS[name]
    fn(*args)  # the valid call works
    for i in range(len(args)):
        for bad in BAD:
            if bad is None and i in underscore_ok:
                continue
            call = args[:i] + (bad,) + args[i + 1:]
            with pytest.raises((TypeError, ValueError)) as err:
                fn(*call)
            assert name.split(".")[-1].lower() in str(err.value).lower(), (name, call, err.value)
    capsys.readouterr()
