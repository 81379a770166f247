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
    """One step of a ladder, the facts about it written once:

    name         how the chapter, the benchmarks and the record call it
    module       the module its kernel is written in
    quoted       the name in `module` the chapter quotes (None: the module's own source), from the first line
                 containing span[0] to the first after it containing span[1] (None: the top, the end)
    build        step -> its kernel, made from `config` (built once, on first use of `kernel`)
    dtype        its inputs, "f32" or "f16" (the f16 kernels build bf16 ones too)
    needs        the instructions it needs of the GPU (kernels.capability names)
    thread_tile  the (m, n) outputs one thread (SIMT) or one warp (tensor cores) computes
    label        what the step adds, as the chapter's table says it ("" where the chapter does not teach it)
    recorded     its name in the chapter's record (default: name)
    """
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
    recorded: str | None = None

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
