"""The producer/consumer pipeline of a Hopper kernel, on mbarriers: CuTe's PipelineTmaAsync and PipelineState.

    pipe = PipelineTmaAsync(stages, tx_bytes, consumer_warps)   # two mbarriers a stage, in shared memory
    pipe.init()                                                   # thread 0 initialises; then a block barrier
    state = PipelineState(stages)                                 # (stage index, phase), run-time variables
    # producer (one thread):                      # consumers (every thread of the consumer warpgroups):
    pipe.producer_acquire(state)                  pipe.consumer_wait(state)
    tma_load(..., *pipe.producer_barrier(state))  ... wgmma on stage state.index ...
    state.advance()                               pipe.consumer_release(state); state.advance()

Stage s has a "full" barrier (count 1: the producer's arrive.expect_tx, then the TMA's bytes complete it)
and an "empty" barrier (one arrival per consumer warp). A wait names the phase it waits for by its parity:
consumers wait on full[s] for parity `phase`, the producer on empty[s] for parity `phase ^ 1`, which a fresh
barrier passes at once, so the first round of stages needs no special case. The state's index and phase
are cutelite.pipeline's PipelineState, kept in registers; chapter 8's model (cutelite.pipeline) simulates
exactly these waits and arrivals.
"""

from cutelite.pipeline import empty_arrivals

from ..expr import Sym, src
from .kernel import dynamic_shared, syncthreads, thread_idx
from .trace import current

__all__ = ["PipelineState", "PipelineTmaAsync"]


def _intrinsic(name):
    from .. import instructions
    return current().use(name, getattr(instructions, name))


class PipelineState:
    """Which stage (`index`) and which use of it (`phase`, 0/1) a pipeline loop is at: run-time variables.
    advance() moves to the next stage, flipping the phase when the index wraps."""

    def __init__(self, stages, index=0, phase=0):
        t = current()
        self.stages = stages
        self.index = t.var(index, "stage")
        self.phase = t.var(phase, "phase")

    def advance(self, n=1):
        """Move on by n stage uses (n = 1, or a run-time count: the uses another consumer takes)."""
        t = current()
        if n == 1:
            t.emit("%s += 1" % self.index.src)
            with t.if_(Sym("%s == %d" % (self.index.src, self.stages))):
                t.emit("%s = 0" % self.index.src)
                t.emit("%s ^= 1" % self.phase.src)
            return
        t.emit("%s += %s" % (self.index.src, src(n)))
        t.emit("%s ^= (%s // %d) & 1" % (self.phase.src, self.index.src, self.stages))
        t.emit("%s %%= %d" % (self.index.src, self.stages))


class PipelineTmaAsync:
    """`stages` full/empty mbarrier pairs in dynamic shared memory; each stage announces `tx_bytes` (the
    bytes its TMA loads deliver) and is released by `consumer_warps` arrivals."""

    def __init__(self, stages, tx_bytes, consumer_warpgroups):
        t = current()
        self.stages, self.tx = stages, tx_bytes
        self.arrivals = empty_arrivals(consumer_warpgroups)
        self.bars = dynamic_shared("uint64")
        start = -(-t.smem_bytes // 8) * 8
        t.smem_bytes = start + 2 * 8 * stages
        self.first = start // 8          # full[s] = bars[first + s], empty[s] = bars[first + stages + s]

    def full(self, state):
        return self.first + state.index

    def empty(self, state):
        return self.first + self.stages + state.index

    def init(self):
        """Thread 0 initialises every barrier and fences the inits (cluster-visible); a block barrier."""
        t = current()
        init = _intrinsic("mbarrier_init")
        with t.if_(Sym("%s == 0" % thread_idx().src)):
            for s in range(self.stages):
                t.emit("%s(%s, %d, 1)" % (init, self.bars, self.first + s))
                t.emit("%s(%s, %d, %d)" % (init, self.bars, self.first + self.stages + s, self.arrivals))
            t.emit("%s()" % _intrinsic("fence_mbarrier_init"))
        syncthreads()

    def _wait(self, index, parity):
        t = current()
        wait = _intrinsic("mbarrier_try_wait")
        with t.while_(Sym("%s(%s, %s, %s) == 0" % (wait, self.bars, src(index), src(parity)))):
            pass

    def producer_acquire(self, state):
        """Wait until the stage is empty (its previous use released), then announce the bytes to come."""
        self._wait(self.empty(state), state.phase ^ 1)
        t = current()
        t.emit("%s(%s, %s, %d)" % (_intrinsic("mbarrier_arrive_expect_tx"), self.bars, src(self.full(state)), self.tx))

    def producer_barrier(self, state):
        """(barrier array, index): where the stage's TMA loads complete their bytes."""
        return self.bars, self.full(state)

    def consumer_wait(self, state):
        """Wait until the stage is full: the producer arrived and every announced byte landed."""
        self._wait(self.full(state), state.phase)

    def consumer_release(self, state):
        """Free the stage for the producer: one arrival per consumer warp (its lane 0)."""
        t = current()
        with t.if_(Sym("(%s & 31) == 0" % thread_idx().src)):
            t.emit("%s(%s, %s)" % (_intrinsic("mbarrier_arrive"), self.bars, src(self.empty(state))))
