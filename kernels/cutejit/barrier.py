"""Named barriers: a CTA's 16 hardware barriers (PTX bar.sync / bar.arrive), handed out by one registry.

Barrier 0 is __syncthreads (`syncthreads()`). A piece of a kernel that meets part of the block on barriers of
its own (the TMA-store epilogue's warpgroups, the ping-pong consumers taking turns) takes them from the
kernel's registry:

    sync = NamedBarrier(128, count=2, owner="epilogue_tma")   # the next two free ids, 128 threads each
    sync.sync(c)                                              # bar.sync on the c-th of them (c may be run-time)

The registry hands out ids 1 to 15 in order and refuses a request past 15, naming who holds the others; an
id written by hand (`named_barrier_sync(1, 128)`) that an owner holds is refused, so no two pieces of a
kernel meet on one barrier by accident.
"""

from ..expr import is_sym, src
from .trace import current

__all__ = ["NamedBarrier", "named_barrier_sync", "named_barrier_arrive"]

IDS = range(1, 16)          # bar.sync / bar.arrive ids beside 0, __syncthreads (PTX ISA: bar, 16 barriers a CTA)
BY_HAND = "named_barrier_sync/arrive by hand"


class NamedBarrier:
    """`count` named barriers of `threads` threads each (whole warps), for `owner` (named in errors): the next
    free ids of the kernel's registry. sync(i) / arrive(i) use the i-th of them (an int or a run-time value)."""

    def __init__(self, threads, count=1, owner="NamedBarrier"):
        t = current()
        _check_threads(threads, owner)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ValueError("cutejit: %s: a NamedBarrier of count >= 1 barriers, got %r" % (owner, count))
        held = t.named_barriers
        first = max(held, default=0) + 1
        if first + count - 1 > IDS[-1]:
            raise ValueError("cutejit: %s needs %d named barriers, but ids 1-15 (0 is __syncthreads) are %s" % (
                owner, count, _holders(held) if held else "too few"))
        self.ids = tuple(range(first, first + count))
        for i in self.ids:
            held[i] = owner
        self.threads, self.count, self.owner = threads, count, owner

    def _id(self, i):
        if is_sym(i):
            return self.ids[0] + i
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < self.count:
            raise ValueError("cutejit: %s: barrier %r of %d" % (self.owner, i, self.count))
        return self.ids[i]

    def sync(self, i=0):
        """bar.sync: wait until `threads` threads have arrived on the i-th barrier (this thread among them)."""
        _emit("named_barrier_sync", self._id(i), self.threads, self.ids)

    def arrive(self, i=0):
        """bar.arrive: count this warp's arrival on the i-th barrier, without waiting."""
        _emit("named_barrier_arrive", self._id(i), self.threads, self.ids)

    def __repr__(self):
        return "NamedBarrier(ids %s, %d threads, %s)" % (",".join(map(str, self.ids)), self.threads, self.owner)


def named_barrier_arrive(barrier, threads, ids=None):
    """bar.arrive barrier, threads: count this warp's arrival on a named barrier without waiting (the other
    side of a named_barrier_sync). A run-time `barrier` needs `ids`, the values it can take."""
    _by_hand("named_barrier_arrive", barrier, threads, ids)


def named_barrier_sync(barrier, threads, ids=None):
    """bar.sync barrier, threads: wait until `threads` threads (whole warps) have arrived on it. The
    instruction takes a constant id: a run-time `barrier` needs `ids`, the values it can take."""
    _by_hand("named_barrier_sync", barrier, threads, ids)


def _by_hand(name, barrier, threads, ids):
    """An id written in the kernel: 1..15, and none that an owner of the registry holds."""
    if is_sym(barrier) and not ids:
        raise ValueError("cutejit: %s of a run-time barrier id needs ids=, the ids it can be" % name)
    _check_threads(threads, name)
    held = current().named_barriers
    for i in ids if is_sym(barrier) else (barrier,):
        if not isinstance(i, int) or isinstance(i, bool) or i not in IDS:
            raise ValueError("cutejit: %s: barrier ids are 1-15 (0 is __syncthreads: syncthreads()), got %r"
                             % (name, i))
        if held.get(i, BY_HAND) != BY_HAND:
            raise ValueError("cutejit: %s: barrier %d is held by %s (%s)" % (name, i, held[i], _holders(held)))
        held[i] = BY_HAND
    _emit(name, barrier, threads, ids)


def _check_threads(threads, what):
    limit = current().threads
    if not isinstance(threads, int) or isinstance(threads, bool) or threads % 32 or not 32 <= threads <= limit:
        raise ValueError("cutejit: %s: a named barrier counts whole warps, 32 to the kernel's %d threads, got %r"
                         % (what, limit, threads))


def _holders(held):
    owners = {}
    for i, who in sorted(held.items()):
        owners.setdefault(who, []).append(str(i))
    return "; ".join("%s: %s" % (",".join(ids), who) for who, ids in owners.items())


def _emit(name, barrier, threads, ids):
    """The instruction, with a constant id: a run-time one branches over `ids`, the values it can take."""
    from .. import instructions
    t = current()
    if not is_sym(barrier):
        t.emit("%s(%s, %d)" % (t.use(name, getattr(instructions, name)), src(barrier), threads))
        return
    first, rest = ids[0], tuple(ids[1:])
    if not rest:
        return _emit(name, first, threads, ())
    with t.if_(barrier < first + 1):
        _emit(name, first, threads, ())
    with t.else_():
        _emit(name, barrier, threads, rest)
