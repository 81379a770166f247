"""Pure-Python twins of `kernels.instructions.ptx`, for Numba's CUDA simulator (no GPU).

The simulator runs each CUDA thread of a block as an OS thread, so a kernel's source runs unchanged as
long as every name it calls exists in Python. For the per-thread instructions (ld.global.v4, cp.async,
packing) a twin is a plain NumPy copy. The warp-wide ones (mma, ldmatrix, shuffles) need all 32 lanes'
registers at once: each lane deposits its operands in a per-warp exchange and waits; the last lane to
arrive computes every lane's result *as the hardware distributes it* and wakes the others. Which lane holds
which element is read from the atoms themselves (their TV layouts: cutelite.fragment_of for an MMA atom,
ValLayoutSrc / ValLayoutDst for an ldmatrix copy atom), so a twin cannot disagree with the layouts the
kernels are built from. So the same kernel gives the same numbers here and on the GPU (up to the rounding of sums).

A twin fails loudly where the hardware would misbehave silently: misaligned 16-byte accesses, lanes of a
warp that do not all reach the same warp-wide instruction. Under a profile (kernels.setup(profile="sm_75")) a
twin of an instruction that GPU lacks raises CapabilityError when it runs, as the compiler would on that GPU.
"""

import threading
import time

import numpy as np

from cutelite import fragment_of, size

from cutelite.numeric import Float32

from .atoms import LDSM_PTX, ldmatrix_name, mma_name, mma_need, mma_registers
from ..numeric import decode, encode, storage
from ..runtime import check_target

SIMULATOR = True
SMEM_ALIGN = None  # the simulator's cuda.shared.array refuses alignment=; None means "default" to both

_TIMEOUT = 120.0   # seconds a lane waits for the rest of its warp before we call it a deadlock
_registry_lock = threading.Lock()


# ---- the lane exchange ---------------------------------------------------------------------------------
class _Warp:
    """One warp of the simulated block: a reusable barrier whose last arrival computes all results."""

    def __init__(self, index, nlanes):
        self.index, self.nlanes = index, nlanes
        self.cond = threading.Condition()
        self.generation = 0
        self.arrived = 0
        self.ops = [None] * nlanes
        self.args = [None] * nlanes
        self.results = None

    def exchange(self, thread, lane, op, arg):
        with self.cond:
            gen = self.generation
            self.ops[lane], self.args[lane] = op, arg
            self.arrived += 1
            if self.arrived == self.nlanes:
                self.results = self._compute()
                self.arrived = 0
                self.generation += 1
                self.cond.notify_all()
            else:
                waited = 0.0
                while self.generation == gen:
                    self.cond.wait(0.2)
                    waited += 0.2
                    if getattr(thread, "abort", False):
                        raise RuntimeError("%s: kernel aborted by another thread's error" % op.__name__)
                    if waited > _TIMEOUT:
                        raise RuntimeError(
                            "%s: only %d of the %d lanes of warp %d arrived within %.0f s; a warp-wide "
                            "instruction must be reached by every lane (divergent branch?)"
                            % (op.__name__, self.arrived, self.nlanes, self.index, _TIMEOUT))
            results = self.results   # still ours: the next generation needs this lane to arrive again
        if isinstance(results, Exception):
            raise type(results)(str(results))
        return results[lane]

    def _compute(self):
        names = sorted({op.__name__ for op in self.ops})
        if len(names) != 1:
            return RuntimeError("warp %d: lanes reached different warp-wide instructions at once: %s"
                                % (self.index, ", ".join(names)))
        try:
            return self.ops[0](list(self.args))
        except Exception as e:  # handed to every lane, raised in each
            return type(e)("%s (warp %d)" % (e, self.index))


def _warp_collective(op, arg):
    """Run `op(list of every lane's arg) -> list of per-lane results` across the caller's warp."""
    thread = threading.current_thread()
    manager = getattr(thread, "_manager", None)
    if manager is None:
        raise RuntimeError("%s: warp-wide twins run only inside a kernel launched in the simulator"
                           % op.__name__)
    warp, lane = divmod(thread.thread_id, 32)
    with _registry_lock:
        warps = manager.__dict__.setdefault("_kernels_warps", {})  # lives and dies with the block
        w = warps.get(warp)
        if w is None:
            nthreads = int(np.prod(manager._block_dim))
            w = warps[warp] = _Warp(warp, min(32, nthreads - 32 * warp))
    return w.exchange(thread, lane, op, arg)


def _full_warp(name, args):
    if len(args) != 32:
        raise RuntimeError("%s needs a full warp of 32 lanes, this one has %d" % (name, len(args)))


# ---- memory helpers ------------------------------------------------------------------------------------
def _ndarray(a):
    """The NumPy array behind a simulator array argument (global arrays come wrapped)."""
    while not isinstance(a, np.ndarray):
        d = getattr(a, "__dict__", {})
        inner = d["_item"] if "_item" in d else d.get("_ary")
        if inner is None:
            raise TypeError("expected an array, got %r" % type(a))
        a = inner
    return a


def _bytes(a, name):
    """The array's memory as flat bytes from its first element on, in memory order (C- or Fortran-contiguous
    arrays, or any view with non-negative strides: a (B, S, H, D) view of a (B, H, S, D) array)."""
    nd = _ndarray(a)
    if nd.flags.c_contiguous:
        flat = nd.reshape(-1)
    elif nd.flags.f_contiguous:
        flat = nd.T.reshape(-1)
    elif min(nd.strides) >= 0 and nd.size:
        extent = sum((n - 1) * st for n, st in zip(nd.shape, nd.strides)) + nd.itemsize
        flat = np.lib.stride_tricks.as_strided(nd, shape=(extent // nd.itemsize,), strides=(nd.itemsize,))
    else:
        raise ValueError("%s: the array must be contiguous or strided forward (offsets count from its first "
                         "element)" % name)
    return flat.view(np.uint8), nd.dtype.itemsize


def _span(a, idx, nbytes, name):
    """The `nbytes` bytes starting at element `idx` of `a`, as a writable uint8 view; checks alignment."""
    flat, itemsize = _bytes(a, name)
    off = int(idx) * itemsize
    if off % nbytes:
        raise ValueError("%s: element offset %d (byte %d) is not %d-byte aligned" % (name, idx, off, nbytes))
    if off < 0 or off + nbytes > flat.size:
        raise IndexError("%s: bytes [%d, %d) are outside the array's %d bytes"
                         % (name, off, off + nbytes, flat.size))
    return flat[off:off + nbytes]


def _regs(values):
    """A list of register values (Python or NumPy ints) -> uint32 array."""
    return (np.asarray(values, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


def _decode(regs, t):
    """uint32 registers (..., n) -> float64 values of element type t (cutelite.numeric) packed in them, 32 /
    bits a register, the lowest bits first."""
    return decode(np.ascontiguousarray(regs, dtype="<u4").view(storage(t)), t).astype(np.float64)


def _encode(vals, t):
    """float values -> uint32 registers of them rounded to element type t, packed as _decode unpacks them."""
    return np.ascontiguousarray(encode(vals, t)).view("<u4")


# ---- mma, one twin per MMA atom ---------------------------------------------------------------------------
def _tables(atom, operand, lanes):
    """(rows, cols) int arrays (len(lanes), V): where each lane's value v sits in its product's operand."""
    rc = np.array([[rc for _, rc in fragment_of(atom, operand, lane)] for lane in lanes])
    return rc[..., 0], rc[..., 1]


def make_mma(atom):
    """Twin of the atom's mma.sync: D = A @ B + C for every product the warp computes (one, or four for
    Volta's quad-pairs), each lane's registers placed by the atom's TV layouts."""
    mma_registers(atom)                                 # refuses what has no intrinsic
    name, need = mma_name(atom), mma_need(atom)
    M, N, K = atom.Shape_MNK
    T = size(atom.ThrID)
    copies = [[atom.ThrID(t) + (4 * q if T == 8 else 0) for t in range(T)] for q in range(32 // T)]
    tab = [{op: _tables(atom, op, lanes) for op in "ABC"} for lanes in copies]
    inp, acc = atom.types[1], atom.types[3]

    def op(args):
        _full_warp(name, args)
        out = [None] * 32
        for lanes, t in zip(copies, tab):
            A, B, C = np.zeros((M, K)), np.zeros((K, N)), np.zeros((M, N))
            A[t["A"]] = _decode(_regs([args[l][0] for l in lanes]), inp)
            B[t["B"]] = _decode(_regs([args[l][1] for l in lanes]), inp)
            if acc == Float32.name:
                C[t["C"]] = np.asarray([args[l][2] for l in lanes], dtype=np.float32)
            else:
                C[t["C"]] = _decode(_regs([args[l][2] for l in lanes]), acc)
            D = (A @ B + C)[t["C"]]                     # products of 16-bit floats are exact in float64
            rows = ([tuple(r) for r in D.astype(np.float32)] if acc == Float32.name
                    else [tuple(int(x) for x in r) for r in _encode(D, acc)])
            for lane, r in zip(lanes, rows):
                out[lane] = r
        return out

    op.__name__ = name

    def twin(a, b, c):
        check_target(need)
        return _warp_collective(op, (a, b, c))

    twin.__name__ = name
    twin.__doc__ = "Simulator twin of %s (%s)" % (atom.ptx, atom.name)
    return twin


# ---- ldmatrix, one twin per copy atom ----------------------------------------------------------------------
def make_ldmatrix(copy_atom):
    """Twin of an ldmatrix copy atom (16-bit elements): each lane's source values (a 16-byte row at its
    address) are placed by ValLayoutSrc in the atom's data, which lane l then reads as ValLayoutDst says."""
    _, num = LDSM_PTX[copy_atom.op]
    name = ldmatrix_name(copy_atom.op)
    src, dst = copy_atom.ValLayoutSrc, copy_atom.ValLayoutDst
    vs, vd = size(src, 1), size(dst, 1)
    src_at = np.array([[src(t, v) for v in range(vs)] for t in range(32)])
    dst_at = np.array([[dst(t, v) for v in range(vd)] for t in range(32)])
    data_size = int(max(src_at.max(), dst_at.max())) + 1

    def op(args):
        _full_warp(name, args)
        data = np.zeros(data_size, np.uint16)
        for lane in reversed(range(32)):                # lanes whose rows coincide: the lowest one's counts
            arr, idx = args[lane]
            data[src_at[lane]] = _span(arr, idx, 2 * vs, name).view(np.uint16)
        regs = np.ascontiguousarray(data[dst_at]).view("<u4")     # (32, num): values 2j, 2j + 1 a register
        if num == 1:
            return [int(x) for x in regs[:, 0]]
        return [tuple(int(x) for x in r) for r in regs]

    op.__name__ = name

    def twin(arr, idx):
        check_target("ldmatrix")
        return _warp_collective(op, (arr, idx))

    twin.__name__ = name
    twin.__doc__ = "Simulator twin of %s (%s)" % (LDSM_PTX[copy_atom.op][0], copy_atom.op)
    return twin


# ---- cp.async: the copy happens at once, so commit and wait have nothing left to do ---------------------
def _make_cp_async(name, nbytes):
    def twin(dst, dst_idx, src, src_idx):
        check_target("cp.async")
        _span(dst, dst_idx, nbytes, name)[:] = _span(src, src_idx, nbytes, name)

    twin.__name__ = name
    twin.__doc__ = "Simulator twin of cp.async (%d bytes): an immediate copy." % nbytes
    return twin


def cp_async_cg_16_zfill(dst, dst_idx, src, src_idx, valid):
    """Simulator twin of cp.async.cg with src-size 16 or 0: a copy, or 16 zero bytes."""
    check_target("cp.async")
    if valid:
        cp_async_cg_16(dst, dst_idx, src, src_idx)
    else:
        _span(dst, dst_idx, 16, "cp_async_cg_16_zfill")[:] = 0


cp_async_ca_4 = _make_cp_async("cp_async_ca_4", 4)
cp_async_ca_8 = _make_cp_async("cp_async_ca_8", 8)
cp_async_ca_16 = _make_cp_async("cp_async_ca_16", 16)
cp_async_cg_16 = _make_cp_async("cp_async_cg_16", 16)


def cp_async_commit():
    """Simulator twin of cp.async.commit_group: nothing is in flight."""
    check_target("cp.async")


def cp_async_wait(n):
    """Simulator twin of cp.async.wait_group n: every copy already landed."""
    check_target("cp.async")


# ---- 4-, 8- and 16-byte loads and stores -----------------------------------------------------------------
def _make_ld(name, kind, n):
    view = np.float32 if kind == "f32" else np.uint32
    conv = float if kind == "f32" else int

    def twin(arr, idx):
        vals = _span(arr, idx, 4 * n, name).view(view)
        return view(vals[0]) if n == 1 else tuple(view(conv(x)) for x in vals)

    twin.__name__ = name
    return twin


def _make_st(name, kind, n):
    view = np.float32 if kind == "f32" else np.uint32

    def twin(arr, idx, v):
        vals = [v] if n == 1 else list(v)
        out = _span(arr, idx, 4 * n, name).view(view)
        out[:] = np.asarray(vals, dtype=np.float32) if kind == "f32" else _regs(vals)

    twin.__name__ = name
    return twin


for _space in ("global", "shared"):
    for _n in (1, 2, 4):
        for _kind in ("f32", "b32"):
            _ld, _st = "ld_%s_v%d_%s" % (_space, _n, _kind), "st_%s_v%d_%s" % (_space, _n, _kind)
            globals()[_ld], globals()[_st] = _make_ld(_ld, _kind, _n), _make_st(_st, _kind, _n)



# ---- packing 16-bit floats into b32 registers ----------------------------------------------------------
def pack_half2(lo, hi):
    return np.uint32(_encode([lo, hi], "f16")[0])


def unpack_half2(r):
    lo, hi = _decode(_regs([r]), "f16")
    return np.float32(lo), np.float32(hi)


# ---- fast math on float32 registers ---------------------------------------------------------------------
def exp2_approx(x):
    """Simulator twin of ex2.approx.ftz.f32: 2**x in float32."""
    return np.float32(np.exp2(np.float32(x)))


def tanh_approx(x):
    """Simulator twin of tanh.approx.f32: tanh(x) rounded to float32 (the GPU's approximates it; the tests
    allow 2^-10)."""
    check_target("tanh.approx.f32")
    return np.float32(np.tanh(np.float32(x)))


def globaltimer():
    """Simulator twin of mov.u64 %globaltimer: the host's nanosecond clock (the simulator runs threads apart,
    so its stamps order the phases of one thread but say nothing of the GPU's speed)."""
    return np.uint64(time.perf_counter_ns())


def pack_bf16x2(lo, hi):
    """Simulator twin of pack_bf16x2: two floats rounded to bf16, `lo` in the low half (any target)."""
    return np.uint32(_encode([lo, hi], "bf16")[0])


def unpack_bf16x2(r):
    """Simulator twin of unpack_bf16x2: a b32 register's two bf16 halves as float32, low half first."""
    lo, hi = _decode(_regs([r]), "bf16")
    return np.float32(lo), np.float32(hi)


# ---- warp shuffles (the simulator has none) ------------------------------------------------------------
def _shfl(name, source):
    def op(args):
        n = len(args)
        out = []
        for lane, (value, x) in enumerate(args):
            src = source(lane, x)
            out.append(args[src][0] if 0 <= src < n else value)
        return out

    op.__name__ = name

    def twin(mask, value, x):
        return _warp_collective(op, (value, x))

    twin.__name__ = name
    return twin


shfl_sync = _shfl("shfl_sync", lambda lane, src: src & 31)
shfl_xor_sync = _shfl("shfl_xor_sync", lambda lane, m: lane ^ m)
shfl_down_sync = _shfl("shfl_down_sync", lambda lane, d: lane + d)
shfl_up_sync = _shfl("shfl_up_sync", lambda lane, d: lane - d)


def _syncwarp_op(args):
    return [None] * len(args)


_syncwarp_op.__name__ = "syncwarp"


def syncwarp():
    """Simulator twin of bar.warp.sync 0xffffffff: the warp's lanes wait for each other."""
    _warp_collective(_syncwarp_op, None)
