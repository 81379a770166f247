"""Chapter 6's TiledCopy as a kernel: a (64, 64) float tile global -> shared -> global, every address from
cutelite's `make_tiled_copy`, written with the CuTe layer (kernels.cutejit).

    import kernels; kernels.setup()
    from kernels.tiled import run_tiled_copy, make_copy
    out, ms = run_tiled_copy(src, bits=128, reps=20)        # src: (M, N) float32, sides multiples of 64

`make_copy(bits, path)` is the TiledCopy of 128 threads:
  * bits=128: Copy_Atom<UniversalCopy<uint128_t>, float>, threads (8, 16):(16, 1), values (1, 4): a thread
    moves 4 floats of a row in one instruction (ld.global.v4 / st.shared.v4), 16 threads cover a row;
  * bits=32:  Copy_Atom<UniversalCopy<uint32_t>, float>, threads (2, 64):(64, 1), values (1, 1);
  * path="cp.async": Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>, 16 bytes global -> shared.
The kernel never computes an index: partition_S / partition_D of the tile give each thread's values, and
the atom picks the instruction. Import after kernels.setup().
"""

import functools

import numpy as np
from numba import cuda

from cutelite import Layout, make_copy_atom, make_tiled_copy

from ..cutejit import (
    Matrix, block_idx, copy, cp_async_fence, cp_async_wait, kernel, local_tile, make_smem_tensor, syncthreads,
    thread_idx,
)
from ..timing import gpu_time_ms

__all__ = ["TILE", "THREADS", "TIMED_SIZES", "make_copy", "tile_copy", "make_copy_kernel", "run_tiled_copy"]

TILE = (64, 64)      # (BM, BN) floats per CTA
THREADS = 128
# The copies' timed sizes (kernels.tiled.check, chapter 6): 2 GiB read and written, through DRAM; 32 MiB, which
# an H100's L2 holds.
TIMED_SIZES = ((16384, 16384), (2048, 2048))


def make_copy(bits=128, path="ldg"):
    """The TiledCopy of one (64, 64) float tile by 128 threads, `bits` per copy instruction."""
    if bits not in (32, 128) or path not in ("ldg", "cp.async") or (path == "cp.async" and bits != 128):
        raise ValueError("make_copy: bits must be 32 or 128 (cp.async: 128), path 'ldg' or 'cp.async'; "
                         "got bits=%r, path=%r" % (bits, path))
    vec = bits // 32                                  # floats per instruction
    tn = TILE[1] // vec                               # threads along a row
    op = "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>" if path == "cp.async" else "UniversalCopy<uint%d_t>" % bits
    return make_tiled_copy(make_copy_atom(op, "float"), Layout((THREADS // tn, tn), (tn, 1)), Layout((1, vec)))


@kernel
def tile_copy(mS, mD, tiled_copy, asynchronous):
    tid, bid = thread_idx(), block_idx()
    n_tiles = mS.shape[1] // TILE[1]
    m, n = bid // n_tiles, bid % n_tiles
    gS = local_tile(mS, TILE, (m, n))                 # this CTA's (64, 64) tile of the source
    gD = local_tile(mD, TILE, (m, n))                 # ... and of the destination
    s = make_smem_tensor(Layout(TILE, (TILE[1], 1)), "float32")
    thr = tiled_copy.get_slice(tid)
    copy(tiled_copy, thr.partition_S(gS), thr.partition_D(s))      # global -> shared
    if asynchronous:
        cp_async_fence()
        cp_async_wait(0)
    syncthreads()
    copy(thr.partition_S(s), thr.partition_D(gD))  # shared -> global: same partition, widest access


@functools.lru_cache(maxsize=None)
def make_copy_kernel(bits, path="ldg"):
    """The built kernel k: k.launch(src, dst) copies a (M, N) float32 matrix (row-major, sides multiples of
    64) through shared memory. k.tiled_copy is the TiledCopy it was built from."""
    tc = make_copy(bits, path)
    k = tile_copy.build(Matrix("float32"), Matrix("float32"), tc, path == "cp.async", threads=THREADS)
    k.tiled_copy = tc
    k.grid = lambda src, dst: (src.shape[0] // TILE[0]) * (src.shape[1] // TILE[1])
    return k


def run_tiled_copy(src, bits=128, path="ldg", reps=0):
    """(copy of src made by the tiled-copy kernel, median ms of `reps` timed launches or None).

    src: (M, N) float32 NumPy or device array, sides multiples of 64. The output is poisoned (NaN) first.
    """
    if src.ndim != 2 or np.dtype(src.dtype) != np.float32 or src.shape[0] % TILE[0] or src.shape[1] % TILE[1]:
        raise ValueError("run_tiled_copy: src must be a 2-D float32 array with both sides multiples of "
                         "%s, got %s %s" % (TILE, src.dtype, src.shape))
    k = make_copy_kernel(bits, path)
    d_src = cuda.to_device(np.ascontiguousarray(src)) if isinstance(src, np.ndarray) else cuda.as_cuda_array(src)
    d_dst = cuda.to_device(np.full(src.shape, np.nan, np.float32))
    k.launch(d_src, d_dst)
    out = d_dst.copy_to_host()
    ms = gpu_time_ms(lambda: k.launch(d_src, d_dst), reps) if reps else None
    return out, ms
