"""@cutejit.kernel: a kernel written in CuTe's terms, traced into a Numba kernel.

    @cutejit.kernel
    def gemm(mA, mB, mC, tiled_mma, g2s_A, ...):     # mA...: Matrix arguments; the rest: static objects
        tid = cutejit.thread_idx()
        ...

    k = gemm.build(Matrix("float16"), Matrix("float16"), Matrix("float32"), mma, g2s, ..., threads=128)
    k.launch(A, B, C, grid=g)        # A, B, C: Numba device arrays (NumPy arrays in the simulator)
    print(k.source)                  # the Numba code the trace wrote

`build` calls the function once: Matrix arguments become global tensors of run-time shape and strides
(a TensorMap argument, tma.py, the tensor map of one),
TiledCopy and TiledMMA arguments get run-time `get_slice`, everything else is passed as it is (CuTe's
compile-time values). The same source runs on a GPU and in Numba's simulator.

A kernel says clearly what it was not built for, with a TypeError or ValueError naming the kernel, the
argument and both values: `build` refuses a thread count its TiledCopys and TiledMMAs cannot use and, while
tracing, an atom whose types differ from the tensors'; `launch` refuses arrays of another dtype or majorness,
misaligned for the accesses the trace wrote, or of a size the kernel does not predicate, and an empty grid.
"""

import inspect

import numpy as np

from cutelite import ComposedLayout, Layout, Major, Swizzle, TiledCopy, TiledMMA, cosize, thr_size

from ..numeric import holds, storage
from ..expr import Sym
from .registers import element_type
from .tensor import GTensor, STensor
from .tiled import wrap
from .trace import Trace, current, recording

__all__ = ["kernel", "Matrix", "Scalar", "Kernel", "thread_idx", "block_idx", "grid_dim", "make_smem_tensor",
           "dynamic_shared", "syncthreads", "cp_async_fence", "cp_async_wait", "fence_proxy_async", "setmaxnreg",
           "range_", "while_", "if_", "else_", "var", "assign", "min_", "max_"]

class Matrix:
    """A run-time (rows, cols) matrix argument of `dtype` elements (cutelite.numeric: "float16", "bfloat16",
    "float32", ...), with unit stride along its cols (major=Major.K: row-major, an (MN, K) operand K-major)
    or its rows (Major.MN); None: both strides read at run time.
    transposed=True: the kernel sees the transpose of the array it is given (modes reversed, no copy),
    as CuTe sees B (K, N) as (N, K).
    rank: the number of modes (attention's (B, S, H, D) tensors have 4); Major.K says the last has unit stride."""

    def __init__(self, dtype, major=Major.K, transposed=False, rank=2):
        if major is not None and major not in tuple(Major):
            raise ValueError("cutejit: Matrix: major must be 'K', 'MN' or None, got %r" % (major,))
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
            raise ValueError("cutejit: Matrix: rank must be a positive int, got %r" % (rank,))
        self.dtype, self.transposed, self.rank = element_type(dtype, "Matrix").name, transposed, rank
        self.major = None if major is None else Major(major)
        self.unit = {Major.K: rank - 1, Major.MN: 0, None: None}[self.major]     # the mode of unit stride

    def __repr__(self):
        return "Matrix(%r, major=%s%s%s)" % (self.dtype, self.major, ", transposed=True" if self.transposed else "",
                                             ", rank=%d" % self.rank if self.rank != 2 else "")


class Scalar:
    """A run-time scalar argument of `dtype` ("float32", ...): inside the kernel, its parameter's name."""

    def __init__(self, dtype):
        self.dtype = element_type(dtype, "Scalar").name

    def bind(self, name, trace):
        return Sym(name, True)

    def check(self, a, what):
        """A TypeError starting with `what` unless `a` is a NumPy scalar of the dtype (Numba types the kernel
        by it: a Python float would make it a float64)."""
        if not isinstance(a, np.generic) or np.dtype(a.dtype) != np.dtype(storage(self.dtype)):
            raise TypeError("%s: the kernel was built for a %s scalar, got %r" % (what, self.dtype, a))

    def __repr__(self):
        return "Scalar(%r)" % self.dtype


class _MatrixArg:
    """A Matrix while traced: its parameter name, run-time shape and strides (in elements), and what the trace
    finds the kernel assumes of the array (`check` asks it at launch): the tiles local_tile cuts it into,
    whether a copy of them is unpredicated (then it holds whole tiles), the widest access (its address and
    pitch aligned to it) and the widest predicated one (a predicate keeps or drops a whole access: the
    contiguous extent a multiple of it)."""

    def __init__(self, name, spec, trace):
        self.name, self.spec, self.dtype = name, spec, spec.dtype
        item = element_type(spec.dtype, "Matrix").bits // 8
        self.shape = tuple(Sym("%s_shape%d" % (name, m), True) for m in range(spec.rank))
        self.strides = tuple(1 if m == spec.unit else Sym("%s_stride%d" % (name, m), True)
                             for m in range(spec.rank))
        for m in range(spec.rank):
            axis = spec.rank - 1 - m if spec.transposed else m      # the array's axis for kernel mode m
            trace.hoist("%s_shape%d = %s.shape[%d]" % (name, m, name, axis))
            if m != spec.unit:
                trace.hoist("%s_stride%d = %s.strides[%d] // %d" % (name, m, name, axis, item))
        self.tiles, self.whole, self.access, self.predicated = set(), False, 1, 1

    def tiled_by(self, tiler):
        self.tiles.add(tuple(tiler))

    def accessed(self, nbytes, predicated):
        self.access = max(self.access, nbytes)
        if predicated:
            self.predicated = max(self.predicated, nbytes)
        else:
            self.whole = True

    def check(self, a, what):
        """A TypeError or ValueError starting with `what` (the kernel and this argument) and naming both values,
        unless array `a` is one the kernel was built for."""
        spec = self.spec
        if len(getattr(a, "shape", ())) != spec.rank or not hasattr(a, "strides") or not hasattr(a, "dtype"):
            raise TypeError("%s must be a %d-D array (NumPy, Numba device), got %s" % (what, spec.rank, repr(a)[:80]))
        dtype = np.dtype(a.dtype)
        if not holds(dtype, spec.dtype):
            raise TypeError("%s holds %s elements; the kernel was built for %s (an array of them, or of their bits "
                            "as %s)" % (what, dtype.name, spec.dtype, storage(spec.dtype)))
        shape, strides = (tuple(x)[::-1] if spec.transposed else tuple(x) for x in (a.shape, a.strides))
        item, unit = dtype.itemsize, spec.unit
        if unit is not None and shape[unit] > 1 and strides[unit] != item:
            raise ValueError("%s: the kernel was built for %s-major %s (unit stride along mode %d), got strides %s "
                             "(bytes)" % (what, spec.major, spec.dtype, unit, strides))
        address = _address(a)
        pitches = [strides[m] for m in range(spec.rank) if m != unit and shape[m] > 1]
        if address % self.access or any(p % self.access for p in pitches):
            raise ValueError("%s: the kernel accesses it %d bytes at a time: its address (%#x) and strides %s must "
                             "be multiples of %d" % (what, self.access, address, strides, self.access))
        if unit is not None and shape[unit] * item % self.predicated:
            raise ValueError("%s is %s: a predicated access of %d bytes is kept or dropped whole, so mode %d must be "
                             "a multiple of %d elements" % (what, shape, self.predicated, unit,
                                                            self.predicated // item))
        for tile in sorted(self.tiles) if self.whole else ():
            if any(n % t for n, t in zip(shape, tile)):
                raise ValueError("%s is %s: the kernel copies whole %s tiles of it, unpredicated: its extents must "
                                 "be multiples of them" % (what, shape, tile))


def _address(a):
    """The address of an array's first element (device or host), 0 where it has none."""
    face = getattr(a, "__cuda_array_interface__", None) or getattr(a, "__array_interface__", None) or {}
    return (face.get("data") or (0,))[0] or 0


def _global(arg):
    unit = [tuple(1 if j == m else 0 for j in range(len(arg.shape))) for m in range(len(arg.shape))]
    return GTensor(arg, None, [(e, u) for e, u in zip(arg.shape, unit)], [[] for _ in arg.shape])


# ---- what a kernel body calls ------------------------------------------------------------------------------
def thread_idx():
    """threadIdx.x, a run-time value."""
    t = current()
    return t.memo("tid", lambda: _hoisted(t, "tid", "cuda.threadIdx.x"))


def block_idx(dim="x"):
    """blockIdx.x (or .y, .z), a run-time value."""
    t = current()
    name = "bid" if dim == "x" else "bid_" + dim
    return t.memo(name, lambda: _hoisted(t, name, "cuda.blockIdx." + _dim(dim)))


def grid_dim(dim="x"):
    """gridDim.x (or .y, .z), a run-time value (the number of blocks: a persistent kernel's stride over tiles)."""
    t = current()
    name = "nbid" if dim == "x" else "nbid_" + dim
    return t.memo(name, lambda: _hoisted(t, name, "cuda.gridDim." + _dim(dim)))


def _dim(dim):
    if dim not in ("x", "y", "z"):
        raise ValueError("cutejit: a grid dimension is 'x', 'y' or 'z', got %r" % (dim,))
    return dim


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
    e = element_type(dtype, "make_smem_tensor")
    mem = dynamic_shared(e.name)
    start = -(-t.smem_bytes // 1024) * 1024
    t.smem_bytes = start + cosize(layout) * e.bits // 8
    terms = [(None, off)] if off else []
    return STensor(mem, e.name, inner, sw, terms, start * 8 // e.bits)


def dynamic_shared(dtype):
    """The name of the kernel's dynamic shared memory seen as an array of `dtype` (every view starts at
    the same address; the tensors and barriers placed in it take disjoint ranges of t.smem_bytes)."""
    import numba
    t = current()
    mem = "smem_%s" % storage(dtype)
    if ("smem", mem) not in t._memo:
        t.use(mem + "_type", getattr(numba, storage(dtype)))
        t.hoist("%s = cuda.shared.array(0, %s_type)" % (mem, mem))
        t.memo(("smem", mem), lambda: mem)
    return mem


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
    from ..expr import src
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


def var(init, hint="x"):
    """A run-time variable, updated with assign(var, value): `stage = var(0, "stage")`."""
    return current().var(init, hint)


def assign(v, value):
    current().assign(v, value)


def min_(a, b):
    """The smaller of two run-time values."""
    from ..expr import src
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return Sym("min(%s, %s)" % (src(a), src(b)), all(getattr(x, "invariant", True) for x in (a, b)))


def max_(a, b):
    """The larger of two run-time values."""
    from ..expr import src
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return Sym("max(%s, %s)" % (src(a), src(b)), all(getattr(x, "invariant", True) for x in (a, b)))


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
    """A built kernel: `.source` (the generated Numba code), `.launch(*arrays, grid=)`, `.config`."""

    def __init__(self, fn, trace, threads, min_blocks, max_registers=None, arguments=()):
        self.name, self.source = trace.name, trace.source()
        self.threads, self.smem_bytes, self.min_blocks = threads, trace.smem_bytes, min_blocks
        self.arguments = tuple(arguments)        # (name, spec) of each run-time argument: what check asks
        self.function = trace.function()
        self.numba = _jit(self.function, threads, min_blocks, max_registers)
        self.config = {}
        self._launches = {}

    grid = None   # a kernel built for a job sets grid(*args) -> its grid
    cluster = None   # a kernel of cooperating blocks sets its cluster shape (blocks along x, y, z)

    def check(self, args, grid):
        """A TypeError or ValueError naming the kernel, the argument and both values unless `args` are arrays
        and `grid` a grid this kernel was built for (each argument's spec says what it assumes), and one naming
        the kernel, its configuration and the bytes unless a block here may have its shared memory."""
        from ..runtime import require_shared
        require_shared(self.smem_bytes, "cutejit: %s (%s): launch" % (self.name, ", ".join(
            "%s=%s" % kv for kv in self.config.items() if kv[0] != "smem")))
        for (name, spec), a in zip(self.arguments, args):
            spec.check(a, "cutejit: %s: launch: %s" % (self.name, name))
        dims = grid if isinstance(grid, tuple) else (grid,)
        if not 1 <= len(dims) <= 3 or not all(isinstance(g, (int, np.integer)) and not isinstance(g, bool) and g >= 1
                                               for g in dims):
            raise ValueError("cutejit: %s: launch: grid must be 1 to 3 block counts of at least 1, got %r"
                             % (self.name, grid))

    def prepare(self, *args, grid=None, stream=0):
        """A zero-argument callable that launches the kernel on these arrays, grid and stream (device arrays:
        one driver call, runtime.prepared_launch; host arrays: Numba's launch, which copies them). The
        arrays and grid are checked (check) the first time they are seen."""
        from ..runtime import allow_dynamic_shared, in_simulator, prepared_launch
        if len(args) != len(self.arguments):
            raise TypeError("cutejit: %s: launch takes %d arrays (%s), got %d" % (
                self.name, len(self.arguments), ", ".join(n for n, _ in self.arguments), len(args)))
        grid = self.grid(*args) if grid is None else grid
        if self.cluster and np.prod(self.cluster) > 1:
            return self._prepare_cluster(args, grid, stream)
        if in_simulator() or any(isinstance(a, np.ndarray) for a in args):
            self.check(args, grid)
            if not in_simulator():
                allow_dynamic_shared(self.numba, args, self.smem_bytes)
            return lambda: self.numba[grid, self.threads, stream, self.smem_bytes](*args)
        key = (grid, _stream_key(stream), tuple(_identity(a) for a in args))
        go = self._launches.get(key)
        if go is None:
            self.check(args, grid)
            if len(self._launches) > 64:
                self._launches.clear()
            go = prepared_launch(self.numba, args, grid, self.threads, self.smem_bytes, stream)
            if go is None:
                allow_dynamic_shared(self.numba, args, self.smem_bytes)
                go = lambda: self.numba[grid, self.threads, stream, self.smem_bytes](*args)  # noqa: E731
            self._launches[key] = go
        return _holding(go, args)

    def _prepare_cluster(self, args, grid, stream):
        """The launch of a cluster of blocks: only the driver's cuLaunchKernelEx does it (Numba's launch cannot),
        on device arrays."""
        from ..runtime import in_simulator, prepared_launch
        if in_simulator():
            raise RuntimeError("cutejit: %s: launch: a cluster of %s blocks runs its blocks together; Numba's "
                               "simulator runs one block at a time" % (self.name, self.cluster))
        if any(isinstance(a, np.ndarray) for a in args):
            raise TypeError("cutejit: %s: launch: a cluster launch takes device arrays (the driver's launch does "
                            "not copy host arrays)" % self.name)
        key = (grid, _stream_key(stream), tuple(_identity(a) for a in args))
        go = self._launches.get(key)
        if go is None:
            self.check(args, grid)
            go = prepared_launch(self.numba, args, grid, self.threads, self.smem_bytes, stream, cluster=self.cluster)
            if go is None:
                raise RuntimeError("cutejit: %s: launch: the driver's handle of the kernel cannot be had, and only "
                                   "the driver launches a cluster of %s blocks" % (self.name, self.cluster))
            self._launches[key] = go
        return go

    def launch(self, *args, grid=None, stream=0):
        """Run on `grid` blocks (an int or tuple; by default self.grid(*args)) of `threads` threads, with the
        shared memory it needs, on `stream`. A second launch on the same device arrays (addresses, shapes,
        strides), grid and stream costs one driver call (prepare)."""
        self.prepare(*args, grid=grid, stream=stream)()


def _holding(launch, arrays):
    """`launch`, holding `arrays` alive as long as it lives. A prepared launch passes addresses: the memory of
    an array freed meanwhile (a tensor map made for the call, say) goes to the next allocation, and the kernel
    would read that. The cache keeps the bare launch."""
    def call():
        launch()
    call.arrays = arrays
    return call


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
        name = name or self.fn.__name__
        _check_threads(name, threads, zip(params, args))
        runtime = [p for p, a in zip(params, args) if isinstance(a, Matrix) or hasattr(a, "bind")]
        trace = Trace(name, runtime, threads, overrides)
        trace.use("cuda", cuda)
        arguments = []
        with recording(trace):
            values = []
            for p, a in zip(params, args):
                if isinstance(a, Matrix):
                    arguments.append((p, _MatrixArg(p, a, trace)))
                    values.append(_global(arguments[-1][1]))
                elif hasattr(a, "bind"):
                    arguments.append((p, a))
                    values.append(a.bind(p, trace))
                else:
                    values.append(wrap(a, p))
            try:
                self.fn(*values)
            except (TypeError, ValueError) as e:       # cutejit's refusals, said of this kernel
                if type(e) not in (TypeError, ValueError) or not str(e).startswith("cutejit: "):
                    raise
                raise type(e)("cutejit: %s: %s" % (name, str(e)[len("cutejit: "):])) from e
        return Kernel(self.fn, trace, threads, min_blocks, max_registers, arguments)


def _check_threads(kernel, threads, params):
    """A ValueError naming the kernel unless `threads` is a block's thread count and every TiledCopy and
    TiledMMA argument has at most that many threads (a thread the block lacks leaves its values undone)."""
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 1024:
        raise ValueError("cutejit: %s: build: threads must be an int in 1..1024 (a block's threads), got %r"
                         % (kernel, threads))
    for p, a in params:
        if isinstance(a, (TiledCopy, TiledMMA)) and thr_size(a) > threads:
            raise ValueError("cutejit: %s: build: %s is a %s of %d threads, the kernel has threads=%d: the values "
                             "of threads %d..%d would never be %s" % (
                                 kernel, p, type(a).__name__, thr_size(a), threads, threads, thr_size(a) - 1,
                                 "copied" if isinstance(a, TiledCopy) else "computed"))


def kernel(fn):
    """Decorate a kernel written with cutejit's tensors, copy and gemm; build it with `.build(...)`."""
    return KernelDef(fn)
