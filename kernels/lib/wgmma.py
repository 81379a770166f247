"""matmul's Hopper family: chapter 8's persistent TMA + wgmma kernel (kernels.hopper, its MATMUL_CONFIG) on
an sm_90 GPU, f16 or bf16 in, float32 out.

The tensor maps read an operand in place wherever its rows (along its unit stride) are 16-byte multiples at
a 16-byte-aligned address (Operand.tma_readable); any other operand is copied first into a buffer with
128-byte rows, in the same order (a pass over that operand, on every call: 0.04 ms for 4000 x 2500 halves;
128-byte rows ran faster than 16-byte ones, benchmarks/gemm/RESULTS.md). The TMA fills the tile edges with
zeros and clips the stores: any M, N, K.

The tile and the split of K come from the shape and the SM count (shapes.choose_tile): step 5's 128 x 256
tiles where they fill the GPU, 128 x 128 or 64-row tiles (one consumer warpgroup) where they fill it better,
split-K where even those leave most SMs idle, and stream-K where the last wave is part full. Split-K is
CUTLASS's "parallel reduction in the epilogue" done by the TMA: C is zeroed (one memset on the call's
stream), and each split adds its float32 partial C into it with TMA reduce-adds (cp.reduce.async.bulk.tensor
.add, atomic per element, in L2): one kernel, no workspace, no second pass, no host work beyond the memset's
driver call. Stream-K adds the same way: the persistent blocks compute the full waves' tiles whole (stored),
then share the last wave's k-tiles evenly, each adding its pieces of those tiles into C, zeroed only in
their box (a 2-D memset of that part of C). The price of both: the adds land in any order, so where 3 or
more pieces make a tile the float32 sum may differ in its last bits from call to call (with 2, 0 + a + b =
0 + b + a: the same every call).
"""

import numpy as np
from numba import cuda

from cutelite import Major
from cutelite.numeric import BFloat16, Float16, Float32, numeric

from ..arrays import transposed
from ..capability import max_shared_per_block
from ..hopper import HopperGemm
from ..hopper import gemm as hopper_gemm
from ..hopper.objects import store_stages
from ..numeric import storage
from ..runtime import device_info, in_simulator
from . import staging
from .epilogue import PLAIN
from .shapes import Tile, choose_tile

__all__ = ["Wgmma", "WGMMA", "tma_view", "config_for"]


class Wgmma:
    """Chapter 8's persistent kernel (kernels.hopper.gemm.MATMUL_CONFIG, read at each prepare) as a matmul
    kernel family."""
    name = "hopper"
    dtypes = (Float16, BFloat16)

    def __init__(self):
        self._gemms = {}

    def can_implement(self, a, b, c, device=None, fused=PLAIN):
        """(whether this family computes a @ b into c, and why not): f16 or bf16 inputs on an sm_90 GPU (not
        the simulator, whose twins would take minutes); any shape, any order, any alignment."""
        if a.dtype not in self.dtypes:
            return False, "hopper takes float16 or bfloat16 inputs, got %s" % a.dtype.name
        device = device or device_info()
        if device.simulator or device.cc is None or tuple(device.cc[:2]) != (9, 0):
            return False, "hopper needs an sm_90 GPU (wgmma, TMA); this is %s" % (
                "the simulator" if device.simulator else device.name)
        return True, ""

    def gemm(self, dtype, majors, tile=Tile(128, 256, 1), epi=None):
        """The HopperGemm for these operands, tile (config_for) and Epilogue (None: C = A @ B in float32),
        built once."""
        config = config_for(tile)
        key = (dtype, majors, epi, tuple(sorted(config.items())))
        if key not in self._gemms:
            self._gemms[key] = HopperGemm(dtype=dtype.name, majors=majors, **config, **({"epi": epi} if epi else {}))
        return self._gemms[key]

    def prepare(self, a, b, c, stream=0, fused=PLAIN):
        """The launchable call computing a @ b (device Operands) into c (an Operand, or None) on `stream`,
        through the epilogue `fused`. An out the TMA store cannot write, or one that overlaps A or B, is a
        temporary copied into place."""
        (M, K), N = a.shape, b.shape[1]
        bt = b.T
        copy_a, copy_b = not a.tma_readable, not bt.tma_readable
        if not (copy_a or copy_b) and a.pitch % 128 and bt.pitch % 128 and M * N * K >= 2**32:
            # both read in place from rows that are not 128-byte multiples: the kernel ran 30 % slower at
            # 4000x3000x2500 (benchmarks/gemm/odd_shape_probe.py), and copying the smaller operand cost less
            # than that (0.66 -> 0.84 of cuBLAS); small products, bound by latency, skip the copy's launch
            copy_a, copy_b = M <= N, M > N          # the smaller of A (M, K) and B (K, N)
        (av, fill_a), (btv, fill_b) = tma_view(a, copy_a, stream), tma_view(bt, copy_b, stream)
        tile = choose_tile(M, N, K, a.dtype, cuda.get_current_device().MULTIPROCESSOR_COUNT)
        majors = (a.major or Major.K, bt.major or Major.K)
        before = [f for f in (fill_a, fill_b) if f is not None]
        if not fused.plain:
            tile = tile._replace(splits=1, stream_k=False)    # an epilogue needs the whole sum: the tile, unsplit
        buf, after, result = c_buffer(c, M, N, numeric(fused.epi.out), fused.epi.beta, (a, b), stream)
        cv = buf if buf.shape[1] == N else buf[:, :N]           # what the kernel writes; C read from buf
        if fused.epi.beta:
            before += staging.seeded(c, buf, stream)
        epi, wide = fused.for_kernel()
        args, fill = fused.arguments(cv, stream, wide, C=buf)
        run = self.gemm(a.dtype, majors, tile, epi).prepare(av, btv, cv, stream, tile.splits, epilogue=args)
        return staging.prepared(before + fill, run, after, result, keep=(av, btv, buf, cv) + args)


def config_for(tile: Tile) -> dict:
    """The HopperGemm configuration of a Tile: step 5's (kernels.hopper.MATMUL_CONFIG, 128 x 256) with the
    tile's columns, a consumer warpgroup per 64 rows, as many stages as shared memory holds (store_stages:
    4 for 128 x 256, 5 for 64 x 256, 6 for 128 x 128, 8 for 64 x 128), split_k where the tile splits K and
    stream_k where it shares the last wave. One consumer (256 threads) has 255 registers a thread without
    setmaxnreg, and a 40-register producer spilled there (ptxas, 64 x 128 split-K): regs=None."""
    config = dict(hopper_gemm.MATMUL_CONFIG, BN=tile.BN, consumers=tile.BM // 64,
                  stages=store_stages(tile.BM, tile.BN, tile.BM // 64, max_shared_per_block((9, 0))))
    if tile.BM == 64:
        config["regs"] = None
    if tile.splits > 1:
        config["split_k"] = True
    if tile.stream_k:
        config["stream_k"] = True
    return config


def c_buffer(c, M, N, out, reads_c, reads, stream=0):
    """(the array the kernel writes C into, the copies after it, the device array holding C then) for an
    M x N C of element type `out` (Operand c: the caller's out, or None): c itself where the TMA store can
    write it in place (K-major rows of 16-byte multiples, no overlap with the Operands `reads`), else a buffer
    of 128-byte rows cropped into place. An epilogue that reads C (`reads_c`: beta != 0) reads a thread's two
    columns at once, kept or dropped whole at the edge: for an odd N the buffer is one column wider (C is read
    from it, its last column zeros; the kernel writes its first N columns)."""
    pairs = reads_c and N % 2
    if c is not None and c.on_device and c.major == Major.K and c.tma_readable and not c.overlaps(*reads) \
            and not pairs:
        return c.array, [], c.array
    result = staging.output(c, M, N, storage(out))
    fresh = c is None or not c.on_device
    cv = result if fresh and (N * out.bits // 8) % 16 == 0 else rows_of_128_bytes(M, N + pairs, out, Major.K)
    return cv, ([] if cv is result else [staging.crop(cv, result, stream)]), result


def rows_of_128_bytes(rows, cols, dtype, major):
    """A (rows, cols) device array whose contiguous rows (along mode 1 if `major` is K, else mode 0) start
    128 bytes apart: a view into a buffer padded that far."""
    per_128_bytes, held = 128 // (dtype.bits // 8), storage(dtype)
    if major == Major.MN:
        return transposed(cuda.device_array((cols, staging.ceil_to(rows, per_128_bytes)), held)[:, :rows])
    return cuda.device_array((rows, staging.ceil_to(cols, per_128_bytes)), held)[:, :cols]


def tma_view(x, copy, stream=0, major=None):
    """(Operand x's matrix as the tensor maps read it, the copy that refreshes it or None): x itself where
    `copy` is False; else a buffer of 128-byte rows, viewed at x's shape, in the order `major` (None: x's,
    K-major where x has no unit stride)."""
    if not copy:
        return x.array, None
    major = major or x.major or Major.K
    view = rows_of_128_bytes(*x.shape, x.dtype, major)
    src, dst = (transposed(x.array), transposed(view)) if major == Major.MN else (x.array, view)
    return view, staging.crop(*widened(src, dst), stream)     # copied along the contiguous mode


def widened(*xs):
    """The device arrays xs (of one shape) seen as the widest words, 8 or 4 bytes, that every one's rows,
    pitch and address allow (a copy then moves 4x or 2x fewer elements); else xs. Words that suit one array
    but not another would cut the copy's rows at different places, and a copy from an array without a unit
    stride along its rows (transposing) is never widened."""
    if in_simulator():
        return xs
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    def fits(x, size):
        row_bytes, pitch = x.shape[1] * x.dtype.itemsize, x.strides[0]
        address = x.__cuda_array_interface__["data"][0]
        return x.strides[1] == x.dtype.itemsize and row_bytes % size == 0 and pitch % size == 0 and address % size == 0

    for word in (np.uint64, np.uint32):
        size = np.dtype(word).itemsize
        if all(fits(x, size) for x in xs):
            return tuple(DeviceNDArray((x.shape[0], x.shape[1] * x.dtype.itemsize // size), (x.strides[0], size),
                                       np.dtype(word), gpu_data=x.gpu_data) for x in xs)
    return xs


WGMMA = Wgmma()
