"""Loading, running and the errors of the smelt package (docs/PYTHON.md):
the 16-32-4 MLP of examples/ against its stored outputs, inputs by
position and by name, zero-copy and cast rules, malformed input."""
import os

import numpy as np
import pytest

import smelt


def mlp(examples):
    return smelt.load(os.path.join(examples, "mlp.ir"))


def test_load_and_run_matches_stored_outputs(examples):
    m = mlp(examples)
    x = np.load(os.path.join(examples, "mlp_x.npy"))
    y = np.load(os.path.join(examples, "mlp_y.npy"))
    got = m(x)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, y, atol=1e-5)
    by_name = m(x=x)
    np.testing.assert_allclose(by_name, y, atol=1e-5)
    d = m.run({"x": x})
    assert list(d) == [n for n, _, _ in m.outputs]
    np.testing.assert_allclose(d[m.outputs[0][0]], y, atol=1e-5)


def test_metadata(examples):
    m = mlp(examples)
    assert m.inputs == [("x", "f32", ("batch", 16))]
    name, dtype, shape = m.outputs[0]
    assert dtype == "f32" and shape[1] == 4
    assert m.name == "mlp" and "MatMul" in m.ops
    assert "mlp" in repr(m)


@pytest.mark.parametrize("batch", [1, 3, 17, 64])
def test_batch_sizes_against_reference(examples, batch):
    m = mlp(examples)
    x = np.random.default_rng(batch).standard_normal((batch, 16)).astype(np.float32)
    got = m(x)
    ref = m.run_reference(x)[0]
    assert got.shape == (batch, 4)
    np.testing.assert_allclose(got, ref, atol=1e-5)
    np.testing.assert_allclose(got.sum(1), np.ones(batch), atol=1e-5)


def test_load_bytes_each_kind(examples):
    with open(os.path.join(examples, "mlp.ir"), "rb") as f:
        text = f.read()
    m = smelt.load(text)
    x = np.ones((2, 16), np.float32)
    np.testing.assert_allclose(m(x), mlp(examples)(x))
    with open(os.path.join(examples, "digits_cnn.onnx"), "rb") as f:
        onnx = f.read()
    d = smelt.load(onnx)
    assert d.inputs[0][1] == "f32"
    x = np.load(os.path.join(examples, "digits_cnn_x.npy"))
    ref = smelt.load(os.path.join(examples, "digits_cnn.onnx"))(x)
    np.testing.assert_allclose(d(x), ref)


def test_inputs_are_not_copied_or_written(examples):
    m = mlp(examples)
    x = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    keep = x.copy()
    m(x)
    assert np.array_equal(x, keep)
    # a strided view (not C-contiguous) is copied, with the same result
    wide = np.random.default_rng(1).standard_normal((5, 32)).astype(np.float32)
    view = wide[:, ::2]
    np.testing.assert_allclose(m(view), m(np.ascontiguousarray(view)))
    # Fortran order too
    np.testing.assert_allclose(m(np.asfortranarray(x)), m(x))


def test_outputs_own_their_memory(examples):
    m = mlp(examples)
    x = np.ones((4, 16), np.float32)
    a = m(x)
    b = m(x * 2)
    assert not np.shares_memory(a, b)
    a[:] = 0
    assert np.all(b != 0)


def test_wrong_dtype_is_a_type_error_naming_everything(examples):
    m = mlp(examples)
    x = np.ones((2, 16), np.float64)
    with pytest.raises(TypeError) as e:
        m(x)
    msg = str(e.value)
    assert "'x'" in msg and "f32" in msg and "f64[2,16]" in msg
    np.testing.assert_allclose(m(x, cast=True), m(x.astype(np.float32)))
    with pytest.raises(TypeError, match=r"given i32\[2,16\]"):
        m(np.ones((2, 16), np.int32))
    # lists take the input's dtype
    np.testing.assert_allclose(m([[1.0] * 16]), m(np.ones((1, 16), np.float32)))


def test_wrong_shape_is_a_type_error(examples):
    m = mlp(examples)
    with pytest.raises(TypeError) as e:
        m(np.ones((2, 15), np.float32))
    assert "'x'" in str(e.value) and "f32[batch,16]" in str(e.value) \
        and "[2,15]" in str(e.value)
    with pytest.raises(TypeError):
        m(np.ones((16,), np.float32))
    p = m.compile(dims={"batch": 2})
    with pytest.raises(TypeError, match=r"f32\[2,16\].*f32\[3,16\]"):
        p(np.ones((3, 16), np.float32))


def test_argument_errors(examples):
    m = mlp(examples)
    x = np.ones((1, 16), np.float32)
    with pytest.raises(TypeError, match="missing"):
        m()
    with pytest.raises(TypeError, match="takes 1 inputs, 2 given"):
        m(x, x)
    with pytest.raises(TypeError, match="no input named 'y'"):
        m(y=x)
    with pytest.raises(TypeError, match="twice"):
        m(x, x=x)
    with pytest.raises(TypeError):
        m.run([x])


def test_parse_error_has_location(tmp_path):
    bad = tmp_path / "bad.ir"
    bad.write_text("graph g(%x: f32[2]) {\n  %y = Relu(%x\n  return %y\n}\n")
    with pytest.raises(smelt.Error) as e:
        smelt.load(str(bad))
    err = e.value
    # the call is unclosed when `return` comes, on line 3
    assert (err.file, err.line, err.column) == (str(bad), 3, 3)
    assert err.status == "parse error"
    assert str(err).startswith("%s:3:3: error:" % bad)
    assert err.message == str(err)


def test_malformed_inputs_are_errors_not_crashes(tmp_path):
    with pytest.raises(smelt.Error) as e:
        smelt.load(str(tmp_path / "missing.onnx"))
    assert e.value.status == "i/o error" and e.value.line is None
    for data in [b"\x08\x07\x12\x00\xff\xff\xff", b"\x00" * 100, b"graph {",
                 b"def f(x):\n  return x +\n", bytes(range(256))]:
        with pytest.raises(smelt.Error):
            smelt.load(data)
    (tmp_path / "empty.onnx").write_bytes(b"")
    with pytest.raises(smelt.Error):
        smelt.load(str(tmp_path / "empty.onnx"))
    with pytest.raises(ValueError):
        smelt.load(b"graph g() {}", kind="tflite")


def test_rank_above_limit(examples):
    m = mlp(examples)
    with pytest.raises((TypeError, ValueError)):
        m(np.ones((1,) * 9 + (16,), np.float32))


def test_save_and_load_back(examples, tmp_path):
    m = mlp(examples)
    x = np.random.default_rng(2).standard_normal((3, 16)).astype(np.float32)
    for name in ["m.onnx", "m.ir"]:
        m.save(str(tmp_path / name))
        back = smelt.load(str(tmp_path / name))
        np.testing.assert_allclose(back(x), m(x), atol=1e-6)
    with pytest.raises(OSError):
        m.save(str(tmp_path / "no" / "such" / "m.ir"))


def test_print_dot_svg(examples, capsys):
    m = mlp(examples)
    m.print(max_values=4)
    out = capsys.readouterr().out
    assert out.startswith("graph mlp") or "graph mlp" in out
    assert "fnv1a" in out
    assert "digraph" in m.dot()
    svg = m._repr_svg_()
    assert svg is None or "<svg" in svg


def test_optimize_and_passes(examples):
    m = mlp(examples)
    x = np.ones((2, 16), np.float32)
    before = m(x)
    report = m.optimize(level=3)
    assert isinstance(report, str) and report
    np.testing.assert_allclose(m(x), before, atol=1e-6)
    names = [p[0] for p in smelt.passes()]
    assert "cse" in names
    with pytest.raises(smelt.Error, match="no_such_pass"):
        m.optimize(disable=["cse", "no_such_pass"])


def test_compile_plan_and_session(examples):
    m = mlp(examples)
    p = m.compile(threads=2, dims={"batch": 8})
    assert p.inputs == [("x", "f32", (8, 16))]
    x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    np.testing.assert_allclose(p(x), m(x), atol=1e-6)
    s = p.session()
    np.testing.assert_allclose(s(x), m(x), atol=1e-6)
    np.testing.assert_allclose(s.run({"x": x})[p.outputs[0][0]], m(x),
                               atol=1e-6)
    st = p.stats()
    assert st["steps"] == len(p.steps()) and st["threads"] == 2
    assert "step" in p.text() or p.text()
    with pytest.raises(smelt.Error):
        m.compile(dims="batch=-3")


DTYPES_IR = """graph casts(%a: f64[n], %b: i64[n], %c: bool[n], %d: f16[n], %e: u8[n]) {
  %a32: f32[n] = Cast(%a) {to = 1}
  %b32: f32[n] = Cast(%b) {to = 1}
  %c32: f32[n] = Cast(%c) {to = 1}
  %d32: f32[n] = Cast(%d) {to = 1}
  %e32: f32[n] = Cast(%e) {to = 1}
  %s1: f32[n] = Add(%a32, %b32)
  %s2: f32[n] = Add(%s1, %c32)
  %s3: f32[n] = Add(%s2, %d32)
  %sum: f32[n] = Add(%s3, %e32)
  %neg: bool[n] = Not(%c)
  %b2: i64[n] = Mul(%b, %b)
  return %sum, %neg, %b2
}
"""


@pytest.mark.parametrize("n", [1, 6, 33])
def test_every_numpy_dtype_in_and_out(n):
    m = smelt.load(DTYPES_IR.encode())
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n)
    b = rng.integers(-50, 50, n)
    c = rng.integers(0, 2, n).astype(bool)
    d = rng.standard_normal(n).astype(np.float16)
    e = rng.integers(0, 255, n).astype(np.uint8)
    s, neg, b2 = m(a, b, c, d, e)
    assert (s.dtype, neg.dtype, b2.dtype) == (np.float32, np.bool_, np.int64)
    want = (a.astype(np.float32) + b.astype(np.float32) + c.astype(np.float32)
            + d.astype(np.float32) + e.astype(np.float32))
    np.testing.assert_allclose(s, want, rtol=1e-6, atol=1e-5)
    assert np.array_equal(neg, ~c) and np.array_equal(b2, b * b)
    with pytest.raises(TypeError, match="'b': expected dtype i64, given i32"):
        m(a, b.astype(np.int32), c, d, e)
    np.testing.assert_allclose(m(a, b.astype(np.int32), c, d, e, cast=True)[0],
                               s)


def test_no_reference_leaks(examples):
    import gc
    import sys

    m = mlp(examples)
    x = np.ones((2, 16), np.float32)
    plan = m.compile(dims={"batch": 2})
    s = plan.session()
    before = (sys.getrefcount(x), sys.getrefcount(m), sys.getrefcount(plan))
    for _ in range(100):
        m(x)
        plan(x)
        s(x)
        m.run({"x": x})
        try:
            m(x.astype(np.float64))
        except TypeError:
            pass
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(m),
            sys.getrefcount(plan)) == before
    # an output's memory is held only by its array (through a capsule)
    y = m(x)
    base = y.base
    assert type(base).__name__ == "PyCapsule"
    assert sys.getrefcount(base) == 3  # y.base, `base`, the argument
