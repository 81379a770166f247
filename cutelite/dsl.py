"""cutelite under the CuTe DSL's names, for building objects and partitioning (chapter 9).

    import cutelite.dsl as cute
    L = cute.make_layout((4, 8), stride=(8, 1))        # cutelite's make_layout((4, 8), (8, 1))
    op = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))
    tCsA = mma.get_slice(0).partition_A(cute.make_rmem_tensor(cute.make_layout((128, 32)), cute.Float16))

The functions are cutelite's (C++ CuTe's results) behind the signatures of NVIDIA's CuTe DSL
(`cutlass.cute`, nvidia-cutlass-dsl 4.8): keyword strides, `mode=` paths, `target_profile=`,
`up_to_rank=`, typed MMA and copy ops, `None` for `_`. Where the DSL refuses an input C++ accepts
(complement without a cotarget, a product by a tuple of layouts, zipped_divide by an int, a swizzle composed
with `composition`, layouts concatenated by make_layout, a Python int as local_partition's index), this
surface refuses it too, so that code written against it runs in the DSL as it is (tests/test_dsl_refusals.py
runs hundreds of inputs through both, and lists the differences by design). Layouts and tensors are
cutelite's own objects and print as C++ prints; atoms, TiledMMAs and TiledCopys are thin wrappers with the
DSL's attribute names around cutelite's (`.cutelite`).
`pretty_str(x)` is the text the DSL prints for x. NAMES is the name map, the table of chapter 9.
The engine keeps C++'s names: its ground truth is compiled C++ CuTe.
"""

from collections import namedtuple
from dataclasses import dataclass
from fractions import Fraction
from types import SimpleNamespace

from . import gmma
from . import layout as L
from . import tensor as T
from . import tiled
from . import tma as _tma
from .atoms import Major, MMA_Atom, make_mma_atom as _mma_atom
from .basis import ArithmeticTupleIterator, ScaledBasis, as_arithmetic_tuple
from .copy_atoms import Copy_Atom, make_copy_atom as _copy_atom
from .identity import make_identity_layout, make_identity_tensor
from .int_tuple import Dyn, is_int, is_tuple, product_each
from .layout import ComposedLayout, Layout, Underscore
from .numeric import (BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32, Float64, Int8, Int32, Numeric, TFloat32,
                      Uint8, numeric)
from .swizzle import Swizzle

__all__ = [
    "NAMES", "Name", "Numeric", "Float16", "BFloat16", "Float32", "TFloat32", "Float64", "Int8", "Uint8", "Int32",
    "Float8E4M3FN", "Float8E5M2", "nvgpu", "pretty_str",
    "make_layout", "make_ordered_layout", "make_identity_layout", "make_layout_like", "make_layout_tv",
    "size", "cosize", "rank", "depth", "shape", "get", "select", "group_modes", "flatten", "append", "prepend",
    "slice_", "slice_and_offset", "dice", "coalesce", "filter", "composition", "complement", "right_inverse",
    "left_inverse", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
    "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product", "tile_to_shape",
    "max_common_layout", "max_common_vector", "recast_layout", "crd2idx", "idx2crd", "make_swizzle",
    "make_composed_layout", "make_tensor", "make_identity_tensor", "make_rmem_tensor", "make_fragment_like",
    "local_tile", "local_partition", "print_tensor",
    "MmaAtom", "TiledMma", "ThrMma", "CopyAtom", "TiledCopy", "ThrCopy", "make_mma_atom", "make_tiled_mma",
    "make_copy_atom", "make_tiled_copy_tv", "make_tiled_copy", "make_tiled_copy_A", "make_tiled_copy_B",
    "make_tiled_copy_C", "make_tiled_copy_S", "make_tiled_copy_D",
]

# ---- the name map ------------------------------------------------------------------------------------
Name = namedtuple("Name", "topic cutelite dsl note")
NAMES = (
    Name("layouts", "make_layout(shape, stride)", "make_layout(shape, stride=...)",
         "the stride is keyword-only; a second positional argument is a TypeError"),
    Name("layouts", "make_layout(A, B) (concatenate layouts)", "append(A, B)",
         "the DSL's make_layout takes a shape, not layouts"),
    Name("layouts", "size(L, i, j)", "size(L, mode=[i, j])", "mode= is a path into the modes, as C++'s size<i,j>"),
    Name("layouts", "get(L, i) / L[i]", "get(L, mode=[i])", ""),
    Name("layouts", "select(L, i, j)", "select(L, mode=[i, j])", ""),
    Name("layouts", "group(L, b, e)", "group_modes(L, b, e)", ""),
    Name("layouts", "append(L, x, n)", "append(L, x, up_to_rank=n)", "append_ones(L, n) pads with 1:0"),
    Name("layouts", "_ (keep a mode)", "None", "in slices, tilers and local_tile coordinates"),
    Name("layouts", "L(_, 3) / slice_and_offset((_, 3), L)[0]", "slice_(L, (None, 3))", ""),
    Name("algebra", "coalesce(L, profile)", "coalesce(L, target_profile=...)", ""),
    Name("algebra", "complement(L)", "complement(L, cotarget)", "the cotarget is required"),
    Name("algebra", "zipped_product(L, (A, B)) and tiled_/flat_product", "zipped_product(L, layout)",
         "a tuple tiler is refused: \"must be a Value\""),
    Name("algebra", "composition(Swizzle(b, m, s), L)", "make_composed_layout(make_swizzle(b, m, s), 0, L)",
         "composition refuses a swizzle; inner is the swizzle, outer the layout"),
    Name("algebra", "upcast(L, n) / downcast(L, n)", "recast_layout(new_bits, old_bits, L)",
         "C++'s recast_layout<Old, New>: element widths, not a factor"),
    Name("swizzle", "Swizzle(b, m, s)", "make_swizzle(b, m, s)", "prints S<b,m,s>, C++ Sw<b,m,s>"),
    Name("tensors", "make_tensor(layout, dtype=...)", "make_rmem_tensor(layout, Float32)",
         "DSL tensors are memory: a pointer (or a register allocation) and a layout"),
    Name("tensors", "print(t.to_numpy())", "print_tensor(t)", "runs in the compiled code, like cute.printf"),
    Name("atoms", "make_mma_atom(\"SM80_16x8x16_F32F16F16F32_TN\")",
         "make_mma_atom(nvgpu.warp.MmaF16BF16Op(Float16, Float32, (16, 8, 16)))", "typed op objects, not names"),
    Name("atoms", "make_mma_atom(\"UniversalFMA<float,float,float,float>\")",
         "make_mma_atom(nvgpu.MmaUniversalOp(Float32))", ""),
    Name("atoms", "make_copy_atom(\"UniversalCopy<uint128_t>\", \"float\")",
         "make_copy_atom(nvgpu.CopyUniversalOp(), Float32, num_bits_per_copy=128)", ""),
    Name("atoms", "make_copy_atom(\"SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>\", \"half_t\")",
         "make_copy_atom(nvgpu.cpasync.CopyG2SOp(LoadCacheMode.GLOBAL), Float16, num_bits_per_copy=128)",
         "the default cache mode is ALWAYS (CACHEALWAYS)"),
    Name("atoms", "make_copy_atom(\"SM75_U32x4_LDSM_N\", \"half_t\")",
         "make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), Float16)", "(transpose, number of 8x8 matrices)"),
    Name("atoms", "make_copy_atom(\"SM75_U16x8_LDSM_T\", \"half_t\")",
         "make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(True, 4), Float16)", ""),
    Name("atoms", "atom.LayoutA_TV, ThrID, Shape_MNK", "atom.tv_layout_A, thr_id, shape_mnk", ""),
    Name("atoms", "copy_atom.ValLayoutSrc / ValLayoutDst", "copy_atom.layout_src_tv / layout_dst_tv", ""),
    Name("tiled", "make_tiled_mma(atom, Layout((2, 2, 1)), (32, 32, 16))",
         "make_tiled_mma(op, (2, 2, 1), permutation_mnk=(32, 32, 16))", "an int n in the permutation prints n:1"),
    Name("tiled", "make_tiled_copy(atom, thr_layout, val_layout)", "make_tiled_copy_tv(atom, thr_layout, val_layout)",
         "the trap: the DSL's make_tiled_copy(atom, layout_tv, tiler_mn) is another function"),
    Name("tiled", "TiledCopy(atom, layout_tv, tiler)", "make_tiled_copy(atom, layout_tv, tiler_mn)", ""),
    Name("tiled", "tiled_mma.get_layoutA_TV()", "tiled_mma.tv_layout_A_tiled", "tv_layout_A is the atom's"),
    Name("tiled", "tiled_copy.layout_tv, .tiler", "tiled_copy.layout_tv_tiled, .tiler_mn", ""),
    Name("tiled", "tiled_copy.get_layoutS_TV()", "tiled_copy.layout_src_tv_tiled", ""),
    Name("tiled", "tile_size(mma, i), size(mma)", "tiled_mma.get_tile_size(i), tiled_mma.size", ""),
    Name("partition", "thr_mma.partition_fragment_A(sA)",
         "tiled_mma.make_fragment_A(thr_mma.partition_A(sA))", "the DSL makes registers from the partition"),
    Name("partition", "thr_copy.retile_D(tCrA) / retile_S", "thr_copy.retile(tCrA)", "one name for both"),
    Name("partition", "gemm(mma, A, B, C) (C += A B)", "cute.gemm(mma, D, A, B, C)", "D first, C separate"),
    Name("hopper", "make_gmma_atom(\"SM90::GMMA::MMA_64x128x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>\")",
         "make_mma_atom(nvgpu.warpgroup.MmaF16BF16Op(Float16, Float32, (64, 128, 16), OperandSource.SMEM, "
         "OperandMajorMode.K, OperandMajorMode.K))",
         "GMMA (wgmma, sm_90a): the source of A (SS: shared, RS: registers) and the majors are the op's arguments"),
    Name("hopper", "gmma.Layout_K_SW128_Atom(\"half_t\"), tile_to_smem(atom, (128, 64))",
         "nvgpu.warpgroup.make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, Float16), "
         "tile_to_shape(atom, (128, 64), (0, 1))",
         "the swizzle acts on byte addresses; prints S<3,4,3> o 0 o (8,64):(64,1)"),
    Name("hopper", "make_tma_atom(\"SM90_TMA_LOAD\", gA, sA_layout, (128, 64)), atom.get_tma_tensor(shape)",
         "nvgpu.cpasync.make_tiled_tma_atom(nvgpu.cpasync.CopyBulkTensorTileG2SOp(), gA, sA_layout, (128, 64))",
         "one call returns both, the atom and the TMA tensor; multicast is CopyBulkTensorTileG2SMulticastOp, "
         "a store CopyBulkTensorTileS2GOp"),
    Name("hopper", "tma_partition(atom, 0, Layout(1), sA, gA) -> (tAgA, tAsA)",
         "nvgpu.cpasync.tma_partition(atom, 0, make_layout(1), sA, gA) -> (tAsA, tAgA)",
         "the DSL returns the shared part first, C++ the global part; sA, gA with the tile grouped into mode 0 "
         "(group_modes(x, 0, 2))"),
    Name("kernel", "cutejit.warpgroup_arrive(acc)", "nvgpu.warpgroup.fence()",
         "PTX wgmma.fence, C++'s warpgroup_arrive(): the registers' writes before it, then the wgmma reads"),
    Name("kernel", "cutejit.warpgroup_commit()", "nvgpu.warpgroup.commit_group()",
         "PTX wgmma.commit_group, C++'s warpgroup_commit_batch()"),
    Name("kernel", "cutejit.warpgroup_wait(n, acc)", "nvgpu.warpgroup.wait_group(n)",
         "PTX wgmma.wait_group n, C++'s warpgroup_wait<n>(): at most n committed groups still running"),
    Name("kernel", "cutejit.PipelineTmaAsync(stages, tx_bytes, consumer_warpgroups)",
         "pipeline.PipelineTmaAsync.create(num_stages=..., producer_group=..., consumer_group=..., tx_count=..., "
         "barrier_storage=...)",
         "a full and an empty mbarrier a stage; the DSL's groups (CooperativeGroup) count the arrivals"),
    Name("kernel", "cutejit.make_producer_start_state(stages)",
         "pipeline.make_pipeline_state(PipelineUserType.Producer, stages)",
         "both start the producer at phase 1 (a consumer's state: cutejit.PipelineState(stages))"),
    Name("kernel", "pipe.producer_acquire(state); cutejit.tma_load(tma, coord, sA, *pipe.producer_barrier(state))",
         "pipe.producer_acquire(state); cute.copy(tma_atom, tAgA, tAsA, tma_bar_ptr=pipe.producer_get_barrier(state))",
         "the TMA's bytes complete the stage's full barrier; the DSL's producer_commit is then a no-op"),
    Name("kernel", "pipe.consumer_wait(state), pipe.consumer_release(state), state.advance()",
         "pipe.consumer_wait(state), pipe.consumer_release(state), state.advance()", "the same names"),
    Name("printing", "(_4,_8):(_1,_4)", "(4,8):(1,4)", "no underscores: every value in a printout is static"),
    Name("printing", "(8,_4):(_1,8)   (8 dynamic)", "(?,4):(1,?)", "a dynamic value is ? at trace time"),
    Name("printing", "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)", "S<3,3,3> o 0 o (8,64):(64,1)", ""),
    Name("running", "plain Python, or a @cutejit.kernel traced into Numba", "@cute.jit (host) / @cute.kernel (GPU)",
         "both trace Python into MLIR; the source must be in a file"),
    Name("running", "dyn(8) (dynamic) / 8 (static)", "cutlass.Int32 argument / cutlass.Constexpr or a Python int",
         "a Python int in traced code is static"),
    Name("running", "print(x)", "print(x) at trace time, cute.printf(...) at run time", ""),
)


# ---- element types: cutelite.numeric's, as the DSL names them (cutlass.Float16) -----------------------------
def _need_numeric(t, op, what):
    if not isinstance(t, Numeric):
        raise TypeError(f"{op}: {what} must be an element type such as cute.Float16, got {t!r}")
    return t


# ---- typed ops: each knows the C++ name of its instruction ---------------------------------------------
@dataclass(frozen=True)
class MmaF16BF16Op:
    """mma.sync with f16 or bf16 inputs (sm_80+): shape (16, 8, 8) or (16, 8, 16)."""
    ab_dtype: Numeric
    acc_dtype: Numeric
    shape_mnk: tuple

    def cpp(self):
        ab, acc = self.ab_dtype, self.acc_dtype
        if ab not in (Float16, BFloat16) or acc not in (Float16, Float32) or (ab is BFloat16 and acc is not Float32):
            raise ValueError(f"MmaF16BF16Op: A/B Float16 with Float16 or Float32 accumulators, or BFloat16 with "
                             f"Float32; got {ab!r}, {acc!r}")
        if self.shape_mnk not in ((16, 8, 8), (16, 8, 16)):
            raise ValueError(f"MmaF16BF16Op: shape_mnk must be (16, 8, 8) or (16, 8, 16), got {self.shape_mnk!r}")
        a, c = ab.letters, acc.letters
        return f"SM80_16x8x{self.shape_mnk[2]}_{c}{a}{a}{c}_TN"


@dataclass(frozen=True)
class MmaTF32Op:
    """mma.sync with tf32 inputs and f32 accumulators (sm_80+): shape (16, 8, 4) or (16, 8, 8)."""
    shape_mnk: tuple

    def cpp(self):
        if self.shape_mnk not in ((16, 8, 4), (16, 8, 8)):
            raise ValueError(f"MmaTF32Op: shape_mnk must be (16, 8, 4) or (16, 8, 8), got {self.shape_mnk!r}")
        return f"SM80_16x8x{self.shape_mnk[2]}_F32TF32TF32F32_TN"


@dataclass(frozen=True)
class MmaFP8Op:
    """mma.sync with fp8 inputs (sm_89+); cutelite has the (16, 8, 32) shape."""
    ab_dtype: Numeric
    acc_dtype: Numeric
    shape_mnk: tuple

    def cpp(self):
        if self.ab_dtype not in (Float8E4M3FN, Float8E5M2) or self.acc_dtype not in (Float16, Float32) \
                or self.shape_mnk != (16, 8, 32):
            raise ValueError(f"MmaFP8Op: cutelite has Float8E4M3FN/Float8E5M2 inputs, Float16/Float32 accumulators "
                             f"and shape (16, 8, 32); got {self.ab_dtype!r}, {self.acc_dtype!r}, {self.shape_mnk!r}")
        a, c = self.ab_dtype.letters, self.acc_dtype.letters
        return f"SM89_16x8x32_{c}{a}{a}{c}_TN"


@dataclass(frozen=True)
class MmaUniversalOp:
    """One thread's fused multiply-add, d = a * b + c, for Float16, Float32 or Float64."""
    abacc_dtype: Numeric

    def cpp(self):
        if self.abacc_dtype not in (Float16, Float32, Float64):
            raise ValueError(f"MmaUniversalOp: abacc_dtype must be Float16, Float32 or Float64, got {self.abacc_dtype!r}")
        t = self.abacc_dtype.cpp
        return f"UniversalFMA<{t},{t},{t},{t}>"


class LoadCacheMode:
    """cp.async's cache mode: ALWAYS (.ca, C++ CACHEALWAYS) or GLOBAL (.cg, C++ CACHEGLOBAL)."""
    ALWAYS = "ALWAYS"
    GLOBAL = "GLOBAL"


def _uint(bits, op):
    if bits not in (8, 16, 32, 64, 128):
        raise ValueError(f"{op}: num_bits_per_copy must be 8, 16, 32, 64 or 128, got {bits!r}")
    return f"uint{bits}_t"


@dataclass(frozen=True)
class CopyUniversalOp:
    """A plain copy (ld / st); num_bits_per_copy picks the access width (C++ UniversalCopy<uintN_t>)."""

    def cpp(self, value_type, bits):
        return f"UniversalCopy<{_uint(bits, 'CopyUniversalOp') if bits else value_type.cpp}>"


@dataclass(frozen=True)
class CopyG2SOp:
    """cp.async, global -> shared memory (sm_80+)."""
    cache_mode: str = LoadCacheMode.ALWAYS

    def cpp(self, value_type, bits):
        if self.cache_mode not in (LoadCacheMode.ALWAYS, LoadCacheMode.GLOBAL):
            raise ValueError(f"CopyG2SOp: cache_mode must be LoadCacheMode.ALWAYS or GLOBAL, got {self.cache_mode!r}")
        if not bits:
            raise ValueError("CopyG2SOp: make_copy_atom needs num_bits_per_copy (32, 64 or 128)")
        return f"SM80_CP_ASYNC_CACHE{self.cache_mode}<{_uint(bits, 'CopyG2SOp')}>"


@dataclass(frozen=True)
class _Matrix8x8Op:
    transpose: bool = False
    num_matrices: int = 1

    def cpp(self, value_type, bits):
        name = type(self).__name__
        if self.num_matrices not in (1, 2, 4) or not isinstance(self.transpose, bool):
            raise ValueError(f"{name}: transpose must be a bool and num_matrices 1, 2 or 4, got "
                             f"{self.transpose!r}, {self.num_matrices!r}")
        prefix, kind = self._cpp
        if self.transpose:
            return f"{prefix}_U16x{2 * self.num_matrices}_{kind}_T"
        return f"{prefix}_U32x{self.num_matrices}_{kind}_N"


class LdMatrix8x8x16bOp(_Matrix8x8Op):
    """ldmatrix of 8x8 16-bit matrices (sm_75+), `num_matrices` at once, optionally transposed."""
    _cpp = ("SM75", "LDSM")


class StMatrix8x8x16bOp(_Matrix8x8Op):
    """stmatrix of 8x8 16-bit matrices (sm_90+)."""
    _cpp = ("SM90", "STSM")


# ---- Hopper (sm_90a): the warpgroup MMA and the TMA ------------------------------------------------------
OperandMajorMode = Major   # the contiguous mode of a GMMA operand in shared memory: K or MN

class OperandSource:
    """Where a GMMA's A comes from: SMEM (a descriptor; C++'s _SS atoms) or RMEM (registers; _RS)."""
    SMEM = "SS"
    RMEM = "RS"


class _WarpgroupMmaOp:
    """What the warpgroup MMA ops share: one warpgroup's 64 x N x k product of their types, named as C++ names
    its atom, once the types (`types_ok`, else ValueError naming `rule` and what was `got`) and the
    instruction_shape, (64, N) or (64, N, k), are checked."""

    def _cpp(self, a, b, acc, k, types_ok, rule, got):
        name = "warpgroup." + type(self).__name__[len("Warpgroup"):]
        if not types_ok:
            raise ValueError(f"{name}: {rule}; got {got}")
        shape = tuple(self.instruction_shape)
        if len(shape) not in (2, 3) or shape[0] != 64 or shape[2:] not in ((), (k,)):
            raise ValueError(f"{name}: instruction_shape must be (64, N) or (64, N, {k}), got "
                             f"{self.instruction_shape!r}")
        return (f"SM90::GMMA::MMA_64x{shape[1]}x{k}_{acc.letters}{a.letters}{b.letters}_{self.a_src}"
                f"<GMMA::Major::{self.a_major_mode}, GMMA::Major::{self.b_major_mode}>")


@dataclass(frozen=True)
class WarpgroupMmaF16BF16Op(_WarpgroupMmaOp):
    """The DSL's nvgpu.warpgroup.MmaF16BF16Op: wgmma.mma_async with f16 or bf16 inputs (sm_90a), one
    warpgroup's 64 x N x 16 product; instruction_shape (64, N) or (64, N, 16)."""
    ab_dtype: Numeric
    acc_dtype: Numeric
    instruction_shape: tuple
    a_src: str
    a_major_mode: str
    b_major_mode: str

    def cpp(self):
        ab, acc = self.ab_dtype, self.acc_dtype
        ok = ab in (Float16, BFloat16) and acc in (Float16, Float32) and not (ab is BFloat16 and acc is not Float32)
        return self._cpp(ab, ab, acc, 16, ok, "A/B Float16 with Float16 or Float32 accumulators, or BFloat16 with "
                         "Float32", f"{ab!r}, {acc!r}")


@dataclass(frozen=True)
class WarpgroupMmaF8Op(_WarpgroupMmaOp):
    """The DSL's nvgpu.warpgroup.MmaF8Op: wgmma.mma_async with e4m3 or e5m2 inputs, any pair (sm_90a), one
    warpgroup's 64 x N x 32 product; instruction_shape (64, N) or (64, N, 32). Both operands must be K-major
    (the DSL's docstring says so, yet its 4.8.1 builds an MN-major atom): an MN major is refused here as C++
    refuses it (cutelite.gmma.make_gmma_atom)."""
    a_dtype: Numeric
    b_dtype: Numeric
    acc_dtype: Numeric
    instruction_shape: tuple
    a_src: str
    a_major_mode: str
    b_major_mode: str

    def cpp(self):
        a, b, acc = self.a_dtype, self.b_dtype, self.acc_dtype
        ok = a in (Float8E4M3FN, Float8E5M2) and b in (Float8E4M3FN, Float8E5M2) and acc in (Float16, Float32)
        return self._cpp(a, b, acc, 32, ok, "A and B Float8E4M3FN or Float8E5M2, Float16 or Float32 accumulators",
                         f"{a!r}, {b!r}, {acc!r}")


class SmemLayoutAtomKind:
    """The GMMA shared-memory layout atoms (C++'s GMMA::Layout_<major>_<swizzle>_Atom<T>)."""
    MN_INTER, MN_SW32, MN_SW64, MN_SW128 = "MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128"
    K_INTER, K_SW32, K_SW64, K_SW128 = "K_INTER", "K_SW32", "K_SW64", "K_SW128"


def make_smem_layout_atom(kind, element_type):
    """The GMMA layout atom of `kind` for element_type, e.g. (K_SW128, Float16): Sw<3,4,3> o (8,64):(64,1),
    the swizzle on byte addresses (C++ GMMA::Layout_K_SW128_Atom<half_t>)."""
    if kind not in vars(SmemLayoutAtomKind).values():
        raise ValueError(f"make_smem_layout_atom: kind must be a SmemLayoutAtomKind, got {kind!r}")
    t = _need_numeric(element_type, "make_smem_layout_atom", "element_type")
    return getattr(gmma, f"Layout_{kind}_Atom")(t.cpp)


@dataclass(frozen=True)
class _TmaOp:
    def cpp(self):
        return self._cpp


class CopyBulkTensorTileG2SOp(_TmaOp):
    """A TMA load, global -> shared memory (sm_90+; C++ SM90_TMA_LOAD)."""
    _cpp = "SM90_TMA_LOAD"


class CopyBulkTensorTileG2SMulticastOp(_TmaOp):
    """A TMA load multicast to the CTAs of a cluster (C++ SM90_TMA_LOAD_MULTICAST)."""
    _cpp = "SM90_TMA_LOAD_MULTICAST"


class CopyBulkTensorTileS2GOp(_TmaOp):
    """A TMA store, shared -> global memory (C++ SM90_TMA_STORE)."""
    _cpp = "SM90_TMA_STORE"


def make_tiled_tma_atom(op, gmem_tensor, smem_layout, cta_tiler, num_multicast=1):
    """(the TMA copy atom, the TMA tensor of gmem_tensor's shape): C++'s make_tma_atom, and the atom's
    get_tma_tensor, which the DSL returns together (they unpack as a pair)."""
    op = _need_op(op, (_TmaOp,), "make_tiled_tma_atom", "op")
    atom = _tma.make_tma_atom(op.cpp(), gmem_tensor, smem_layout, cta_tiler, num_multicast)
    return CopyAtom(atom), atom.get_tma_tensor(gmem_tensor.shape)


def tma_partition(atom, cta_coord, cta_layout, smem_tensor, gmem_tensor):
    """One box per TMA instruction of a shared tensor and a TMA tensor, each with the tile in mode 0:
    returns (smem part, gmem part), where C++'s tma_partition (and cutelite's) return (gmem, smem)."""
    gmem, smem = _tma.tma_partition(_unwrap(atom, _tma.TMA_Atom, "tma_partition", "atom"), cta_coord, cta_layout,
                                    smem_tensor, gmem_tensor)
    return smem, gmem


nvgpu = SimpleNamespace(
    MmaUniversalOp=MmaUniversalOp, CopyUniversalOp=CopyUniversalOp, LoadCacheMode=LoadCacheMode,
    OperandMajorMode=OperandMajorMode,
    warp=SimpleNamespace(MmaF16BF16Op=MmaF16BF16Op, MmaTF32Op=MmaTF32Op, MmaFP8Op=MmaFP8Op,
                         LdMatrix8x8x16bOp=LdMatrix8x8x16bOp, StMatrix8x8x16bOp=StMatrix8x8x16bOp),
    warpgroup=SimpleNamespace(MmaF16BF16Op=WarpgroupMmaF16BF16Op, MmaF8Op=WarpgroupMmaF8Op, OperandSource=OperandSource,
                              SmemLayoutAtomKind=SmemLayoutAtomKind, make_smem_layout_atom=make_smem_layout_atom),
    cpasync=SimpleNamespace(CopyG2SOp=CopyG2SOp, LoadCacheMode=LoadCacheMode,
                            CopyBulkTensorTileG2SOp=CopyBulkTensorTileG2SOp,
                            CopyBulkTensorTileG2SMulticastOp=CopyBulkTensorTileG2SMulticastOp,
                            CopyBulkTensorTileS2GOp=CopyBulkTensorTileS2GOp,
                            make_tiled_tma_atom=make_tiled_tma_atom, tma_partition=tma_partition),
)


# ---- layouts ---------------------------------------------------------------------------------------------
def _path(mode, op, negative=False):
    """A mode path as a tuple; a negative entry (from the end) only where the DSL takes one (rank, shape)."""
    if mode is None:
        return ()
    path = (mode,) if is_int(mode) else tuple(mode) if isinstance(mode, (list, tuple)) else None
    if path is None or not all(is_int(m) for m in path):
        raise TypeError(f"{op}: mode must be an int or a list of ints (a path into the modes), got {mode!r}")
    if not negative and any(m < 0 for m in path):
        raise ValueError(f"{op}: mode {list(path)} counts from 0; the CuTe DSL's {op} refuses a negative mode")
    return path


def _positive(x, op, what):
    """x, a positive int or a tuple of them (a shape), else a TypeError or ValueError naming op."""
    if is_tuple(x) and x:
        for e in x:
            _positive(e, op, what)
    elif not is_int(x):
        raise TypeError(f"{op}: {what} must be a positive int or a tuple of them, got {x!r}")
    elif x <= 0:
        raise ValueError(f"{op}: {what} must be positive (the CuTe DSL refuses {x})")
    return x


def make_layout(shape, *, stride=None):
    """A layout of `shape`, compact column-major unless `stride` is given (keyword only, as in the DSL)."""
    if isinstance(shape, Layout):
        raise TypeError("make_layout: the CuTe DSL's make_layout takes a shape, not layouts; "
                        "concatenate layouts with append(A, B)")
    return L.make_layout(shape) if stride is None else L.make_layout(shape, stride)


def make_ordered_layout(shape, order):
    return L.make_ordered_layout(shape, order)


def make_layout_like(input):
    return L.make_layout_like(input.layout if isinstance(input, T.Tensor) else input)


def make_layout_tv(thr_layout, val_layout):
    """(tiler_mn, layout_tv) of make_tiled_copy_tv(atom, thr_layout, val_layout): C++ make_layout_tv."""
    layout_mn = L.raked_product(thr_layout, val_layout)
    layout_tv = L.composition(L.right_inverse(layout_mn), L.make_layout((L.size(thr_layout), L.size(val_layout))))
    return product_each(layout_mn.shape), layout_tv


def size(obj, mode=()):
    return L.size(obj.cutelite if hasattr(obj, "cutelite") else obj, *_path(mode, "size"))


def cosize(obj, mode=()):
    return L.cosize(obj, *_path(mode, "cosize"))


def rank(obj, mode=()):
    return L.rank(obj, *_path(mode, "rank", negative=True))


def depth(a):
    return L.depth(a)


def shape(input, *, mode=None):
    return L.shape(input, *_path(mode, "shape", negative=True))


def get(obj, mode=()):
    return L.get(obj, *_path(mode, "get"))


def select(obj, mode=()):
    return L.select(obj, *_path(mode, "select"))


def group_modes(input, begin, end=None):
    """Modes begin..end-1 of a layout, or of a tensor's layout, grouped into one (a swizzle is kept)."""
    if isinstance(input, T.Tensor):
        lay = input.layout
        inner = getattr(lay, "layout_b", lay)
        grouped = L.group(inner, begin, end)
        return input.view(lay.with_inner(grouped) if inner is not lay else grouped)
    return L.group(input, begin, end)


def flatten(a):
    return L.flatten(a)


def append(input, elem, up_to_rank=None):
    return L.append(input, elem, up_to_rank)


def prepend(input, elem, up_to_rank=None):
    return L.prepend(input, elem, up_to_rank)


def slice_(src, coord):
    """src at a coordinate holding None (the DSL's `_`): the sub-layout (or sub-tensor) of the free modes."""
    if isinstance(src, T.Tensor):
        return src(coord)
    return L.slice_and_offset(coord, src)[0]


def slice_and_offset(coord, src):
    return L.slice_and_offset(coord, src)


def dice(src, dicer):
    return L.dice(dicer, src)


def coalesce(input, *, target_profile=None):
    return L.coalesce(input, target_profile)


def filter(input):
    return L.filter(input)


def composition(lhs, rhs):
    if isinstance(lhs, Swizzle):
        raise TypeError("composition: the CuTe DSL does not compose a swizzle this way; "
                        "write make_composed_layout(swizzle, 0, layout)")
    if rhs is None:
        raise TypeError("composition: the CuTe DSL takes a layout, a shape or a tiler as rhs, not None")
    return T.composition(lhs, rhs)


def complement(input, cotarget):
    """The DSL requires the cotarget (C++ defaults it to cosize(input)), a positive int or shape."""
    return L.complement(input, _positive(cotarget, "complement", "cotarget"))


def right_inverse(input):
    return L.right_inverse(input)


def left_inverse(input):
    return L.left_inverse(input)


def _divide_tiler(tiler, op, whole=False):
    """The DSL divides by a Layout or a tuple; logical_divide also by an int (`whole`), none by None."""
    if tiler is None or (is_int(tiler) and not whole):
        raise TypeError(f"{op}: the CuTe DSL takes a Layout or a tuple as the tiler (\"must be a Value\"), "
                        f"got {tiler!r}")
    return tiler


def logical_divide(target, tiler):
    return T.logical_divide(target, _divide_tiler(tiler, "logical_divide", whole=True))


def zipped_divide(target, tiler):
    return T.zipped_divide(target, _divide_tiler(tiler, "zipped_divide"))


def tiled_divide(target, tiler):
    return T.tiled_divide(target, _divide_tiler(tiler, "tiled_divide"))


def flat_divide(target, tiler):
    return T.flat_divide(target, _divide_tiler(tiler, "flat_divide"))


def logical_product(block, tiler):
    return L.logical_product(block, tiler)


def _layout_tiler(tiler, op):
    if not isinstance(tiler, (Layout, ComposedLayout)):
        raise TypeError(f"{op}: the CuTe DSL takes a Layout as the tiler (a tuple is refused: "
                        f"\"must be a Value\"), got {tiler!r}")
    return tiler


def zipped_product(block, tiler):
    return L.zipped_product(block, _layout_tiler(tiler, "zipped_product"))


def tiled_product(block, tiler):
    return L.tiled_product(block, _layout_tiler(tiler, "tiled_product"))


def flat_product(block, tiler):
    return L.flat_product(block, _layout_tiler(tiler, "flat_product"))


def blocked_product(block, tiler):
    return L.blocked_product(block, _layout_tiler(tiler, "blocked_product"))


def raked_product(block, tiler):
    return L.raked_product(block, _layout_tiler(tiler, "raked_product"))


def tile_to_shape(atom, trg_shape, order):
    """atom repeated to cover trg_shape, the repeats ordered by `order` (a tuple: (0, 1, 2) column-major)."""
    return L.tile_to_shape(atom, trg_shape, order)


def max_common_layout(a, b):
    return L.max_common_layout(a, b)


def max_common_vector(a, b):
    return L.max_common_vector(a, b)


def recast_layout(new_type_bits, old_type_bits, src_layout):
    """src_layout, of elements of old_type_bits bits, seen in elements of new_type_bits (C++ recast_layout):
    with new / old = num / den in lowest terms, upcast by num, then downcast by den."""
    for what, bits in (("new_type_bits", new_type_bits), ("old_type_bits", old_type_bits)):
        if not is_int(bits):
            raise TypeError(f"recast_layout: {what} must be an int, got {bits!r}")
        if bits <= 0:
            raise ValueError(f"recast_layout: {what} must be positive, got {bits}")
    ratio = Fraction(new_type_bits, old_type_bits)
    up = src_layout if ratio.numerator == 1 else L.upcast(src_layout, ratio.numerator)
    return up if ratio.denominator == 1 else L.downcast(up, ratio.denominator)


def crd2idx(coord, layout):
    """The offset of coord in layout (a Layout, a ComposedLayout, or a shape: column-major). A None in
    coord counts as 0, as in the DSL (crd2idx(None, L) is 0): this is no slice; slice_ keeps modes."""
    coord = _none_is_zero(coord)
    if is_int(layout) or is_tuple(layout):
        return L.make_layout(layout)(coord)
    L._need_layout(layout, "crd2idx", composed=True)
    return layout(coord)


def _none_is_zero(c):
    if is_tuple(c):
        return tuple(_none_is_zero(x) for x in c)
    return 0 if c is None or isinstance(c, Underscore) else c


def idx2crd(idx, shape):
    return L.idx2crd(idx, shape)


def make_swizzle(b, m, s):
    return Swizzle(b, m, s)


def make_composed_layout(inner, offset, outer):
    """inner o offset o outer: coordinate c -> inner(offset + outer(c)); inner is a swizzle (then the offset is
    an int) or a Layout, as the DSL takes them."""
    if not isinstance(inner, (Swizzle, Layout)):
        raise TypeError(f"make_composed_layout: the CuTe DSL takes a swizzle or a Layout as inner, got {inner!r}")
    if offset is None or (isinstance(inner, Swizzle) and not is_int(offset)):
        kinds = "an int" if isinstance(inner, Swizzle) else "an int or a tuple"
        raise TypeError(f"make_composed_layout: the offset must be {kinds} for {inner}, got {offset!r}")
    return ComposedLayout(inner, offset, outer)


# ---- tensors -------------------------------------------------------------------------------------------
def make_tensor(iterator, layout):
    """A tensor over `iterator`: a NumPy array (cutelite's memory), or an int or a tuple of ints, the first
    coordinate of a coordinate tensor (make_identity_tensor's starts at 0)."""
    if is_int(iterator) or (is_tuple(iterator) and all(is_int(x) for x in iterator)):
        L._need_layout(layout, "make_tensor")
        return T.Tensor(ArithmeticTupleIterator(as_arithmetic_tuple(iterator)), layout)
    return T.make_tensor(iterator, layout)


def make_rmem_tensor(layout_or_shape, dtype):
    """A fresh tensor of `dtype` (zero-filled here; registers in the DSL) over a Layout or a shape (the DSL
    takes no swizzled layout here). BFloat16 and the Float8 types hold their bits (Numeric.numpy)."""
    if isinstance(layout_or_shape, ComposedLayout):
        raise TypeError(f"make_rmem_tensor: the CuTe DSL takes a Layout or a shape, not the swizzled "
                        f"{layout_or_shape}")
    lay = layout_or_shape if isinstance(layout_or_shape, Layout) else L.make_layout(layout_or_shape)
    return T.make_tensor(lay, dtype=_need_numeric(dtype, "make_rmem_tensor", "dtype").numpy)


def make_fragment_like(src, dtype=None):
    """Registers like src. Of a Layout: C++'s make_fragment_like (a tensor of `dtype` when one is given). Of a
    tensor: a tensor of `dtype` (default: src's) over make_layout_like(src.layout), the DSL's
    make_rmem_tensor_like (a coordinate tensor has no element type: give dtype)."""
    if dtype is not None:
        _need_numeric(dtype, "make_fragment_like", "dtype")
    if isinstance(src, T.Tensor):
        if src.counts and dtype is None:
            raise ValueError("make_fragment_like: a coordinate tensor has no element type; give dtype")
        lay = L.make_layout(L.shape(src.layout)) if src.counts else src.layout
        lay = lay.layout_b if isinstance(lay, ComposedLayout) else lay
        return T.make_tensor(L.make_layout_like(lay), dtype=dtype.numpy if dtype else src.engine.dtype)
    if not isinstance(src, (Layout, ComposedLayout)):
        raise TypeError(f"make_fragment_like: src must be a Layout, ComposedLayout or Tensor, got {src!r}")
    frag = L.make_fragment_like(src)
    return frag if dtype is None else make_rmem_tensor(frag, dtype)


def local_tile(input, tiler, coord, proj=None):
    """The tile at coord of input divided by tiler; the DSL takes the tiler as a tuple or a Layout and the
    coordinate as a tuple of the tiler's rank."""
    if not (is_tuple(tiler) or isinstance(tiler, Layout)):
        raise TypeError(f"local_tile: the CuTe DSL takes the tiler as a tuple or a Layout, got {tiler!r}")
    modes = len(tiler) if is_tuple(tiler) else L.rank(tiler)
    if not is_tuple(coord) or len(coord) != modes:
        raise ValueError(f"local_tile: coord must be a tuple of the tiler's {modes} modes, got {coord!r}")
    return T.local_tile(input, tiler, coord, None if proj is None else _proj(proj))


def local_partition(target, tiler, index, proj=None):
    """target's elements that thread `index` of tiler owns. The DSL takes the index as a run-time value (such as
    a thread index): write cutelite.dyn(i) here where it would be cutlass.Int32(i)."""
    if not isinstance(index, Dyn):
        raise TypeError(f"local_partition: the CuTe DSL takes the index as a run-time value (cutlass.Int32, "
                        f"e.g. a thread index; a Python int fails there: 'int' object has no attribute "
                        f"'ir_value'); write cutelite.dyn({index!r})")
    return T.local_partition(target, tiler, index, None if proj is None else _proj(proj))


def _proj(p):
    return tuple(_proj(x) for x in p) if is_tuple(p) else (L._ if p is None else p)


def print_tensor(tensor):
    """The tensor's layout and values (the DSL prints them from the compiled code, at run time)."""
    print(f"tensor({pretty_str(tensor.layout)}, data=\n{tensor.to_numpy()})")


# ---- atoms, TiledMMA, TiledCopy under the DSL's names ------------------------------------------------------
class _Wrapped:
    """A cutelite object (.cutelite) under the DSL's names; one thread's slice of it also holds .thr."""

    def __init__(self, cutelite, thr=None):
        self.cutelite, self.thr = cutelite, thr

    @property
    def _atom(self):
        return self.cutelite

    def __str__(self):
        return str(self.cutelite)


class MmaAtom(_Wrapped):
    """An MMA atom: cutelite's MMA_Atom (.cutelite) with the DSL's attribute names."""

    thr_id = property(lambda self: self._atom.ThrID)
    shape_mnk = property(lambda self: self._atom.Shape_MNK)
    tv_layout_A = property(lambda self: self._atom.LayoutA_TV)
    tv_layout_B = property(lambda self: self._atom.LayoutB_TV)
    tv_layout_C = property(lambda self: self._atom.LayoutC_TV)

    def make_fragment_A(self, input):
        """Registers for a partition of A (C++ MMA_Atom::make_fragment_A): C++'s make_fragment_like of its
        layout, of the atom's A type."""
        return self._fragment(L.make_fragment_like(_layout_of(input, "make_fragment_A")), 1)

    def make_fragment_B(self, input):
        return self._fragment(L.make_fragment_like(_layout_of(input, "make_fragment_B")), 2)

    def make_fragment_C(self, input):
        """Accumulators for a partition of C: compact column-major of its shape, of the atom's C type."""
        shp = input.shape if hasattr(input, "shape") else input
        return self._fragment(L.make_layout(shp), 3)

    def _fragment(self, layout, operand):
        return T.make_tensor(layout, dtype=numeric(self._atom.types[operand]).numpy)


class TiledMma(MmaAtom):
    """A TiledMMA (cutelite's, .cutelite) with the DSL's names."""

    @property
    def _atom(self):
        return self.cutelite.atom

    thr_layout_vmnk = property(lambda self: self.cutelite.thr_layout_vmnk)
    permutation_mnk = property(lambda self: self.cutelite.permutation)
    size = property(lambda self: L.size(self.cutelite))
    tv_layout_A_tiled = property(lambda self: self.cutelite.get_layoutA_TV())
    tv_layout_B_tiled = property(lambda self: self.cutelite.get_layoutB_TV())
    tv_layout_C_tiled = property(lambda self: self.cutelite.get_layoutC_TV())

    def get_tile_size(self, mode_idx):
        return tiled.tile_size(self.cutelite, mode_idx)

    def get_slice(self, thr_idx):
        return ThrMma(self.cutelite, self.cutelite.get_slice(thr_idx))

    def partition_shape_A(self, shape_mk):
        return tiled.partition_shape_A(self.cutelite, self._divides(shape_mk, (0, 2), "partition_shape_A"))

    def partition_shape_B(self, shape_nk):
        return tiled.partition_shape_B(self.cutelite, self._divides(shape_nk, (1, 2), "partition_shape_B"))

    def partition_shape_C(self, shape_mn):
        return tiled.partition_shape_C(self.cutelite, self._divides(shape_mn, (0, 1), "partition_shape_C"))

    def _divides(self, shape, modes, op):
        """shape, whose first two extents divide or are divided by the tile's (C++'s shape_div on static
        extents; the DSL refuses the others)."""
        for extent, mode in zip(shape if is_tuple(shape) else (), modes):
            tile = tiled.tile_size(self.cutelite, mode)
            if is_int(extent) and extent > 0 and extent % tile and tile % extent:
                raise ValueError(f"{op}: extent {extent} of {shape} and the tile's {'MNK'[mode]} extent {tile} "
                                 "do not divide one another")
        return shape


class ThrMma(TiledMma):
    """One thread's TiledMma: partition_A/B/C as in C++, of tensors (the DSL takes no layout here)."""

    def partition_A(self, input):
        return self.thr.partition_A(_tensor(input, "partition_A"))

    def partition_B(self, input):
        return self.thr.partition_B(_tensor(input, "partition_B"))

    def partition_C(self, input):
        return self.thr.partition_C(_tensor(input, "partition_C"))


class CopyAtom(_Wrapped):
    """A copy atom: cutelite's Copy_Atom (.cutelite) with the DSL's names."""

    thr_id = property(lambda self: self._atom.ThrID)
    layout_src_tv = property(lambda self: self._atom.ValLayoutSrc)
    layout_dst_tv = property(lambda self: self._atom.ValLayoutDst)
    value_type = property(lambda self: self._atom.value_type)


class TiledCopy(CopyAtom):
    """A TiledCopy (cutelite's, .cutelite) with the DSL's names."""

    @property
    def _atom(self):
        return self.cutelite.atom

    layout_tv_tiled = property(lambda self: self.cutelite.layout_tv)
    tiler_mn = property(lambda self: self.cutelite.tiler)
    layout_src_tv_tiled = property(lambda self: self.cutelite.get_layoutS_TV())
    layout_dst_tv_tiled = property(lambda self: self.cutelite.get_layoutD_TV())
    size = property(lambda self: L.size(self.cutelite.layout_tv, 0))

    def get_slice(self, thr_idx):
        return ThrCopy(self.cutelite, self.cutelite.get_slice(thr_idx))

    def retile(self, src):
        """src (a fragment made by the MMA) regrouped in the copy's modes: C++ retile_D / retile_S."""
        return src.view(self.cutelite.retile(src.layout)) if isinstance(src, T.Tensor) else self.cutelite.retile(src)


class ThrCopy(TiledCopy):
    """One thread's TiledCopy: partition_S/D as in C++, retile for both retile_S and retile_D."""

    def partition_S(self, src):
        return self.thr.partition_S(_tensor(src, "partition_S"))

    def partition_D(self, dst):
        return self.thr.partition_D(_tensor(dst, "partition_D"))


def _tensor(x, op):
    if not isinstance(x, T.Tensor):
        raise TypeError(f"{op}: the CuTe DSL partitions a tensor, got {x!r}; make one with make_rmem_tensor or "
                        "make_identity_tensor")
    return x


def _layout_of(x, op):
    return _tensor(x, op).layout if not isinstance(x, (Layout, ComposedLayout)) else x


def _unwrap(x, kind, op, what):
    x = getattr(x, "cutelite", x)
    if not isinstance(x, kind):
        raise TypeError(f"{op}: {what} must be a {kind.__name__}, got {x!r}")
    return x


_MMA_OPS = (MmaF16BF16Op, MmaTF32Op, MmaFP8Op, MmaUniversalOp, WarpgroupMmaF16BF16Op, WarpgroupMmaF8Op)
_COPY_OPS = (CopyUniversalOp, CopyG2SOp, LdMatrix8x8x16bOp, StMatrix8x8x16bOp)


def _need_op(op, kinds, fn, what):
    if not isinstance(op, kinds):
        raise TypeError(f"{fn}: {what} must be one of cute.nvgpu's {', '.join(k.__name__ for k in kinds)}, "
                        f"got {op!r}")
    return op


def _cutelite_mma_atom(op, fn, what):
    """The cutelite atom of a typed MMA op: a GMMA atom for the warpgroup's, a warp-level one else."""
    op = _need_op(op, _MMA_OPS, fn, what)
    wgmma = isinstance(op, (WarpgroupMmaF16BF16Op, WarpgroupMmaF8Op))
    return gmma.make_gmma_atom(op.cpp()) if wgmma else _mma_atom(op.cpp())


def make_mma_atom(op):
    return MmaAtom(_cutelite_mma_atom(op, "make_mma_atom", "op"))


def make_tiled_mma(op_or_atom, atom_layout_mnk=(1, 1, 1), permutation_mnk=None):
    """A TiledMma of the op (or atom) over atom_layout_mnk (a rank-3 shape or Layout, M N K); permutation_mnk
    is None or three entries, each an int, a Layout or None (the atoms' own extent)."""
    modes = len(atom_layout_mnk) if is_tuple(atom_layout_mnk) else \
        L.rank(atom_layout_mnk) if isinstance(atom_layout_mnk, Layout) else None
    if modes != 3:
        raise ValueError(f"make_tiled_mma: the CuTe DSL expects a rank-3 MNK atom layout, got {atom_layout_mnk!r}")
    if permutation_mnk is not None and not (is_tuple(permutation_mnk) and len(permutation_mnk) == 3):
        raise ValueError(f"make_tiled_mma: permutation_mnk must be None or three entries (M, N, K), got "
                         f"{permutation_mnk!r}")
    atom = op_or_atom.cutelite if isinstance(op_or_atom, MmaAtom) else \
        _cutelite_mma_atom(op_or_atom, "make_tiled_mma", "op_or_atom")
    perm = None if permutation_mnk is None else _proj(permutation_mnk)
    return TiledMma(tiled.make_tiled_mma(atom, atom_layout_mnk, perm))


def make_copy_atom(op, copy_internal_type, *, num_bits_per_copy=None):
    """A copy atom of the op for elements of copy_internal_type; num_bits_per_copy sets the access width
    (CopyUniversalOp, CopyG2SOp)."""
    t = _need_numeric(copy_internal_type, "make_copy_atom", "copy_internal_type")
    return CopyAtom(_copy_atom(_need_op(op, _COPY_OPS, "make_copy_atom", "op").cpp(t, num_bits_per_copy), t.cpp))


def make_tiled_copy_tv(atom, thr_layout, val_layout):
    """Threads (m, n) -> thread index, values (m, n) -> value index: cutelite's (and C++'s) make_tiled_copy."""
    return TiledCopy(tiled.make_tiled_copy(_unwrap(atom, Copy_Atom, "make_tiled_copy_tv", "atom"), thr_layout, val_layout))


def make_tiled_copy(atom, layout_tv, tiler_mn):
    """The DSL's make_tiled_copy: from a (thread, value) -> tile layout and the tile; not cutelite's."""
    if not isinstance(layout_tv, Layout) or isinstance(tiler_mn, Layout):
        raise TypeError("make_tiled_copy: the CuTe DSL's make_tiled_copy takes (atom, layout_tv, tiler_mn); "
                        "for thread and value layouts use make_tiled_copy_tv(atom, thr_layout, val_layout)")
    return TiledCopy(tiled._make(_unwrap(atom, Copy_Atom, "make_tiled_copy", "atom"), layout_tv, tiler_mn,
                                 "make_tiled_copy"))


def _from_mma(fn, atom, tiled_mma, op):
    return TiledCopy(fn(_unwrap(atom, Copy_Atom, op, "atom"), _unwrap(tiled_mma, tiled.TiledMMA, op, "tiled_mma")))


def make_tiled_copy_A(atom, tiled_mma):
    return _from_mma(tiled.make_tiled_copy_A, atom, tiled_mma, "make_tiled_copy_A")


def make_tiled_copy_B(atom, tiled_mma):
    return _from_mma(tiled.make_tiled_copy_B, atom, tiled_mma, "make_tiled_copy_B")


def make_tiled_copy_C(atom, tiled_mma):
    return _from_mma(tiled.make_tiled_copy_C, atom, tiled_mma, "make_tiled_copy_C")


def make_tiled_copy_S(atom, tiled_copy):
    return TiledCopy(tiled.make_tiled_copy_S(_unwrap(atom, Copy_Atom, "make_tiled_copy_S", "atom"),
                                             _unwrap(tiled_copy, tiled.TiledCopy, "make_tiled_copy_S", "tiled_copy")))


def make_tiled_copy_D(atom, tiled_copy):
    return TiledCopy(tiled.make_tiled_copy_D(_unwrap(atom, Copy_Atom, "make_tiled_copy_D", "atom"),
                                             _unwrap(tiled_copy, tiled.TiledCopy, "make_tiled_copy_D", "tiled_copy")))


# ---- the DSL's printed text ------------------------------------------------------------------------------
def _int_tuple(t):
    if is_tuple(t):
        return "(" + ",".join(_int_tuple(v) for v in t) + ")"
    if isinstance(t, Dyn):
        return "?"
    if t is None or isinstance(t, Underscore):
        return "_"
    return str(t).lstrip("_") if is_int(t) else pretty_str(t)


def _tile(t):
    """A tiler entry as the DSL prints it: an int n is the layout n:1."""
    if is_tuple(t):
        return "(" + ",".join(_tile(v) for v in t) + ")"
    return f"{t}:1" if is_int(t) else pretty_str(t)


def pretty_str(x):
    """The text the CuTe DSL prints for x: C++'s text without the underscores of static values, `?` for a
    dynamic value, S<b,m,s> for a swizzle, and the DSL's own headings for atoms, TiledMMAs and TiledCopys."""
    x = getattr(x, "cutelite", x)
    if isinstance(x, Layout):
        return f"{_int_tuple(x.shape)}:{_int_tuple(x.stride)}"
    if isinstance(x, Swizzle):
        return f"S<{x.bits},{x.base},{x.shift}>"
    if isinstance(x, ComposedLayout):
        return f"{pretty_str(x.layout_a)} o {_int_tuple(x.offset)} o {pretty_str(x.layout_b)}"
    if isinstance(x, MMA_Atom):
        return _mma_text(x, 13)
    if isinstance(x, tiled.TiledMMA):
        return ("Tiled MMA\n"
                f"  Thr Layout VMNK: {pretty_str(x.thr_layout_vmnk)}\n"
                f"  Permutation MNK: {_tile(tuple(x.permutation))}\n" + _mma_text(x.atom, 17))
    if isinstance(x, Copy_Atom):
        return _copy_text(x, 15)
    if isinstance(x, tiled.TiledCopy):
        return ("Tiled Copy\n"
                f"  Tiler MN:        {_tile(tuple(x.tiler) if is_tuple(x.tiler) else (x.tiler,))}\n"
                f"  TV Layout tiled: {pretty_str(x.layout_tv)}\n" + _copy_text(x.atom, 17))
    if isinstance(x, ScaledBasis):
        return str(x).lstrip("_")
    if isinstance(x, T.Tensor) and isinstance(x.engine, ArithmeticTupleIterator):
        return f"tensor<{_int_tuple(tuple(x.engine.coord))} o {pretty_str(x.layout)}>"
    if is_int(x) or is_tuple(x) or x is None or isinstance(x, Underscore):
        return _int_tuple(x)
    return str(x)


def _mma_text(atom, width):
    rows = (("ThrID:", atom.ThrID), ("Shape MNK:", atom.Shape_MNK), ("TV Layout A:", atom.LayoutA_TV),
            ("TV Layout B:", atom.LayoutB_TV), ("TV Layout C:", atom.LayoutC_TV))
    return "MMA Atom\n" + "\n".join(f"  {k:{width}}{pretty_str(v)}" for k, v in rows)


def _copy_text(atom, width):
    rows = (("ThrID:", pretty_str(atom.ThrID)), ("TV Layout Src:", pretty_str(atom.ValLayoutSrc)),
            ("TV Layout Dst:", pretty_str(atom.ValLayoutDst)), ("Value type:", numeric(atom.value_type).mlir
                                                                                          or atom.value_type))
    return "Copy Atom\n" + "\n".join(f"  {k:{width}}{v}" for k, v in rows)
