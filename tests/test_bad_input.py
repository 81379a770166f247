"""A bad-input probe of the whole public API: every public function of cutelite (its __all__, the parser,
explain, the algebra on tensors, the methods a chapter calls) and of the teaching layer (checks, svg, viz,
widgets, gemm; the exercise checkers and the live page have their own tests) is called with valid
arguments, then with one argument at a time replaced by a wrong kind or an absurd value: None, a str, a
float, a bool, a negative int, zero, a 70-bit int, a tuple nested 40 deep, a list, an empty tuple, a
Layout, a tuple, an object.

A call may return (C++ accepts many such values: a negative stride, a Layout as a tiler) or raise a
TypeError or ValueError (OutOfRange is one) whose message is short, however large the input. Nothing
else may escape: no AttributeError, IndexError, KeyError, ZeroDivisionError, RecursionError,
OverflowError or NumPy error from deep inside. The checks of the chapters raise AssertionError by design
(a FAIL line), and only they may."""

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import cutelite as cl  # noqa: E402
from cutelite import atoms, bank_conflicts, dsl, explain, gmma, int_tuple, parse, tensor, tensorcore  # noqa: E402
from cutelite.errors import MAX_DEPTH, OutOfRange  # noqa: E402
from cutelite.teach import checks, cpp_recorded, gemm, svg, viz, widgets  # noqa: E402


def _nested(depth):
    t = 2
    for _ in range(depth):
        t = (t,)
    return t


BAD = {"None": None, "str": "x", "float": 1.5, "bool": True, "negative": -1, "zero": 0, "huge": 2 ** 70,
       "deep": _nested(MAX_DEPTH + 8), "list": [4, 8], "empty tuple": (), "Layout": cl.Layout(4),
       "tuple": (4, 8), "object": object()}
MESSAGE_LIMIT = 1000   # errors quote at most ~200 characters of any input

LAY = cl.Layout((4, 8), (8, 1))
SW = cl.composition(cl.Swizzle(2, 0, 3), cl.Layout((8, 8), (8, 1)))
ATOM = cl.make_mma_atom("SM80_16x8x8_F16F16F16F16_TN")
VOLTA = cl.make_mma_atom("SM70_8x8x4_F16F16F16F16_TN")
MMA = cl.make_tiled_mma(ATOM, cl.Layout((2, 1, 1)))
COPY = cl.make_copy_atom("UniversalCopy<uint32_t>", "half_t")
TILED_COPY = cl.make_tiled_copy(COPY, cl.Layout((8, 4), (4, 1)), cl.Layout((1, 2)))
GMMA = cl.make_gmma_atom("SM90_64x8x16_F16F16F16_SS")
SMEM = cl.tile_to_smem(gmma.Layout_K_SW32_Atom("half_t"), (64, 16))
TMA_G = cl.Layout((cl.dyn(256), cl.dyn(128)), (cl.dyn(128), 1))         # (M, K) K-major, run-time extents
TMA_S = cl.tile_to_smem(gmma.Layout_K_SW128_Atom("half_t"), (128, 64))
TMA = cl.make_tma_atom("SM90_TMA_LOAD", TMA_G, TMA_S, (128, 64), value_type="half_t")


def _tma_tiles():
    """The TMA coordinate tensor of TMA_G cut into (128, 64) tiles, the tile's modes grouped first."""
    tiles = cl.local_tile(TMA.get_tma_tensor(TMA_G.shape), (128, 64), (cl._, cl._))
    return tiles.view(cl.group(tiles.layout, 0, 2))
TV = cl.Layout((8, 4), (4, 1))


def _tensor():
    return cl.make_tensor(np.zeros(32), LAY)


def _tensor_set(coord, value):
    _tensor()[coord] = value


def _thr_mma(x):
    return MMA.get_slice(1).partition_A(x)


def _run():
    from cutelite.pipeline import simulate_pipeline
    return simulate_pipeline(ktiles=2, stages=2, consumers=1)


# name -> (function, valid arguments). Keyword arguments are probed through a lambda that names them.
CALLS = {
    # integers and IntTuples
    "dyn": (cl.dyn, ((4, 8),)), "Dyn": (cl.Dyn, (4,)),
    "shape_div": (cl.shape_div, ((4, 8), 2)), "ceil_div": (cl.ceil_div, ((4, 8), 3)),
    "prefix_product": (cl.prefix_product, ((4, 8),)), "elem_scale": (cl.elem_scale, ((4, 8), (2, 2))),
    "inner_product": (cl.inner_product, ((4, 8), (1, 4))), "congruent": (cl.congruent, ((4, 8), (1, 4))),
    "weakly_congruent": (cl.weakly_congruent, (4, (1, 4))), "compatible": (cl.compatible, (32, (4, 8))),
    "crd2idx": (cl.crd2idx, ((1, 2), (4, 8), (1, 4))), "idx2crd": (cl.idx2crd, (5, (4, 8))),
    "int_tuple.flatten": (int_tuple.flatten, (((4, 8), 2),)), "int_tuple.product": (int_tuple.product, ((4, 8),)),
    # layouts
    "Layout": (cl.Layout, ((4, 8), (1, 4))), "Layout.__call__": (LAY, ((1, 2),)),
    "Layout.__getitem__": (lambda key: LAY[key], (1,)),
    "make_layout": (cl.make_layout, ((4, 8), (1, 4))),
    "make_ordered_layout": (cl.make_ordered_layout, ((4, 8), (1, 0))),
    "make_layout_like": (cl.make_layout_like, (LAY,)), "make_fragment_like": (cl.make_fragment_like, (LAY,)),
    "make_tensor_like": (cl.make_tensor_like, (_tensor(),)),
    "size": (cl.size, (LAY, 0)), "cosize": (cl.cosize, (LAY,)), "coshape": (cl.coshape, (LAY,)),
    "coprofile": (cl.coprofile, (LAY,)), "rank": (cl.rank, (LAY,)), "depth": (cl.depth, (LAY,)),
    "shape": (cl.shape, (LAY, 1)), "stride": (cl.stride, (LAY, 1)), "get": (cl.get, (LAY, 0)),
    "take": (cl.take, (LAY, 0, 1)), "select": (cl.select, (LAY, 1, 0)),
    "append": (cl.append, (LAY, cl.Layout(2), 3)), "prepend": (cl.prepend, (LAY, cl.Layout(2), 3)),
    "group": (cl.group, (LAY, 0, 2)), "flatten": (cl.flatten, (LAY,)),
    "slice_and_offset": (cl.slice_and_offset, ((cl._, 1), LAY)), "dice": (cl.dice, ((1, cl._), (4, 8))),
    "get_flat_coord": (cl.get_flat_coord, (LAY, 3)),
    "coalesce": (cl.coalesce, (LAY, (1, 1))), "filter": (cl.filter, (LAY, (1, 1))),
    "composition": (cl.composition, (LAY, cl.Layout(4, 2))),
    "complement": (cl.complement, (LAY, 64)),
    "right_inverse": (cl.right_inverse, (LAY,)), "left_inverse": (cl.left_inverse, (LAY,)),
    **{op: (getattr(cl, op), (LAY, (2, 4))) for op in (
        "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
        "logical_product", "zipped_product", "tiled_product", "flat_product")},
    "blocked_product": (cl.blocked_product, (LAY, cl.Layout(2))),
    "raked_product": (cl.raked_product, (LAY, cl.Layout(2))),
    "max_common_vector": (cl.max_common_vector, (LAY, LAY)),
    "max_common_layout": (cl.max_common_layout, (LAY, LAY)),
    "tile_to_shape": (cl.tile_to_shape, (LAY, (8, 16))), "upcast": (cl.upcast, (LAY, 2)),
    "downcast": (cl.downcast, (LAY, 2)),
    "Swizzle": (cl.Swizzle, (3, 3, 3)), "Swizzle.__call__": (cl.Swizzle(3, 3, 3), (77,)),
    "ComposedLayout": (cl.ComposedLayout, (cl.Swizzle(1, 0, 1), 0, LAY)),
    "ComposedLayout.__call__": (SW, ((1, 2),)),
    "ScaledBasis": (cl.ScaledBasis, (2, (1,))), "E": (cl.E, (1, 0)),
    "ArithmeticTupleIterator.__add__": (lambda off: cl.ArithmeticTupleIterator(cl.as_arithmetic_tuple((0, 0))) + off,
                                        (cl.as_arithmetic_tuple((1, 2)),)),
    "as_arithmetic_tuple": (cl.as_arithmetic_tuple, ((1, cl.E(1)),)),
    "make_basis_like": (cl.make_basis_like, ((4, 8),)), "elem_less": (cl.elem_less, ((1, 2), (4, 8))),
    "format_layout": (cl.format_layout, (LAY,)), "print_layout": (cl.print_layout, (LAY,)),
    # text in, layouts out; derivations
    "parse_layout": (parse.parse_layout, ("(_4,_8):(_1,_4)",)),
    "parse_int_tuple": (parse.parse_int_tuple, ("(4,_8)",)),
    "parse_operand": (parse.parse_operand, ("(4,8):(1,4)",)),
    "explain": (explain.explain, ("logical_divide", LAY, cl.Layout(4, 2))),
    "operand_text": (explain.operand_text, ((cl.Layout(4), 2),)),
    # tensors
    "Tensor": (cl.Tensor, (np.zeros(32), LAY, 0)), "Tensor.__call__": (lambda c: _tensor()(c), ((1, 2),)),
    "Tensor.__setitem__": (_tensor_set, ((1, 2), 3.0)),
    "Tensor.view": (lambda lay, off: _tensor().view(lay, off), (cl.Layout(4), 2)),
    "make_tensor": (cl.make_tensor, (np.zeros(32), LAY)), "offsets_of": (cl.offsets_of, (LAY,)),
    "is_tensor": (cl.is_tensor, (LAY,)),
    "tensor.composition": (tensor.composition, (_tensor(), cl.Layout(4, 2))),
    "tensor.zipped_divide": (tensor.zipped_divide, (_tensor(), (2, 4))),
    "local_tile": (cl.local_tile, (_tensor(), (2, 4), (0, 1))),
    "local_tile(proj)": (cl.local_tile, (_tensor(), (2, 4, 2), (0, 1, cl._), (1, 1, cl._))),
    "inner_partition": (cl.inner_partition, (_tensor(), (2, 4), (0, 1))),
    "outer_partition": (cl.outer_partition, (_tensor(), (2, 4), (0, 1))),
    "local_partition": (cl.local_partition, (_tensor(), cl.Layout((2, 4)), 3)),
    "tv_partition": (cl.tv_partition, (_tensor(), TV, 2)), "owner_table": (cl.owner_table, (TV, (4, 8))),
    "make_identity_layout": (cl.make_identity_layout, ((4, 8),)),
    "make_identity_tensor": (cl.make_identity_tensor, ((4, 8),)),
    "make_coord_tensor": (cl.make_coord_tensor, (LAY,)),
    # atoms
    "make_mma_atom": (cl.make_mma_atom, ("SM61_DP4A",)), "print_atom": (cl.print_atom, (ATOM,)),
    "Major.pair": (cl.Major.pair, (("K", "MN"), "op")),
    "atoms.tile_shape": (atoms.tile_shape, (ATOM, "A")), "fragment_of": (cl.fragment_of, (ATOM, "A", 3)),
    "owner_of": (cl.owner_of, (VOLTA, "A", 1, 2, 1)),
    "gather_fragments": (cl.gather_fragments, (ATOM, "C", np.zeros((16, 8)))),
    "scatter_fragments": (cl.scatter_fragments, (ATOM, "C", np.zeros((32, 4)))),
    "mma_reference": (cl.mma_reference, (ATOM, np.zeros((32, 4)), np.zeros((32, 2)), np.zeros((32, 4)))),
    "quadpair_lanes": (cl.quadpair_lanes, (1,)), "fragment_grids": (atoms.fragment_grids, (ATOM, 3, None)),
    "make_copy_atom": (cl.make_copy_atom, ("SM75_U16x8_LDSM_T", "half_t")),
    "make_gmma_atom": (cl.make_gmma_atom, ("SM90_64x8x16_F16F16F16_SS",)),
    "make_gmma_layout_atom": (cl.make_gmma_layout_atom, ("GMMA::Layout_K_SW128_Atom<half_t>",)),
    "Layout_K_SW32_Atom": (gmma.Layout_K_SW32_Atom, ("half_t",)),
    "gmma_fragment_of": (gmma.gmma_fragment_of, (GMMA, "C", 5)),
    "tile_to_smem": (cl.tile_to_smem, (gmma.Layout_K_SW32_Atom("half_t"), (64, 16))),
    "make_gmma_desc": (cl.make_gmma_desc, ("K", SMEM, 0, None, 0)),
    "GmmaDescriptor": (gmma.GmmaDescriptor, (0, 1, 8, 0, 3)),
    "gmma_desc_blocks": (cl.gmma_desc_blocks, ("K", SMEM, (64, 16), 0)),
    "make_tma_atom": (cl.make_tma_atom, ("SM90_TMA_LOAD", TMA_G, TMA_S, (128, 64), 1, "half_t")),
    "make_tma_copy": (cl.make_tma_copy, ("SM90_TMA_LOAD", TMA_G, TMA_S, (128, 64), 1, "half_t")),
    "tensor_map_params": (cl.tensor_map_params, (TMA, (256, 128), (256, 2), "128B", "none")),
    "tma_partition": (cl.tma_partition, (TMA, 0, cl.Layout(1), TMA_S.with_inner(cl.group(TMA_S.layout_b, 0, 2)),
                                         _tma_tiles())),
    "multicast_mask": (cl.multicast_mask, (cl.Layout((2, 1)), (1, 0), 0)),
    # tiled atoms
    "make_tiled_mma": (cl.make_tiled_mma, (ATOM, cl.Layout((2, 1, 1)), (32, 8, 8))),
    "TiledMMA.get_slice": (MMA.get_slice, (1,)), "ThrMMA.partition_A": (_thr_mma, (_tensor(),)),
    "ThrMMA.partition_fragment_C": (lambda x: MMA.get_slice(0).partition_fragment_C(x), (cl.Layout((32, 8)),)),
    "make_tiled_copy": (cl.make_tiled_copy, (COPY, cl.Layout((8, 4), (4, 1)), cl.Layout((1, 2)))),
    **{f"make_tiled_copy_{x}": (getattr(cl, f"make_tiled_copy_{x}"), (COPY, MMA)) for x in "ABC"},
    **{f"make_tiled_copy_{x}": (getattr(cl, f"make_tiled_copy_{x}"), (COPY, TILED_COPY)) for x in "SD"},
    "make_tiled_copy_C_atom": (cl.make_tiled_copy_C_atom, (COPY, MMA)),
    "TiledCopy.get_slice": (TILED_COPY.get_slice, (1,)),
    "ThrCopy.partition_S": (lambda x: TILED_COPY.get_slice(1).partition_S(x), (cl.Layout((8, 8)),)),
    "ThrCopy.retile_D": (lambda x: TILED_COPY.get_slice(1).retile_D(x), (cl.Layout((2, 1, 1)),)),
    "tile_shape": (cl.tile_shape, (MMA,)), "tile_size": (cl.tile_size, (MMA, 0)),
    "thr_size": (cl.thr_size, (MMA,)),
    **{f"partition_shape_{x}": (getattr(cl, f"partition_shape_{x}"), (MMA, (32, 16))) for x in "ABC"},
    # banks
    "bank_of": (cl.bank_of, (132,)), "wavefronts": (cl.wavefronts, ([4 * i for i in range(32)], 4, False)),
    "ldmatrix_wavefronts": (cl.ldmatrix_wavefronts, ([16 * i for i in range(8)],)),
    "analyse": (cl.analyse, (LAY, [(i % 4, i // 4) for i in range(32)], 4, 1, False)),
    "analyse_ldmatrix": (cl.analyse_ldmatrix, (cl.Layout((8, 8), (8, 1)), [(i, 0) for i in range(8)], 2)),
    "swizzle_for": (cl.swizzle_for, (64, 2, 16)), "lanes_per_phase": (bank_conflicts.lanes_per_phase, (8,)),
    "byte_addresses": (bank_conflicts.byte_addresses, (LAY, [(0, i) for i in range(8)], 4, 1)),
    "lane_coords": (bank_conflicts.lane_coords, (cl.Layout((32, 2), (2, 1)), (8, 8), 2)),
    "bank_grid": (bank_conflicts.bank_grid, (LAY, 4)),
    # the teaching layer
    "check": (checks.check, (LAY, LAY, "the layout")),
    "check_close": (checks.check_close, (np.ones(3), np.ones(3), "ones", 1e-3, 1e-3)),
    "cpp_desc_fields": (cpp_recorded.cpp_desc_fields, ("desc MN SW128 half_t (64,64) tile (64,16) block 0",)),
    "tile_budget": (gemm.tile_budget, (128, 128, 32, 3, 256, 2, 4)),
    "ai_dram": (gemm.ai_dram, (64, 64, 64, 2, 4)), "ai_global": (gemm.ai_global, (128, 128, 2)),
    "ai_shared": (gemm.ai_shared, (8, 8, 2)),
    "article_table_rows": (gemm.article_table_rows, ({},)),
    "layout_rows": (svg.layout_rows, (LAY,)), "layout_svg": (svg.layout_svg, (LAY, "t", True)),
    "tv_svg": (svg.tv_svg, (TV, (4, 8))), "bank_svg": (svg.bank_svg, (LAY, 4, [(0, 1)], "t", 32)),
    "grid_svg": (svg.grid_svg, (2, 3, lambda m, n: ("#ffffff", "", ""), "t", 100)),
    "viridis": (svg.viridis, (0.5,)), "thread_colour": (svg.thread_colour, (3, 8)),
    "tv_offsets": (svg.tv_offsets, (TV,)), "tv_owners": (svg.tv_owners, (TV, (4, 8))),
    "tiled_mma_svg": (svg.tiled_mma_svg, (MMA, 1, "t", False, 300)),
    "tiled_copy_svg": (svg.tiled_copy_svg, (TILED_COPY, 1, "t", False, 300)),
    "layout_grid": (viz.layout_grid, (LAY,)), "draw_layout": (viz.draw_layout, (LAY, None, "t", False)),
    "draw_tv_layout": (viz.draw_tv_layout, (TV, (4, 8))),
    "draw_tiles": (viz.draw_tiles, (LAY, (2, 4), "divide")),
    "segments_of": (viz.segments_of, (list(range(8)), 4, 32)),
    "draw_warp_access": (viz.draw_warp_access, (list(range(32)), 4, 32)),
    "draw_pipeline": (viz.draw_pipeline, (_run(),)),
    "draw_tiled_mma": (viz.draw_tiled_mma, (MMA, 1, False)),
    "draw_tiled_copy": (viz.draw_tiled_copy, (TILED_COPY, 1, False)),
    "draw_banks": (viz.draw_banks, (LAY, 4, [(0, 1)])), "layout_png": (viz.layout_png, (LAY, 4)),
    "LayoutExplorer.render": (lambda s, d: widgets.LayoutExplorer(s, d).render(), ("(4,8)", "(1,4)")),
    "AlgebraExplorer.render": (lambda op, a, b: widgets.AlgebraExplorer(op, a, b).render(),
                               ("composition", "(4,8):(1,4)", "4:2")),
    "widget_redraw": (widgets.widget_redraw, ("32x32 float (4 B)", "column, 32-bit", 5, 0, 5)),
    "fragment_html": (widgets.fragment_html, (ATOM, 3)),
    "tensorcore.objects": (tensorcore.objects, (64, 64, 32, 2, (2, 2), "sm80", "float16", ("K", "MN"))),
    "smem_wavefronts": (gemm.smem_wavefronts, (tensorcore.objects(64, 64, 32, 2), True, 1)),
    "cta_limits": (gemm.cta_limits, (212, 128, 65536, "H100")), "occupancy": (gemm.occupancy, (212, 128, 65536, "T4")),
    "stage_timeline": (gemm.stage_timeline, ("tc_sm80", 3, 6)),
    "timeline_svg": (svg.timeline_svg, (gemm.stage_timeline("tc_sm75", 2, 3), "t")),
    "chunks_svg": (svg.chunks_svg, ([[0, 1], [3, 2]], [(0, 1)], "t")),
    "TilePipelineExplorer.render": (lambda *v: widgets.TilePipelineExplorer(**dict(zip(
        [f[0] for f in widgets.TILE_PIPELINE_FIELDS], v))).render(),
        ("tc_sm80", "float16", "(64,64,32)", "3", "(2,2)", "2", "K-major", "N-major")),
    "GmmaTmaExplorer.render": (lambda *v: widgets.GmmaTmaExplorer(**dict(zip(
        [f[0] for f in widgets.GMMA_TMA_FIELDS], v))).render(),
        ("MN", "SW64", "half_t", "(64,32)", "K first", "(256,256)", "2")),
}

# cutelite.dsl, cutelite under the CuTe DSL's names (tests/test_dsl_refusals.py compares its refusals with the DSL's)
_DL = dsl.make_layout((4, 8), stride=(8, 1))
_DT = dsl.make_rmem_tensor(dsl.make_layout((8, 16), stride=(16, 1)), dsl.Float32)
_DOP = dsl.nvgpu.warp.MmaF16BF16Op(dsl.Float16, dsl.Float32, (16, 8, 16))
_DMMA = dsl.make_tiled_mma(_DOP, (2, 2, 1))
_DCOPY = dsl.make_copy_atom(dsl.nvgpu.CopyUniversalOp(), dsl.Float32, num_bits_per_copy=128)
_DTC = dsl.make_tiled_copy_tv(_DCOPY, dsl.make_layout((8, 16), stride=(16, 1)), dsl.make_layout((1, 4)))
CALLS.update({f"dsl.{name}": call for name, call in {
    "make_layout": (dsl.make_layout, ((4, 8),)), "make_ordered_layout": (dsl.make_ordered_layout, ((4, 8), (1, 0))),
    "size": (dsl.size, (_DL, [0])), "cosize": (dsl.cosize, (_DL, [0])), "rank": (dsl.rank, (_DL, [0])),
    "get": (dsl.get, (_DL, [0])), "select": (dsl.select, (_DL, [1, 0])), "group_modes": (dsl.group_modes, (_DL, 0, 2)),
    "append": (dsl.append, (_DL, dsl.make_layout(2), 3)), "slice_": (dsl.slice_, (_DL, (None, 3))),
    "composition": (dsl.composition, (_DL, (2, 4))), "complement": (dsl.complement, (dsl.make_layout(4, stride=2), 64)),
    "zipped_divide": (dsl.zipped_divide, (_DL, (2, 4))),
    "blocked_product": (dsl.blocked_product, (_DL, dsl.make_layout(2))),
    "tile_to_shape": (dsl.tile_to_shape, (dsl.make_layout((2, 2)), (8, 8), (0, 1))),
    "recast_layout": (dsl.recast_layout, (32, 16, dsl.make_layout((4, 8)))), "crd2idx": (dsl.crd2idx, ((1, 2), _DL)),
    "make_composed_layout": (dsl.make_composed_layout, (dsl.make_swizzle(3, 3, 3), 0,
                                                        dsl.make_layout((8, 64), stride=(64, 1)))),
    "make_tensor": (dsl.make_tensor, (3, _DL)), "make_rmem_tensor": (dsl.make_rmem_tensor, (_DL, dsl.Float32)),
    "make_fragment_like": (dsl.make_fragment_like, (_DT, dsl.Float16)),
    "local_tile": (dsl.local_tile, (_DT, (2, 4), (0, 1))),
    "local_partition": (dsl.local_partition, (_DT, dsl.make_layout((2, 4)), cl.dyn(3))),
    "make_tiled_mma": (dsl.make_tiled_mma, (_DOP, (2, 2, 1), (32, 32, 16))),
    "make_tiled_copy_tv": (dsl.make_tiled_copy_tv, (_DCOPY, dsl.make_layout((8, 16), stride=(16, 1)),
                                                    dsl.make_layout((1, 4)))),
    "TiledMma.partition_shape_A": (_DMMA.partition_shape_A, ((64, 32),)),
    "ThrMma.partition_A": (lambda x: _DMMA.get_slice(3).partition_A(x), (_DT,)),
    "TiledMma.make_fragment_C": (_DMMA.make_fragment_C, (_DMMA.get_slice(0).partition_C(_DT),)),
    "ThrCopy.partition_S": (lambda x: _DTC.get_slice(3).partition_S(x), (dsl.make_rmem_tensor((16, 128), dsl.Int8),)),
}.items()})

# Arguments that accept any value by design: a title or caption, the values a check compares, a flag
# read for its truth, an `ax` (None: a new figure).
FREE = {"check": {0, 1, 2}, "check_close": {2}, "layout_svg": {1, 2}, "bank_svg": {3}, "grid_svg": {3},
        "tiled_mma_svg": {2, 3}, "tiled_copy_svg": {2, 3}, "draw_layout": {1, 2, 3}, "is_tensor": {0},
        "draw_tiled_mma": {2}, "draw_tiled_copy": {2}, "operand_text": {0}, "wavefronts": {2}, "analyse": {4},
        "timeline_svg": {1}, "chunks_svg": {2}, "smem_wavefronts": {1}}
# Exceptions a function raises by design: check and check_close print PASS or raise AssertionError (FAIL).
BY_DESIGN = {"check": AssertionError, "check_close": AssertionError}


def teardown_function():
    plt.close("all")


@pytest.mark.parametrize("name", sorted(CALLS))
def test_bad_input_raises_only_type_or_value_errors(name, capsys):
    fn, args = CALLS[name]
    fn(*args)  # the valid call works
    allowed = (TypeError, ValueError) + ((BY_DESIGN[name],) if name in BY_DESIGN else ())
    escaped, long_messages = [], []
    for i in range(len(args)):
        if i in FREE.get(name, ()):
            continue
        for kind, bad in BAD.items():
            try:
                fn(*args[:i], bad, *args[i + 1:])
            except allowed as e:
                if not 0 < len(str(e)) <= MESSAGE_LIMIT:
                    long_messages.append((i, kind, len(str(e))))
            except Exception as e:  # noqa: BLE001 - what the probe looks for
                escaped.append((i, kind, f"{type(e).__name__}: {str(e)[:200]}"))
            finally:
                plt.close("all")
    capsys.readouterr()
    assert not escaped, escaped
    assert not long_messages, long_messages


def test_every_public_function_is_probed():
    """Every callable cutelite exports is in CALLS (classes through their constructor or a method)."""
    probed = {fn for fn, _ in CALLS.values()}
    names = {getattr(fn, "__name__", None) for fn, _ in CALLS.values()}
    not_probed = [n for n in cl.__all__ if callable(getattr(cl, n)) and getattr(cl, n) not in probed
                  and n not in names and n not in ("OutOfRange", "Underscore", "LayoutLeft", "LayoutRight",
                                                   "Major", "MMA_Atom", "GMMA_Atom", "Copy_Atom", "TMA_Atom",
                                                   "TensorMapParams", "TiledMMA", "ThrMMA",
                                                   "TiledCopy", "ThrCopy", "ArithmeticTuple",
                                                   "ArithmeticTupleIterator")]
    assert not not_probed


def test_out_of_range_is_an_index_error_and_a_value_error():
    with pytest.raises(OutOfRange) as e:
        LAY(1, 2, 3)
    assert isinstance(e.value, IndexError) and isinstance(e.value, ValueError)
