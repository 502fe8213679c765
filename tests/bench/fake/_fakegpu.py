"""Shared state of the fake cupy/torch/numpy used by tests/bench/test_peers_fake.sh: they let
scripts/bench/peers.py run its whole control flow on a machine without a GPU.

FAKE_PEER=missing: importing the peer fails; nogpu: it reports no device; anything else: one
fake device with FAKE_MEM bytes (default 1 GiB). The fakes check what the real libraries would
not forgive and what the contract asks: device work only after the context exists and only on a
non-blocking stream made current, events recorded on that stream, kernel argument types; graph
capture on that stream with nothing in it that a real capture refuses (synchronization, events,
allocation) and graphs of the work captured, launched outside the capture."""
import os
import time

MODE = os.environ.get("FAKE_PEER", "gpu")
MEM = int(os.environ.get("FAKE_MEM", str(1 << 30)))
state = {"context": False, "live": 0, "streams": [None]}


class OutOfMemoryError(MemoryError):
    pass


def missing(name):
    if MODE == "missing":
        raise ModuleNotFoundError("No module named %r" % name)


def context():
    state["context"] = True


def on_stream():
    """Device work: needs the context and a current non-blocking stream; a stream capturing a
    graph records it as a node instead."""
    if not state["context"]:
        raise RuntimeError("fake: device work before the context was created")
    s = state["streams"][-1]
    if s is None or not s.non_blocking:
        raise RuntimeError("fake: device work on the legacy default stream")
    if s.captured is not None:
        s.captured += 1
    return s


def capturing():
    return any(s is not None and s.captured is not None for s in state["streams"])


def launch_graph(stream, nodes):
    """A graph launch: `nodes` pieces of work on the current non-blocking stream, outside any
    capture."""
    if not state["context"]:
        raise RuntimeError("fake: graph launch before the context was created")
    if stream is None or not stream.non_blocking or stream is not state["streams"][-1]:
        raise RuntimeError("fake: graph launched on a stream other than the current non-blocking "
                           "one")
    if capturing():
        raise RuntimeError("fake: graph launched inside a capture")
    if nodes is None or nodes <= 0:
        raise RuntimeError("fake: launch of a graph that captured no work (%r nodes)" % nodes)
    for _ in range(nodes):  # time passes with the work
        pass


class Stream:
    def __init__(self, non_blocking):
        if not state["context"]:
            raise RuntimeError("fake: stream before the context")
        self.non_blocking, self.ptr = non_blocking, id(self)
        self.captured = None  # the number of nodes captured while capturing

    def start_capture(self):
        if not self.non_blocking:
            raise RuntimeError("fake: capture on a blocking stream")
        if self.captured is not None:
            raise RuntimeError("fake: the stream is already capturing")
        self.captured = 0

    def stop_capture(self):
        """Ends the capture: the number of nodes captured."""
        if self.captured is None:
            raise RuntimeError("fake: end of a capture that never began")
        nodes, self.captured = self.captured, None
        return nodes

    def __enter__(self):
        state["streams"].append(self)
        return self

    def __exit__(self, *exc):
        state["streams"].pop()

    def synchronize(self):
        if self.captured is not None:
            raise RuntimeError("fake: stream synchronized while capturing")


class Event:
    def __init__(self):
        self.t = None

    def record(self, stream=None):
        if stream is None or not stream.non_blocking or stream is not state["streams"][-1]:
            raise RuntimeError("fake: event not recorded on the current non-blocking stream")
        if stream.captured is not None:
            raise RuntimeError("fake: timing event recorded inside a capture")
        self.t = time.perf_counter()

    def synchronize(self):
        if self.t is None:
            raise RuntimeError("fake: synchronize on an event never recorded")

    def ms_to(self, other):
        return (other.t - self.t) * 1e3


class Memory:
    """Device memory of `nbytes`, given back when the owner is garbage."""

    nbytes = 0  # until the allocation succeeds

    def __init__(self, nbytes):
        if capturing():
            raise RuntimeError("fake: device memory allocated inside a capture")
        on_stream()
        if state["live"] + nbytes > MEM:
            raise OutOfMemoryError("fake: out of memory allocating %d bytes (%d live)"
                                   % (nbytes, state["live"]))
        state["live"] += nbytes
        self.nbytes = nbytes

    def __del__(self):
        state["live"] -= self.nbytes
