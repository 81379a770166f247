"""SIMT fp32, step 2: the same one-thread-per-element kernel with threadIdx.x along a *row* of C.

Now a warp's 32 lanes read 32 consecutive floats of B (one 128-byte transaction), share one element of A
(a broadcast) and write 32 consecutive floats of C: coalesced. One line changed from step 1.
"""

from numba import cuda

from . import _jit

BM, BN, BK = 1, 1, 1
THREADS = (32, 8)


@_jit.jit()
def gemm_simt_coalesced(A, B, C):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x    # column: consecutive lanes, adjacent in C
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, N = C.shape
    if i < M and j < N:
        s = 0.0
        for k in range(A.shape[1]):
            s += A[i, k] * B[k, j]
        C[i, j] = s


def grid(M, N):
    return ((N + 31) // 32, (M + 7) // 8), THREADS
