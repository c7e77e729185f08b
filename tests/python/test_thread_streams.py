"""Streams belong to threads, as in MLX 0.32: thread-local default streams,
new_stream / new_thread_unsafe_stream / new_thread_local_stream,
clear_streams, the error for another thread's stream; async_eval refused
inside transforms; errors of async work surfacing at synchronize.

Each scenario runs on the subject and, where importable, on real MLX, and
the outcomes are compared (stream numbers differ between the two modules,
so outcomes name streams relative to the ones the scenario made)."""

import re
import threading

import numpy as np
import pytest

from conftest import run_in_threads, cmlx_only, mlx_ref, mx

MODULES = [pytest.param(mx, id="subject")] + (
    [pytest.param(mlx_ref, id="mlx")] if mlx_ref is not None and mlx_ref is not mx else [])

NO_STREAM = re.compile(r"^There is no Stream\(cpu, (\d+)\) in current thread\.$")
ASYNC_IN_TRACE = "[async_eval] Not allowed inside a graph transformation."


def in_thread(fn, *args):
    """Run fn(*args) on a new thread; return its result or re-raise its error."""
    out = {}

    def run():
        try:
            out["value"] = fn(*args)
        except BaseException as e:  # handed back to the caller
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


def index_of(s):
    return int(re.search(r", (\d+)\)$", repr(s)).group(1))


def outcome(fn):
    """('ok', value) or (exception type name, message)."""
    try:
        return ("ok", fn())
    except Exception as e:
        return (type(e).__name__, str(e))


def no_stream_error(m, stream, fn):
    """fn() must raise MLX's RuntimeError naming stream."""
    with pytest.raises(RuntimeError) as info:
        fn()
    got = NO_STREAM.match(str(info.value))
    assert got, str(info.value)
    assert int(got.group(1)) == index_of(stream)


# ------------------------------------------------------------ default streams


@pytest.mark.parametrize("m", MODULES)
def test_each_thread_has_its_own_default_stream(m):
    main = m.default_stream(m.cpu)
    assert m.default_stream(m.cpu) == main  # stable within a thread

    def worker():
        a, b = m.default_stream(m.cpu), m.default_stream(m.cpu)
        return a, b, (m.array([1, 2]) * 3).tolist()

    a, b, vals = in_thread(worker)
    assert a == b and a != main
    assert vals == [3, 6]
    c, _, _ = in_thread(worker)
    assert c != a and c != main  # every new thread gets a new one
    assert m.default_stream(m.cpu) == main
    assert m.default_stream(m.default_device()) == main


@pytest.mark.parametrize("m", MODULES)
def test_set_default_stream_is_per_thread(m):
    main = m.default_stream(m.cpu)

    def worker():
        s = m.new_stream(m.cpu)
        m.set_default_stream(s)
        assert m.default_stream(m.cpu) == s
        assert (m.array([1.0]) + 1).item() == 2.0  # ops now use it
        return s

    s = in_thread(worker)
    assert m.default_stream(m.cpu) == main != s
    assert m.default_device() == m.Device(m.cpu)


@pytest.mark.parametrize("m", MODULES)
def test_set_default_stream_keeps_the_default_device(m):
    before = m.default_stream(m.cpu)
    s = m.new_stream(m.cpu)
    try:
        m.set_default_stream(s)
        assert m.default_device() == m.Device(m.cpu)
        assert m.default_stream(m.cpu) == s
    finally:
        m.set_default_stream(before)


# ------------------------------------------------------------ another thread's stream


@pytest.mark.parametrize("m", MODULES)
def test_new_stream_belongs_to_its_thread(m):
    s = m.new_stream(m.cpu)
    x = m.arange(10)
    m.eval(x)  # so that s is the only stream of the graph

    def worker():
        with pytest.raises(RuntimeError) as info:
            m.eval(m.add(x, 1, stream=s))
        return str(info.value)

    msg = in_thread(worker)
    assert NO_STREAM.match(msg) and int(NO_STREAM.match(msg).group(1)) == index_of(s)
    assert m.add(x, 1, stream=s).tolist() == list(range(1, 11))  # fine where it was made


@pytest.mark.parametrize("m", MODULES)
def test_stream_context_with_another_threads_stream(m):
    """Entering the context is allowed (as MLX); evaluating there is not."""
    s = m.new_stream(m.cpu)

    def worker():
        mine = m.default_stream(m.cpu)
        with m.stream(s):
            assert m.default_stream(m.cpu) == s
            y = m.arange(10) * 2
            no_stream_error(m, s, lambda: m.eval(y))
        assert m.default_stream(m.cpu) == mine
        return (m.arange(3) + 1).tolist()

    assert in_thread(worker) == [1, 2, 3]


@pytest.mark.parametrize("m", MODULES)
def test_graph_built_on_one_thread_evaluated_on_another(m):
    def build():
        s = m.default_stream(m.cpu)
        return s, m.arange(5) * 2

    s, y = in_thread(build)
    for read in (lambda: m.eval(y), y.tolist, lambda: np.array(y), lambda: repr(y),
                 lambda: m.async_eval(y), lambda: (y + 1).tolist()):
        no_stream_error(m, s, read)


@cmlx_only
def test_failed_cross_thread_eval_leaves_the_graph_intact():
    """Nothing runs when a stream of the graph is not this thread's: the
    arrays stay unevaluated and compute correctly where they may."""
    ready, done = threading.Event(), threading.Event()
    box = {}

    def owner():
        r = mx.arange(6, dtype=mx.float32)
        box["y"] = r * 3 + r
        ready.set()
        done.wait(10)
        box["vals"] = box["y"].tolist()

    t = threading.Thread(target=owner)
    t.start()
    assert ready.wait(10)
    y = box["y"]
    z = y + 1  # main's stream on top of the owner's graph
    with pytest.raises(RuntimeError, match="There is no Stream"):
        mx.eval(z)
    with pytest.raises(RuntimeError, match="There is no Stream"):
        mx.eval(z)  # again: still unevaluated, same error
    done.set()
    t.join()
    assert box["vals"] == [0.0, 4.0, 8.0, 12.0, 16.0, 20.0]
    assert z.tolist() == [1.0, 5.0, 9.0, 13.0, 17.0, 21.0]  # y is evaluated now


@pytest.mark.parametrize("m", MODULES)
def test_evaluated_arrays_cross_threads_freely(m):
    x = m.arange(4) + 1
    m.eval(x)
    assert in_thread(lambda: (x * 2).tolist()) == [2, 4, 6, 8]
    y = in_thread(lambda: m.eval(r := m.arange(3) * 5) or r)
    assert y.tolist() == [0, 5, 10] and (y + 1).tolist() == [1, 6, 11]


@pytest.mark.parametrize("m", MODULES)
def test_stream_of_a_finished_thread_is_unusable(m):
    s = in_thread(lambda: m.new_stream(m.cpu))
    no_stream_error(m, s, lambda: m.eval(m.add(m.array(1), 1, stream=s)))


@pytest.mark.parametrize("m", MODULES)
def test_thread_unsafe_stream_works_on_any_thread(m):
    s = m.new_thread_unsafe_stream(m.cpu)
    assert isinstance(s, m.Stream) and s.device == m.Device(m.cpu)
    assert m.add(m.array(1), 2, stream=s).item() == 3
    assert in_thread(lambda: m.add(m.array(1), 3, stream=s).item()) == 4
    t = in_thread(lambda: m.new_thread_unsafe_stream(m.cpu))
    assert m.multiply(m.array([2, 3]), 2, stream=t).tolist() == [4, 6]
    m.synchronize(t)


# ------------------------------------------------------------ thread-local streams


@pytest.mark.parametrize("m", MODULES)
def test_thread_local_stream_is_one_stream_per_thread(m):
    tl = m.new_thread_local_stream(m.cpu)
    assert re.fullmatch(r"ThreadLocalStream\(Device\(cpu, 0\), \d+\)", repr(tl))
    assert tl.device == m.Device(m.cpu)
    assert tl == tl and not (tl != tl)
    other = m.new_thread_local_stream(m.cpu)
    assert tl != other and index_of(other) > index_of(tl)
    assert tl != m.default_stream(m.cpu) and (tl == 3) is False
    hash(tl)  # hashable, as in MLX

    def mine():
        with m.stream(tl):
            a = m.default_stream(m.cpu)
        with m.stream(tl):
            b = m.default_stream(m.cpu)
        assert a == b
        assert m.add(m.array(1), 1, stream=tl).item() == 2
        m.synchronize(tl)
        return a

    here = mine()
    there1, there2 = in_thread(mine), in_thread(mine)
    assert len({index_of(here), index_of(there1), index_of(there2)}) == 3
    assert mine() == here


@pytest.mark.parametrize("m", MODULES)
def test_thread_local_stream_runs_in_many_threads(m):
    """MLX's test_threads: the same work on a thread-local stream from
    several threads at once."""
    tl = m.new_thread_local_stream(m.default_device())
    results, errors = {}, []

    def work(k):
        try:
            with m.stream(tl):
                x = m.arange(1000) * k
                m.eval(x)
                results[k] = x[-1].item()
            m.clear_streams()
        except Exception as e:  # reported below
            errors.append(e)

    run_in_threads(work)
    assert not errors, errors
    assert results == {k: 999 * k for k in range(4)}


@pytest.mark.parametrize("m", MODULES)
def test_gpu_thread_local_stream_fails_on_use(m):
    tl = m.new_thread_local_stream(m.gpu)  # the handle is made
    assert tl.device == m.Device(m.gpu)
    for use in (lambda: m.add(1, 2, stream=tl), lambda: m.synchronize(tl),
                lambda: m.stream(tl).__enter__()):
        with pytest.raises(ValueError, match=re.escape(
                "[new_stream] Cannot make gpu stream without gpu backend.")):
            use()


@pytest.mark.parametrize("m", MODULES)
def test_set_default_stream_refuses_a_thread_local_stream(m):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        m.set_default_stream(m.new_thread_local_stream(m.cpu))


@pytest.mark.parametrize("m", MODULES)
def test_new_thread_unsafe_stream_gpu_error(m):
    with pytest.raises(ValueError, match=re.escape(
            "[new_thread_unsafe_stream] Cannot make gpu stream without gpu backend.")):
        m.new_thread_unsafe_stream(m.gpu)


# ------------------------------------------------------------ clear_streams


@pytest.mark.parametrize("m", MODULES)
def test_clear_streams_destroys_the_calling_threads_streams(m):
    tl = m.new_thread_local_stream(m.cpu)
    main_stream = m.new_stream(m.cpu)

    def worker():
        default = m.default_stream(m.cpu)
        own = m.new_stream(m.cpu)
        unsafe = m.new_thread_unsafe_stream(m.cpu)
        with m.stream(tl):
            local = m.default_stream(m.cpu)
            assert (m.arange(3) + 1).tolist() == [1, 2, 3]
        assert m.clear_streams() is None
        out = {}
        # The default stays the same stream, which is gone now (MLX's
        # clear_streams drops the streams but not the thread's defaults).
        assert m.default_stream(m.cpu) == default
        out["default"] = outcome(lambda: (m.arange(3) + 1).tolist())
        out["own"] = outcome(lambda: m.add(m.array(1), 1, stream=own).item())
        out["local"] = outcome(lambda: m.add(m.array(1), 1, stream=tl).item())
        out["unsafe"] = outcome(lambda: m.add(m.array(1), 1, stream=unsafe).item())
        out["fresh"] = outcome(lambda: m.add(m.array(1), 5, stream=m.new_stream(m.cpu)).item())
        return out, {"default": default, "own": own, "local": local}

    out, streams = in_thread(worker)
    for name in ("default", "own", "local"):
        kind, msg = out[name]
        assert kind == "RuntimeError", (name, out[name])
        assert int(NO_STREAM.match(msg).group(1)) == index_of(streams[name])
    assert out["unsafe"] == ("ok", 2) and out["fresh"] == ("ok", 6)
    # Other threads' streams are untouched.
    assert m.add(m.array(1), 1, stream=main_stream).item() == 2
    assert (m.arange(2) + 1).tolist() == [1, 2]


@pytest.mark.parametrize("m", MODULES)
def test_clear_streams_then_new_default_after_set(m):
    def worker():
        m.clear_streams()  # nothing made yet: harmless
        assert (m.arange(2) * 2).tolist() == [0, 2]
        m.clear_streams()
        m.set_default_stream(m.new_stream(m.cpu))  # a way back to work
        return (m.arange(2) * 3).tolist()

    assert in_thread(worker) == [0, 3]


# ------------------------------------------------------------ async_eval in transforms


def _async_in(m, fn):
    def f(x):
        y = x + 1.0
        m.async_eval(y)
        return m.exp(y)

    return fn(f)


@pytest.mark.parametrize("m", MODULES)
@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "vmap", "value_and_grad"])
def test_async_eval_inside_a_transform_raises(m, transform):
    x = m.array([1.0, 2.0])
    calls = {
        "grad": lambda f: m.grad(lambda a: f(a).sum())(x),
        "value_and_grad": lambda f: m.value_and_grad(lambda a: f(a).sum())(x),
        "vjp": lambda f: m.vjp(f, [x], [m.ones(2)]),
        "jvp": lambda f: m.jvp(f, [x], [m.ones(2)]),
        "vmap": lambda f: m.vmap(f)(m.ones((2, 2))),
    }
    with pytest.raises(ValueError) as info:
        _async_in(m, calls[transform])
    assert str(info.value) == ASYNC_IN_TRACE
    # Nothing is left behind: the same computations work afterwards.
    assert m.grad(lambda a: (a * a).sum())(x).tolist() == [2.0, 4.0]
    y = x + 1
    m.async_eval(y)
    assert y.tolist() == [2.0, 3.0]


@pytest.mark.parametrize("m", MODULES)
def test_async_eval_of_untraced_arrays_inside_a_transform(m):
    """Only arrays built from the traced inputs are refused, as in MLX."""
    seen = []

    def f(a):
        c = m.arange(3) * 2  # does not depend on a
        m.async_eval(c)
        seen.append(c.tolist())
        return (a * a).sum()

    assert m.grad(f)(m.array([3.0])).tolist() == [6.0]
    assert seen == [[0, 2, 4]]


@pytest.mark.parametrize("m", MODULES)
def test_eval_inside_grad_still_works(m):
    def f(a):
        b = a * 3
        m.eval(b)
        return (b * a).sum()

    assert m.grad(f)(m.array([1.0, 2.0])).tolist() == [6.0, 12.0]


@pytest.mark.parametrize("m", MODULES)
def test_async_eval_of_transform_outputs_is_fine_afterwards(m):
    g = m.grad(lambda a: (a * a * a).sum())(m.array([1.0, 2.0]))
    m.async_eval(g)
    assert g.tolist() == [3.0, 12.0]


@pytest.mark.parametrize("m", MODULES)
def test_async_eval_in_trace_on_one_thread_does_not_block_another(m):
    """The trace state is per thread."""
    inside, release = threading.Event(), threading.Event()
    box = {}

    def other():
        inside.wait(10)
        y = m.arange(4) + 1
        m.async_eval(y)
        box["y"] = y.tolist()
        release.set()

    def f(a):
        inside.set()
        release.wait(10)
        return (a * 2).sum()

    t = threading.Thread(target=other)
    t.start()
    assert m.grad(f)(m.array([1.0])).tolist() == [2.0]
    t.join()
    assert box["y"] == [1, 2, 3, 4]


# ------------------------------------------------------------ errors at synchronize

# A buffer far beyond any address space: allocating it fails at eval time
# on every machine (MLX itself crashes on this one, hence cmlx_only).
HUGE = (2**31 - 1, 2**20)


@cmlx_only
def test_async_eval_error_surfaces_at_synchronize_once():
    a = mx.zeros(HUGE)
    mx.async_eval(a)
    with pytest.raises(MemoryError, match=r"\[malloc\] Unable to allocate"):
        mx.synchronize(mx.cpu)
    mx.synchronize()  # reported: not again
    with pytest.raises(MemoryError):  # the array itself stays failed
        mx.eval(a)
    mx.synchronize()
    assert (mx.arange(3) + 1).tolist() == [1, 2, 3]


@cmlx_only
def test_async_eval_error_reported_by_eval_is_not_reported_again():
    a = mx.zeros(HUGE)
    mx.async_eval(a)
    b = a + 1
    with pytest.raises(MemoryError):
        mx.eval(b)  # b's input failed
    mx.synchronize()
    a = mx.zeros(HUGE)
    mx.async_eval(a)
    with pytest.raises(MemoryError):
        mx.eval(a)
    mx.synchronize()


@cmlx_only
def test_async_eval_error_surfaces_at_the_next_eval_on_the_stream():
    """MLX raises a stream's stored error at its next enqueue there, once."""
    a = mx.zeros(HUGE)
    marker = mx.arange(3) + 1
    # One call (a second async_eval could already meet a's error): the
    # marker is queued after a, so once it is read a has failed.
    mx.async_eval(a, marker)
    assert marker.tolist() == [1, 2, 3]
    x = mx.arange(3) * 2
    with pytest.raises(MemoryError, match=r"\[malloc\]"):
        mx.eval(x)
    assert x.tolist() == [0, 2, 4]  # nothing was lost: it runs next time
    mx.synchronize()


@cmlx_only
def test_async_eval_error_stays_on_its_stream():
    s = mx.new_stream(mx.cpu)
    mx.async_eval(mx.zeros(HUGE, stream=s))
    mx.synchronize()  # the default stream has nothing to report
    with pytest.raises(MemoryError):
        mx.synchronize(s)
    mx.synchronize(s)


@cmlx_only
def test_eval_errors_raise_at_once_and_leave_nothing_for_synchronize():
    with pytest.raises(MemoryError):
        mx.eval(mx.zeros(HUGE))
    mx.synchronize()
    s = mx.new_stream(mx.cpu)
    z = mx.zeros(HUGE, stream=s) + mx.ones((1,))  # two streams: queued
    with pytest.raises(MemoryError):
        mx.eval(z)
    mx.synchronize(s)
    mx.synchronize()


@cmlx_only
def test_synchronize_error_from_another_thread_async_eval():
    s = mx.new_thread_unsafe_stream(mx.cpu)

    def worker():
        mx.async_eval(mx.zeros(HUGE, stream=s))

    in_thread(worker)
    with pytest.raises(MemoryError):
        mx.synchronize(s)
    mx.synchronize(s)


@pytest.mark.parametrize("m", MODULES)
def test_synchronize_another_threads_stream(m):
    """synchronize only waits: any thread may wait for any stream."""
    s = m.new_stream(m.cpu)
    y = m.arange(100) * 2
    with m.stream(s):
        z = m.arange(100) + 1
    m.async_eval(y, z)
    in_thread(lambda: m.synchronize(s))
    assert z[-1].item() == 100 and y[-1].item() == 198
