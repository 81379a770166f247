"""kernels.hopper.cluster compiled for sm_90a without a GPU (numba out of the simulator): each cluster shape's
PTX multicasts the tiles its cluster shares, releases stages remotely, and ptxas assembles it with the wgmma
pipeline kept (no C7515), setmaxnreg honoured and nothing spilled."""

import pytest

from test_hopper_ptx import _gemm_ptx, _ptxas, needs_ptxas

pytestmark = pytest.mark.numba("cuda")


@needs_ptxas
@pytest.mark.parametrize("shape", [(1, 1), (2, 1), (1, 2)])
def test_cluster_kernel_assembles_without_serialized_wgmma(shape):
    from kernels.hopper import cluster
    k = cluster.make(shape)
    ptx = _gemm_ptx(k)
    cm, cn = shape
    assert ptx.count("wgmma.mma_async") == 4                                  # a k-tile: 4 x k16
    assert ptx.count(".multicast::cluster") == (cm > 1) + (cn > 1)           # B along M, A along N
    assert ("barrier.cluster.wait" in ptx) == (shape != (1, 1))
    assert ("mapa.shared::cluster" in ptx) == (shape != (1, 1))
    rc, err = _ptxas(ptx, ["-maxrregcount=%d" % ((65536 // k.threads) // 8 * 8)])
    assert rc == 0, err
    assert "C7515" not in err and "serialized" not in err, err
    assert "C7508" not in err, err
    assert "0 bytes spill stores" in err, err
