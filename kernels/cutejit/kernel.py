"""@cutejit.kernel: a kernel written in CuTe's terms, traced into a Numba kernel.

    @cutejit.kernel
    def gemm(mA, mB, mC, tiled_mma, g2s_A, ...):     # mA...: Matrix arguments; the rest: static objects
        tid = cutejit.thread_idx()
        ...

    k = gemm.build(Matrix("float16"), Matrix("float16"), Matrix("float32"), mma, g2s, ..., threads=128)
    k.launch(grid, A, B, C)          # A, B, C: Numba device arrays (NumPy arrays in the simulator)
    print(k.source)                  # the Numba code the trace wrote

`build` calls the function once: Matrix arguments become global tensors of run-time shape and strides
(a TensorMap argument, tma.py, the tensor map of one),
TiledCopy and TiledMMA arguments get run-time `get_slice`, everything else is passed as it is (CuTe's
compile-time values). The same source runs on a GPU and in Numba's simulator.
"""

import inspect

import numpy as np

from cutelite import ComposedLayout, Layout, Swizzle, cosize

from .expr import Sym
from .registers import BITS
from .tensor import GTensor, STensor
from .tiled import wrap
from .trace import Trace, current, recording

__all__ = ["kernel", "Matrix", "Kernel", "thread_idx", "block_idx", "grid_dim", "make_smem_tensor",
           "dynamic_shared", "syncthreads", "cp_async_fence", "cp_async_wait", "fence_proxy_async", "setmaxnreg",
           "named_barrier_sync", "named_barrier_arrive", "range_", "while_", "if_", "else_", "var", "assign", "min_"]

_NUMPY = {"float32": np.float32, "float16": np.uint16, "bfloat16": np.uint16, "uint16": np.uint16,
          "uint32": np.uint32, "int32": np.int32, "uint64": np.uint64}


class Matrix:
    """A run-time matrix argument: `dtype` ("float16", "bfloat16", "float32") and which mode has unit
    stride (`unit`: 1 for row-major, 0 for column-major; None: both strides read at run time).
    transposed=True: the kernel sees the transpose of the array it is given (modes reversed, no copy),
    as CuTe sees B (K, N) as (N, K)."""

    def __init__(self, dtype, unit=1, rank=2, transposed=False):
        if dtype not in BITS:
            raise ValueError("cutejit: Matrix: unknown element type %r; known: %s" % (dtype, ", ".join(BITS)))
        if unit is not None and unit not in range(rank):
            raise ValueError("cutejit: Matrix: unit must be a mode (0..%d) or None, got %r" % (rank - 1, unit))
        self.dtype, self.unit, self.rank, self.transposed = dtype, unit, rank, transposed

    def __repr__(self):
        return "Matrix(%r, unit=%r%s)" % (self.dtype, self.unit, ", transposed=True" if self.transposed else "")


class _MatrixArg:
    """A Matrix while traced: its parameter name, run-time shape and strides (in elements)."""

    def __init__(self, name, spec, trace):
        self.name, self.dtype = name, spec.dtype
        item = BITS[spec.dtype] // 8
        self.shape = tuple(Sym("%s_shape%d" % (name, m), True) for m in range(spec.rank))
        self.strides = tuple(1 if m == spec.unit else Sym("%s_stride%d" % (name, m), True)
                             for m in range(spec.rank))
        for m in range(spec.rank):
            axis = spec.rank - 1 - m if spec.transposed else m      # the array's axis for kernel mode m
            trace.hoist("%s_shape%d = %s.shape[%d]" % (name, m, name, axis))
            if m != spec.unit:
                trace.hoist("%s_stride%d = %s.strides[%d] // %d" % (name, m, name, axis, item))


def _global(arg):
    unit = [tuple(1 if j == m else 0 for j in range(len(arg.shape))) for m in range(len(arg.shape))]
    return GTensor(arg, None, [(e, u) for e, u in zip(arg.shape, unit)], [[] for _ in arg.shape])


# ---- what a kernel body calls ------------------------------------------------------------------------------
def thread_idx():
    """threadIdx.x, a run-time value."""
    t = current()
    return t.memo("tid", lambda: _hoisted(t, "tid", "cuda.threadIdx.x"))


def block_idx():
    """blockIdx.x, a run-time value."""
    t = current()
    return t.memo("bid", lambda: _hoisted(t, "bid", "cuda.blockIdx.x"))


def grid_dim():
    """gridDim.x, a run-time value (the number of blocks: a persistent kernel's stride over tiles)."""
    t = current()
    return t.memo("nbid", lambda: _hoisted(t, "nbid", "cuda.gridDim.x"))


def _hoisted(t, name, text):
    t.hoist("%s = %s" % (name, text))
    return Sym(name, True)


def make_smem_tensor(layout, dtype):
    """A tensor in shared memory with `layout` (a Layout, or a Swizzle composed with one): its space is
    taken from the kernel's dynamic shared memory, 1024-byte aligned."""
    t = current()
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.layout_a, Swizzle):
            raise TypeError("cutejit: make_smem_tensor: only a Swizzle may be composed with the layout, got %s"
                            % layout)
        sw, inner, off = layout.layout_a, layout.layout_b, int(layout.offset)
    elif isinstance(layout, Layout):
        sw, inner, off = None, layout, 0
    else:
        raise TypeError("cutejit: make_smem_tensor: expected a Layout or a swizzled layout, got %r" % (layout,))
    bits = BITS[dtype]
    mem = dynamic_shared(dtype)
    start = -(-t.smem_bytes // 1024) * 1024
    t.smem_bytes = start + cosize(layout) * bits // 8
    terms = [(None, off)] if off else []
    return STensor(mem, dtype, inner, sw, terms, start * 8 // bits)


def dynamic_shared(dtype):
    """The name of the kernel's dynamic shared memory seen as an array of `dtype` (every view starts at
    the same address; the tensors and barriers placed in it take disjoint ranges of t.smem_bytes)."""
    t = current()
    mem = "smem_%s" % _NUMPY[dtype].__name__
    if ("smem", mem) not in t._memo:
        t.use(mem + "_type", _numba_type(dtype))
        t.hoist("%s = cuda.shared.array(0, %s_type)" % (mem, mem))
        t.memo(("smem", mem), lambda: mem)
    return mem


def _numba_type(dtype):
    import numba
    return getattr(numba, _NUMPY[dtype].__name__)


def syncthreads():
    current().emit("cuda.syncthreads()")


def cp_async_fence():
    """cp.async.commit_group: the copies issued so far form one group."""
    from .. import instructions
    t = current()
    t.emit("%s()" % t.use("cp_async_commit", instructions.cp_async_commit))


def cp_async_wait(n):
    """cp.async.wait_group n: at most n groups still in flight (n known when the kernel is built)."""
    from .. import instructions
    if not isinstance(n, int) or n < 0:
        raise ValueError("cutejit: cp_async_wait takes a number of groups known at build time, got %r" % (n,))
    t = current()
    t.emit("%s(%d)" % (t.use("cp_async_wait", instructions.cp_async_wait), n))


def _call(name, *args):
    from .. import instructions
    from .expr import src
    t = current()
    t.emit("%s(%s)" % (t.use(name, getattr(instructions, name)), ", ".join(src(a) for a in args)))


def fence_proxy_async():
    """fence.proxy.async: this thread's shared-memory writes become visible to the async proxy (TMA, wgmma)."""
    _call("fence_proxy_async")


def setmaxnreg(n, grow):
    """setmaxnreg.inc (grow=True) or .dec to n registers a thread, for the whole warpgroup (n a multiple
    of 8 in 24..256, known at build time). .inc waits until the registers are free."""
    if not isinstance(n, int) or n % 8 or not 24 <= n <= 256:
        raise ValueError("cutejit: setmaxnreg takes a multiple of 8 in 24..256, got %r" % (n,))
    _call("setmaxnreg_inc" if grow else "setmaxnreg_dec", n)


def named_barrier_arrive(barrier, threads, ids=None):
    """bar.arrive barrier, threads: count this warp's arrival on a named barrier without waiting (the other
    side of a named_barrier_sync). A run-time `barrier` needs `ids`, the values it can take."""
    _named_barrier("named_barrier_arrive", barrier, threads, ids)


def named_barrier_sync(barrier, threads, ids=None):
    """bar.sync barrier, threads: wait until `threads` threads (whole warps) have arrived on it. The
    instruction takes a constant id: a run-time `barrier` needs `ids`, the values it can take."""
    _named_barrier("named_barrier_sync", barrier, threads, ids)


def _named_barrier(name, barrier, threads, ids):
    from .expr import is_sym
    if not is_sym(barrier):
        return _call(name, barrier, threads)
    if not ids:
        raise ValueError("cutejit: %s of a run-time barrier id needs ids=, the ids it can be" % name)
    t = current()
    first, rest = ids[0], list(ids[1:])
    if not rest:
        return _call(name, first, threads)
    with t.if_(barrier < first + 1):
        _call(name, first, threads)
    with t.else_():
        _named_barrier(name, barrier, threads, rest)


def var(init, hint="x"):
    """A run-time variable, updated with assign(var, value): `stage = var(0, "stage")`."""
    return current().var(init, hint)


def assign(v, value):
    current().assign(v, value)


def min_(a, b):
    """The smaller of two run-time values."""
    from .expr import src
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return Sym("min(%s, %s)" % (src(a), src(b)), all(getattr(x, "invariant", True) for x in (a, b)))


def while_(cond):
    """A run-time loop: `with cutejit.while_(cond):` repeats the block while cond holds."""
    return current().while_(cond)


def range_(stop, start=0, step=1):
    """A run-time loop (the body is traced once): `for k in cutejit.range_(k_tiles):`."""
    return current().range(stop, start, step)


def if_(cond):
    return current().if_(cond)


def else_():
    return current().else_()


# ---- building ----------------------------------------------------------------------------------------------
class Kernel:
    """A built kernel: `.source` (the generated Numba code), `.launch(grid, *arrays)`, `.config`."""

    def __init__(self, fn, trace, threads, min_blocks, max_registers=None):
        self.source = trace.source()
        self.threads, self.smem_bytes, self.min_blocks = threads, trace.smem_bytes, min_blocks
        self.function = trace.function()
        self.numba = _jit(self.function, threads, min_blocks, max_registers)
        self.config = {}
        self._launches = {}

    grid = None   # a kernel built for a job sets grid(*args) -> its grid

    def prepare(self, *args, grid=None, stream=0):
        """A zero-argument callable that launches the kernel on these arrays, grid and stream (device arrays:
        one driver call, runtime.prepared_launch; host arrays: Numba's launch, which copies them)."""
        from ..runtime import allow_dynamic_shared, in_simulator, prepared_launch
        grid = self.grid(*args) if grid is None else grid
        if in_simulator() or any(isinstance(a, np.ndarray) for a in args):
            if not in_simulator():
                allow_dynamic_shared(self.numba, args, self.smem_bytes)
            return lambda: self.numba[grid, self.threads, stream, self.smem_bytes](*args)
        key = (grid, _stream_key(stream), tuple(_identity(a) for a in args))
        go = self._launches.get(key)
        if go is None:
            if len(self._launches) > 64:
                self._launches.clear()
            go = prepared_launch(self.numba, args, grid, self.threads, self.smem_bytes, stream)
            if go is None:
                allow_dynamic_shared(self.numba, args, self.smem_bytes)
                go = lambda: self.numba[grid, self.threads, stream, self.smem_bytes](*args)  # noqa: E731
            self._launches[key] = go
        return go

    def launch(self, *args, grid=None, stream=0):
        """Run on `grid` blocks (an int or tuple; by default self.grid(*args)) of `threads` threads, with the
        shared memory it needs, on `stream`. A second launch on the same device arrays (addresses, shapes,
        strides), grid and stream costs one driver call (prepare)."""
        self.prepare(*args, grid=grid, stream=stream)()


def _stream_key(stream):
    """A stream by its handle (0: the default stream). Not by id(): a Numba stream object made for a
    framework's stream (cuda.external_stream) lives for one call, and a later object, for another stream,
    may get the same id."""
    if not stream:
        return 0
    try:
        return int(stream.handle)
    except (TypeError, ValueError, AttributeError):
        return int(getattr(stream.handle, "value", None) or 0) or object()    # unknown: a key no call repeats


def _identity(a):
    """What a prepared launch depends on: a device array's address, shape, strides and type; a scalar's value."""
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is None:
        return (type(a), a)
    return (cai["data"][0], cai["shape"], cai["strides"], cai["typestr"])


def _jit(function, threads, min_blocks, max_registers=None):
    from numba import cuda
    from ..runtime import in_simulator
    if in_simulator():
        return cuda.jit(function)
    if max_registers:       # a cap for the launch; setmaxnreg moves registers between warpgroups after it
        return cuda.jit(max_registers=max_registers)(function)
    if min_blocks is None:
        return cuda.jit(function)
    return cuda.jit(launch_bounds=(threads, min_blocks))(function)


class KernelDef:
    """A @kernel function, not yet built."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def build(self, *args, threads, min_blocks=None, max_registers=None, name=None, overrides=None):
        """Trace the function for these arguments (Matrix specs for run-time matrices) into a Kernel.
        max_registers: a register cap per thread (a kernel that redistributes them with setmaxnreg).
        overrides: {intrinsic name: object} used instead of kernels.instructions' (a model of the hardware
        that is stricter than the simulator's twins, say)."""
        from numba import cuda
        params = list(inspect.signature(self.fn).parameters)
        if len(args) != len(params):
            raise TypeError("cutejit: %s takes %d arguments (%s), got %d" % (self.fn.__name__, len(params),
                                                                         ", ".join(params), len(args)))
        runtime = [p for p, a in zip(params, args) if isinstance(a, Matrix) or hasattr(a, "bind")]
        trace = Trace(name or self.fn.__name__, runtime, threads, overrides)
        trace.use("cuda", cuda)
        with recording(trace):
            values = [_global(_MatrixArg(p, a, trace)) if isinstance(a, Matrix) else
                      a.bind(p, trace) if hasattr(a, "bind") else wrap(a) for p, a in zip(params, args)]
            self.fn(*values)
        return Kernel(self.fn, trace, threads, min_blocks, max_registers)


def kernel(fn):
    """Decorate a kernel written with cutejit's tensors, copy and gemm; build it with `.build(...)`."""
    return KernelDef(fn)
