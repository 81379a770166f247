"""SIMT fp32, step 8: step 7 (simt_warptile) with the k-loop of a tile written out and the A^T tile padded.

  * The BK rank-1 updates of a k-tile are straight-line code (kernels.gemm.unrolled.outer_products):
    the compiler sees all 4 * BK ld.shared.v4 and 64 * BK FFMA at once and issues the loads of step k + 1
    while the FFMA of step k run. (A `for k in range(BK)` loop around 64 FFMA is past LLVM's unrolling
    budget: step 7 runs it as a loop, each step waiting for its own loads.)
  * A^T rows are padded to BM + 4 floats: the two threads that store the two float4 of one A row write
    rows k and k + 4 of A^T, which now fall 16 banks apart (step 7: the same bank, 2-way conflicts).
  * Accumulators are a tuple (registers); everything else as in step 7: 128x128x8 tiles, 8x8 outputs a
    thread in a 64x32 warp tile, next k-tile fetched into registers during the math, two shared buffers.
"""

import numpy as np
from numba import cuda

from ..instructions import ld_global_v4_f32, ld_shared_v4_f32, st_global_v4_f32, st_shared_v4_f32
from . import _jit, unrolled
from .simt_warptile import C_TV, c_at  # noqa: F401  (the same thread-value layout of the C tile)

f32 = np.float32
BM, BN, BK, THREADS = 128, 128, 8, 256
PAD = 4
A_ROW = BM + PAD                    # A^T tile: (BK, BM) in rows of BM + PAD floats
SA, SB = 2 * BK * A_ROW, 2 * BK * BN
steps = unrolled.outer_products(ld_shared_v4_f32, BK, A_ROW, BN, 32, 16)
zeros = unrolled.zeros(64)


@_jit.jit(launch_bounds=(THREADS, 2))
def gemm_simt_unrolled(A, B, C):
    """C (M, N) = A (M, K) @ B (K, N), f32, row-major; M, N multiples of 128, K of 8."""
    sA = cuda.shared.array(SA, f32)
    sB = cuda.shared.array(SB, f32)
    t = cuda.threadIdx.x
    M, N = C.shape
    K = A.shape[1]
    m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    base = c_at(t, 0)
    tm, tn = base % BM, base // BM                    # this thread's first output of the tile
    ar, ak = t // 2, 4 * (t % 2)                      # the float4 of A and of B this thread copies
    br, bc = t // 32, 4 * (t % 32)
    acc = zeros()
    va = ld_global_v4_f32(A, (m0 + ar) * K + ak)
    vb = ld_global_v4_f32(B, br * N + n0 + bc)
    for kt in range(K // BK):
        buf = kt % 2
        for j in range(4):                            # A goes in transposed: 4 scalar stores
            sA[buf * BK * A_ROW + (ak + j) * A_ROW + ar] = va[j]
        st_shared_v4_f32(sB, buf * BK * BN + br * BN + bc, vb)
        cuda.syncthreads()
        if kt + 1 < K // BK:                          # next k-tile into registers, during the math
            va = ld_global_v4_f32(A, (m0 + ar) * K + (kt + 1) * BK + ak)
            vb = ld_global_v4_f32(B, ((kt + 1) * BK + br) * N + n0 + bc)
        acc = steps(sA, sB, buf * BK * A_ROW + tm, buf * BK * BN + tn, acc)
        # one barrier per k-tile is enough: the next iteration writes the other buffer
    for i in range(8):
        r = m0 + tm + (i % 4) + 32 * (i // 4)
        for h in range(2):
            st_global_v4_f32(C, r * N + n0 + tn + 16 * h,
                             (acc[8 * i + 4 * h], acc[8 * i + 4 * h + 1], acc[8 * i + 4 * h + 2],
                              acc[8 * i + 4 * h + 3]))


grid = _jit.tile_grid(BM, BN, THREADS)


def make(epi):
    """gemm_simt_unrolled with Epilogue epi (kernels.cutejit.epilogue): this kernel's own source, its last
    loop (the store of C) written out for epi: D = act(alpha acc + beta C + bias), float32 math, D stored
    in epi.out (16-bit pairs packed). Launched as kernel[grid](A, B, D, *the Epilogue's run-time arguments:
    C (D itself), the bias as a stride-0 (M, N) float32 matrix, alpha, beta, those it reads)."""
    import inspect
    from .. import instructions
    from ..source import compile_function
    src = inspect.getsource(gemm_simt_unrolled.py_func)
    body = src[src.index("def gemm_simt_unrolled"):src.index("    for i in range(8):\n        r = m0")]
    params = [p for p, m in zip(("X", "bias", "alpha", "beta"), epi.matrices()) if m is not None]
    body = body.replace("def gemm_simt_unrolled(A, B, C):", "def gemm_simt_unrolled_epilogue(%s):"
                        % ", ".join(["A", "B", "C"] + params))
    env = dict(globals(), float32=f32, **{n: getattr(instructions, n) for n in (
        "ld_global_v1_f32", "ld_global_v2_b32", "st_global_v2_b32", "unpack_half2", "unpack_bf16x2", "pack_half2",
        "pack_bf16x2", "tanh_approx")})
    fn = compile_function(body + store_source(epi), "gemm_simt_unrolled_epilogue", env, "simt epilogue")
    kernel = _jit.jit(launch_bounds=(THREADS, 2))(fn)
    kernel.source = fn.source
    return kernel


def store_source(epi):
    """The epilogue's store of a thread's 8x8 block, straight-line: 16 times 4 values of a row."""
    wide = epi.out == "float32"
    unpack = {"float16": "unpack_half2", "bfloat16": "unpack_bf16x2"}.get(epi.out)
    pack = {"float16": "pack_half2", "bfloat16": "pack_bf16x2"}.get(epi.out)
    lines = []
    for i in range(8):
        lines.append("    r = m0 + tm + %d" % ((i % 4) + 32 * (i // 4)))
        if epi.bias == "row":
            lines.append("    b = ld_global_v1_f32(bias, r)")
        for h in range(2):
            at = "r * N + n0 + tn + %d" % (16 * h)
            if epi.beta:
                if wide:
                    lines.append("    x0, x1, x2, x3 = ld_global_v4_f32(C, %s)" % at)
                else:
                    lines.append("    w0, w1 = ld_global_v2_b32(C, %s)" % at)
                    lines.append("    x0, x1 = %s(w0)" % unpack)
                    lines.append("    x2, x3 = %s(w1)" % unpack)
            if epi.bias == "col":
                lines.append("    b0, b1, b2, b3 = ld_global_v4_f32(bias, n0 + tn + %d)" % (16 * h))
            for j in range(4):
                pre, value = epi.value("acc[%d]" % (8 * i + 4 * h + j), "x%d" % j, "b%d" % j if epi.bias == "col"
                                       else "b", tmp="v%d" % j)
                lines += ["    " + line for line in pre] + ["    e%d = %s" % (j, value)]
            if wide:
                lines.append("    st_global_v4_f32(C, %s, (e0, e1, e2, e3))" % at)
            else:
                lines.append("    st_global_v2_b32(C, %s, (%s(e0, e1), %s(e2, e3)))" % (at, pack, pack))
    return "\n".join(lines) + "\n"
