"""smelt.train through the library's trainer (docs/TRAINING.md): the same
weights as `smelt train` for the same options and seed, bit for bit; a
run stopped by its progress callback or by Ctrl-C and resumed from its
checkpoint ends where an uninterrupted run ends; the history; errors."""
import os
import signal
import subprocess

import numpy as np
import pytest

import smelt

from conftest import SRC


def mlp_ir(sizes, seed):
    """A tanh MLP over %x: f32[batch, sizes[0]] as text IR, seeded."""
    rng = np.random.default_rng(seed)
    lines = ["graph mlp(%%x: f32[batch,%d]) {" % sizes[0]]
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        w = rng.standard_normal(a * b) / np.sqrt(a)
        lines.append("  %%w%d: f32[%d,%d] = const [%s]" % (
            i, a, b, ", ".join("%.6f" % v for v in w)))
        lines.append("  %%b%d: f32[%d] = const [%s]" % (
            i, b, ", ".join("%.3f" % v for v in rng.standard_normal(b) / 10)))
    h = "%x"
    for i, b in enumerate(sizes[1:]):
        lines.append("  %%m%d: f32[batch,%d] = MatMul(%s, %%w%d)" % (i, b, h, i))
        lines.append("  %%a%d: f32[batch,%d] = Add(%%m%d, %%b%d)" % (i, b, i, i))
        h = "%%a%d" % i
        if i + 2 < len(sizes):
            lines.append("  %%t%d: f32[batch,%d] = Tanh(%s)" % (i, b, h))
            h = "%%t%d" % i
    lines.append("  %%y: f32[batch,%d] = Identity(%s)" % (sizes[-1], h))
    lines += ["  return %y", "}", ""]
    return "\n".join(lines)


def data(n, features, outputs, kind, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features)).astype(np.float32)
    if kind == "cross_entropy":
        y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5)
    else:
        y = np.tanh(x[:, :outputs] * 2).astype(np.float32)
    return x, y


def weights(m):
    return {n: m.get_initializer(n) for n, _ in m.initializers}


def smelt_binary():
    for d in (os.environ.get("SMELT_BUILD_DIR"), os.path.join(SRC, "build")):
        if d and os.path.exists(os.path.join(d, "smelt")):
            return os.path.join(d, "smelt")
    pytest.skip("no smelt binary (SMELT_BUILD_DIR)")


CONFIGS = [
    # (sizes, loss, python options, CLI flags)
    ([5, 9, 3], "mse",
     dict(optimizer="adam", lr=0.01, warmup=3, schedule="cosine", epochs=3,
          batch_size=8, seed=7, val_fraction=0.25, clip_norm=0.5),
     "--optimizer adam --lr 0.01 --warmup 3 --schedule cosine --epochs 3 "
     "--batch-size 8 --seed 7 --val-fraction 0.25 --clip-norm 0.5"),
    ([6, 7, 4, 3], "cross_entropy",
     dict(optimizer="sgd", lr=0.1, momentum=0.9, nesterov=True, epochs=2,
          batch_size=5, seed=3, freeze="b*", weight_decay=0.01),
     "--optimizer sgd --lr 0.1 --momentum 0.9 --nesterov --epochs 2 "
     "--batch-size 5 --seed 3 --freeze b* --weight-decay 0.01"),
    ([4, 8, 2], "mse",
     dict(optimizer="adamw", lr=0.02, epochs=2, batch_size=7, seed=11,
          val_fraction=0.1),
     "--optimizer adamw --lr 0.02 --epochs 2 --batch-size 7 --seed 11 "
     "--val-fraction 0.1"),
]


@pytest.mark.parametrize("sizes,loss,kw,flags", CONFIGS)
def test_same_weights_as_the_cli(tmp_path, sizes, loss, kw, flags):
    exe = smelt_binary()
    ir = tmp_path / "m.ir"
    ir.write_text(mlp_ir(sizes, len(sizes)))
    x, y = data(61, sizes[0], sizes[-1], loss, 5)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    out = tmp_path / "out.onnx"
    r = subprocess.run([exe, "train", str(ir), "--input", "x=x.npy",
                        "--target", "y.npy", "--loss", loss, "--save",
                        str(out)] + flags.split(),
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = smelt.load(ir)
    trained, hist = smelt.train(m, x, y, loss=loss, **kw)
    cli = weights(smelt.load(out))
    got = weights(trained)
    assert set(got) == set(cli)
    for n in got:
        assert got[n].tobytes() == cli[n].tobytes(), n
    before = weights(m)
    frozen = [n for n in got if kw.get("freeze") and n.startswith("b")]
    for n in got:
        same = np.array_equal(got[n], before[n])
        assert same == (n in frozen), n
    # the CLI's last epoch line holds the history's last epoch's figures
    last = [ln for ln in r.stdout.splitlines()
            if ln.startswith("epoch %d/%d:" % (kw["epochs"], kw["epochs"]))]
    assert last and ("train loss %.6g" % hist.epochs[-1]["loss"]) in last[0]


def resume_setup(tmp_path):
    model = smelt.load(mlp_ir([5, 8, 2], 2).encode())
    x, y = data(50, 5, 2, "mse", 9)
    kw = dict(optimizer="adam", lr=0.02, warmup=2, schedule="cosine",
              epochs=3, batch_size=6, seed=4, val_fraction=0.2,
              checkpoint_every=3)
    return model, x, y, kw


def test_stop_by_callback_and_resume_bit_exact(tmp_path):
    model, x, y, kw = resume_setup(tmp_path)
    full, hist_a = smelt.train(model, x, y, checkpoint=tmp_path / "A", **kw)
    assert len(hist_a) == 18 and hist_a.total_steps == 18
    assert not hist_a.cancelled and len(hist_a.epochs) == 3
    # a run stopped by its callback after step 8 (epoch 2): the last
    # checkpoint is step 6's, the weights those of step 8
    seen = []

    def stop_at_8(p):
        seen.append((p["event"], p["step"]))
        return p["event"] == "step" and p["step"] == 8

    part, hist_b = smelt.train(model, x, y, checkpoint=tmp_path / "B",
                               progress=stop_at_8, **kw)
    assert hist_b.cancelled and len(hist_b) == 8 and hist_b.step == 8
    assert hist_b.checkpoint_step == 6
    assert ("epoch", 6) in seen and seen[-1] == ("step", 8)
    assert hist_b[:] == hist_a[:8]
    assert not all(np.array_equal(a, b) for a, b in
                   zip(weights(part).values(), weights(full).values()))
    # resumed: from step 6, the same 18 steps' end, byte for byte
    done, hist_c = smelt.train(model, x, y, checkpoint=tmp_path / "B",
                               resume=True, **kw)
    assert hist_c.resumed == 1 and len(hist_c) == 12
    assert hist_c[:] == hist_a[6:]
    for n, w in weights(full).items():
        assert weights(done)[n].tobytes() == w.tobytes(), n
    a = (tmp_path / "A" / "checkpoint.smck").read_bytes()
    b = (tmp_path / "B" / "checkpoint.smck").read_bytes()
    assert a == b


def test_ctrl_c_keeps_the_checkpoint(tmp_path):
    model, x, y, kw = resume_setup(tmp_path)
    full, _ = smelt.train(model, x, y, checkpoint=tmp_path / "A", **kw)

    def interrupt_at_10(p):
        if p["event"] == "step" and p["step"] == 10:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        smelt.train(model, x, y, checkpoint=tmp_path / "C",
                    progress=interrupt_at_10, **kw)
    ck = tmp_path / "C" / "checkpoint.smck"
    assert ck.exists()
    assert not [f for f in os.listdir(tmp_path / "C") if "tmp" in f]
    done, h = smelt.train(model, x, y, checkpoint=tmp_path / "C",
                          resume=True, **kw)
    assert h.resumed == 1 and h.step == 18 and len(h) == 18 - 9
    for n, w in weights(full).items():
        assert weights(done)[n].tobytes() == w.tobytes(), n


def test_ctrl_c_from_another_thread(tmp_path):
    # SIGINT sent while the run goes on (the GIL released): it lands at a
    # step boundary or inside a step, KeyboardInterrupt is raised, and
    # the checkpoint left resumes to the uninterrupted run's weights
    import threading
    model, x, y, kw = resume_setup(tmp_path)
    kw.update(epochs=20, batch_size=2, checkpoint_every=50)  # 400 steps
    full, _ = smelt.train(model, x, y, checkpoint=tmp_path / "A", **kw)
    threads = []

    def at_step(p):
        # the signal lands wherever the main thread is by then: this
        # callback, a step (polled), or the next step's boundary
        if p["event"] == "step" and p["step"] == 25:  # after a checkpoint
            th = threading.Thread(
                target=lambda: os.kill(os.getpid(), signal.SIGINT))
            threads.append(th)
            th.start()

    with pytest.raises(KeyboardInterrupt):
        smelt.train(model, x, y, checkpoint=tmp_path / "D",
                    progress=at_step, **kw)
    threads[0].join()
    done, h = smelt.train(model, x, y, checkpoint=tmp_path / "D",
                          resume=True, **kw)
    assert h.resumed == 1 and h.step == 400 and len(h) < 400
    for n, w in weights(full).items():
        assert weights(done)[n].tobytes() == w.tobytes(), n


def test_resume_without_a_checkpoint_starts_at_step_0(tmp_path):
    model, x, y, kw = resume_setup(tmp_path)
    kw["epochs"] = 1
    _, h = smelt.train(model, x, y, checkpoint=tmp_path / "new",
                       resume=True, **kw)
    assert h.resumed == -1 and len(h) == 6
    # a checkpoint of another set-up is refused
    kw["batch_size"] = 4
    with pytest.raises(smelt.Error, match="another set-up"):
        smelt.train(model, x, y, checkpoint=tmp_path / "new", resume=True,
                    **kw)


def test_history_and_progress_lines(capsys):
    model = smelt.load(mlp_ir([6, 10, 3], 1).encode())
    x, y = data(90, 6, 3, "cross_entropy", 2)
    trained, h = smelt.train(model, x, y, loss="cross_entropy",
                             optimizer="adam", lr=0.05, epochs=4,
                             batch_size=16, val_fraction=0.2, seed=1,
                             progress=True, log_every=2)
    lines = capsys.readouterr().out.splitlines()
    assert "epoch 1/4  step 2/16  loss " in lines[0]
    assert sum(ln.startswith("epoch 4/4: train loss") for ln in lines) == 1
    assert len(h) == 16 and len(h.steps) == 16 and len(h.epochs) == 4
    assert h.steps[5] == {"step": 6, "epoch": 1, "loss": h[5],
                          "accuracy": h.steps[5]["accuracy"]}
    assert all(0 <= s["accuracy"] <= 1 for s in h.steps)
    e = h.epochs[-1]
    assert e["epoch"] == 3 and e["samples_per_s"] > 0
    assert e["accuracy"] > h.epochs[0]["accuracy"]
    # the validation figures are the trained model's on the held-out rows
    held = np.array(h.val_index)
    assert len(held) == 18
    pred = trained(x[held])
    acc = float((pred.argmax(1) == y[held]).mean())
    assert abs(e["val_accuracy"] - acc) < 1e-12
    assert h.val_losses == [ep["val_loss"] for ep in h.epochs]
    # mse judges nothing: its accuracy is NaN
    _, h2 = smelt.train(model, x, np.eye(3, dtype=np.float32)[y],
                        batch_size=30, epochs=1)
    assert all(np.isnan(s["accuracy"]) for s in h2.steps)


def test_errors():
    model = smelt.load(mlp_ir([4, 5, 2], 3).encode())
    x, y = data(20, 4, 2, "mse", 1)
    with pytest.raises(smelt.Error, match="hinge"):
        smelt.train(model, x, y, loss="hinge", batch_size=4)
    with pytest.raises(smelt.Error, match="target"):
        smelt.train(model, x, y[:, :1].copy(), batch_size=4)
    with pytest.raises(smelt.Error, match="class indices"):
        smelt.train(model, x, y, loss="cross_entropy", batch_size=4)
    with pytest.raises(TypeError, match="'x'"):
        smelt.train(model, x.astype(np.float64), y, batch_size=4)
    with pytest.raises(TypeError, match="2 given"):
        smelt.train(model, [x, x], y, batch_size=4)
    with pytest.raises(TypeError):
        smelt.train(model, x, y, batch_size=4, progress="yes")
    with pytest.raises(smelt.Error, match="checkpoint_dir"):
        smelt.train(model, x, y, batch_size=4, resume=True)
    with pytest.raises(smelt.Error, match="nothing to train"):
        smelt.train(model, x, y, batch_size=4, freeze="w*,b*")
    # an exception from the callback propagates; the run stops there
    calls = []

    def boom(p):
        calls.append(p["step"])
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        smelt.train(model, x, y, batch_size=4, epochs=3, progress=boom)
    assert calls == [1]
    # a NaN loss stops with the step named
    with pytest.raises(smelt.Error, match="at step"):
        smelt.train(model, x * 1e30, y, batch_size=4, lr=1e30, epochs=3)
