"""A TiledCopy as a kernel: a tile GMEM -> SMEM -> GMEM, each thread's addresses taken from cutelite's
`make_tiled_copy`, with 128-bit (ld.global.v4 / cp.async) or 32-bit copy atoms.

    import kernels; kernels.setup()
    from kernels.tiled_copy import run_tiled_copy, make_copy
    out, ms = run_tiled_copy(src, bits=128)                 # src: (M, N) float32, M and N multiples of 64
    out, ms = run_tiled_copy(src, bits=128, path="cp.async", reps=20)   # sm_80+; ms: median of 20 runs

Each CTA moves one (64, 64) tile with 128 threads. `make_copy(bits)` is the TiledCopy:
  * bits=128: Copy_Atom<UniversalCopy<uint128_t>, float>, threads (8, 16):(16, 1), values (1, 4): a
    thread moves 4 floats of a row in one instruction, 16 threads cover a 64-float row;
  * bits=32:  Copy_Atom<UniversalCopy<uint32_t>, float>, threads (2, 64):(64, 1), values (1, 1).
The kernel never computes an index by hand: `tc.tidfrg_S(gmem_tile)` is (thread, value, rest) -> offset,
compiled by kernels.layout_fn with every constant folded in; the thread index is its only run-time input.
A 16-byte instruction is used only where the layout allows it (`vector_width` checks that each atom's
values are contiguous and aligned in both tiles). Import after kernels.setup().
"""

import functools

import numpy as np
from numba import cuda

from cutelite import Layout, group, make_copy_atom, make_tiled_copy, size

from .intrinsics import (
    SMEM_ALIGN, cp_async_cg_16, cp_async_commit, cp_async_wait,
    ld_global_v4_f32, ld_shared_v4_f32, st_global_v4_f32, st_shared_v4_f32,
)
from .layout_codegen import layout_fn, layout_pyfunc
from .timing import gpu_time_ms

TILE = (64, 64)      # (BM, BN) floats per CTA
THREADS = 128
f32 = np.float32


def make_copy(bits=128, path="ldg"):
    """The TiledCopy of one (64, 64) float tile by 128 threads, `bits` per copy instruction.
    path "cp.async" uses Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float> (bits=128 only)."""
    if bits not in (32, 128) or (path == "cp.async" and bits != 128) or path not in ("ldg", "cp.async"):
        raise ValueError("make_copy: bits must be 32 or 128 (cp.async: 128), path 'ldg' or 'cp.async'; "
                         "got bits=%r, path=%r" % (bits, path))
    vec = bits // 32                                  # floats per instruction
    tn = TILE[1] // vec                               # threads along a row
    op = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>" if path == "cp.async" else "UniversalCopy<uint%d_t>" % bits
    return make_tiled_copy(make_copy_atom(op, "float"), Layout((THREADS // tn, tn), (tn, 1)), Layout((1, vec)))


def tile_layouts(ld):
    """(gmem tile, smem tile): the (64, 64) tile inside a row-major matrix of row stride ld, and the
    row-major shared tile."""
    return Layout(TILE, (ld, 1)), Layout(TILE, (TILE[1], 1))


def thread_maps(tc, tile):
    """tc.tidfrg_S(tile) with its value modes grouped: (thread, value, rest) -> offset, value = the atom's
    values then the thread's further atoms, rest = the tile's repeats of the copy (one mode each)."""
    f = tc.tidfrg_S(tile)
    return group(f, 2)


def vector_width(tc, *tiles):
    """Values one atom moves (size(atom values)) if, in every tile, each atom's values are consecutive
    offsets starting at a multiple of that many; else 1 (the copy must go element by element).

    Post: for every thread t, atom a, rest r of thread_maps(tc, tile): f(t, V*a + v, r) == f(t, V*a, r) + v,
          f(t, V*a, r) % V == 0.
    """
    V = tc.atom_num_val
    for tile in tiles:
        f = thread_maps(tc, tile)
        g = layout_pyfunc(f, by_mode=True)
        for t in range(size(f, 0)):
            for a in range(size(f, 1) // V):
                for r in range(size(f, 2)):
                    o = g(t, V * a, r)
                    if o % V or any(g(t, V * a + v, r) != o + v for v in range(V)):
                        return 1
    return V


@functools.lru_cache(maxsize=None)
def make_copy_kernel(bits, ld, path="ldg"):
    """k(src, dst): dst = src through shared memory, for flat float32 arrays of a row-major matrix with
    row stride ld. Launch: grid (N / 64, M / 64), block 128."""
    tc = make_copy(bits, path)
    gmem, smem = tile_layouts(ld)
    g_at = layout_fn(thread_maps(tc, gmem), by_mode=True, name="g_at")    # (t, v, r) -> gmem offset
    s_at = layout_fn(thread_maps(tc, smem), by_mode=True, name="s_at")    # (t, v, r) -> smem offset
    f = thread_maps(tc, gmem)
    V, NV, NR = vector_width(tc, gmem, smem), size(f, 1), size(f, 2)
    if V == 1 and bits != 32:
        raise ValueError("make_copy_kernel: the %d-bit copy's values are not contiguous here" % bits)
    ASYNC, SMEM, BM, BN = path == "cp.async", size(smem), TILE[0], TILE[1]

    @cuda.jit
    def tiled_copy(src, dst):
        s = cuda.shared.array(SMEM, f32, alignment=SMEM_ALIGN)
        t = cuda.threadIdx.x
        base = cuda.blockIdx.y * BM * ld + cuda.blockIdx.x * BN
        for r in range(NR):                           # GMEM -> SMEM
            for v in range(0, NV, V):
                if V == 4 and ASYNC:
                    cp_async_cg_16(s, s_at(t, v, r), src, base + g_at(t, v, r))
                elif V == 4:
                    st_shared_v4_f32(s, s_at(t, v, r), ld_global_v4_f32(src, base + g_at(t, v, r)))
                else:
                    s[s_at(t, v, r)] = src[base + g_at(t, v, r)]
        if ASYNC:
            cp_async_commit()
            cp_async_wait(0)
        cuda.syncthreads()
        for r in range(NR):                           # SMEM -> GMEM, the same TiledCopy
            for v in range(0, NV, V):
                if V == 4:
                    st_global_v4_f32(dst, base + g_at(t, v, r), ld_shared_v4_f32(s, s_at(t, v, r)))
                else:
                    dst[base + g_at(t, v, r)] = s[s_at(t, v, r)]

    tiled_copy.tiled_copy, tiled_copy.vector = tc, V
    return tiled_copy


def _check_shape(src):
    if src.ndim != 2 or src.dtype != f32 or src.shape[0] % TILE[0] or src.shape[1] % TILE[1]:
        raise ValueError("run_tiled_copy: src must be a 2-D float32 array with both sides multiples of "
                         "%s, got %s %s" % (TILE, src.dtype, src.shape))


def run_tiled_copy(src, bits=128, path="ldg", reps=0):
    """(copy of src made by the tiled-copy kernel, median ms of `reps` timed launches or None).

    src: (M, N) float32 NumPy or device array. The output is poisoned (NaN) before the kernel runs.
    """
    _check_shape(src)
    M, N = src.shape
    k = make_copy_kernel(bits, N, path)
    d_src = cuda.to_device(np.ascontiguousarray(src).reshape(-1)) if isinstance(src, np.ndarray) \
        else cuda.as_cuda_array(src).reshape(M * N)
    d_dst = cuda.to_device(np.full(M * N, np.nan, f32))
    grid = (N // TILE[1], M // TILE[0])
    k[grid, THREADS](d_src, d_dst)
    out = d_dst.copy_to_host().reshape(M, N)
    ms = gpu_time_ms(lambda: k[grid, THREADS](d_src, d_dst), reps) if reps else None
    return out, ms
