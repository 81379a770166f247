"""A working model of Hopper's TMA loads, mbarriers and wgmma for Numba's simulator, from the PTX ISA and the
CUDA driver's tensor-map arguments, so that a chapter 8 kernel computes its real result at small sizes.

hopper_sim's twins make these instructions no-ops or refusals: the simulator has no copy engine and no tensor
cores. This model plays them, for one launch at a time, as the build's `overrides` (kernels.cutejit's Trace):

    model = HopperModel()
    k = fp8.make(..., overrides=model.overrides())
    k.launch(A, Bt, C, SA, SB, model.tensor_map(A, o.tmA), model.tensor_map(Bt, o.tmB), grid=2)

  * a tensor map is the driver's arguments (cutelite.tma.tensor_map_params) kept by the model: a TMA load
    copies the box at (c0, c1), innermost first, zeros outside the matrix, into shared memory row after row,
    each 16-byte chunk moved by the 128-byte swizzle (chunk ^= row % 8, on the address), and completes its
    bytes on the mbarrier;
  * an mbarrier is cutelite.pipeline.MBarrier (arrivals, transaction bytes, phases), so waits really wait;
  * wgmma, issued by a warpgroup's 128 threads together, returns to none of them before all have read A and B
    (a barrier of the 128: the simulator runs its threads apart, and lane 0 of a warp releases the stage for the
    whole warp). It reads them through their descriptors (PTX ISA, "Matrix Descriptor Format": start address, SBO,
    128-byte swizzle; K-major operands) and each thread computes its own accumulators, in float64 rounded to
    float32, at the places of the PTX ISA's accumulator fragment (thread t of the warpgroup holds rows
    16 (t // 32) + (t % 32) // 4 (+ 8) and columns 2 (t % 4) (+ 1) + 8 j).
The hardware's reduced-precision FP8 accumulation is not modelled: products are summed exactly.
"""

import functools
import threading
import time

import numpy as np

from cutelite.gmma import gmma_fragment_of, make_gmma_atom
from cutelite.numeric import numeric
from cutelite.pipeline import MBarrier
from cutelite.tma import tensor_map_params

from ..numeric import decode, storage

__all__ = ["HopperModel"]

SWIZZLE_128B = 3          # CUtensorMapSwizzle; a descriptor's layout type 1


def _swizzle128(byte):
    """The 128-byte swizzle on a shared-memory byte address: its 16-byte chunk (bits 4-6) ^= its row (bits 7-9)."""
    return byte ^ (((byte >> 7) & 7) << 4)


def _field(desc, lo, bits):
    return (int(desc) % (1 << 64)) >> lo & ((1 << bits) - 1)


@functools.lru_cache(maxsize=None)
def _accumulator_coords(n, thread):
    """(rows, cols) of the 64 x n accumulator that warpgroup thread `thread` holds, in register order: read off
    the GMMA atom's C layout (the same for every input type of a float32 accumulator)."""
    coords = [mn for _, mn in gmma_fragment_of(make_gmma_atom("SM90_64x%dx16_F32F16F16_SS" % n), "C", thread)]
    return np.array([m for m, _ in coords]), np.array([c for _, c in coords])


class HopperModel:
    """The state of one simulated launch: the tensor maps, the mbarriers and the shared memory the loads fill."""

    def __init__(self):
        self.maps, self.bars, self.smem, self.warpgroups = {}, {}, None, {}
        self.lock = threading.Lock()

    def tensor_map(self, array, spec):
        """A stand-in tensor map (16 uint64 words, the first naming it) of `array` for `spec` (a cutejit TensorMap)."""
        p = tensor_map_params(spec.atom, shape=tuple(array.shape), strides_bytes=tuple(array.strides))
        key = len(self.maps) + 1
        t = numeric(spec.dtype)
        self.maps[key] = (np.asarray(array).view(storage(t)), p, t)      # the elements' bits
        words = np.zeros(16, np.uint64)
        words[0] = key
        return words

    def overrides(self):
        """{intrinsic name: this model's twin} for a kernel's build."""
        return {"mbarrier_init": self.mbarrier_init, "mbarrier_arrive": self.mbarrier_arrive,
                "mbarrier_arrive_expect_tx": self.mbarrier_arrive_expect_tx,
                "mbarrier_try_wait": self.mbarrier_try_wait, "tma_load_2d": self.tma_load_2d,
                "tma_prefetch_desc": lambda tmap: None, "wgmma": self.wgmma}

    # ---- mbarriers ----
    def mbarrier_init(self, bars, i, count):
        with self.lock:
            self.bars[int(i)] = MBarrier("bar[%d]" % i, int(count))

    def mbarrier_arrive(self, bars, i):
        with self.lock:
            self.bars[int(i)].arrive()

    def mbarrier_arrive_expect_tx(self, bars, i, nbytes):
        with self.lock:
            self.bars[int(i)].arrive(expect_tx=int(nbytes))

    def mbarrier_try_wait(self, bars, i, parity):
        with self.lock:
            done = self.bars[int(i)].try_wait(int(parity))
        if not done:
            time.sleep(1e-4)          # let the thread that will arrive run
        return int(done)

    # ---- TMA ----
    def tma_load_2d(self, dst, dst_idx, tmap, bars, i, c0, c1):
        array, p, t = self.maps[int(tmap[0])]
        item = t.bits // 8
        (w, h), (d0, d1) = p.box, p.dims
        inner = 1 if array.strides[1] == item else 0          # the array's axis of dimension 0
        box = np.zeros((h, w), storage(t))
        x0, x1 = range(int(c0), min(int(c0) + w, d0)), range(int(c1), min(int(c1) + h, d1))
        if len(x0) and len(x1):
            part = array[x1.start:x1.stop, x0.start:x0.stop] if inner else array[x0.start:x0.stop, x1.start:x1.stop].T
            box[:len(x1), :len(x0)] = part
        raw = box.reshape(-1).view(np.uint8)
        start = int(dst_idx) * dst.itemsize
        offsets = start + np.arange(raw.size)
        if p.swizzle == SWIZZLE_128B:
            assert start % 1024 == 0, "a 128-byte-swizzled box starts on a 1024-byte boundary"
            offsets = _swizzle128(offsets)
        elif p.swizzle:
            raise NotImplementedError("HopperModel: swizzle mode %d" % p.swizzle)
        dst.reshape(-1).view(np.uint8)[offsets] = raw
        with self.lock:
            self.smem = dst
            self.bars[int(i)].complete_tx(raw.size)

    # ---- wgmma ----
    def _operand(self, desc, rows, k, t):
        """The (rows, k) tile of type t that a K-major, 128-byte-swizzled descriptor points at, as float64."""
        if _field(desc, 62, 2) != 1:
            raise NotImplementedError("HopperModel: wgmma operands with layout type %d" % _field(desc, 62, 2))
        start, sbo = _field(desc, 0, 14) << 4, _field(desc, 32, 14) << 4
        r, kb = np.arange(rows)[:, None], np.arange(k * t.bits // 8)[None, :]
        byte = _swizzle128(start + (r // 8) * sbo + (r % 8) * 128 + kb)
        raw = np.ascontiguousarray(self.smem.reshape(-1).view(np.uint8)[byte])
        return decode(raw.view(storage(t)), t).astype(np.float64)

    def _warpgroup(self):
        me = threading.current_thread()
        key = (me.blockIdx.x, me.blockIdx.y, me.blockIdx.z, me.threadIdx.x // 128)
        with self.lock:
            return self.warpgroups.setdefault(key, threading.Barrier(128))

    def wgmma(self, acc, desc_a, desc_b, scale_d, types, trans):
        if trans:
            raise NotImplementedError("HopperModel: wgmma of MN-major operands")
        _, ta, tb = (numeric(x) for x in types.split("."))
        k, n = 256 // ta.bits, 2 * len(acc)
        rows, cols = _accumulator_coords(n, threading.current_thread().threadIdx.x % 128)
        a, b = self._operand(desc_a, 64, k, ta), self._operand(desc_b, n, k, tb)
        d = np.einsum("ik,ik->i", a[rows], b[cols])
        self._warpgroup().wait()             # every thread of the warpgroup has read the stage
        if scale_d:
            d += np.asarray(acc, np.float64)
        return tuple(np.float32(x) for x in d)
