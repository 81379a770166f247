"""The pipelines of a Hopper kernel, as CuTe's objects: PipelineTmaAsync (mbarriers) with its PipelineStates,
PipelineTmaStore (the epilogue's staging buffers) and PipelineOrder (CUTLASS's OrderedSequenceBarrier).

    pipe = PipelineTmaAsync(stages, tx_bytes, consumer_warps)   # two mbarriers a stage, in shared memory
    pipe.init()                                                   # thread 0 initialises; then a block barrier
    # producer (one thread):                      # consumers (every thread of the consumer warpgroups):
    state = make_producer_start_state(stages)     state = PipelineState(stages)
    pipe.producer_acquire(state)                  pipe.consumer_wait(state)
    tma_load(..., *pipe.producer_barrier(state))  ... wgmma on stage state.index ...
    state.advance()                               pipe.consumer_release(state); state.advance()

Stage s has a "full" barrier (count 1: the producer's arrive.expect_tx, then the TMA's bytes complete it)
and an "empty" barrier (one arrival per consumer warp). A wait names the phase it waits for by its parity,
the state's phase: consumers wait on full[s], starting at phase 0; the producer waits on empty[s], starting
at phase 1, which a fresh barrier passes at once, so its first round of stages needs no special case. Both
start states are cutelite.pipeline's (make_producer_start_state, as in CUTLASS), whose model simulates
exactly these waits and arrivals; here the index and phase are run-time variables.
"""

from cutelite import _, rank, size
from cutelite import pipeline as model
from cutelite.pipeline import empty_arrivals

from .barrier import NamedBarrier
from ..expr import Sym, is_sym, src
from .kernel import dynamic_shared, else_, if_, syncthreads, thread_idx
from .tensor import STensor
from .tma import tma_store, tma_store_commit, tma_store_wait
from .trace import current

__all__ = ["PipelineState", "make_producer_start_state", "PipelineTmaAsync", "PipelineTmaStore", "PipelineOrder"]


def _intrinsic(name):
    from .. import instructions
    return current().use(name, getattr(instructions, name))


class PipelineState:
    """Which stage (`index`) and which use of it (`phase`, 0/1) a pipeline loop is at: run-time variables,
    starting at (index, phase): a consumer's start by default. advance() moves to the next stage, flipping
    the phase when the index wraps."""

    def __init__(self, stages, index=0, phase=0):
        t = current()
        self.stages, self.start_phase = stages, phase
        self.index = t.var(index, "stage")
        self.phase = t.var(phase, "phase")

    def advance(self, n=1):
        """Move on by n stage uses (n = 1, or a run-time count: the uses another consumer takes)."""
        t = current()
        if n == 0:
            return
        if n == 1:
            t.emit("%s += 1" % self.index.src)
            with t.if_(Sym("%s == %d" % (self.index.src, self.stages))):
                t.emit("%s = 0" % self.index.src)
                t.emit("%s ^= 1" % self.phase.src)
            return
        t.emit("%s += %s" % (self.index.src, src(n)))
        t.emit("%s ^= (%s // %d) & 1" % (self.phase.src, self.index.src, self.stages))
        t.emit("%s %%= %d" % (self.index.src, self.stages))


def make_producer_start_state(stages):
    """The producer's PipelineState: cutelite.pipeline's (CuTe's make_producer_start_state: stage 0, phase 1),
    so that its first round of waits, on the fresh empty barriers, passes at once."""
    start = model.make_producer_start_state(stages)
    return PipelineState(stages, start.index, start.phase)


_PRODUCER, _CONSUMER = model.make_producer_start_state(1).phase, model.PipelineState(1).phase


class PipelineTmaAsync:
    """`stages` full/empty mbarrier pairs in dynamic shared memory; each stage announces `tx_bytes` (the
    bytes its TMA loads deliver) and is released by the warps of `consumer_warpgroups`. In a cluster of
    `cluster_shape` CTAs (along M, along N) with TMA multicast, the CTAs of a block's cluster row and column
    write its stages, so their consumers release them too (cutelite's empty_arrivals counts them)."""

    def __init__(self, stages, tx_bytes, consumer_warpgroups, cluster_shape=(1, 1)):
        t = current()
        self.stages, self.tx, self.cluster_shape = stages, tx_bytes, cluster_shape
        self.arrivals = empty_arrivals(consumer_warpgroups, cluster_shape=cluster_shape)
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
        if self.cluster_shape == (1, 1):
            syncthreads()
        else:                        # every block's inits, before any block's remote arrival or multicast
            t.emit("%s()" % _intrinsic("cluster_arrive"))
            t.emit("%s()" % _intrinsic("cluster_wait"))

    def _wait(self, index, parity):
        t = current()
        wait = _intrinsic("mbarrier_try_wait")
        with t.while_(Sym("%s(%s, %s, %s) == 0" % (wait, self.bars, src(index), src(parity)))):
            pass

    def _role(self, state, start, what, whose):
        if not isinstance(state, PipelineState) or state.stages != self.stages:
            raise TypeError("cutejit: %s takes a PipelineState of the pipeline's %d stages, got %r"
                            % (what, self.stages, state))
        if state.start_phase != start:
            raise ValueError("cutejit: %s: the state started at phase %d; %s starts at phase %d (%s)"
                             % (what, state.start_phase, whose[0], start, whose[1]))

    def producer_acquire(self, state):
        """Wait until the stage is empty (its previous use released), then announce the bytes to come."""
        self._role(state, _PRODUCER, "producer_acquire", ("the producer's", "make_producer_start_state"))
        self._wait(self.empty(state), state.phase)
        t = current()
        t.emit("%s(%s, %s, %d)" % (_intrinsic("mbarrier_arrive_expect_tx"), self.bars, src(self.full(state)), self.tx))

    def producer_barrier(self, state):
        """(barrier array, index): where the stage's TMA loads complete their bytes."""
        return self.bars, self.full(state)

    def consumer_wait(self, state):
        """Wait until the stage is full: the producer arrived and every announced byte landed."""
        self._role(state, _CONSUMER, "consumer_wait", ("a consumer's", "PipelineState(stages)"))
        self._wait(self.full(state), state.phase)

    def consumer_release(self, state):
        """Free the stage for the producer: one arrival per consumer warp (its lane 0)."""
        self._role(state, _CONSUMER, "consumer_release", ("a consumer's", "PipelineState(stages)"))
        t = current()
        with t.if_(Sym("(%s & 31) == 0" % thread_idx().src)):
            t.emit("%s(%s, %s)" % (_intrinsic("mbarrier_arrive"), self.bars, src(self.empty(state))))

    def consumer_release_cluster(self, state, cta_of_lane):
        """Free the stage in every CTA that writes it: lane j of each consumer warp arrives on the empty barrier
        of CTA cta_of_lane(j) (a run-time rank; j = 0 .. the CTAs of this block's cluster row and column - 1)."""
        self._role(state, _CONSUMER, "consumer_release", ("a consumer's", "PipelineState(stages)"))
        t = current()
        lane = t.let(thread_idx() & 31, "lane")
        cm, cn = self.cluster_shape
        with t.if_(Sym("%s < %d" % (lane.src, cm + cn - 1))):
            t.emit("%s(%s, %s, %s)" % (_intrinsic("mbarrier_arrive_cluster"), self.bars, src(self.empty(state)),
                                       src(cta_of_lane(lane))))

    def producer_tail(self, state):
        """Before the block ends: wait until every stage is empty once more, so that no CTA of the cluster still
        has an arrival to make on this block's barriers (CUTLASS's load_tail)."""
        self._role(state, _PRODUCER, "producer_tail", ("the producer's", "make_producer_start_state"))
        for _ in range(self.stages):
            self._wait(self.empty(state), state.phase)
            state.advance()


class PipelineTmaStore:
    """CuTe's PipelineTmaStore: a TMA-store epilogue's `stages` staging buffers, taken in turn. The threads
    write a buffer, one thread (`leader`, a run-time condition) stores it with the TMA; before a buffer is
    written again, the store issued from it `stages` boxes before must have read it (wait_group.read).

        store = PipelineTmaStore(sC, 2, c, leader)      # group c's buffers: sC[_, _, 2c] and sC[_, _, 2c + 1]
        buf = store.producer_acquire()                 # the next buffer, once its last store has read it
        ... the threads write buf, fence_proxy_async(), meet on a barrier ...
        store.producer_commit(tmC, buf, coord)         # the leader stores it: one bulk group
        store.producer_tail()                          # after the last: the leader waits for every store

    `buffers` is a shared tensor (rows, cols, stages x groups); `group` (an int or a run-time value) picks this
    group's `stages` of them. The buffers turn at build time: a run-time loop around the boxes must take a
    whole number of rounds in a pass (producer_tail checks), or its next pass would start on a buffer whose
    store may still read it."""

    def __init__(self, buffers, stages, group, leader):
        if not isinstance(buffers, STensor) or rank(buffers.layout) != 3:
            raise TypeError("cutejit: PipelineTmaStore: the buffers are a shared tensor (rows, cols, buffers), got %r"
                            % (buffers,))
        if not isinstance(stages, int) or isinstance(stages, bool) or not 1 <= stages <= size(buffers.layout, 2):
            raise ValueError("cutejit: PipelineTmaStore: stages must be 1 to the %d buffers, got %r"
                             % (size(buffers.layout, 2), stages))
        if not is_sym(leader):
            raise TypeError("cutejit: PipelineTmaStore: the leader is a run-time condition (which thread stores), "
                            "got %r" % (leader,))
        self.buffers, self.stages, self.group, self.leader = buffers, stages, group, leader
        self.count = 0              # buffers acquired so far, at build time

    def producer_acquire(self):
        """The next buffer; the leader first waits until at most stages - 1 of its stores may still read shared
        memory: the one issued from this buffer has read it."""
        buf = self.buffers[_, _, self.stages * self.group + self.count % self.stages]
        self.count += 1
        with if_(self.leader):
            tma_store_wait(self.stages - 1, read=True)
        return buf

    def producer_commit(self, tma, buf, coord, add=False):
        """The leader stores `buf` to the matrix at the coordinates of `coord` (add=True: adds it to the matrix,
        tma_store; `add` may be a run-time boolean) and commits it as a bulk group."""
        with if_(self.leader):
            if is_sym(add):
                with if_(add):
                    tma_store(tma, buf, coord, add=True)
                with else_():
                    tma_store(tma, buf, coord)
            else:
                tma_store(tma, buf, coord, add=add)
            tma_store_commit()

    def producer_tail(self):
        """The leader waits until every store is done (before the block ends)."""
        if self.count % self.stages:
            raise ValueError("cutejit: PipelineTmaStore: %d buffers acquired, not whole rounds of %d: a run-time "
                             "loop's next pass would write buffer 0 while the store of its last box may still "
                             "read it" % (self.count, self.stages))
        with if_(self.leader):
            tma_store_wait(0)


class PipelineOrder:
    """CUTLASS's OrderedSequenceBarrier (the CuTe DSL's PipelineOrder) for `length` groups of `threads` threads
    that take turns, group `group` (an int or a run-time value) after group - 1: the ping-pong consumers, whose
    main loops run one at a time. Here on named barriers, one a group, from the kernel's registry: wait() is
    bar.sync on this group's, arrive() bar.arrive on the next group's. A named barrier has no phase: the
    kernel skips the first wait and the last arrive (its first and last turn).

    A group's turn takes `uses` stage uses of a pipeline (its k-tiles): first_turn() moves PipelineStates to
    this group's first turn, next_turn() past the other groups' turns."""

    def __init__(self, length, group, threads):
        if not isinstance(length, int) or isinstance(length, bool) or length < 2:
            raise ValueError("cutejit: PipelineOrder: length must be an int >= 2 (groups taking turns), got %r"
                             % (length,))
        self.length, self.group = length, group
        self.barriers = NamedBarrier(2 * threads, length, "PipelineOrder")   # a group's threads and the one before

    def wait(self):
        """Wait for this group's turn: the group before has arrived."""
        self.barriers.sync(self.group)

    def arrive(self):
        """The next group's turn (of two groups, the other one's: 1 - group folds where (group + 1) % 2 would not)."""
        self.barriers.arrive(1 - self.group if self.length == 2 else (self.group + 1) % self.length)

    def first_turn(self, uses, *states):
        """Move `states` on to this group's first turn: `group` turns of `uses` stage uses in."""
        for state in states:
            state.advance(self.group * uses)

    def next_turn(self, uses, *states):
        """Move `states` past the other groups' turns, to this group's next one."""
        for state in states:
            state.advance((self.length - 1) * uses)
