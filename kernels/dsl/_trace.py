"""The one `@cute.jit` function through which plain Python runs inside a CuTe DSL trace (host.trace)."""

import cutlass
import cutlass.cute as cute


@cute.jit
def inside(work: cutlass.Constexpr):
    work()
