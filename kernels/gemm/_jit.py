"""cuda.jit with the options the simulator does not take (launch_bounds) dropped there."""

from numba import cuda

from ..runtime import in_simulator


def jit(launch_bounds=None, **options):
    if in_simulator() or launch_bounds is None:
        return cuda.jit(**options)
    return cuda.jit(launch_bounds=launch_bounds, **options)


device = cuda.jit(device=True, inline="always")
