"""kernels.timing: the per-launch accounting of a batch, checked with fake events on a model GPU where
every launch takes K ms of GPU time and a launch from an idle GPU costs H ms more."""
import pytest

import kernels

kernels.setup(verbose=False)
from kernels import timing  # noqa: E402

K, H = 0.25, 0.04


class _Model:
    def __init__(self):
        self.launches = 0

    def fn(self):
        self.launches += 1


def _fake(monkeypatch, model):
    class Event:
        def record(self):
            self.at = model.launches

        def synchronize(self):
            pass

        def elapsed_time(self, later):      # only the queued launches between the two events count
            return (later.at - self.at) * K

    monkeypatch.setattr(timing, "_event_pair", lambda: (Event(), Event()))
    monkeypatch.setattr(timing, "_alone_ms", lambda fn: (fn(), K + H)[1])
    monkeypatch.setattr("kernels.runtime.in_simulator", lambda: False)
    monkeypatch.setattr("numba.cuda.synchronize", lambda: None)


def test_gpu_time_is_per_launch(monkeypatch):
    m = _Model()
    _fake(monkeypatch, m)
    assert timing.gpu_time_ms(m.fn, reps=5, warmup=2) == pytest.approx(K)
    # warm-up 2, one launch alone, then per sample one launch to fill the queue and a batch of
    # int(2.0 / (K + H)) = 6 launches: 5 samples
    assert m.launches == 2 + 1 + 5 * (1 + 6)


def test_launch_overhead_is_the_difference(monkeypatch):
    m = _Model()
    _fake(monkeypatch, m)
    assert timing.launch_overhead_ms(m.fn, reps=4) == pytest.approx(H)


def test_simulator_refuses():
    from kernels.runtime import in_simulator
    if not in_simulator():
        pytest.skip("a GPU is here")
    with pytest.raises(RuntimeError, match="simulator"):
        timing.gpu_time_ms(lambda: None)


def test_measurements_take_turns_under_cute_gpu_lock(monkeypatch, tmp_path):
    """With CUTE_GPU_LOCK set, a measurement holds an exclusive lock on that file: another holder (a process
    timing on the same GPU; here a second open file, which flock treats alike) must wait until it ends."""
    import fcntl
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("CUTE_GPU_LOCK", str(lock))
    m, seen = _Model(), []

    def fn():
        if not seen:
            with open(lock, "a") as other:
                try:
                    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    seen.append("free")
                except BlockingIOError:
                    seen.append("held")
        m.fn()

    _fake(monkeypatch, m)
    assert timing.gpu_time_ms(fn, reps=3, warmup=1) == pytest.approx(K)
    assert seen == ["held"]
    with open(lock, "a") as other:                 # released after the measurement
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_host_us_counts_queued_calls(monkeypatch):
    """host_us: one call to warm up, then n calls timed on the host's clock, the GPU waited for only around them."""
    calls, synced = [], []
    monkeypatch.setattr("numba.cuda.synchronize", lambda: synced.append(len(calls)))
    clock = iter([10.0, 10.5])
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(clock))
    assert timing.host_us(lambda: calls.append(1), n=50) == pytest.approx(0.5 / 50 * 1e6)
    assert len(calls) == 51 and synced == [1, 51]
