"""The package's counterparts of the CLI's verbs: check, profile, bench,
grad and quantize."""
import os
import sys

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
    assert smelt.check(m, x=x, level=1)[0]["ok"]
    with pytest.raises(TypeError, match="missing"):
        smelt.check(m)
    with pytest.raises(TypeError, match="named y"):
        smelt.check(m, x, y=x)


def test_check_failure_path(examples):
    # a tolerance no output can meet (a negative rtol: softmax outputs
    # are positive) takes the failure path: smelt.Error naming the output
    m = mlp(examples)
    x = np.random.default_rng(4).standard_normal((3, 16)).astype(np.float32)
    with pytest.raises(smelt.Error, match="differs from the reference on probs"):
        smelt.check(m, x, atol=0.0, rtol=-1.0)


def test_profile_rows(examples):
    m = mlp(examples)
    x = np.ones((8, 16), np.float32)
    rows = m.profile(x, runs=3, frame=False)
    plan = m.compile(inputs=[x])
    assert len(rows) == len(plan.steps())
    assert all(r["ms"] >= 0 for r in rows)
    assert {r["op"] for r in rows} <= set(m.compile(inputs=[x]).steps()[i]["op"]
                                          for i in range(len(rows)))


PROFILE_COLUMNS = ["step", "name", "op", "kernel", "shapes", "ms", "gflops"]


@pytest.mark.parametrize("model,batch", [("mlp.ir", 8), ("mlp.ir", 3),
                                         ("digits_cnn.onnx", 2)])
def test_profile_dataframe(examples, model, batch):
    """With pandas installed (setup-deps.sh test installs it), profile()
    is a DataFrame: a row per plan step, the rows' columns and dtypes."""
    pandas = pytest.importorskip("pandas")
    path = os.path.join(examples, model)
    if not os.path.exists(path):
        pytest.skip("no examples/" + model)
    m = smelt.load(path)
    name, dtype, shape = m.inputs[0]
    dims = [batch if isinstance(d, str) or d is None else d for d in shape]
    x = np.random.default_rng(batch).standard_normal(dims).astype(np.float32)
    df = m.profile(x, runs=2)
    assert isinstance(df, pandas.DataFrame)
    steps = m.compile(inputs=[x]).steps()
    assert list(df.columns) == PROFILE_COLUMNS
    assert len(df) == len(steps)
    assert list(df["step"]) == [s["step"] for s in steps]
    assert list(df["op"]) == [s["op"] for s in steps]
    assert df["step"].dtype.kind == "i"
    assert df["ms"].dtype.kind == "f" and df["gflops"].dtype.kind == "f"
    for c in ("name", "op", "kernel", "shapes"):
        assert df[c].dtype == object and all(isinstance(v, str) for v in df[c])
    assert (df["ms"] >= 0).all() and (df["gflops"] >= 0).all()
    # frame=True asks for it by name, frame=False for the rows
    assert isinstance(m.profile(x, runs=1, frame=True), pandas.DataFrame)
    assert isinstance(m.profile(x, runs=1, frame=False), list)


def test_profile_rows_without_pandas(examples, monkeypatch):
    """Where pandas is not installed (hidden here: a None entry in
    sys.modules makes its import fail), profile() gives the rows."""
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError):
        import pandas  # noqa: F401
    m = mlp(examples)
    x = np.ones((5, 16), np.float32)
    rows = m.profile(x, runs=2)
    assert isinstance(rows, list)
    assert len(rows) == len(m.compile(inputs=[x]).steps())
    assert all(list(r) == PROFILE_COLUMNS for r in rows)
    assert all(isinstance(r["ms"], float) for r in rows)
    # frame=True needs pandas: the ImportError says so
    with pytest.raises(ImportError):
        m.profile(x, runs=1, frame=True)


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


def torch_and_smelt_train(optimizer, loss, seed, **kw):
    """Trains a small MLP with torch.optim and with smelt.train from the
    same weights on the same batches (no shuffling) and returns both
    models' predictions on fresh inputs."""
    if os.environ.get("SMELT_SANITIZE") == "1":
        pytest.skip("PyTorch under a preloaded ASan fails ASan's own check "
                    "in __cxa_throw (its C++ exceptions), not in Smelt")
    torch = pytest.importorskip("torch")
    torch.manual_seed(seed)
    classes = 3 if loss == "cross_entropy" else 2
    net = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(),
                              torch.nn.Linear(7, classes))
    m = smelt.from_torch(net, torch.randn(4, 5), input_names=["x"],
                         dynamic_axes={"x": {0: "batch"}})
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((24, 5)).astype(np.float32)
    if loss == "cross_entropy":
        y = rng.integers(0, classes, 24).astype(np.int64)
        crit = torch.nn.CrossEntropyLoss()
    else:
        y = rng.standard_normal((24, classes)).astype(np.float32)
        crit = torch.nn.MSELoss()
    lr = 0.05
    trained, losses = smelt.train(m, x, y, loss=loss, optimizer=optimizer,
                                  lr=lr, epochs=2, batch_size=6,
                                  shuffle=False, **kw)
    opt_kw = {k: v for k, v in kw.items() if k in ("momentum", "nesterov",
                                                   "weight_decay")}
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam,
           "adamw": torch.optim.AdamW}[optimizer]
    opt = cls(net.parameters(), lr=lr, **opt_kw)
    want = []
    for _ in range(2):
        for b in range(4):
            xb = torch.from_numpy(x[b * 6:(b + 1) * 6])
            yb = torch.from_numpy(y[b * 6:(b + 1) * 6])
            opt.zero_grad()
            out = crit(net(xb), yb)
            out.backward()
            opt.step()
            want.append(float(out))
    np.testing.assert_allclose(losses, want, rtol=1e-4, atol=1e-5)
    probe = rng.standard_normal((9, 5)).astype(np.float32)
    with torch.no_grad():
        ref = net(torch.from_numpy(probe)).numpy()
    return trained(probe), ref, m(probe)


@pytest.mark.parametrize("optimizer,loss,kw", [
    ("sgd", "mse", {}),
    ("sgd", "mse", {"momentum": 0.9, "nesterov": True}),
    ("adam", "cross_entropy", {}),
    ("adamw", "mse", {"weight_decay": 0.1}),
])
def test_train_matches_torch_optim(optimizer, loss, kw):
    got, want, before = torch_and_smelt_train(optimizer, loss, 5, **kw)
    assert np.abs(got - want).max() < 1e-4
    assert np.abs(before - want).max() > 1e-3  # the weights did change


def test_train_bad_arguments(examples):
    m = mlp(examples)
    x = np.ones((8, 16), np.float32)
    y = np.ones((8, 4), np.float32)
    with pytest.raises(ValueError):
        smelt.train(m, x, y[:5])
    with pytest.raises(ValueError):
        smelt.train(m, x, y, batch_size=9)
    with pytest.raises(ValueError):
        smelt.train(m, x, y, optimizer="lbfgs")
    with pytest.raises(smelt.Error):
        smelt.train(m, x, y, loss="hinge", batch_size=4)
    with pytest.raises(smelt.Error):
        smelt.train(m, x, y, freeze="*", batch_size=4)
    with pytest.raises(TypeError):
        smelt.train(m, x.astype(np.float64), y, batch_size=4)
    trained, losses = smelt.train(m, x.astype(np.float64), y, batch_size=4,
                                  cast=True, lr=0.1, epochs=3)
    assert len(losses) == 6 and losses[-1] < losses[0]
    with pytest.raises(ValueError):
        smelt.train(m, x, y, val_fraction=1.0)


def test_train_holds_out_validation_samples(examples):
    m = mlp(examples)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 16)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[(x[:, 0] > 0).astype(int)]
    trained, losses = smelt.train(m, x, y, batch_size=8, epochs=4, lr=0.05,
                                  optimizer="adam", val_fraction=0.2, seed=1)
    # 32 training samples: 4 full batches an epoch
    assert len(losses) == 16 and len(trained.val_losses) == 4
    # the last held-out loss is the trained model's mse on those samples
    # (drawn from the seed as smelt train draws them)
    held = losses.val_index
    assert len(held) == 8 and len(set(held)) == 8
    mse = float(((trained(x[held]) - y[held]) ** 2).mean())
    assert abs(trained.val_losses[-1] - mse) < 1e-6
    assert trained.val_losses[-1] < trained.val_losses[0]
