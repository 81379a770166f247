"""What the SIMT steps share on the host: cuda.jit with the options the simulator does not take
(launch_bounds) dropped there, and the launch shape of a tiled step."""

from numba import cuda

from ..runtime import in_simulator


def jit(launch_bounds=None, **options):
    if in_simulator() or launch_bounds is None:
        return cuda.jit(**options)
    return cuda.jit(launch_bounds=launch_bounds, **options)


device = cuda.jit(device=True, inline="always")


def tile_grid(BM, BN, threads):
    """grid(M, N) -> (blocks, threads) of a step whose block of `threads` threads computes one BM x BN tile
    of C, blockIdx.x along N (M and N multiples of the tile)."""
    def grid(M, N):
        return (N // BN, M // BM), threads
    return grid
