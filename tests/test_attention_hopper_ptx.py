"""The Hopper attention kernel assembled offline: numba's PTX for sm_90a through `ptxas -arch=sm_90a`, under the
register cap of its 384 threads (512 with three consumers; setmaxnreg then moves registers to the consumers): no
spills, setmaxnreg honoured, the wgmma pipeline not serialized (no C7515) although O is rescaled in registers
between its wgmmas. The ping-pong, overlap and traced builds too. Slow (minutes a configuration on a busy 2-core
machine); numba out of the simulator."""
import pytest
from numba.cuda import types as T

from kernels.capability import max_shared_per_block
from test_hopper_ptx import _compile, _ptxas, needs_ptxas

pytestmark = pytest.mark.numba("cuda")


# The build kernels.lib.attention uses on sm_90. The plain, ping-pong-only and traced builds, and check_hopper's
# candidate tiles (CONFIGS: three consumers under 160 registers, 176 or 192 keys a block, 3 stages; timed on the
# H200, none faster: benchmarks/attention/RESULTS.md) assembled the same way when they were written (no spills, no
# serialized wgmma); each is a compile of a minute or more, so CI checks the ones the library runs.
@needs_ptxas
@pytest.mark.parametrize("D,causal,dtype,build", [
    (128, True, "float16", dict(pingpong=True, overlap=True)),
    (64, False, "bfloat16", dict(pingpong=True, overlap=True))],
    ids=["pingpong+overlap-128", "pingpong+overlap-64"])
def test_attention_assembles_without_spills_or_serialized_wgmma(D, causal, dtype, build):
    from kernels.attention import fa3_wgmma
    k = fa3_wgmma.make(D=D, causal=causal, dtype=dtype, **build)
    stamps = (T.uint64[:, ::1],) if build.get("trace") else ()
    ptx = _compile(k.function, (T.float32[:, ::1],) + (T.uint64[::1],) * 4 + (T.int64,) * 4 + stamps)
    BN = k.config["BN"]
    copies = 2 if build.get("overlap") else 1      # overlap: block 0's S and the last P V outside the loop
    assert ptx.count("wgmma.mma_async") == copies * (D // 16 + BN // 16)    # S: D / 16 k-blocks; P V: BN / 16
    assert ptx.count("cp.async.bulk.tensor.4d") == 3 * (D // 64) + D // 64   # Q, K, V and O: a box per 64 columns
    rc, err = _ptxas(ptx, ["-maxrregcount=%d" % (65536 // k.threads // 8 * 8)])
    assert rc == 0, err
    assert "C7515" not in err and "serialized" not in err, err
    assert "C7508" not in err, err
    assert "0 bytes spill stores" in err, err
    assert k.smem_bytes <= max_shared_per_block((9, 0)), k.smem_bytes        # 227 KB a block on sm_90
