"""GPU time of a launch, the way a profiler sees it: every timer in the book and the benchmarks uses this.

A launch timed alone, from an idle GPU (event, launch, event, wait), also counts the host's work of making
the launch: Numba's dispatcher checks the arguments' types on every call, which costs tens of
microseconds, more than PyTorch's dispatch to cuBLAS. Against a 0.2 ms GEMM that is a 10-20% handicap
that has nothing to do with the kernel. So each sample here is a batch of launches queued back to back
behind one that is already running: the host prepares launch i + 1 while the GPU runs launch i, and the
events measure the GPU's time only (as long as preparing a launch is quicker than running it; for
kernels shorter than their launch cost the result is the host-bound rate, which is then the truth).
`fn` must launch on the legacy default stream (Numba's stream 0, PyTorch's and CuPy's default stream).
Processes sharing one GPU (builds in parallel, say) take turns: where CUTE_GPU_LOCK names a file, each
measurement holds an exclusive lock on it, so no two measurements overlap.
"""

import contextlib
import os
import statistics
import time

__all__ = ["gpu_time_ms", "launch_overhead_ms", "host_us"]


def _event_pair():
    from numba import cuda
    return cuda.event(), cuda.event()


def _elapsed(e0, e1):
    return e0.elapsed_time(e1)


def _alone_ms(fn):
    """One launch from an idle GPU, between two events (host launch cost included)."""
    from numba import cuda
    cuda.synchronize()
    e0, e1 = _event_pair()
    e0.record()
    fn()
    e1.record()
    e1.synchronize()
    return _elapsed(e0, e1)


def gpu_time_ms(fn, reps=10, warmup=3, budget_ms=1500.0, batch_ms=2.0, max_batch=20):
    """Median milliseconds of one fn() on the GPU: `reps` samples (fewer, at least 3, when they would take
    more than `budget_ms`), each a batch of back-to-back launches between two events, queued behind a
    launch already running; a batch holds about `batch_ms` of work (1 to `max_batch` launches)."""
    from .runtime import in_simulator
    if in_simulator():
        raise RuntimeError("gpu_time_ms: Numba's CUDA simulator runs kernels on the CPU and its events record "
                           "no time; time kernels on a GPU")
    with _gpu_turn():
        return _measure(fn, reps, warmup, budget_ms, batch_ms, max_batch)


@contextlib.contextmanager
def _gpu_turn():
    """An exclusive lock on the file CUTE_GPU_LOCK names, held for the block (nothing where it is unset)."""
    path = os.environ.get("CUTE_GPU_LOCK")
    if not path:
        yield
        return
    import fcntl
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _measure(fn, reps, warmup, budget_ms, batch_ms, max_batch):
    """gpu_time_ms's samples and their median (see there)."""
    from numba import cuda
    for _ in range(warmup):
        fn()
    one = _alone_ms(fn)
    batch = max(1, min(max_batch, int(batch_ms / max(one, 1e-3))))
    times = []
    while len(times) < max(3, reps) and (len(times) < 3 or sum(times) * batch < budget_ms):
        fn()                                  # keeps the GPU busy while the events and the batch are queued
        e0, e1 = _event_pair()
        e0.record()
        for _ in range(batch):
            fn()
        e1.record()
        e1.synchronize()
        times.append(_elapsed(e0, e1) / batch)
    cuda.synchronize()
    return statistics.median(times)


def launch_overhead_ms(fn, reps=10):
    """How much longer one launch from an idle GPU takes than gpu_time_ms(fn): the host's share of a call
    that nothing else overlaps (median of `reps` single launches, minus the GPU time)."""
    alone = statistics.median(_alone_ms(fn) for _ in range(reps))
    return alone - gpu_time_ms(fn, reps=reps)


def host_us(fn, n=200):
    """Host microseconds per fn(): `n` calls queued back to back, the GPU not waited for between them (what a
    call costs the host while the GPU is busy), after one call to warm up."""
    from numba import cuda
    fn()
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    cuda.synchronize()
    return (t1 - t0) / n * 1e6
