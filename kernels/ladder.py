"""A step of a chapter's ladder of kernels, written once: what the chapter quotes and runs, what the benchmarks
time and the record keeps, and what matmul picks from.

    from kernels.gemm import LADDER, step
    s = step("simt 3: smem tiles")
    s.kernel.launch(A, B, C)       # built on first use
    s.quoted, s.span               # what the chapter quotes of s.module
    s.recorded                     # its name in the chapter's record (records.json)

Chapter 7's steps are in kernels.gemm (LADDER, the steps it teaches; EXPLORE, the configurations the
benchmark tries beside them), chapter 8's in kernels.hopper. Import nothing here that imports numba.
"""

from dataclasses import dataclass, field
from functools import cached_property
from types import ModuleType
from typing import Callable

from .capability import lacking

__all__ = ["Step", "find"]


@dataclass(eq=False)
class Step:
    """One step: `name` (how the chapter, the benchmarks and the record call it), the `module` its kernel is
    written in, what the chapter `quoted` of it (a name in the module; None: the module's own source), from
    the first line containing span[0] to the first line after it containing span[1] (None: from the top, to
    the end), `build` (step -> its kernel, made from `config`), its input `dtype` ("f32" or "f16"; the f16
    kernels also build bf16 ones), the instructions it `needs` (kernels.capability names), the (m, n) outputs
    one thread (SIMT) or one warp (tensor cores) computes (`thread_tile`), `label` (what the step adds, as a
    chapter's table says it), and `recorded`, its name in the record (default: name)."""
    name: str
    module: ModuleType
    quoted: str | None
    build: Callable
    config: dict = field(default_factory=dict)
    dtype: str = "f16"
    needs: tuple = ()
    span: tuple = (None, None)
    thread_tile: tuple = (1, 1)
    label: str = ""
    recorded: str = None

    def __post_init__(self):
        self.recorded = self.recorded or self.name

    @cached_property
    def kernel(self):
        """The step's kernel, built on first use."""
        return self.build(self)

    @property
    def tile(self):
        """(BM, BN, BK): M, N and K must be multiples of it (unless the kernel was built with edges=True)."""
        return self.kernel.tile

    def fits(self, M, N, K):
        return M % self.tile[0] == 0 and N % self.tile[1] == 0 and K % self.tile[2] == 0

    def runs_on(self, cc):
        """Whether a GPU of compute capability `cc` runs it (None: the simulator, which runs every step;
        kernels.current_cc() is this GPU's or the profile's)."""
        return not lacking(self.needs, cc)


def find(steps, name, where):
    """The step of `steps` called `name`, or a KeyError that lists them (`where`: whose steps)."""
    for s in steps:
        if s.name == name:
            return s
    raise KeyError(f"{where}: no step {name!r}; the steps are {', '.join(s.name for s in steps)}")
