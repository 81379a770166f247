"""The trace: a kernel written with CuTe's objects is run once on the host and writes its own Numba code.

A `@cutejit.kernel` function is ordinary Python. When it is built, cutejit calls it with stand-ins for
its run-time arguments; every CuTe operation it performs (partition, slice, copy, gemm) works out at once
everything the layouts fix, and appends to the trace only what is left for the GPU: one line per
instruction, with every offset that the layouts determine already a number. What comes out is a flat
Numba kernel (`.source`), compiled with `cuda.jit`, that runs on a GPU and, unchanged, in the simulator.

Control flow that depends on run-time values is written with the trace's own constructs, as the CuTe DSL
does with `cutlass.range` and `if` on dynamic values:

    for kt in k.range(k_tiles):        # a run-time loop: its body is traced once
        with k.if_(kt + 1 < k_tiles):  # a run-time branch
            ...

A Python `for` over a Python range is unrolled at trace time (CuTe's compile-time loops).
"""

import contextlib
import threading

from ..source import compile_function
from ..expr import Sym, src

__all__ = ["Trace", "current"]

_state = threading.local()


def current():
    """The trace being recorded (inside a @cutejit.kernel function while it is built)."""
    t = getattr(_state, "trace", None)
    if t is None:
        raise RuntimeError("cutejit: this operation emits kernel code; call it inside a @cutejit.kernel "
                           "function while it is built")
    return t


class Trace:
    """Lines of a kernel's source, in two parts: the preamble (values computed once, at the top: thread
    coordinates, per-thread base offsets) and the body; plus the objects the source refers to."""

    def __init__(self, name, params, threads, overrides=None):
        self.name, self.params, self.threads = name, list(params), threads
        self.overrides = dict(overrides or {})   # name -> object used instead (a stricter simulator model)
        self.pre, self.body = [], []
        self.indent = 1
        self.env = {}            # name -> object, the generated module's globals
        self._counts = {}
        self._memo = {}          # (kind, key) -> Sym: invariant values computed once
        self.smem_bytes = 0      # shared memory the kernel asks for (dynamic)
        self.named_barriers = {}  # hardware barrier id -> its owner (barrier.py: the registry)

    # ---- names and objects ----
    def fresh(self, hint):
        n = self._counts.get(hint, 0)
        self._counts[hint] = n + 1
        return "%s%d" % (hint, n)

    def use(self, name, obj):
        """Make `obj` reachable from the generated source as `name` (an intrinsic, a dtype); an override
        given to the build takes its place."""
        obj = self.overrides.get(name, obj)
        if name in self.env and self.env[name] is not obj:
            raise ValueError("cutejit: two different objects named %r in one kernel" % name)
        self.env[name] = obj
        return name

    # ---- emitting ----
    def emit(self, line):
        self.body.append("    " * self.indent + line)

    def hoist(self, line):
        self.pre.append("    " + line)

    def let(self, value, hint="v"):
        """Bind a run-time value to a new variable (invariant ones at the top of the kernel, once)."""
        if not isinstance(value, Sym):
            return value
        if value.const:       # keep the constant apart: x + 32 and x + 64 share x
            return self.let(Sym(value.body, value.invariant), hint) + value.const
        if value.src.isidentifier():
            return value
        if value.invariant:
            key = ("let", value.src)
            if key not in self._memo:
                name = self.fresh(hint)
                self.hoist("%s = %s" % (name, value.src))
                self._memo[key] = Sym(name, True)
            return self._memo[key]
        name = self.fresh(hint)
        self.emit("%s = %s" % (name, value.src))
        return Sym(name)

    def var(self, init, hint="x"):
        """A run-time variable the kernel updates (a pipeline stage, a counter), starting at `init`."""
        name = self.fresh(hint)
        self.emit("%s = %s" % (name, src(init)))
        return Sym(name)

    def assign(self, var, value):
        """var = value, for a variable made by var()."""
        self.emit("%s = %s" % (var.src, src(value)))

    def memo(self, key, make):
        """The value `make()` once per key (make returns an invariant Sym that is bound with let)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # ---- control flow ----
    def range(self, stop, start=0, step=1):
        """A run-time loop `for i in range(start, stop, step)`; the body is traced once, with i a Sym."""
        var = self.fresh("i")
        self.emit("for %s in range(%s, %s, %s):" % (var, src(start), src(stop), src(step)))
        with self._block():
            yield Sym(var)

    @contextlib.contextmanager
    def if_(self, cond):
        """A run-time branch: `with k.if_(cond):` runs the block only where cond holds."""
        self.emit("if %s:" % src(cond))
        with self._block():
            yield

    @contextlib.contextmanager
    def while_(self, cond):
        """A run-time loop `while cond:` (a spin-wait on an mbarrier, say)."""
        self.emit("while %s:" % src(cond))
        with self._block():
            yield

    @contextlib.contextmanager
    def else_(self):
        """The other side of the `if_` just closed."""
        self.emit("else:")
        with self._block():
            yield

    @contextlib.contextmanager
    def _block(self):
        self.indent += 1
        mark = len(self.body)
        try:
            yield
        finally:
            if len(self.body) == mark:
                self.emit("pass")
            self.indent -= 1

    # ---- the generated function ----
    def source(self):
        header = "def %s(%s):" % (self.name, ", ".join(self.params))
        return "\n".join([header] + self.pre + self.body) + "\n"

    def function(self):
        """The generated source as a Python function (its text kept for tracebacks)."""
        return compile_function(self.source(), self.name, self.env, "cutejit")


@contextlib.contextmanager
def recording(trace):
    """Make `trace` the current one while a kernel function is traced."""
    prev = getattr(_state, "trace", None)
    _state.trace = trace
    try:
        yield trace
    finally:
        _state.trace = prev
