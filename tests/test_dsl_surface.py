"""cutelite.dsl, cutelite under the CuTe DSL's names: the same objects as C++ CuTe builds (the expected
texts are C++ printouts quoted in chapter 6, and CuTe's documented examples), the DSL's signatures and
refusals, the typed ops' C++ instructions, the DSL's printed text (as nvidia-cutlass-dsl 4.8.1 prints it),
and a name map whose every DSL name exists in the surface (and in the DSL, where it is installed)."""

import re

import numpy as np
import pytest

import cutelite as cl
import cutelite.dsl as cute
from kernels.dsl import missing


def test_layouts_with_keyword_strides_and_mode_paths():
    L = cute.make_layout((4, 8), stride=(8, 1))
    assert L == cl.Layout((4, 8), (8, 1)) and str(L) == "(_4,_8):(_8,_1)"
    X = cute.make_layout((2, (3, 4)))
    assert cute.size(X, mode=[1]) == 12 and cute.size(X, mode=[1, 0]) == 3    # C++ size<1>, size<1,0>
    assert str(cute.coalesce(cute.make_layout((2, (1, 6)), stride=(1, (6, 2))), target_profile=(1, 1))) == "(_2,_6):(_1,_2)"
    assert str(cute.append(L, cute.make_layout(1, stride=0), up_to_rank=4)) == "(_4,_8,_1,_1):(_8,_1,_0,_0)"
    assert str(cute.group_modes(cute.make_layout((2, 3, 5, 7)), 0, 2)) == "((_2,_3),_5,_7):((_1,_2),_6,_30)"
    assert str(cute.select(cute.make_layout((2, 3, 5, 7)), mode=[1, 3])) == "(_3,_7):(_2,_30)"
    assert str(cute.slice_(L, (None, 3))) == "(_4):(_8)"
    assert str(cute.complement(cute.make_layout((2, 2), stride=(1, 6)), 24)) == "(_3,_2):(_2,_12)"   # CuTe docs
    assert str(cute.recast_layout(16, 8, L)) == "(_4,_4):(_4,_1)" and str(cute.recast_layout(8, 16, L)) == "(_4,_16):(_16,_1)"
    sw = cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
    assert sw == cl.composition(cl.Swizzle(3, 3, 3), cl.Layout((8, 64), (64, 1)))
    assert str(cute.tile_to_shape(sw, (128, 64, 3), (0, 1, 2))) == \
        "Sw<3,3,3> o _0 o ((_8,_16),(_64,_1),(_1,_3)):((_64,_512),(_1,_0),(_0,_8192))"


@pytest.mark.parametrize("call, message", [
    (lambda: cute.make_layout((4, 8), (8, 1)), "positional"),
    (lambda: cute.complement(cute.make_layout(4, stride=2)), "cotarget"),
    (lambda: cute.zipped_product(cute.make_layout(2), (cute.make_layout(3), cute.make_layout(4))), "must be a Value"),
    (lambda: cute.composition(cute.make_swizzle(3, 3, 3), cute.make_layout(8)), "make_composed_layout"),
    (lambda: cute.make_layout(cute.make_layout(3)), "append"),
])
def test_the_dsls_refusals_are_mirrored(call, message):
    with pytest.raises(TypeError, match=message):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: cute.make_mma_atom("SM80_16x8x16_F32F16F16F32_TN"), "make_mma_atom: op must be one of"),
    (lambda: cute.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", (2, 2, 1)), "make_tiled_mma: op_or_atom"),
    (lambda: cute.make_copy_atom("SM75_U32x4_LDSM_N", cute.Float16), "make_copy_atom: op must be one of"),
    (lambda: cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), "float"), "make_copy_atom: copy_internal_type"),
    (lambda: cute.size(cute.make_layout(4), mode="0"), "size: mode must be"),
    (lambda: cute.crd2idx(1, "x"), "crd2idx"),
])
def test_wrong_kinds_name_the_function(call, message):
    with pytest.raises(TypeError, match=message):
        call()


@pytest.mark.parametrize("op, cpp", [
    (cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), "SM80_16x8x16_F32F16F16F32_TN"),
    (cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float16, (16, 8, 8)), "SM80_16x8x8_F16F16F16F16_TN"),
    (cute.nvgpu.warp.MmaF16BF16Op(cute.BFloat16, cute.Float32, (16, 8, 16)), "SM80_16x8x16_F32BF16BF16F32_TN"),
    (cute.nvgpu.warp.MmaTF32Op((16, 8, 8)), "SM80_16x8x8_F32TF32TF32F32_TN"),
    (cute.nvgpu.MmaUniversalOp(cute.Float32), "UniversalFMA<float,float,float,float>"),
])
def test_typed_mma_ops_name_their_instruction(op, cpp):
    assert cute.make_mma_atom(op).cutelite == cl.make_mma_atom(cpp)


@pytest.mark.parametrize("op, dtype, bits, cpp, value_type", [
    (cute.nvgpu.CopyUniversalOp(), cute.Float32, 128, "UniversalCopy<uint128_t>", "float"),
    (cute.nvgpu.cpasync.CopyG2SOp(cute.nvgpu.LoadCacheMode.GLOBAL), cute.Float16, 128,
     "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "half_t"),
    (cute.nvgpu.cpasync.CopyG2SOp(), cute.Float16, 64, "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", "half_t"),
    (cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cute.Float16, None, "SM75_U32x4_LDSM_N", "half_t"),
    (cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4), cute.Float16, None, "SM75_U16x8_LDSM_T", "half_t"),
    (cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 1), cute.Float16, None, "SM75_U32x1_LDSM_N", "half_t"),
])
def test_typed_copy_ops_name_their_instruction(op, dtype, bits, cpp, value_type):
    assert cute.make_copy_atom(op, dtype, num_bits_per_copy=bits).cutelite == cl.make_copy_atom(cpp, value_type)


def _walkthrough():
    op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float16, (16, 8, 16))
    return cute.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))


def test_tiled_mma_and_partitions_are_chapter_6s():
    mma = _walkthrough()
    assert str(mma).startswith("TiledMMA\n  ThrLayoutVMNK:  (_32,_2,_2,_1):(_1,_32,_64,_0)\n  PermutationMNK: (_32,_32,_16)")
    assert (mma.size, [mma.get_tile_size(i) for i in range(3)]) == (128, [32, 32, 16])
    assert str(mma.tv_layout_A) == "((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))"
    sA = cute.make_rmem_tensor(cute.make_layout((128, 32), stride=(1, 128)), cute.Float16)
    tCsA = mma.get_slice(0).partition_A(sA)
    tCrA = mma.make_fragment_A(tCsA)
    assert str(tCsA.layout) == "((_2,_2,_2),_4,_2):((_128,_8,_1024),_32,_2048)"       # C++ printouts (chapter 6)
    assert str(tCrA.layout) == "((_2,_2,_2),_4,_2):((_1,_2,_4),_8,_32)"
    sC = cute.make_rmem_tensor(cute.make_layout((128, 128), stride=(1, 128)), cute.Float16)
    assert str(mma.make_fragment_C(mma.get_slice(0).partition_C(sC)).layout) == "((_2,_2),_4,_8):((_1,_2),_4,_16)"
    copy_A = cute.make_tiled_copy_A(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4), cute.Float16), mma)
    assert str(copy_A.layout_tv_tiled) == "((_4,_8,_2,_2),((_2,_2,_2),(_1,_1))):((_64,_1,_16,_0),((_32,_8,_256),(_0,_0)))"
    thr = copy_A.get_slice(0)
    assert str(thr.partition_S(sA).layout) == "((_8,_1),_4,_2):((_1,_0),_32,_2048)"
    assert str(thr.retile(tCrA).layout) == "((_8,_1),_4,_2):((_1,_0),_8,_32)"
    assert thr.retile(tCrA).engine is tCrA.engine                       # a view of the same registers


def test_tiled_copy_tv_is_cutelites_make_tiled_copy():
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32, num_bits_per_copy=128)
    thr, val = cute.make_layout((8, 16), stride=(16, 1)), cute.make_layout((1, 4))
    tc = cute.make_tiled_copy_tv(atom, thr, val)
    ref = cl.make_tiled_copy(cl.make_copy_atom("UniversalCopy<uint128_t>", "float"), thr, val)
    assert (tc.layout_tv_tiled, tc.tiler_mn) == (ref.layout_tv, ref.tiler)
    assert cute.make_layout_tv(thr, val) == (ref.tiler, ref.layout_tv)
    again = cute.make_tiled_copy(atom, tc.layout_tv_tiled, tc.tiler_mn)      # the DSL's make_tiled_copy
    assert again.layout_tv_tiled == tc.layout_tv_tiled


def test_pretty_str_is_the_dsls_text():
    """Texts nvidia-cutlass-dsl 4.8.1 printed for these objects (chapter 9 shows them live)."""
    assert cute.pretty_str(_walkthrough()) == """Tiled MMA
  Thr Layout VMNK: (32,2,2,1):(1,32,64,0)
  Permutation MNK: (32:1,32:1,16:1)
MMA Atom
  ThrID:           32:1
  Shape MNK:       (16,8,16)
  TV Layout A:     ((4,8),(2,2,2)):((32,1),(16,8,128))
  TV Layout B:     ((4,8),(2,2)):((16,1),(8,64))
  TV Layout C:     ((4,8),(2,2)):((32,1),(16,8))"""
    ldsm = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4), cute.Float16)
    assert cute.pretty_str(ldsm) == """Copy Atom
  ThrID:         32:1
  TV Layout Src: (32,8):(8,1)
  TV Layout Dst: ((4,8),(1,2,4)):((16,1),(1,8,64))
  Value type:    f16"""
    assert cute.pretty_str(cute.make_layout((cl.dyn(16), 8))) == "(?,8):(1,?)"
    assert cute.pretty_str(cute.make_swizzle(2, 3, 3)) == "S<2,3,3>"


_CALL = re.compile(r"(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\(")
# The map's example objects: a call on one of them is a method (tiled_mma.get_slice(...)), not a name to look up
_OBJECTS = {"L", "t", "pipe", "state", "atom", "tiled_mma", "thr_mma", "thr_copy", "tiled_copy", "copy_atom"}


def _called(column, topics):
    """The dotted names called in one column of the map's rows of these topics, `cute.` dropped."""
    names = set()
    for n in cute.NAMES:
        if n.topic in topics:
            for m in _CALL.finditer(getattr(n, column)):
                name = m.group(1).removeprefix("cute.")
                if name.split(".")[0] not in _OBJECTS:
                    names.add(name)
    return names


def _missing(root, names):
    """The names that do not resolve, attribute by attribute, from `root` (a module, or a dict of them)."""
    def found(name):
        obj = root
        for part in name.split("."):
            obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
            if obj is None:
                return False
        return True
    return sorted(n for n in names if not found(n))


TOPICS = {n.topic for n in cute.NAMES}
SURFACE = TOPICS - {"printing", "running", "kernel"}   # what cutelite.dsl builds; "kernel": the compiled code's


def test_every_name_of_the_map_is_in_the_surface():
    names = _called("dsl", SURFACE) - {"gemm"}     # cute.gemm runs a kernel's MMA: not construction
    assert {"make_layout", "make_tiled_copy_tv", "make_tiled_copy", "recast_layout", "make_rmem_tensor",
            "nvgpu.warpgroup.MmaF16BF16Op", "nvgpu.cpasync.make_tiled_tma_atom", "nvgpu.cpasync.tma_partition",
            "nvgpu.warpgroup.make_smem_layout_atom"} <= names
    assert not _missing(cute, names)
    assert len(cute.NAMES) >= 30 and all(n.cutelite and n.dsl for n in cute.NAMES)


def test_every_name_of_the_books_column_is_the_books():
    """The left column's names are cutelite's (C++'s; its algorithms too), the kernel layer's (cutejit.), or
    Python's."""
    import builtins
    import cutelite
    from cutelite import algorithm
    from kernels import cutejit
    names = _called("cutelite", TOPICS)
    assert {"make_gmma_atom", "tma_partition", "cutejit.warpgroup_arrive", "cutejit.PipelineTmaAsync"} <= names
    assert not _missing({**vars(builtins), **vars(cutelite), **vars(algorithm), "cutejit": cutejit}, names)
    methods = {"pipe": cutejit.PipelineTmaAsync, "state": cutejit.PipelineState}
    for n in cute.NAMES:
        for m in _CALL.finditer(n.cutelite):
            head, _, rest = m.group(1).partition(".")
            if head in methods:
                assert hasattr(methods[head], rest), m.group(1)


@pytest.mark.skipif(missing() is not None, reason=f"{missing()}")
def test_every_name_of_the_map_is_in_the_dsl():
    import cutlass
    import cutlass.cute as dsl
    names = _called("dsl", TOPICS - {"printing", "running"}) | {"printf"}
    assert {"nvgpu.warpgroup.fence", "pipeline.PipelineTmaAsync.create", "pipeline.make_pipeline_state"} <= names
    assert not _missing({**vars(dsl), "pipeline": cutlass.pipeline}, names)
    methods = {"pipe": cutlass.pipeline.PipelineTmaAsync, "state": cutlass.pipeline.PipelineState}
    for n in cute.NAMES:
        for m in _CALL.finditer(n.dsl):
            head, _, rest = m.group(1).partition(".")
            if head in methods:
                assert hasattr(methods[head], rest), m.group(1)


def test_make_rmem_tensor_and_print_tensor(capsys):
    t = cute.make_rmem_tensor(cute.make_layout((2, 3), stride=(3, 1)), cute.Float32)
    t[1, 2] = 5.0
    assert t.engine.dtype == np.float32 and t.engine[5] == 5.0
    cute.print_tensor(t)
    assert capsys.readouterr().out.startswith("tensor((2,3):(3,1), data=")
