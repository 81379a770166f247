"""SIMT fp32, step 1: one thread per element of C, straight from global memory.

Thread x of a block walks down a column of C (consecutive threads take consecutive *rows*), so the 32
lanes of a warp read A at 32 different rows (32 transactions) and write C with a stride of N: uncoalesced.
"""

from numba import cuda

from . import _jit

BM, BN, BK = 1, 1, 1
THREADS = (32, 8)


@_jit.jit()
def gemm_simt_naive(A, B, C):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x    # row: consecutive lanes, far apart in C
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, N = C.shape
    if i < M and j < N:
        s = 0.0
        for k in range(A.shape[1]):
            s += A[i, k] * B[k, j]
        C[i, j] = s


def grid(M, N):
    return ((M + 31) // 32, (N + 7) // 8), THREADS
