"""Small kernels that exercise every intrinsic, each checked against NumPy.

Each demo launches one kernel on fresh random data, with the output poisoned (NaN, or all-ones bits)
first so an element the kernel never wrote cannot pass, and compares with a NumPy reference. The same
source runs on a GPU and in the simulator; sizes are small enough for the simulator.

    import kernels; kernels.setup()
    from kernels import demos
    demos.run_all()             # -> list of Result(name, ok, max_err, note)

Import after kernels.setup() (this module imports numba).
"""

import functools
from dataclasses import dataclass

import numpy as np
from numba import cuda

from . import fragments as F
from .capability import supports
from .intrinsics import (
    SMEM_ALIGN,
    cp_async_ca_4, cp_async_ca_8, cp_async_ca_16, cp_async_cg_16, cp_async_commit, cp_async_wait,
    ld_global_v4_b32, ld_global_v4_f32, st_global_v4_b32, st_global_v4_f32,
    ldmatrix_x1, ldmatrix_x2, ldmatrix_x4, ldmatrix_x1_trans, ldmatrix_x2_trans, ldmatrix_x4_trans,
    mma_m8n8k4_f16_f16, mma_m8n8k4_f32_f16,
    mma_m16n8k8_f16_f16, mma_m16n8k8_f32_bf16, mma_m16n8k8_f32_f16,
    mma_m16n8k16_f16_f16, mma_m16n8k16_f32_bf16, mma_m16n8k16_f32_f16,
    pack_half2, unpack_half2, shfl_down_sync, shfl_sync, shfl_up_sync, shfl_xor_sync,
)
from .layout_codegen import layout_fn, layout_pyfunc
from .numeric import as_b32, from_bf16_bits, to_bf16_bits
from .runtime import pick_size

_dev = cuda.jit(device=True)
a_m8n8k4, b_m8n8k4 = _dev(F.a_m8n8k4), _dev(F.b_m8n8k4)
c_m8n8k4_f32, c_m8n8k4_f16 = _dev(F.c_m8n8k4_f32), _dev(F.c_m8n8k4_f16)
quadpair, c_m16n8 = _dev(F.quadpair), _dev(F.c_m16n8)
u16, u32, f32 = np.uint16, np.uint32, np.float32


# ---- the harness ---------------------------------------------------------------------------------------
@dataclass
class Result:
    name: str
    ok: bool
    max_err: float = float("nan")
    note: str = ""


@dataclass
class Demo:
    name: str
    needs: tuple      # instruction names of kernels.capability.MIN_SM
    run: object       # run(rng) -> Result


DEMOS = {}


def demo(name, *needs):
    def register(run):
        DEMOS[name] = Demo(name, needs, run)
        return run
    return register


def check(name, got, want, rtol, atol=None):
    """Result of comparing got with want: every element written (no poison left), within tolerance."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return Result(name, False, float("inf"), "%d outputs not written (NaN)" % np.sum(~np.isfinite(got)))
    scale = max(1.0, float(np.max(np.abs(want))))
    err = float(np.max(np.abs(got - want))) / scale
    ok = err <= rtol if atol is None else bool(np.all(np.abs(got - want) <= atol))
    return Result(name, ok, err, "" if ok else "max error %.3g over tolerance %.3g" % (err, rtol))


def check_bits(name, got, want):
    """Exact comparison of integer arrays (register contents, copies)."""
    bad = int(np.sum(np.asarray(got) != np.asarray(want)))
    return Result(name, bad == 0, float(bad), "" if bad == 0 else "%d of %d differ" % (bad, np.size(want)))


def f16(rng, *shape):
    return rng.standard_normal(shape).astype(np.float16)


def run_all(names=None, cc=None, seed=0):
    """Run the demos (all by default) that `cc` supports (default: every one; the simulator has all)."""
    results = []
    for name in names or list(DEMOS):
        d = DEMOS[name]
        if cc is not None and not all(supports(n, cc) for n in d.needs):
            results.append(Result(name, True, float("nan"), "skipped: needs %s" % ", ".join(d.needs)))
            continue
        try:
            results.append(d.run(np.random.default_rng(seed)))
        except Exception as e:  # a failing demo is reported, not fatal to the others
            results.append(Result(name, False, float("nan"), "%s: %s" % (type(e).__name__, str(e)[:300])))
    return results


# ---- m8n8k4: four independent 8x8x4 products per warp, one per quad-pair --------------------------------
@cuda.jit
def k_mma_m8n8k4_f32(A32, BT32, C, D):
    """A32: (4, 8, 2) uint32 = four 8x4 f16 A's, row-major; BT32: (4, 8, 2) = four B's stored n-major
    (B col-major); C, D: (4, 8, 8) float32."""
    lane = cuda.threadIdx.x
    q = quadpair(lane)
    m, _ = a_m8n8k4(lane, 0)
    _, n = b_m8n8k4(lane, 0)
    a = (A32[q, m, 0], A32[q, m, 1])
    b = (BT32[q, n, 0], BT32[q, n, 1])
    c = (C[q, c_m8n8k4_f32(lane, 0)[0], c_m8n8k4_f32(lane, 0)[1]],
         C[q, c_m8n8k4_f32(lane, 1)[0], c_m8n8k4_f32(lane, 1)[1]],
         C[q, c_m8n8k4_f32(lane, 2)[0], c_m8n8k4_f32(lane, 2)[1]],
         C[q, c_m8n8k4_f32(lane, 3)[0], c_m8n8k4_f32(lane, 3)[1]],
         C[q, c_m8n8k4_f32(lane, 4)[0], c_m8n8k4_f32(lane, 4)[1]],
         C[q, c_m8n8k4_f32(lane, 5)[0], c_m8n8k4_f32(lane, 5)[1]],
         C[q, c_m8n8k4_f32(lane, 6)[0], c_m8n8k4_f32(lane, 6)[1]],
         C[q, c_m8n8k4_f32(lane, 7)[0], c_m8n8k4_f32(lane, 7)[1]])
    d = mma_m8n8k4_f32_f16(a, b, c)
    for i in range(8):
        r, s = c_m8n8k4_f32(lane, i)
        D[q, r, s] = d[i]


@cuda.jit
def k_mma_m8n8k4_f16(A32, BT32, C32, D32):
    """As above with f16 accumulators: C32, D32 (4, 8, 4) uint32 = (4, 8, 8) f16; a lane holds a row."""
    lane = cuda.threadIdx.x
    q = quadpair(lane)
    m, _ = c_m8n8k4_f16(lane, 0)
    _, n = b_m8n8k4(lane, 0)
    a = (A32[q, m, 0], A32[q, m, 1])
    b = (BT32[q, n, 0], BT32[q, n, 1])
    d = mma_m8n8k4_f16_f16(a, b, (C32[q, m, 0], C32[q, m, 1], C32[q, m, 2], C32[q, m, 3]))
    for j in range(4):
        D32[q, m, j] = d[j]


@demo("mma.m8n8k4 f32 acc", "mma.m8n8k4.f16")
def run_mma_m8n8k4_f32(rng):
    A, B = f16(rng, 4, 8, 4), f16(rng, 4, 4, 8)
    C = rng.standard_normal((4, 8, 8)).astype(f32)
    D = np.full((4, 8, 8), np.nan, f32)
    k_mma_m8n8k4_f32[1, 32](as_b32(A), as_b32(B.transpose(0, 2, 1)), C, D)
    want = A.astype(np.float64) @ B.astype(np.float64) + C
    return check("mma.m8n8k4 f32 acc", D, want, 1e-5)


@demo("mma.m8n8k4 f16 acc", "mma.m8n8k4.f16")
def run_mma_m8n8k4_f16(rng):
    A, B, C = f16(rng, 4, 8, 4), f16(rng, 4, 4, 8), f16(rng, 4, 8, 8)
    D = np.full((4, 8, 8), np.nan, np.float16)
    D32 = as_b32(D)
    k_mma_m8n8k4_f16[1, 32](as_b32(A), as_b32(B.transpose(0, 2, 1)), as_b32(C), D32)
    want = A.astype(np.float64) @ B.astype(np.float64) + C
    return check("mma.m8n8k4 f16 acc", D32.view(np.float16), want, 2e-3)


# ---- ldmatrix: every variant, lane by lane ------------------------------------------------------------
@cuda.jit
def k_ldmatrix(M, out):
    """M: (32, 8) uint16, four 8x8 matrices stacked; out: (6, 32, 4) uint32, one row per variant."""
    lane = cuda.threadIdx.x
    s = cuda.shared.array((32, 8), u16, alignment=SMEM_ALIGN)
    for j in range(8):
        s[lane, j] = M[lane, j]
    cuda.syncthreads()
    row = lane * 8                                   # lane l points at row l (of matrix l // 8)
    out[0, lane, 0] = ldmatrix_x1(s, row)
    out[1, lane, 0] = ldmatrix_x1_trans(s, row)
    r2 = ldmatrix_x2(s, row)
    t2 = ldmatrix_x2_trans(s, row)
    r4 = ldmatrix_x4(s, row)
    t4 = ldmatrix_x4_trans(s, row)
    for j in range(2):
        out[2, lane, j] = r2[j]
        out[3, lane, j] = t2[j]
    for j in range(4):
        out[4, lane, j] = r4[j]
        out[5, lane, j] = t4[j]


def ldmatrix_reference(M):
    """What each lane receives from ldmatrix x1/x1.trans/x2/x2.trans/x4/x4.trans of the stacked M."""
    want = np.zeros((6, 32, 4), u32)
    for v, (num, trans) in enumerate([(1, 0), (1, 1), (2, 0), (2, 1), (4, 0), (4, 1)]):
        for lane in range(32):
            for j in range(num):
                h = [int(M[8 * j + r, c]) for r, c in (F.ldmatrix_elem(lane, hh, trans) for hh in (0, 1))]
                want[v, lane, j] = h[0] | (h[1] << 16)
    return want


@demo("ldmatrix x1/x2/x4 (.trans)", "ldmatrix")
def run_ldmatrix(rng):
    M = rng.integers(0, 1 << 16, (32, 8)).astype(u16)
    out = np.full((6, 32, 4), 0xFFFFFFFF, u32)
    k_ldmatrix[1, 32](M, out)
    want = ldmatrix_reference(M)
    for v, num in enumerate((1, 1, 2, 2, 4, 4)):  # unused register slots keep their poison
        want[v, :, num:] = 0xFFFFFFFF
    return check_bits("ldmatrix x1/x2/x4 (.trans)", out, want)


# ---- m16n8k8 and m16n8k16 with ldmatrix-loaded operands, one warp -------------------------------------
def _load_tiles(A, B, sA, sB, lane):
    """Copy A (16 x K) and B (K x 8), uint16 bits, row-major, into flat shared arrays (one warp)."""
    K = A.shape[1]
    for j in range(K // 2):
        e = lane * (K // 2) + j
        sA[e] = A[e // K, e % K]
    for j in range(K // 4):
        e = lane * (K // 4) + j
        sB[e] = B[e // 8, e % 8]


load_tiles = _dev(_load_tiles)


@functools.lru_cache(maxsize=None)
def make_mma16_kernel(K, mma, f16_acc):
    """A one-warp kernel D = A @ B + C for one 16x8xK tile, A and B loaded by ldmatrix.

    A: (16, K) uint16 bits, row-major. B: (K, 8) uint16 bits, row-major (K x N, so B goes in with .trans).
    C, D: (16, 8) float32, or with f16_acc (16, 4) uint32 = (16, 8) f16 pairs.
    `mma` is the intrinsic (any m16n8k8 or m16n8k16 variant); each kernel holds one, so a T4 compiles
    only the instructions it has.
    """
    if K == 8:
        @cuda.jit
        def kernel(A, B, C, D):
            lane = cuda.threadIdx.x
            sA = cuda.shared.array(128, u16, alignment=SMEM_ALIGN)
            sB = cuda.shared.array(64, u16, alignment=SMEM_ALIGN)
            load_tiles(A, B, sA, sB, lane)
            cuda.syncthreads()
            a = ldmatrix_x2(sA, (lane % 16) * 8)           # matrix 0: rows 0-7, matrix 1: rows 8-15
            b = (ldmatrix_x1_trans(sB, (lane % 8) * 8),)    # rows are k: .trans gives each lane a k pair
            mma_store(mma(a, b, mma_load_c(C, lane)), D, lane)
    else:
        @cuda.jit
        def kernel(A, B, C, D):
            lane = cuda.threadIdx.x
            sA = cuda.shared.array(256, u16, alignment=SMEM_ALIGN)
            sB = cuda.shared.array(128, u16, alignment=SMEM_ALIGN)
            load_tiles(A, B, sA, sB, lane)
            cuda.syncthreads()
            # x4: lane l points at row l % 16, column 8 * (l // 16): matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15)
            a = ldmatrix_x4(sA, (lane % 16) * 16 + (lane // 16) * 8)
            b = ldmatrix_x2_trans(sB, (lane % 16) * 8)      # k rows 0-7, then 8-15
            mma_store(mma(a, b, mma_load_c(C, lane)), D, lane)
    mma_load_c = _dev(_load_c_f16 if f16_acc else _load_c_f32)
    mma_store = _dev(_store_d_f16 if f16_acc else _store_d_f32)
    _BUILT["k_" + mma.__name__] = kernel
    return kernel


_BUILT = {}


def all_kernels():
    """name -> cuda.jit kernel, for every demo kernel (the per-mma ones once built)."""
    found = {n: v for n, v in globals().items() if n.startswith("k_")}
    found.update(_BUILT)
    return found


def _load_c_f32(C, lane):
    g, t = lane // 4, lane % 4
    return (C[g, 2 * t], C[g, 2 * t + 1], C[g + 8, 2 * t], C[g + 8, 2 * t + 1])


def _store_d_f32(d, D, lane):
    for i in range(4):
        r, s = c_m16n8(lane, i)
        D[r, s] = d[i]


def _load_c_f16(C, lane):
    return (C[lane // 4, lane % 4], C[lane // 4 + 8, lane % 4])


def _store_d_f16(d, D, lane):
    D[lane // 4, lane % 4] = d[0]
    D[lane // 4 + 8, lane % 4] = d[1]


def _run_mma16(name, kernel, K, kind, rng):
    """kind 0: f16 in, f32 acc; 1: f16 in, f16 acc; 2: bf16 in, f32 acc."""
    if kind == 2:   # bf16: inputs are bf16 bit patterns; the reference uses the same rounded values
        A = to_bf16_bits(rng.standard_normal((16, K)).astype(f32))
        B = to_bf16_bits(rng.standard_normal((K, 8)).astype(f32))
        Av, Bv = from_bf16_bits(A), from_bf16_bits(B)
    else:
        Av, Bv = f16(rng, 16, K), f16(rng, K, 8)
        A, B = Av.view(u16), Bv.view(u16)
    want_ab = Av.astype(np.float64) @ Bv.astype(np.float64)
    if kind == 1:
        C = f16(rng, 16, 8)
        D = np.full((16, 8), np.nan, np.float16)
        D32 = as_b32(D)
        kernel[1, 32](A, B, as_b32(C), D32)
        return check(name, D32.view(np.float16), want_ab + C, 2e-3)
    C = rng.standard_normal((16, 8)).astype(f32)
    D = np.full((16, 8), np.nan, f32)
    kernel[1, 32](A, B, C, D)
    return check(name, D, want_ab + C, 1e-5)


@demo("mma.m16n8k8 f16 (ldmatrix)", "mma.m16n8k8.f16", "ldmatrix")
def run_m16n8k8_f16(rng):
    return _run_mma16("mma.m16n8k8 f16 (ldmatrix)", make_mma16_kernel(8, mma_m16n8k8_f32_f16, False), 8, 0, rng)


@demo("mma.m16n8k8 f16 acc f16", "mma.m16n8k8.f16", "ldmatrix")
def run_m16n8k8_f16acc(rng):
    return _run_mma16("mma.m16n8k8 f16 acc f16", make_mma16_kernel(8, mma_m16n8k8_f16_f16, True), 8, 1, rng)


@demo("mma.m16n8k8 bf16", "mma.m16n8k8.bf16", "ldmatrix")
def run_m16n8k8_bf16(rng):
    return _run_mma16("mma.m16n8k8 bf16", make_mma16_kernel(8, mma_m16n8k8_f32_bf16, False), 8, 2, rng)


@demo("mma.m16n8k16 f16 (ldmatrix)", "mma.m16n8k16.f16", "ldmatrix")
def run_m16n8k16_f16(rng):
    return _run_mma16("mma.m16n8k16 f16 (ldmatrix)", make_mma16_kernel(16, mma_m16n8k16_f32_f16, False), 16, 0, rng)


@demo("mma.m16n8k16 f16 acc f16", "mma.m16n8k16.f16", "ldmatrix")
def run_m16n8k16_f16acc(rng):
    return _run_mma16("mma.m16n8k16 f16 acc f16", make_mma16_kernel(16, mma_m16n8k16_f16_f16, True), 16, 1, rng)


@demo("mma.m16n8k16 bf16", "mma.m16n8k16.bf16", "ldmatrix")
def run_m16n8k16_bf16(rng):
    return _run_mma16("mma.m16n8k16 bf16", make_mma16_kernel(16, mma_m16n8k16_f32_bf16, False), 16, 2, rng)


# ---- 128-bit loads/stores and the register packing helpers ----------------------------------------------
@cuda.jit
def k_vector_copy(src, dst, bits, halves, packed, wide):
    """Per thread i: dst[4i:4i+4] = src[4i:4i+4] reversed, through ld/st.global.v4 (f32 and b32 forms);
    halves -> pack_half2 -> unpack_half2 -> pack_half2 swapped -> shfl_xor to lane i ^ 1 -> packed;
    64-bit and float shuffles -> wide."""
    i = cuda.threadIdx.x
    v = ld_global_v4_f32(src, 4 * i)
    st_global_v4_f32(dst, 4 * i, (v[3], v[2], v[1], v[0]))
    st_global_v4_b32(bits, 4 * i, ld_global_v4_b32(src, 4 * i))     # the same 16 bytes, as bits
    lo, hi = unpack_half2(pack_half2(halves[2 * i], halves[2 * i + 1]))
    p = pack_half2(hi, lo)
    packed[i] = shfl_xor_sync(0xFFFFFFFF, p, 1)
    wide[0, i] = shfl_sync(0xFFFFFFFF, i * 1000000007, 31 - i)      # int64: both halves travel
    wide[1, i] = shfl_down_sync(0xFFFFFFFF, src[i] * 2.0, 1)          # float64
    wide[2, i] = shfl_up_sync(0xFFFFFFFF, f32(i) + f32(0.5), 2)       # float32


@demo("ld/st.global.v4, pack/unpack, shfl", "ld.global.v4", "st.global.v4")
def run_vector_copy(rng):
    name = "ld/st.global.v4, pack/unpack, shfl"
    src = rng.standard_normal(128).astype(f32)
    halves = f16(rng, 64).astype(f32)
    dst = np.full(128, np.nan, f32)
    bits = np.full(128, 0xFFFFFFFF, u32)
    packed = np.full(32, 0xFFFFFFFF, u32)
    wide = np.full((3, 32), np.nan)
    k_vector_copy[1, 32](src, dst, bits, halves, packed, wide)
    want_packed = as_b32(halves.astype(np.float16).reshape(32, 2)[:, ::-1].copy()).reshape(32)
    lane = np.arange(32)
    want_wide = np.stack([(31 - lane) * 1000000007.0,
                          np.where(lane < 31, src[np.minimum(lane + 1, 31)] * 2.0, src[lane] * 2.0),
                          np.where(lane >= 2, lane - 2, lane) + 0.5])
    parts = [check("v4.f32", dst, src.reshape(32, 4)[:, ::-1].reshape(128), 0.0),
             check_bits("v4.b32", bits, src.view(u32)),
             check_bits("pack + shfl", packed, want_packed[lane ^ 1]),
             check("shfl 64-bit/float", wide, want_wide, 0.0)]
    return Result(name, all(r.ok for r in parts), max(r.max_err for r in parts),
                  "; ".join(r.name + ": " + r.note for r in parts if r.note))


# ---- cp.async: a two-stage tile copy ------------------------------------------------------------------
@cuda.jit
def k_cp_async(src, dst):
    """src, dst: (2, 32, 4) float32. Stage 0 by 16-byte cp.async.cg, stage 1 by 8+4+4-byte .ca pieces and
    a 16-byte .ca; each thread then writes a row that *another* thread copied (so syncthreads matters)."""
    t = cuda.threadIdx.x
    s = cuda.shared.array((2, 32, 4), f32, alignment=SMEM_ALIGN)
    cp_async_cg_16(s, t * 4, src, t * 4)
    cp_async_commit()
    cp_async_ca_8(s, 128 + t * 4, src, 128 + t * 4)
    cp_async_ca_4(s, 128 + t * 4 + 2, src, 128 + t * 4 + 2)
    cp_async_ca_4(s, 128 + t * 4 + 3, src, 128 + t * 4 + 3)
    cp_async_commit()
    cp_async_wait(1)                  # stage 0 has landed (for this thread's copies)
    cuda.syncthreads()                # ... and for everyone's
    u = 31 - t
    st_global_v4_f32(dst, t * 4, (s[0, u, 0], s[0, u, 1], s[0, u, 2], s[0, u, 3]))
    cp_async_wait(0)
    cuda.syncthreads()
    st_global_v4_f32(dst, 128 + t * 4, (s[1, u, 0], s[1, u, 1], s[1, u, 2], s[1, u, 3]))
    cuda.syncthreads()
    cp_async_ca_16(s, t * 4, src, 128 + u * 4)    # and a 16-byte .ca, read back by the same thread
    cp_async_commit()
    cp_async_wait(0)
    if s[0, t, 0] != src[1, u, 0] or s[0, t, 3] != src[1, u, 3]:
        dst[0, t, 0] = np.nan


@demo("cp.async 4/8/16 B, commit, wait_group", "cp.async")
def run_cp_async(rng):
    src = rng.standard_normal((2, 32, 4)).astype(f32)
    dst = np.full((2, 32, 4), np.nan, f32)
    k_cp_async[1, 32](src, dst)
    return check("cp.async 4/8/16 B, commit, wait_group", dst, src[:, ::-1, :], 0.0)


# ---- a layout-mapped copy: out[L(i)] = in[i] for a swizzled cutelite layout ---------------------------
def swizzled_layout():
    """Sw<3,3,3> o (_8,_64):(_64,_1): the classic 128-byte-row swizzle (as a cutelite ComposedLayout)."""
    from cutelite import Layout, Swizzle, composition
    return composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))


_SW = swizzled_layout()
sw_1d = layout_fn(_SW, name="sw_1d")
sw_2d = layout_fn(_SW, by_mode=True, name="sw_2d")


@cuda.jit
def k_layout_copy(src, out1, out2):
    """out1[L(i)] = src[i] (one int coordinate); out2[L(m, n)] = src[m + 8 n] (one per mode)."""
    t = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    out1[sw_1d(t)] = src[t]
    m, n = t % 8, t // 8
    out2[sw_2d(m, n)] = src[m + 8 * n]


@demo("layout-mapped copy (swizzled cutelite layout)")
def run_layout_copy(rng):
    src = rng.standard_normal(512).astype(f32)
    out1, out2 = np.full(512, np.nan, f32), np.full(512, np.nan, f32)
    k_layout_copy[4, 128](src, out1, out2)
    host = layout_pyfunc(_SW)
    want = np.full(512, np.nan, f32)
    want[[_SW(i) for i in range(512)]] = src
    assert all(host(i) == _SW(i) for i in range(512))
    r1 = check("1d", out1, want, 0.0)
    r2 = check("2d", out2, want, 0.0)
    return Result("layout-mapped copy (swizzled cutelite layout)", r1.ok and r2.ok,
                  max(r1.max_err, r2.max_err), "; ".join(x.note for x in (r1, r2) if x.note))


# ---- a tiled tensor-core GEMM: swizzled shared memory + ldmatrix + mma, sm_75 and sm_80 versions -------
# Block tile 32x32, K tile 16, 4 warps in a 2x2 grid, each warp 16x16 (two m16n8 tiles). Shared memory
# holds f16 pairs as uint32 words; offsets come from swizzled cutelite layouts (in halves):
#   sA 32x16 row-major, Sw<1,3,3>: 16-byte chunk bit ^= row bit 2 -> ldmatrix's 8 rows hit 8 bank groups
#   sB 16x32 row-major, Sw<2,3,3>: chunk bits ^= row bits 1-2
def gemm_layouts():
    from cutelite import Layout, Swizzle, composition
    return (composition(Swizzle(1, 3, 3), Layout((32, 16), (16, 1))),
            composition(Swizzle(2, 3, 3), Layout((16, 32), (32, 1))))


_LA, _LB = gemm_layouts()
sA_at = layout_fn(_LA, by_mode=True, name="sA_at")
sB_at = layout_fn(_LB, by_mode=True, name="sB_at")


@cuda.jit
def k_gemm_sm75(A32, B32, C, K):
    """C (M x N, f32) = A (M x K) @ B (K x N), f16 in, as uint32 pairs: A32 (M, K/2), B32 (K, N/2).
    Loads: ld.global.v4 into registers, then shared stores. Math: ldmatrix + mma.m16n8k8 (T4-legal)."""
    sA = cuda.shared.array(256, u32, alignment=SMEM_ALIGN)
    sB = cuda.shared.array(256, u32, alignment=SMEM_ALIGN)
    tid = cuda.threadIdx.x
    lane, warp = tid % 32, tid // 32
    wm, wn = warp // 2, warp % 2
    m0, n0 = cuda.blockIdx.x * 32, cuda.blockIdx.y * 32
    z = f32(0.0)
    acc0 = (z, z, z, z)
    acc1 = (z, z, z, z)
    for k0 in range(0, K, 16):
        if tid < 64:      # A tile: 32 rows x 2 chunks of 8 halves
            r, ch = tid // 2, tid % 2
            v = ld_global_v4_b32(A32, (m0 + r) * (K // 2) + k0 // 2 + 4 * ch)
            o = sA_at(r, 8 * ch) // 2
        else:             # B tile: 16 rows x 4 chunks
            r, ch = (tid - 64) // 4, (tid - 64) % 4
            v = ld_global_v4_b32(B32, (k0 + r) * (B32.shape[1]) + n0 // 2 + 4 * ch)
            o = sB_at(r, 8 * ch) // 2
        if tid < 64:
            for j in range(4):
                sA[o + j] = v[j]
        else:
            for j in range(4):
                sB[o + j] = v[j]
        cuda.syncthreads()
        for s in range(2):                           # two k8 steps
            a = ldmatrix_x2(sA, sA_at(16 * wm + lane % 16, 8 * s) // 2)
            # x2.trans: lanes 0-7 -> n-tile 0, lanes 8-15 -> n-tile 1 (rows are k)
            b = ldmatrix_x2_trans(sB, sB_at(8 * s + lane % 8, 16 * wn + 8 * ((lane // 8) % 2)) // 2)
            acc0 = mma_m16n8k8_f32_f16(a, (b[0],), acc0)
            acc1 = mma_m16n8k8_f32_f16(a, (b[1],), acc1)
        cuda.syncthreads()
    for i in range(4):
        r, c = c_m16n8(lane, i)
        C[m0 + 16 * wm + r, n0 + 16 * wn + c] = acc0[i]
        C[m0 + 16 * wm + r, n0 + 16 * wn + 8 + c] = acc1[i]


@cuda.jit
def k_gemm_sm80(A32, B32, C, K):
    """The same GEMM with cp.async (16-byte .cg) loads and mma.m16n8k16 (sm_80+)."""
    sA = cuda.shared.array(256, u32, alignment=SMEM_ALIGN)
    sB = cuda.shared.array(256, u32, alignment=SMEM_ALIGN)
    tid = cuda.threadIdx.x
    lane, warp = tid % 32, tid // 32
    wm, wn = warp // 2, warp % 2
    m0, n0 = cuda.blockIdx.x * 32, cuda.blockIdx.y * 32
    z = f32(0.0)
    acc0 = (z, z, z, z)
    acc1 = (z, z, z, z)
    for k0 in range(0, K, 16):
        if tid < 64:
            r, ch = tid // 2, tid % 2
            cp_async_cg_16(sA, sA_at(r, 8 * ch) // 2, A32, (m0 + r) * (K // 2) + k0 // 2 + 4 * ch)
        else:
            r, ch = (tid - 64) // 4, (tid - 64) % 4
            cp_async_cg_16(sB, sB_at(r, 8 * ch) // 2, B32, (k0 + r) * B32.shape[1] + n0 // 2 + 4 * ch)
        cp_async_commit()
        cp_async_wait(0)
        cuda.syncthreads()
        a = ldmatrix_x4(sA, sA_at(16 * wm + lane % 16, 8 * (lane // 16)) // 2)
        # x4.trans: lane l -> k row l % 16, n-tile l // 16: registers (tile 0: k0-7, k8-15; tile 1: ...)
        b = ldmatrix_x4_trans(sB, sB_at(lane % 16, 16 * wn + 8 * (lane // 16)) // 2)
        acc0 = mma_m16n8k16_f32_f16(a, (b[0], b[1]), acc0)
        acc1 = mma_m16n8k16_f32_f16(a, (b[2], b[3]), acc1)
        cuda.syncthreads()
    for i in range(4):
        r, c = c_m16n8(lane, i)
        C[m0 + 16 * wm + r, n0 + 16 * wn + c] = acc0[i]
        C[m0 + 16 * wm + r, n0 + 16 * wn + 8 + c] = acc1[i]


def run_gemm(kernel, name, rng):
    M, N, K = pick_size((128, 128, 64), (32, 32, 32))
    A, B = f16(rng, M, K), f16(rng, K, N)
    C = np.full((M, N), np.nan, f32)
    kernel[(M // 32, N // 32), 128](as_b32(A), as_b32(B), C, K)
    want = A.astype(np.float64) @ B.astype(np.float64)
    return check(name, C, want, 1e-4)


@demo("GEMM sm_75: v4 loads, swizzle, ldmatrix, m16n8k8", "mma.m16n8k8.f16", "ldmatrix")
def run_gemm_sm75(rng):
    return run_gemm(k_gemm_sm75, "GEMM sm_75: v4 loads, swizzle, ldmatrix, m16n8k8", rng)


@demo("GEMM sm_80: cp.async, swizzle, ldmatrix, m16n8k16", "mma.m16n8k16.f16", "cp.async", "ldmatrix")
def run_gemm_sm80(rng):
    return run_gemm(k_gemm_sm80, "GEMM sm_80: cp.async, swizzle, ldmatrix, m16n8k16", rng)
