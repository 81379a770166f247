"""cutejit: kernels written with CuTe's objects, traced into Numba code with every layout folded away.

The floor between the instructions (kernels.instructions: PTX and its simulator twins) and the kernels of
chapters 6-8. A kernel body reads like CuTe's (sgemm_sm80.cu, the CuTe DSL's tensorop_gemm.py):

    @cutejit.kernel
    def gemm(mA, mB, mC, mma, g2s_A, g2s_B, s2r_A, s2r_B, sA_layout, sB_layout):
        tid = thread_idx()
        gA = local_tile(mA, (BM, BK), (m, _))             # (BM, BK, k)
        sA = make_smem_tensor(sA_layout, "float16")       # (BM, BK, stages)
        thr = g2s_A.get_slice(tid)
        tAgA, tAsA = thr.partition_S(gA), thr.partition_D(sA)
        ...
        copy(g2s_A, tAgA[_, _, _, k], tAsA[_, _, _, stage])
        gemm(mma, tCrA[_, _, kb], tCrB[_, _, kb], tCrC)

Building it (`gemm.build(Matrix("float16"), ..., threads=128)`) runs the function once on the host with
the thread index, block index, matrix shapes and loop counters standing for their run-time values; what it
writes (`.source`) is straight-line Numba code with one line per instruction. See trace.py for how.
Hopper's pieces (wgmma.py, tma.py, pipeline.py, barrier.py, scheduler.py) are the same kind of objects: a
TiledMMA of GMMA atoms partitions shared memory into descriptors, a TensorMap argument is copied from with
tma_load; the mbarrier pipeline, the epilogue's store buffers, the consumers' turns, the named barriers and
the tile scheduler are one object each.
Import after kernels.setup().
"""

from cutelite import _  # noqa: F401  (kernels slice with it, as CuTe does)

from .copy import copy, elem_less  # noqa: F401
from ..expr import Sym  # noqa: F401
from .gemm import gemm  # noqa: F401
from .kernel import (  # noqa: F401
    Kernel, Matrix, Scalar, block_idx, cp_async_fence, cp_async_wait, else_, if_, kernel, make_smem_tensor, range_,
    syncthreads, thread_idx, var, assign, min_, max_, grid_dim, while_, fence_proxy_async, setmaxnreg,
)
from .barrier import NamedBarrier, named_barrier_arrive, named_barrier_sync  # noqa: F401
from .pipeline import (  # noqa: F401
    PipelineOrder, PipelineState, PipelineTmaAsync, PipelineTmaStore, make_producer_start_state,
)
from .epilogue import Epilogue, epilogue  # noqa: F401
from .scheduler import TileScheduler, WorkTile  # noqa: F401
from .tma import (  # noqa: F401
    TensorMap, encode_tensor_map, prefetch_tensor_map, tma_load, tma_load_multicast, tma_store, tma_store_commit,
    tma_store_wait,
)
from .wgmma import warpgroup_arrive, warpgroup_commit, warpgroup_wait  # noqa: F401
from .registers import fill, make_fragment, make_fragment_like  # noqa: F401
from .tensor import local_tile, make_identity_tensor  # noqa: F401
