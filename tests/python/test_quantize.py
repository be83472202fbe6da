"""smelt.quantize with the CLI's options (issue 19, docs/PYTHON.md):
the per-layer report and the tolerance fallback (smelt_quantize_report)
against `smelt quantize --report`, QAT then a few training steps then
convert against `smelt quantize --qat` / `--convert`'s files, and bad
arguments."""
import os
import subprocess

import numpy as np
import pytest

import smelt

BUILD = os.environ.get("SMELT_BUILD_DIR")


def mlp(examples):
    return smelt.load(os.path.join(examples, "mlp.ir"))


def data(n, seed):
    return np.random.default_rng(seed).standard_normal((n, 16)).astype(
        np.float32)


def cli(*args):
    exe = os.path.join(BUILD or "", "smelt")
    if not BUILD or not os.path.exists(exe):
        pytest.skip("the smelt binary (SMELT_BUILD_DIR) is needed")
    r = subprocess.run([exe] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("per_channel,n", [(False, 5), (True, 9)])
def test_report_rows_match_cli(examples, tmp_path, per_channel, n):
    m = mlp(examples)
    x = data(n, n)
    q = smelt.quantize(m, per_channel=per_channel, inputs=x, report=True,
                       frame=False)
    assert [r["layer"] for r in q.report] == q.layers == ["fc1", "fc2"]
    for r in q.report:
        assert 0 < r["mse"] < 1e-3 and 0.99 < r["cosine"] <= 1 + 1e-12
        assert r["kept_f32"] is False
    assert q.report_total["mse"] > 0
    # the CLI's table, from the same library call, on the same data
    model = str(tmp_path / "mlp.onnx")
    m.save(model)
    np.save(str(tmp_path / "x.npy"), x)
    out = str(tmp_path / "q.onnx")
    args = ["quantize", model, "-o", out, "--dynamic", "--report",
            "--input", "x=" + str(tmp_path / "x.npy")]
    text = cli(*(args + (["--per-channel"] if per_channel else [])))
    rows = [l.split() for l in text.splitlines()[1:3]]
    for r, (name, mse, cos, kept) in zip(q.report, rows):
        assert r["layer"] == name and kept == "int8"
        assert abs(r["mse"] - float(mse)) <= 1e-5 * r["mse"]
        assert abs(r["cosine"] - float(cos)) <= 1e-6
    assert abs(float(text.splitlines()[3].split()[-2]) -
               q.report_total["mse"]) <= 1e-5 * q.report_total["mse"]
    # the quantized model is the CLI's file
    mine = str(tmp_path / "mine.onnx")
    q.save(mine)
    with open(mine, "rb") as a, open(out, "rb") as b:
        assert a.read() == b.read()


def test_report_frame(examples):
    pandas = pytest.importorskip("pandas")
    m = mlp(examples)
    q = smelt.quantize(m, inputs={"x": data(4, 1)}, report=True)
    assert isinstance(q.report, pandas.DataFrame)
    assert list(q.report.columns) == ["layer", "mse", "cosine", "kept_f32"]
    assert list(q.report["layer"]) == ["fc1", "fc2"]


def test_tolerance_keeps_a_layer_f32(examples):
    m = mlp(examples)
    x = data(7, 3)
    r = smelt.quantize(m, inputs=[x], report=True, frame=False).report
    worst = max(r, key=lambda row: row["mse"])
    tol = worst["mse"] * 0.999
    q = smelt.quantize(m, inputs=x, tolerance=tol, frame=False)
    kept = [row["layer"] for row in q.report if row["kept_f32"]]
    assert worst["layer"] in kept
    assert kept == [row["layer"] for row in r if row["mse"] > tol]
    assert sorted(q.layers + kept) == ["fc1", "fc2"]
    assert q.ops.count("MatMulInteger") == len(q.layers)
    assert q.ops.count("MatMul") == len(kept)
    # the model quantized with those layers excluded is the same graph
    e = smelt.quantize(m, exclude=kept)
    assert e.layers == q.layers and e.text() == q.text()
    # tolerance 0: every layer adds some error, all stay f32
    q0 = smelt.quantize(m, inputs=x, tolerance=0)
    assert q0.layers == [] and "MatMulInteger" not in q0.ops
    np.testing.assert_array_equal(q0(x), m(x))
    assert q0.report_total["mse"] == 0


def test_qat_train_convert_match_cli(examples, tmp_path):
    m = mlp(examples)
    x = data(32, 4)
    np.save(str(tmp_path / "x.npy"), x)
    model = str(tmp_path / "mlp.onnx")
    m.save(model)
    t = smelt.quantize(m, qat=True, inputs=x, per_channel=True,
                       observer="percentile", percentile=99.5)
    assert t.layers == ["fc1", "fc2"]
    assert t.ops.count("QuantizeLinear") == 4
    qat_cli = str(tmp_path / "qat.onnx")
    cli("quantize", model, "-o", qat_cli, "--qat", "--per-channel",
        "--observer", "percentile", "--percentile", "99.5",
        "--input", "x=" + str(tmp_path / "x.npy"))
    np.testing.assert_array_equal(smelt.load(qat_cli)(x), t(x))
    # a few training steps move the weights and scales
    target = np.eye(4, dtype=np.float32)[np.arange(32) % 4]
    trained, hist = smelt.train(t, x, target, loss="mse", lr=0.05,
                                epochs=2, batch_size=8, seed=1)
    assert len(hist) == 8
    assert not np.array_equal(trained(x), t(x))
    c = smelt.quantize(trained, convert=True)
    assert (c.weights, c.activations) == (2, 2)
    assert "QuantizeLinear" in c.ops  # the activations' pairs stay
    trained_path = str(tmp_path / "trained.onnx")
    trained.save(trained_path)
    int8_cli = str(tmp_path / "int8.onnx")
    cli("quantize", trained_path, "-o", int8_cli, "--convert")
    mine = str(tmp_path / "mine.onnx")
    c.save(mine)
    with open(mine, "rb") as a, open(int8_cli, "rb") as b:
        assert a.read() == b.read()
    # the int8 model computes what the trained QAT model does, up to a
    # quantization level of the weights
    assert np.abs(c(x) - trained(x)).max() < 0.05


def test_errors(examples):
    m = mlp(examples)
    x = data(3, 5)
    with pytest.raises(smelt.Error, match="no fake-quantize pair"):
        smelt.quantize(m, convert=True)
    with pytest.raises(smelt.Error, match="tolerance is NaN"):
        smelt.quantize(m, inputs=x, tolerance=float("nan"))
    with pytest.raises(smelt.Error):
        smelt.quantize(m, inputs=np.zeros((2, 5), np.float32), report=True)
    with pytest.raises(TypeError, match="takes 1 inputs, 2 given"):
        smelt.quantize(m, inputs=[x, x], report=True)
    with pytest.raises(TypeError, match="no input named"):
        smelt.quantize(m, inputs={"y": x}, report=True)
    for kw, msg in [({"report": True}, "needs calibration inputs"),
                    ({"qat": True}, "needs calibration inputs"),
                    ({"inputs": x}, "inputs are for"),
                    ({"inputs": x, "tolerance": -1}, ">= 0"),
                    ({"qat": True, "convert": True}, "not both"),
                    ({"convert": True, "conv": True}, "as it is"),
                    ({"observer": "minmax"}, "qat's"),
                    ({"qat": True, "inputs": x, "only": "fc1"}, "dynamic"),
                    ({"qat": True, "inputs": x, "percentile": 99.0},
                     "observer='percentile'")]:
        with pytest.raises(ValueError, match=msg):
            smelt.quantize(m, **kw)
    with pytest.raises(ValueError, match="observer"):
        smelt.quantize(m, qat=True, inputs=x, observer="mean")
    with pytest.raises(smelt.Error):
        smelt.quantize(m, qat=True, inputs=x, observer="percentile",
                       percentile=20.0)
