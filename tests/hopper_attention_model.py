"""kernels.instructions.hopper_model's HopperModel with what chapter 10's Hopper attention kernel adds, so that
fa3_wgmma computes its real result in Numba's simulator at small sizes:

  * rank-4 TMA loads and stores (the maps of attention's (S, D, H, B) tensors): the box at (c0 innermost, c1,
    c2, c3), zeros outside the tensor on a load, the part inside written on a store, the 128-byte swizzle as
    for the rank-2 loads;
  * wgmma with B MN-major (trans 1: V read as V^T), through the PTX ISA's canonical MN-major 128-byte-swizzled
    layout, in 16-byte units ((8, n), (8, k)) : ((1, LBO), (8, SBO)) (CUTLASS, make_gmma_desc<Major::MN>);
  * wgmma with A from registers (the RS atoms: P): each thread's four registers hold its A values of the
    64 x 16 k-block in the RS atom's A layout, two 16-bit values a register, the lower first;
  * named barriers (bar.sync / bar.arrive, counted in threads, which the simulator runs one by one): the
    epilogue's and the ping-pong consumers' turns really wait.
"""

import functools
import threading

import numpy as np

from cutelite.gmma import gmma_fragment_of, make_gmma_atom
from cutelite.numeric import numeric
from cutelite.tma import tensor_map_params
from kernels.instructions.hopper_model import SWIZZLE_128B, HopperModel, _accumulator_coords, _field, _swizzle128
from kernels.numeric import decode, storage


@functools.lru_cache(maxsize=None)
def _a_coords(thread):
    """(rows, cols) of the 64 x 16 A k-block that warpgroup thread `thread` holds in an RS atom, in register order."""
    atom = make_gmma_atom("SM90::GMMA::MMA_64x64x16_F32F16F16_RS<GMMA::Major::K, GMMA::Major::MN>")
    coords = [mk for _, mk in gmma_fragment_of(atom, "A", thread)]
    return np.array([m for m, _ in coords]), np.array([k for _, k in coords])


class AttentionModel(HopperModel):
    def __init__(self):
        super().__init__()
        self.named, self.cond, self.a_tiles = {}, threading.Condition(), {}

    def tensor_map(self, array, spec):
        """A stand-in map of `array`, a NumPy view whose modes are the map's (S, D, H, B) or (D, S, H, B)."""
        p = tensor_map_params(spec.atom, shape=tuple(array.shape), strides_bytes=tuple(array.strides))
        t = numeric(spec.dtype)
        item = t.bits // 8
        axes, free = [], list(range(array.ndim))
        for k, d in enumerate(p.dims):          # the array's axis of each map dimension, innermost first
            stride = item if k == 0 else p.strides[k - 1]
            a = next(a for a in free if array.shape[a] == d and (array.strides[a] == stride or d == 1))
            free.remove(a)
            axes.append(a)
        view = np.asarray(array).view(storage(t)).transpose(axes[::-1])    # (d3, d2, d1, d0)
        key = len(self.maps) + 1
        self.maps[key] = (view, p, t)
        words = np.zeros(16, np.uint64)
        words[0] = key
        return words

    def overrides(self):
        o = super().overrides()
        o.update({"tma_load_4d": self.tma_load_4d, "tma_store_4d": self.tma_store_4d, "wgmma_rs": self.wgmma_rs,
                  "named_barrier_sync": self.named_barrier_sync, "named_barrier_arrive": self.named_barrier_arrive})
        return o

    # ---- rank-4 TMA ----
    def _box(self, tmap, c):
        view, p, t = self.maps[int(tmap[0])]
        box = tuple(p.box[::-1])                                    # (b3, b2, b1, b0)
        c = [int(x) for x in c][::-1]
        inside = tuple(slice(ci, min(ci + b, d)) for ci, b, d in zip(c, box, view.shape))
        part = tuple(slice(0, max(s.stop - s.start, 0)) for s in inside)
        return view, p, t, box, inside, part

    def _offsets(self, p, start, n):
        offsets = start + np.arange(n)
        if p.swizzle == SWIZZLE_128B:
            assert start % 1024 == 0, "a 128-byte-swizzled box starts on a 1024-byte boundary"
            return _swizzle128(offsets)
        if p.swizzle:
            raise NotImplementedError("AttentionModel: swizzle mode %d" % p.swizzle)
        return offsets

    def tma_load_4d(self, dst, dst_idx, tmap, bars, i, c0, c1, c2, c3):
        view, p, t, box, inside, part = self._box(tmap, (c0, c1, c2, c3))
        data = np.zeros(box, storage(t))
        data[part] = view[inside]
        raw = data.reshape(-1).view(np.uint8)
        dst.reshape(-1).view(np.uint8)[self._offsets(p, int(dst_idx) * dst.itemsize, raw.size)] = raw
        with self.lock:
            self.smem = dst
            self.bars[int(i)].complete_tx(raw.size)

    def tma_store_4d(self, tmap, src, src_idx, c0, c1, c2, c3):
        view, p, t, box, inside, part = self._box(tmap, (c0, c1, c2, c3))
        n = int(np.prod(box)) * t.bits // 8
        raw = src.reshape(-1).view(np.uint8)[self._offsets(p, int(src_idx) * src.itemsize, n)]
        view[inside] = np.ascontiguousarray(raw).view(storage(t)).reshape(box)[part]

    # ---- wgmma: B MN-major, A from registers ----
    def _operand_mn(self, desc, n, k, t):
        """The (n, k) tile of type t that an MN-major, 128-byte-swizzled descriptor points at, as float64."""
        if _field(desc, 62, 2) != 1:
            raise NotImplementedError("AttentionModel: wgmma operands with layout type %d" % _field(desc, 62, 2))
        start, lbo, sbo = _field(desc, 0, 14) << 4, _field(desc, 16, 14) << 4, _field(desc, 32, 14) << 4
        item, per = t.bits // 8, 128 // (t.bits // 8)         # elements in a 128-byte row of the atom
        r, kk = np.arange(n)[:, None], np.arange(k)[None, :]
        byte = start + (r // per) * lbo + (r % per) * item + (kk % 8) * 128 + (kk // 8) * sbo
        byte = _swizzle128(byte)[..., None] + np.arange(item)
        raw = np.ascontiguousarray(self.smem.reshape(-1).view(np.uint8)[byte])
        return decode(raw.view(storage(t))[..., 0], t).astype(np.float64)

    def wgmma_rs(self, acc, a, desc_b, scale_d, types, trans_b):
        _, ta, tb = (numeric(x) for x in types.split("."))
        me = threading.current_thread()
        thread = me.threadIdx.x % 128
        n = 2 * len(acc)
        key = (me.blockIdx.x, me.threadIdx.x // 128)
        with self.lock:
            tile = self.a_tiles.setdefault(key, np.zeros((64, 16), np.float64))
        halves = np.array([int(x) & 0xFFFFFFFF for x in a], np.uint32).view(storage(ta))   # low half first
        rows, cols = _a_coords(thread)
        bar = self._warpgroup()
        tile[rows, cols] = decode(halves, ta).astype(np.float64)
        bar.wait()                          # every thread's A values are in
        b = self._operand_mn(desc_b, n, 16, tb) if trans_b else self._operand(desc_b, n, 16, tb)
        rows_c, cols_c = _accumulator_coords(n, thread)
        d = np.einsum("ik,ik->i", tile[rows_c], b[cols_c])
        bar.wait()                          # every thread has read the tile: the next wgmma_rs may write it
        if scale_d:
            d += np.asarray(acc, np.float64)
        return tuple(np.float32(x) for x in d)

    def wgmma(self, acc, desc_a, desc_b, scale_d, types, trans):
        if not trans:
            return super().wgmma(acc, desc_a, desc_b, scale_d, types, trans)
        raise NotImplementedError("AttentionModel: an SS wgmma with an MN-major operand")

    # ---- named barriers ----
    def _arrive_named(self, i, count):
        """One thread's arrival (under self.cond): the barrier's state [arrived, phase, count] and whether this
        arrival completed the phase."""
        me = threading.current_thread()
        state = self.named.setdefault((me.blockIdx.x, int(i)), [0, 0, int(count)])
        if state[2] != int(count):
            raise RuntimeError("named barrier %d used with %d and %d threads" % (i, state[2], count))
        state[0] += 1
        if state[0] < state[2]:
            return state, False
        state[0], state[1] = 0, state[1] + 1
        self.cond.notify_all()
        return state, True

    def named_barrier_arrive(self, i, count):
        with self.cond:
            self._arrive_named(i, count)

    def named_barrier_sync(self, i, count):
        with self.cond:
            state, done = self._arrive_named(i, count)
            phase = state[1]
            while not done and state[1] == phase:
                self.cond.wait(0.01)
