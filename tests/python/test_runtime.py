"""Behaviour of runs from Python (docs/PYTHON.md, "Threads, Ctrl-C and
memory"): the GIL is released while a plan runs, threads share one
compiled plan through per-thread sessions, Ctrl-C stops a long run with
KeyboardInterrupt, and repeated calls do not grow the process."""
import os
import signal
import threading

import numpy as np
import pytest

import smelt

# A model that runs as long as asked: a Loop of n trips (a run-time int)
SPIN = """
def spin(x: Tensor[f32, 4], n: int) -> Tensor:
    for i in range(n):
        x = x * 0.5 + 1.0
    return x
"""


def mlp(examples):
    return smelt.load(os.path.join(examples, "mlp.ir"))


def test_threads_with_own_sessions(examples):
    m = mlp(examples)
    plan = m.compile(dims={"batch": 32})
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((32, 16)).astype(np.float32) for _ in range(4)]
    want = [m.run_reference(x)[0] for x in xs]
    errors, done = [], [0] * 4

    def work(k):
        s = plan.session()
        try:
            for i in range(200):
                got = s(xs[(k + i) % 4])
                np.testing.assert_allclose(got, want[(k + i) % 4], atol=1e-5)
                done[k] += 1
        except Exception as e:  # reported by the main thread
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert done == [200] * 4


def test_threads_share_a_plan_and_a_model(examples):
    # without sessions: the plan's own session, else a temporary one
    m = mlp(examples)
    x = np.random.default_rng(8).standard_normal((9, 16)).astype(np.float32)
    want = m.run_reference(x)[0]
    plan = m.compile(dims={"batch": 9})
    results = []

    def work():
        for _ in range(100):
            results.append(plan(x))
            results.append(m(x))

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(results) == 800
    for r in results:
        np.testing.assert_allclose(r, want, atol=1e-5)


def test_gil_is_released_while_running():
    # the run stops at its time limit; meanwhile this thread keeps running
    # Python code, which it could not if the run held the GIL
    m = smelt.script(SPIN)
    plan = m.compile(timeout_ms=300)
    caught = []

    def work():
        try:
            plan(np.zeros(4, np.float32), 10 ** 12)
        except smelt.Error as e:
            caught.append(e)

    t = threading.Thread(target=work)
    t.start()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    assert caught and "time limit" in str(caught[0])
    assert caught[0].status == "limit exceeded" or caught[0].status
    assert spins > 1000


def test_ctrl_c_interrupts_a_long_run():
    m = smelt.script(SPIN)
    x = np.zeros(4, np.float32)
    for run in [m, m.compile(), m.compile().session(), m.run_reference]:
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                run(x, 10 ** 12)
        finally:
            timer.cancel()
    # the model runs on afterwards
    np.testing.assert_allclose(m(x, 3), np.full(4, 1.75, np.float32))


def test_session_refuses_a_second_thread_at_once():
    m = smelt.script(SPIN)
    plan = m.compile(timeout_ms=400)
    s = plan.session()
    started = threading.Event()
    out = []

    def work():
        started.set()
        try:
            s(np.zeros(4, np.float32), 10 ** 12)
        except smelt.Error as e:
            out.append(e)

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    refused = None
    while t.is_alive() and refused is None:
        try:
            s(np.zeros(4, np.float32), 1)
        except RuntimeError as e:
            refused = e
        except smelt.Error:
            pass
    t.join()
    assert out
    if refused is not None:
        assert "another thread" in str(refused)


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


@pytest.mark.skipif(os.environ.get("SMELT_SANITIZE") == "1",
                    reason="ASan's quarantine holds freed memory: RSS grows")
def test_memory_stays_flat_over_10000_calls(examples):
    m = mlp(examples)
    x = np.random.default_rng(9).standard_normal((4, 16)).astype(np.float32)
    bad = np.ones((4, 16), np.float64)
    plan = m.compile(dims={"batch": 4})
    s = plan.session()

    def calls(n):
        for i in range(n):
            m(x)
            s(x)
            plan.run({"x": x})
            if i % 10 == 0:
                try:
                    m(bad)
                except TypeError:
                    pass
                try:
                    smelt.load(b"graph {")
                except smelt.Error:
                    pass

    calls(1000)  # warm: caches, allocator pools
    before = rss_kib()
    calls(10000)
    grown = rss_kib() - before
    # 10,000 leaked outputs of 64 bytes alone would be 640 KiB plus
    # allocator overhead; a leak of any tensor or ctx per call shows
    assert grown < 2048, "RSS grew by %d KiB over 10,000 calls" % grown


def test_graph_is_not_rewritten_while_another_thread_reads_it():
    # run_reference reads the model's graph with the GIL released; while
    # it does, optimize and set_initializer (which free or rewrite that
    # graph) are refused instead of pulling it from under the reader
    m = smelt.script(SPIN)
    started = threading.Event()
    out = []

    def work():
        started.set()
        out.append(m.run_reference(np.zeros(4, np.float32), 100000)[0])

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    refused = []
    while t.is_alive():
        try:
            m.optimize(level=1)
        except RuntimeError as e:
            refused.append(str(e))
    t.join()
    np.testing.assert_allclose(out[0], np.full(4, 2.0, np.float32))
    assert all("another thread" in r for r in refused)
    m.optimize(level=1)  # free again afterwards
    np.testing.assert_allclose(m(np.zeros(4, np.float32), 3), 1.75)
