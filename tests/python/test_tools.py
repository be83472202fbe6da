"""The package's counterparts of the CLI's verbs: check, profile, bench,
grad and quantize."""
import os

import numpy as np
import pytest

import smelt


def mlp(examples):
    return smelt.load(os.path.join(examples, "mlp.ir"))


def test_check_passes_and_reports(examples):
    m = mlp(examples)
    x = np.random.default_rng(0).standard_normal((6, 16)).astype(np.float32)
    rows = smelt.check(m, x)
    assert len(rows) == 1 and rows[0]["ok"]
    assert rows[0]["max_abs_err"] <= 1e-5


def test_profile_rows(examples):
    m = mlp(examples)
    x = np.ones((8, 16), np.float32)
    rows = m.profile(x, runs=3, frame=False)
    plan = m.compile(inputs=[x])
    assert len(rows) == len(plan.steps())
    assert all(r["ms"] >= 0 for r in rows)
    assert {r["op"] for r in rows} <= set(m.compile(inputs=[x]).steps()[i]["op"]
                                          for i in range(len(rows)))
    try:
        import pandas  # noqa: F401
        assert len(m.profile(x, runs=1)) == len(rows)
    except ImportError:
        assert isinstance(m.profile(x, runs=1), list)


def test_bench_figures(examples):
    m = mlp(examples)
    r = m.bench(np.ones((1, 16), np.float32), runs=20, warmup=2)
    assert r["runs"] == 20 and 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"]


def test_grad_matches_finite_differences(examples):
    m = smelt.load(os.path.join(examples, "mlp.ir"), dims={"batch": 2})
    j = m.grad(wrt=["x"])
    names = [n for n, _, _ in j.outputs]
    assert "loss" in names and names[-1].startswith("x.grad")
    x = np.random.default_rng(1).standard_normal((2, 16)).astype(np.float64)
    # finite differences of sum(output) in f64 through the f32 model
    outs = j(x.astype(np.float32))
    g = outs[-1]
    eps = 1e-2
    for k in [0, 5, 17, 31]:
        i, c = divmod(k, 16)
        xp, xm = x.copy(), x.copy()
        xp[i, c] += eps
        xm[i, c] -= eps
        fp = m(xp.astype(np.float32)).astype(np.float64).sum()
        fm = m(xm.astype(np.float32)).astype(np.float64).sum()
        assert abs((fp - fm) / (2 * eps) - g[i, c]) < 1e-3


def test_quantize_keeps_outputs_close(examples):
    m = mlp(examples)
    q = smelt.quantize(m)
    assert q.layers and "MatMulInteger" in q.ops
    x = np.random.default_rng(2).standard_normal((16, 16)).astype(np.float32)
    assert np.abs(q(x) - m(x)).max() < 0.05
    with pytest.raises(smelt.Error):
        m.grad(loss="no_such_value")
