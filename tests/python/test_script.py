"""@smelt.script: functions compiled from their own source, with loops
and branches, and diagnostics at the Python file's line and column."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import smelt
from smelt import Tensor


@smelt.script
def damped(x: Tensor[f32, batch, 8], steps: int, limit: float) -> Tensor:
    for i in range(steps):
        x = x * 0.9 + 0.1
        if x.sum() > limit:
            x = x - 1.0
        else:
            x = x + 0.5
    return x


def damped_numpy(x, steps, limit):
    for _ in range(steps):
        x = x * np.float32(0.9) + np.float32(0.1)
        if x.sum() > limit:
            x = x - np.float32(1.0)
        else:
            x = x + np.float32(0.5)
    return x


@pytest.mark.parametrize("batch,steps,limit", [(1, 0, 0.0), (2, 5, 3.0),
                                                (5, 17, 10.0), (3, 40, -1.0)])
def test_loop_and_branch(batch, steps, limit):
    x = np.random.default_rng(steps).standard_normal((batch, 8)).astype(np.float32)
    got = damped(x, steps, limit)
    np.testing.assert_allclose(got, damped_numpy(x, steps, limit), rtol=1e-5,
                               atol=1e-5)
    assert "Loop" in damped.ops and "If" in damped.ops


def test_decorated_function_is_a_model():
    assert isinstance(damped, smelt.Model)
    assert [n for n, _, _ in damped.inputs] == ["x", "steps", "limit"]
    assert damped.inputs[0][2] == ("batch", 8)
    assert inspect.isfunction(damped.__wrapped__)


def test_from_source_string():
    m = smelt.script("def twice(x: Tensor) -> Tensor:\n    return x * 2.0\n")
    np.testing.assert_allclose(m(np.arange(3, dtype=np.float32)),
                               [0.0, 2.0, 4.0])
    m = smelt.script("def a(x):\n    return x + 1.0\n\ndef b(x):\n"
                     "    return x - 1.0\n", fn="a")
    np.testing.assert_allclose(m(np.zeros(2, np.float32)), [1.0, 1.0])


def _where(fn):
    lines, first = inspect.getsourcelines(fn)
    return first, lines


def test_error_points_at_the_python_file():
    def bad(x: Tensor) -> Tensor:
        y = x + undefined_name  # noqa: F821
        return y

    with pytest.raises(smelt.Error) as e:
        smelt.script(bad)
    first, lines = _where(bad)
    err = e.value
    assert err.file == __file__
    assert err.line == first + 1
    text = lines[1]
    assert err.column == text.index("undefined_name") + 1
    assert str(err).startswith("%s:%d:%d:" % (__file__, err.line, err.column))


def test_error_at_top_level_function():
    with pytest.raises(smelt.Error) as e:
        smelt.script(top_level_bad)
    first, lines = _where(top_level_bad)
    assert e.value.line == first + 2
    assert e.value.column == lines[2].index("{") + 1
    # the source line and a caret under the column follow
    assert lines[2].rstrip() in str(e.value) and "\n        ^" in str(e.value)


def top_level_bad(x: Tensor) -> Tensor:
    y = x
    z = {1: 2}[1]
    return y + z


def test_script_file_by_path_and_function(tmp_path):
    src = ("SCALE = 3.0\n\n"
           "def helper(x: Tensor) -> Tensor:\n"
           "    return x * SCALE\n\n"
           "def main(x: Tensor, k: int) -> Tensor:\n"
           "    y = helper(x)\n"
           "    while k > 0:\n"
           "        y = y - 1.0\n"
           "        k = k - 1\n"
           "    return y\n")
    path = tmp_path / "model.py"
    path.write_text(src)
    x = np.arange(4, dtype=np.float32)
    for k in [0, 1, 5]:
        got = smelt.load(str(path), fn="main")(x, k)
        np.testing.assert_allclose(got, x * 3.0 - k)
    np.testing.assert_allclose(smelt.load(str(path), fn="helper")(x), x * 3.0)
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    return x +\n")
    with pytest.raises(smelt.Error) as e:
        smelt.load(str(bad))
    assert e.value.file == str(bad) and e.value.line == 2
