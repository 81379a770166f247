"""The CuTe layer (kernels.cutejit) on its own, in Numba's CUDA simulator: run-time expressions fold; copies
with every kind of atom move each element where cutelite's partitions say (checked element by element, the
expectation from cutelite's own partitions of NumPy tensors or from NumPy); gemm with several MMA atoms equals
NumPy; predicated copies touch nothing outside the matrix; misuse is refused with a clear error."""

import numpy as np
import pytest

from cutelite import (Layout, Swizzle, _, composition, make_copy_atom, make_mma_atom, make_tiled_copy,
                      make_tiled_copy_A, make_tiled_mma, size)
from kernels import cutejit as cj
from kernels.cutejit import Matrix, copy, fill, gemm, local_tile, make_smem_tensor, syncthreads, thread_idx

pytestmark = pytest.mark.numba("simulator")


# ---- expressions -----------------------------------------------------------------------------------------
def test_run_time_expressions_fold_constants():
    from kernels.expr import Sym as S
    t = S("tid", invariant=True)
    assert ((t + 3) - 1).src == "(tid + 2)" and (t * 1) is t and t * 0 == 0 and (t + 0) is t
    assert (t // 32).src == "(tid >> 5)" and (t % 8).src == "(tid & 7)" and t % 1 == 0
    assert (t * 4).invariant and not (t + S("i0")).invariant
    with pytest.raises(TypeError, match="known only when the kernel runs"):
        if t < 3:
            pass
    with pytest.raises(TypeError, match="ints or run-time values"):
        t + 1.5


# ---- copies ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op,vec", [("UniversalCopy<uint128_t>", 4), ("UniversalCopy<uint64_t>", 2),
                                    ("UniversalCopy<uint32_t>", 1), ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", 4)])
def test_copy_through_a_swizzled_tile(op, vec):
    """A (32, 64) float tile global -> swizzled shared (the atom) -> global (widest access): the shared
    tile holds each element where cutelite's swizzled layout puts it, and the output is the input."""
    tn = 64 // vec
    tc = make_tiled_copy(make_copy_atom(op, "float"), Layout((128 // tn, tn), (tn, 1)), Layout((1, vec)))
    smem = composition(Swizzle(3, 2, 3), Layout((32, 64), (64, 1)))

    @cj.kernel
    def k(mS, mD, mP, tiled):
        tid = thread_idx()
        s = make_smem_tensor(smem, "float32")
        thr = tiled.get_slice(tid)
        copy(tiled, thr.partition_S(local_tile(mS, (32, 64), (0, 0))), thr.partition_D(s))
        if op.startswith("SM80"):
            cj.cp_async_fence()
            cj.cp_async_wait(0)
        syncthreads()
        copy(thr.partition_S(s), thr.partition_D(local_tile(mD, (32, 64), (0, 0))))

    built = k.build(Matrix("float32"), Matrix("float32"), Matrix("float32"), tc, threads=128)
    src = np.random.default_rng(vec).standard_normal((32, 64)).astype(np.float32)
    dst = np.full_like(src, np.nan)
    built.launch(src, dst, np.zeros((1, 1), np.float32), grid=1)
    np.testing.assert_array_equal(dst, src)
    calls = {"UniversalCopy<uint128_t>": "ld_global_v4_f32(", "UniversalCopy<uint64_t>": "ld_global_v2_f32(",
             "UniversalCopy<uint32_t>": "ld_global_v1_f32(", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>": "cp_async_cg_16("}
    assert built.source.count(calls[op]) == 32 * 64 // 128 // vec         # one instruction per atom call


@pytest.mark.parametrize("atom,ldsm,major", [
    ("SM80_16x8x16_F32F16F16F32_TN", "SM75_U32x4_LDSM_N", "K"),
    ("SM80_16x8x16_F32F16F16F32_TN", "SM75_U16x8_LDSM_T", "MN"),
    ("SM75_16x8x8_F32F16F16F32_TN", "SM75_U32x2_LDSM_N", "K"),
    ("SM75_16x8x8_F32F16F16F32_TN", "SM75_U16x4_LDSM_T", "MN")])
def test_ldmatrix_round_trip_gives_the_mma_its_values(atom, ldsm, major):
    """A's tile -> shared -> registers by ldmatrix (partition_S / retile_D) -> back to global through the
    TiledMMA's partition_A: the registers held exactly what partition_A says each thread holds, so the
    output is the input (every element written once; the input is poisoned-free, the output poisoned)."""
    mma = make_tiled_mma(make_mma_atom(atom), Layout((2, 2, 1)), (32, 32, 16))
    s2r = make_tiled_copy_A(make_copy_atom(ldsm, "half_t"), mma)
    smem = Layout((32, 32), (32, 1)) if major == "K" else Layout((32, 32), (1, 32))
    v = make_copy_atom("UniversalCopy<uint128_t>", "half_t")     # 8 halves a thread along the contiguous mode
    g2s = (make_tiled_copy(v, Layout((32, 4), (4, 1)), Layout((1, 8))) if major == "K" else
           make_tiled_copy(v, Layout((4, 32), (1, 4)), Layout((8, 1))))

    @cj.kernel
    def k(mA, mO, mma, s2r, g2s):
        tid = thread_idx()
        gA, gO = local_tile(mA, (32, 32), (0, 0)), local_tile(mO, (32, 32), (0, 0))
        sA = make_smem_tensor(smem, "float16")
        thr_g2s = g2s.get_slice(tid)
        copy(g2s, thr_g2s.partition_S(gA), thr_g2s.partition_D(sA))      # global -> shared, 16 bytes
        syncthreads()
        thr_mma, thr = mma.get_slice(tid), s2r.get_slice(tid)
        rA = thr_mma.partition_fragment_A(sA)
        copy(s2r, thr.partition_S(sA), thr.retile_D(rA))                  # ldmatrix
        copy(rA, thr_mma.partition_A(gO))                                  # registers -> global, by partition_A

    built = k.build(Matrix("float16", major), Matrix("float16"), mma, s2r, g2s,
                    threads=128)
    A = np.random.default_rng(1).standard_normal((32, 32)).astype(np.float16)
    out = np.full((32, 32), np.nan, np.float16)
    built.launch((A if major == "K" else np.asfortranarray(A)).view(np.uint16), out.view(np.uint16), grid=1)
    np.testing.assert_array_equal(out, A)
    want = "ldmatrix_x%d%s(" % (4 if ldsm in ("SM75_U32x4_LDSM_N", "SM75_U16x8_LDSM_T") else 2,
                                "" if major == "K" else "_trans")
    assert want in built.source


@pytest.mark.parametrize("smem, message", [
    (Layout((32, 32), (33, 1)), "faults when it runs"),       # rows padded by one half
    (Layout((32, 32), (1, 32)), "does not compile such a copy either"),   # M-major
])
def test_ldmatrix_from_rows_it_cannot_read_is_refused(smem, message):
    """LDSM_N needs each lane's 8 halves contiguous (C++'s copy_unpack refuses otherwise: M-major) and
    16-byte aligned (C++ does not check it, the GPU faults: rows padded by one element)."""
    mma = make_tiled_mma(make_mma_atom("SM80_16x8x16_F32F16F16F32_TN"), Layout((2, 2, 1)), (32, 32, 16))
    s2r = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "half_t"), mma)

    @cj.kernel
    def k(mA, mma, s2r):
        tid = thread_idx()
        sA = make_smem_tensor(smem, "float16")
        thr = s2r.get_slice(tid)
        copy(s2r, thr.partition_S(sA), thr.retile_D(mma.get_slice(tid).partition_fragment_A(sA)))

    with pytest.raises(ValueError, match=message):
        k.build(Matrix("float16"), mma, s2r, threads=128)


# ---- gemm ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("atom,warps", [("SM80_16x8x16_F32F16F16F32_TN", (2, 2)), ("SM80_16x8x16_F32BF16BF16F32_TN", (1, 2)),
                                        ("SM75_16x8x8_F32F16F16F32_TN", (2, 1)), ("SM70_8x8x4_F32F16F16F32_TN", (2, 2))])
def test_gemm_with_several_atoms_equals_numpy(atom, warps):
    """Registers loaded straight from global memory by the TiledMMA's own partitions, one gemm call, C stored
    by partition_C: C == A @ B (NumPy, float64)."""
    a = make_mma_atom(atom)
    mma = make_tiled_mma(a, Layout(warps + (1,)))
    M, N, K = (s * w for s, w in zip(a.Shape_MNK, warps + (1,)))
    M, N, K = M * 2, N * 2, K * 2                              # two atoms a thread in each mode
    dtype = "bfloat16" if "BF16" in atom else "float16"

    @cj.kernel
    def k(mA, mB, mC, mma):
        tid = thread_idx()
        gA, gB, gC = (local_tile(x, shp, (0, 0)) for x, shp in ((mA, (M, K)), (mB, (N, K)), (mC, (M, N))))
        thr = mma.get_slice(tid)
        rA, rB = thr.partition_fragment_A(gA), thr.partition_fragment_B(gB)
        copy(thr.partition_A(gA), rA)
        copy(thr.partition_B(gB), rB)
        rC = thr.partition_fragment_C(gC)
        fill(rC, 0.0)
        gemm(mma, rA, rB, rC)
        copy(rC, thr.partition_C(gC))

    built = k.build(Matrix(dtype), Matrix(dtype), Matrix("float32"), mma, threads=size(mma))
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((N, K)).astype(np.float32)
    from kernels.numeric import from_bf16_bits, to_bf16_bits
    if dtype == "bfloat16":
        Ab, Bb = to_bf16_bits(A), to_bf16_bits(B)
        A, B = from_bf16_bits(Ab), from_bf16_bits(Bb)
    else:
        Ab, Bb = A.astype(np.float16).view(np.uint16), B.astype(np.float16).view(np.uint16)
        A, B = A.astype(np.float16).astype(np.float32), B.astype(np.float16).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    built.launch(Ab, Bb, C, grid=1)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    fa, fb = mma.get_slice(0).partition_fragment_A(Layout((M, K))), mma.get_slice(0).partition_fragment_B(Layout((N, K)))
    calls = size(fa, 1) * size(fb, 1) * size(fa, 2)           # one instruction per (m, n, k) of the thread
    assert sum(line.count("= mma_") for line in built.source.splitlines()) == calls


# ---- misuse ----------------------------------------------------------------------------------------------
def test_misuse_is_refused_with_a_clear_error():
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint128_t>", "float"), Layout((8, 16), (16, 1)), Layout((1, 4)))

    @cj.kernel
    def branch_on_run_time_value(mS, tiled):
        if thread_idx() < 3:
            pass

    with pytest.raises(TypeError, match="known only when the kernel runs"):
        branch_on_run_time_value.build(Matrix("float32"), tc, threads=128)

    @cj.kernel
    def stage_inside_swizzle(mS, tiled):
        s = make_smem_tensor(composition(Swizzle(3, 3, 3), Layout((8, 64, 2), (64, 1, 256))), "float32")
        for i in cj.range_(2):
            s[_, _, i]

    with pytest.raises(ValueError, match="cannot be added after the swizzle"):
        stage_inside_swizzle.build(Matrix("float32"), tc, threads=128)

    @cj.kernel
    def registers_by_run_time_index(mS, tiled):
        r = cj.make_fragment(Layout(4), "float32")
        r[thread_idx()]

    with pytest.raises(ValueError, match="registers cannot be indexed by a run-time value"):
        registers_by_run_time_index.build(Matrix("float32"), tc, threads=128)

    with pytest.raises(RuntimeError, match="inside a @cutejit.kernel"):
        thread_idx()
    with pytest.raises(ValueError, match="float64 elements are 64 bits; cutejit holds 8-, 16- and 32-bit"):
        Matrix("float64")


# ---- what a built kernel refuses: one check at build, one at launch, each naming the kernel and the argument
def _copy_kernel():
    """Chapter 6's tile copy: float32, 64 x 64 tiles, 16-byte accesses, no predicates."""
    from kernels.tiled.copy import make_copy_kernel
    return make_copy_kernel(128)


LAUNCH_REFUSALS = {   # what mS is, for chapter 6's tile copy (float32, 64 x 64 tiles, 16-byte accesses, unpredicated)
    "float64 into a float32 kernel (1,536 of 2,048 elements wrong before this check)":
        (np.zeros((64, 64), np.float64), TypeError, r"mS holds float64 elements; the kernel was built for float32"),
    "column-major into a kernel built for unit stride along mode 1":
        (np.zeros((64, 64), np.float32, order="F"), ValueError,
         r"mS: the kernel was built for K-major float32 \(unit stride along mode 1\), got strides \(4, 256\)"),
    "an address 4 bytes past a 16-byte boundary":
        (np.zeros(64 * 64 + 1, np.float32)[1:].reshape(64, 64), ValueError, r"mS: the kernel accesses it 16 bytes "
         r"at a time: its address \(0x[0-9a-f]+\) and strides \(256, 4\) must be multiples of 16"),
    "rows 260 bytes apart":
        (np.zeros((64, 65), np.float32)[:, :64], ValueError, r"mS: the kernel accesses it 16 bytes at a time: .* "
         r"strides \(260, 4\)"),
    "a size below the tile of a kernel that does not predicate":
        (np.zeros((32, 64), np.float32), ValueError,
         r"mS is \(32, 64\): the kernel copies whole \(64, 64\) tiles of it, unpredicated"),
}


@pytest.mark.parametrize("what", LAUNCH_REFUSALS)
def test_launch_refuses_what_the_kernel_was_not_built_for(what):
    src, error, message = LAUNCH_REFUSALS[what]
    with pytest.raises(error, match=r"cutejit: tile_copy: launch: " + message):
        _copy_kernel().launch(src, np.zeros(src.shape, np.float32), grid=1)


def test_launch_refuses_an_empty_grid_and_a_wrong_count_of_arrays():
    k = _copy_kernel()
    a = np.zeros((64, 64), np.float32)
    with pytest.raises(ValueError, match=r"tile_copy: launch: grid must be 1 to 3 block counts of at least 1, got 0"):
        k.launch(a, a.copy(), grid=0)
    with pytest.raises(TypeError, match=r"tile_copy: launch takes 2 arrays \(mS, mD\), got 1"):
        k.launch(a)


def test_a_prepared_launch_holds_its_arrays_and_its_cache_does_not():
    """On a GPU a prepared launch passes the arrays' addresses (runtime.prepared_launch, played here by a stub).
    The callable prepare returns holds the arrays: a tensor map made for the call and then dropped would
    otherwise be freed and its memory handed to the next allocation, which the kernel would read (issue 31:
    garbage from a launch prepared before other tensor maps were made). The cache of launches holds none."""
    import gc
    import weakref
    from unittest import mock
    from kernels import runtime

    class DeviceArray:          # what prepare reads of a device array: its interface
        def __init__(self):
            self.__cuda_array_interface__ = {"data": (id(self), False), "shape": (64, 64), "strides": None,
                                             "typestr": "<f4"}

    k, launched = _copy_kernel(), []
    with mock.patch.object(runtime, "in_simulator", lambda: False), \
            mock.patch.object(runtime, "prepared_launch", lambda *a, **kw: lambda: launched.append(1)), \
            mock.patch.object(k, "check", lambda args, grid: None):
        src = DeviceArray()
        alive = weakref.ref(src)
        run = k.prepare(src, DeviceArray(), grid=1)
        del src
        gc.collect()
        assert alive() is not None
        run()
        assert launched == [1] and len(k._launches) == 1
        del run
        gc.collect()
        assert alive() is None


def test_a_predicated_kernel_takes_any_size_its_accesses_allow():
    """tc_sm80 with edges=True: 72 x 88 x 40 runs (test_gemm_sim); a contiguous extent that splits a 16-byte
    cp.async (K = 36 halves) is refused, since the predicate keeps or drops the whole access."""
    from kernels.gemm import tc_sm80
    k = tc_sm80.make(**dict(tc_sm80.BEST, BM=64, BN=64, edges=True))
    A = np.zeros((72, 40), np.uint16)[:, :36]              # rows 80 bytes apart, 72 bytes of them A's
    B, C = np.zeros((36, 88), np.uint16), np.zeros((72, 88), np.float32)
    with pytest.raises(ValueError, match=r"gemm_tc_sm80: launch: mA is \(72, 36\): a predicated access of 16 bytes "
                                         r"is kept or dropped whole, so mode 1 must be a multiple of 8 elements"):
        k.launch(A, B, C)
    k.check((np.zeros((72, 40), np.float16), np.zeros((40, 88), np.uint16), C), 1)   # float16 or its bits


def test_build_refuses_an_atom_whose_types_differ_from_the_matrices():
    """bf16 matrices into an f16 TiledMMA (max error 46 before this check)."""
    mma = make_tiled_mma(make_mma_atom("SM80_16x8x16_F32F16F16F32_TN"), Layout((2, 2, 1)))

    @cj.kernel
    def k(mA, mma):
        thr = mma.get_slice(thread_idx())
        thr.partition_fragment_A(local_tile(mA, (32, 16), (0, 0)))

    with pytest.raises(TypeError, match=r"cutejit: k: mma's atom SM80_16x8x16_F32F16F16F32_TN takes float16 A; the "
                                        r"kernel gives it bfloat16"):
        k.build(Matrix("bfloat16"), mma, threads=128)


def test_build_refuses_a_thread_count_the_objects_cannot_use():
    """64 threads for a 128-thread TiledCopy: half the tile would never be copied."""
    k = _copy_kernel()
    from kernels.tiled.copy import tile_copy
    with pytest.raises(ValueError, match=r"tile_copy: build: tiled_copy is a TiledCopy of 128 threads, the kernel has "
                                         r"threads=64: the values of threads 64..127 would never be copied"):
        tile_copy.build(Matrix("float32"), Matrix("float32"), k.tiled_copy, False, threads=64)


def test_build_names_the_argument_used_as_the_wrong_kind():
    """A TiledMMA where a TiledCopy belongs (an AttributeError from inside the trace before this check)."""
    from kernels.tiled.copy import tile_copy
    mma = make_tiled_mma(make_mma_atom("SM80_16x8x16_F32F16F16F32_TN"), Layout((2, 2, 1)))
    with pytest.raises(TypeError, match=r"cutejit: tile_copy: tiled_copy is a TiledMMA, used as a TiledCopy "
                                        r"\(partition_S\)"):
        tile_copy.build(Matrix("float32"), Matrix("float32"), mma, False, threads=128)

    @cj.kernel
    def k(mS, tiled):
        cj.make_smem_tensor(Layout(64), "float64")

    with pytest.raises(ValueError, match=r"cutejit: k: make_smem_tensor: float64 elements are 64 bits"):
        k.build(Matrix("float32"), None, threads=32)


def test_launch_refuses_what_is_not_a_tensor_map():
    from cutelite import dyn, make_tma_atom
    from cutelite.gmma import Layout_K_SW128_Atom, tile_to_smem
    atom = make_tma_atom("SM90_TMA_LOAD", Layout((dyn(64), dyn(64)), (dyn(64), 1)),
                         tile_to_smem(Layout_K_SW128_Atom("half_t"), (64, 64)), (64, 64), value_type="half_t")

    @cj.kernel
    def k(tm):
        thread_idx()

    built = k.build(cj.TensorMap(atom), threads=32)
    with pytest.raises(TypeError, match=r"cutejit: k: launch: tm: the kernel was built for TensorMap\(.*\): a tensor "
                                        r"map, 16 uint64 words"):
        built.launch(np.zeros((64, 64), np.uint16), grid=1)
