"""Smelt for Python: load ONNX files, text IR, script functions and
PyTorch modules, optimize and compile them, and run them on numpy arrays.

The work is done by the C library through its public API (the extension
module smelt._smelt); this layer adds what is easier in Python: taking a
function's source with inspect, exporting a torch.nn.Module, timing loops,
tables and SVG. See docs/PYTHON.md.
"""
import inspect
import io
import math
import os
import shutil
import subprocess
import textwrap
import time

from . import _smelt
from ._smelt import Error, Session

__all__ = ["Error", "Model", "Plan", "Session", "Tensor", "load", "script",
           "from_torch", "check", "grad", "quantize", "train", "History",
           "passes"]
__version__ = _smelt.__version__


class _TensorMeta(type):
    def __getitem__(cls, item):
        return cls


class Tensor(metaclass=_TensorMeta):
    """The annotation of tensor parameters of script functions:
    `def f(x: Tensor) -> Tensor`. `Tensor[f32, batch, 4]` is accepted too
    (with `from __future__ import annotations`, so that Python does not
    evaluate the names inside)."""


def _frame(rows):
    """rows as a pandas DataFrame when pandas is installed, else rows."""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


class _Runner:
    """What models and plans share: timing and profiling runs."""

    def _plan_for(self, inputs, threads):
        raise NotImplementedError

    def bench(self, *inputs, runs=100, warmup=10, threads=1, cast=False):
        """Times `runs` calls on one session after `warmup` calls; returns
        a dict of milliseconds (mean, median, min, max) and runs."""
        plan = self._plan_for(inputs, threads)
        s = plan.session()
        for _ in range(warmup):
            s(*inputs, cast=cast)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            s(*inputs, cast=cast)
            times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        return {"runs": runs, "mean_ms": sum(times) / len(times),
                "median_ms": times[len(times) // 2], "min_ms": times[0],
                "max_ms": times[-1]}

    def profile(self, *inputs, runs=10, threads=1, cast=False, frame=None):
        """Per-step times over `runs` profiled runs: one row per step
        (step, name, op, kernel, shapes, ms as the mean over the runs,
        GFLOP/s); a pandas DataFrame when pandas is installed (frame=None)
        or asked for (frame=True), the list of dicts with frame=False."""
        plan = self._plan_for(inputs, threads)
        s = plan.session()
        s.set_profiling(True)
        steps = plan.steps()
        total = [0.0] * len(steps)
        for _ in range(max(1, runs)):
            s(*inputs, cast=cast)
            for i, (a, b) in enumerate(s.step_times()):
                total[i] += b - a
        rows = []
        for st, t in zip(steps, total):
            ms = t / max(1, runs)
            rows.append({"step": st["step"], "name": st["name"],
                         "op": st["op"], "kernel": st["kernel"],
                         "shapes": st["shapes"], "ms": ms,
                         "gflops": st["flops"] / (ms * 1e6) if ms > 0 else 0.0})
        if frame is False:
            return rows
        if frame:
            import pandas
            return pandas.DataFrame(rows)
        return _frame(rows)


class Plan(_smelt.Plan, _Runner):
    """A compiled plan (Model.compile): call it with arrays; `session()`
    gives one thread its own run context."""

    def _plan_for(self, inputs, threads):
        return self

    def __repr__(self):
        ins = ", ".join("%s: %s%s" % (n, d, list(s) if s is not None else "")
                        for n, d, s in self.inputs)
        return "<smelt.Plan (%s), %d steps>" % (ins, len(self.steps()))


class Model(_smelt.Model, _Runner):
    """A graph: call it with arrays (m(x) or m.run({"x": x})), optimize,
    compile, save, print."""

    def _plan_for(self, inputs, threads):
        return self.compile(threads=threads, inputs=list(inputs))

    def optimize(self, level=3, disable=None, passes=None):
        """Rewrites the graph with the -O`level` pipeline, less the passes
        in `disable` (or exactly `passes`); returns the report table."""
        return super().optimize(level, _names(disable), _names(passes))

    def compile(self, threads=1, dims=None, level=3, disable=None,
                reference=False, timeout_ms=0, isa=None, memory_budget=0,
                inputs=None):
        """A Plan for concrete shapes: the declared ones with `dims` bound
        ({"batch": 8}), or those of example `inputs`."""
        return super().compile(threads, _dims(dims), level, _names(disable),
                               reference, timeout_ms, isa, memory_budget,
                               inputs)

    def print(self, max_values=None):
        """Prints the IR (big constants summed up with max_values)."""
        print(self.text(max_values) if max_values is not None
              else self.text(), end="")

    def _repr_svg_(self):
        """The graph as SVG for Jupyter (Graphviz's dot), or None."""
        dot = shutil.which("dot")
        if not dot:
            return None
        r = subprocess.run([dot, "-Tsvg"], input=self.dot().encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return r.stdout.decode() if r.returncode == 0 else None

    def grad(self, loss=None, wrt=None, reduce="sum",
             params_as_inputs=False):
        """The joint forward and backward graph (smelt grad): the model's
        outputs, the loss, then one gradient per wrt value."""
        return self._grad(loss=loss, wrt=wrt, reduce=reduce,
                          params_as_inputs=params_as_inputs)

    def quantize(self, per_channel=False, conv=False, exclude=None,
                 only=None, inputs=None, report=False, tolerance=None,
                 qat=False, observer=None, percentile=None, convert=False,
                 frame=None):
        """smelt quantize as a method: see smelt.quantize."""
        return quantize(self, per_channel=per_channel, conv=conv,
                        exclude=exclude, only=only, inputs=inputs,
                        report=report, tolerance=tolerance, qat=qat,
                        observer=observer, percentile=percentile,
                        convert=convert, frame=frame)

    def __repr__(self):
        ins = ", ".join("%s: %s%s" % (n, d, list(s) if s is not None else "")
                        for n, d, s in self.inputs)
        return "<smelt.Model %s(%s), %d nodes>" % (self.name, ins,
                                                    len(self.ops))


_smelt._set_classes(Model, Plan)


def _names(v):
    if v is None or isinstance(v, str):
        return v
    return ",".join(v)


def _dims(dims):
    if dims is None or isinstance(dims, str):
        return dims
    return ",".join("%s=%d" % (k, v) for k, v in dims.items())


def _sniff(data):
    """The kind of a model held in bytes: text IR, script, else ONNX."""
    head = data[:4096].lstrip()
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return "onnx"
    for line in text.split("\n"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("graph ") or line.startswith("graph\t"):
            return "ir"
        if line.startswith(("def ", "import ", "from ", "@")):
            return "script"
        break
    return "onnx"


def load(path_or_bytes, dims=None, fn=None, kind=None):
    """A Model from a file (.onnx; .py: a script; else text IR) or from
    bytes (the kind sniffed: text IR, script, else ONNX). dims binds
    symbolic sizes ({"batch": 1}); fn names a script's function."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        return _smelt.load_bytes(data, kind or _sniff(data), "<bytes>", fn,
                                 _dims(dims))
    return _smelt.load_file(os.fspath(path_or_bytes), kind, fn, _dims(dims))


def passes():
    """The optimizer's passes: (name, lowest -O level, summary)."""
    return _smelt.passes()


def _script_function(f, dims):
    """Compiles a Python function written in the script language: its own
    source (decorators blanked out, so the rest is untouched), preceded by
    blank lines, so that diagnostics give the Python file's line; the
    column is shifted back by the indentation taken off."""
    filename = inspect.getsourcefile(f) or "<script>"
    try:
        lines, first = inspect.getsourcelines(f)
    except (OSError, TypeError) as e:
        raise TypeError("smelt.script: the source of %s is not available "
                        "(%s); pass the source as a string" % (f.__name__, e))
    indent = len(lines[0]) - len(lines[0].lstrip())
    body = textwrap.dedent("".join(lines)).split("\n")
    i = 0
    while i < len(body) and not body[i].lstrip().startswith("def "):
        body[i] = ""
        i += 1
    source = "\n" * (max(first, 1) - 1) + "\n".join(body)
    try:
        m = _smelt.load_bytes(source.encode(), "script", filename, f.__name__,
                              _dims(dims))
    except Error as e:
        if indent and e.column is not None and e.file == filename:
            old = "%s:%d:%d:" % (e.file, e.line, e.column)
            e.column += indent
            new = "%s:%d:%d:" % (e.file, e.line, e.column)
            e.message = e.message.replace(old, new, 1)
            e.args = (e.message,)
        raise
    m.__doc__ = f.__doc__
    m.__wrapped__ = f
    return m


def script(fn_or_source=None, *, fn=None, dims=None):
    """Compiles script-language code (docs/SCRIPT.md) into a Model.

    As a decorator on a Python function (`@smelt.script`, or
    `@smelt.script(dims=...)`) it compiles the function's own source: the
    function must be self-contained (builtins and the script language's
    functions only). Given a string, it compiles that source; fn picks the
    function (default: the last)."""
    if fn_or_source is None:
        return lambda f: script(f, fn=fn, dims=dims)
    if callable(fn_or_source):
        return _script_function(fn_or_source, dims)
    src = fn_or_source
    if isinstance(src, str):
        src = src.encode()
    return _smelt.load_bytes(src, "script", "<script>", fn, _dims(dims))


def from_torch(module, example_inputs, dynamic_axes=None, opset=17,
               input_names=None, output_names=None, dims=None):
    """Exports a torch.nn.Module to ONNX in memory (torch.onnx.export,
    in eval mode, no file written) and loads it. Inputs are named after
    forward()'s parameters unless input_names says otherwise;
    dynamic_axes is torch's ({"x": {0: "batch"}})."""
    import torch

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    if input_names is None:
        try:
            params = list(inspect.signature(module.forward).parameters)
        except (TypeError, ValueError):
            params = []
        params = [p for p in params if p not in ("args", "kwargs")]
        if len(params) >= len(example_inputs):
            input_names = params[:len(example_inputs)]
        else:
            input_names = ["input%d" % i for i in range(len(example_inputs))]
    buf = io.BytesIO()
    was_training = module.training
    module.eval()
    try:
        # not under no_grad: with gradients off, PyTorch's fused fast
        # paths (TransformerEncoderLayer's) replace the ops ONNX exports
        torch.onnx.export(module, example_inputs, buf,
                          opset_version=opset, input_names=input_names,
                          output_names=output_names,
                          dynamic_axes=dynamic_axes,
                          do_constant_folding=True)
    finally:
        module.train(was_training)
    return _smelt.load_bytes(buf.getvalue(), "onnx", "<torch>", None,
                             _dims(dims))


def check(model, *inputs, level=3, atol=1e-4, rtol=1e-3, cast=False,
          **named):
    """smelt check: runs the model compiled at -O`level` and with the
    reference interpreter on the same inputs and compares each output.
    Returns rows (output, max_abs_err, max_rel_err, ok); raises
    smelt.Error when an output differs by more than atol + rtol*|ref|."""
    import numpy as np

    names = [n for n, _, _ in model.inputs]
    unknown = set(named) - set(names[len(inputs):])
    if unknown:
        raise TypeError("check: no input (or one given twice) named %s"
                        % ", ".join(sorted(unknown)))
    try:
        arrays = list(inputs) + [named[n] for n in names[len(inputs):]]
    except KeyError as e:
        raise TypeError("check: input %s is missing" % e) from None
    plan = model.compile(level=level, inputs=arrays)
    got = plan(*arrays, cast=cast)
    ref = model.run_reference(*arrays, cast=cast)
    if not isinstance(got, tuple):
        got = (got,)
    rows, bad = [], []
    for (name, _, _), g, r in zip(plan.outputs, got, ref):
        g64, r64 = np.asarray(g, np.float64), np.asarray(r, np.float64)
        diff = np.abs(g64 - r64)
        mabs = float(diff.max()) if diff.size else 0.0
        den = np.abs(r64)
        mrel = float((diff[den > 0] / den[den > 0]).max()) \
            if np.any(den > 0) else 0.0
        ok = g.shape == r.shape and bool(np.all(diff <= atol + rtol * den))
        rows.append({"output": name, "max_abs_err": mabs,
                     "max_rel_err": mrel, "ok": ok})
        if not ok:
            bad.append("%s (max abs err %.3g)" % (name, mabs))
    if bad:
        raise Error("check: -O%d differs from the reference on %s"
                    % (level, ", ".join(bad)))
    return rows


def grad(model, loss=None, wrt=None, reduce="sum", params_as_inputs=False):
    """smelt grad: the joint forward and backward graph (Model.grad)."""
    return model.grad(loss=loss, wrt=wrt, reduce=reduce,
                      params_as_inputs=params_as_inputs)


def _calibration(model, inputs):
    """inputs for the report or QAT: one array (a one-input model), a
    list in input order, or a dict by input name."""
    if isinstance(inputs, dict):
        return inputs
    if hasattr(inputs, "shape") and hasattr(inputs, "dtype"):
        return [inputs]
    return list(inputs)


def _report_rows(rows, frame):
    """The C side's (layer, mse, cosine, kept_f32) tuples as dicts, the
    last (all quantized layers together) apart."""
    layers = [{"layer": n, "mse": m, "cosine": c, "kept_f32": k}
              for n, m, c, k in rows[:-1]]
    total = {"mse": rows[-1][1], "cosine": rows[-1][2]}
    if frame is False:
        return layers, total
    if frame:
        import pandas
        return pandas.DataFrame(layers), total
    return _frame(layers), total


def quantize(model, per_channel=False, conv=False, exclude=None, only=None,
             inputs=None, report=False, tolerance=None, qat=False,
             observer=None, percentile=None, convert=False, frame=None):
    """smelt quantize: a new Model, in one of three modes as the CLI's
    --dynamic (the default), --qat and --convert.

    Dynamic: MatMul and Gemm (and Conv with conv=True) to int8, weights
    per tensor or per_channel, `exclude` or `only` node names; `layers`
    lists the nodes rewritten. With calibration `inputs` (one array, a
    list in input order, or a dict by name) and report=True or a
    `tolerance`, every layer is measured alone against f32 (output MSE
    and cosine): `report` holds one row per layer (layer, mse, cosine,
    kept_f32; a DataFrame when pandas is installed, as profile's frame=)
    and `report_total` the error of all quantized layers together; the
    layers whose MSE exceeds `tolerance` stay f32.

    qat=True: fake quantization with scales observed on `inputs`
    (observer "minmax" or "percentile" with `percentile`), for smelt.train;
    `layers` lists the layers. convert=True: the int8 form of a trained
    QAT model; `weights` and `activations` count what it folded and kept.
    """
    if qat and convert:
        raise ValueError("quantize: qat or convert, not both")
    if convert and (per_channel or conv or exclude or only or
                    inputs is not None or report or tolerance is not None or
                    observer or percentile is not None):
        raise ValueError("quantize: convert takes the QAT model as it is: "
                         "no other option")
    if not qat and (observer or percentile is not None):
        raise ValueError("quantize: observer and percentile are qat's")
    if qat and (only or report or tolerance is not None):
        raise ValueError("quantize: only, report and tolerance are the "
                         "dynamic mode's")
    if (qat or report or tolerance is not None) and inputs is None:
        raise ValueError("quantize: %s needs calibration inputs" %
                         ("qat" if qat else "report or tolerance"))
    if inputs is not None and not (qat or report or tolerance is not None):
        raise ValueError("quantize: inputs are for report, tolerance or qat")
    if tolerance is not None and tolerance < 0:
        raise ValueError("quantize: tolerance must be >= 0, not %r" %
                         (tolerance,))
    if percentile is not None and observer != "percentile":
        raise ValueError("quantize: percentile goes with "
                         "observer='percentile'")
    if convert:
        m, nw, na = model._quantize_convert()
        m.weights, m.activations = nw, na
        return m
    if qat:
        kw = {"per_channel": per_channel, "conv": conv,
              "exclude": _names(exclude), "observer": observer or "minmax"}
        if percentile is not None:
            kw["percentile"] = float(percentile)
        m, layers = model._quantize_qat(_calibration(model, inputs), **kw)
        m.layers = [s for s in layers.split(",") if s]
        return m
    measure = report or tolerance is not None
    m, layers, rows = model._quantize(
        per_channel=per_channel, conv=conv, exclude=_names(exclude),
        only=_names(only),
        inputs=_calibration(model, inputs) if measure else None,
        tolerance=-1.0 if tolerance is None else float(tolerance))
    m.layers = [s for s in layers.split(",") if s]
    m.report, m.report_total = (_report_rows(rows, frame) if rows is not None
                                else (None, None))
    return m


_OPTIMIZERS = {"sgd": 0, "adam": 1, "adamw": 2}


class History(list):
    """What smelt.train ran: the list of every step's loss, with the rest
    as attributes. steps: one dict per step (step, epoch, loss, accuracy:
    NaN for mse); epochs: one dict per epoch (epoch, loss, accuracy,
    val_loss, val_accuracy: NaN without validation, samples_per_s);
    val_losses; val_index (the held-out samples); step and total_steps
    (where the run stands); cancelled (stopped by the progress callback);
    resumed (1: from the checkpoint, -1: asked but none yet, 0: not
    asked); checkpoint_step (the last checkpoint, -1: none)."""

    def __init__(self, h, first_epoch):
        super().__init__(h["step_loss"])
        spe = max(1, h["steps_per_epoch"])
        first = h["step"] - len(h["step_loss"])
        self.steps = [{"step": first + i + 1, "epoch": (first + i) // spe,
                       "loss": v, "accuracy": a}
                      for i, (v, a) in enumerate(zip(h["step_loss"],
                                                     h["step_accuracy"]))]
        self.epochs = [{"epoch": first_epoch + i, "loss": v[0],
                        "accuracy": v[1], "val_loss": v[2],
                        "val_accuracy": v[3], "samples_per_s": v[4]}
                       for i, v in enumerate(zip(
                           h["epoch_loss"], h["epoch_accuracy"],
                           h["val_loss"], h["val_accuracy"],
                           h["samples_per_s"]))]
        self.val_losses = list(h["val_loss"]) if h["val_index"] else []
        self.val_index = h["val_index"]
        for k in ("step", "total_steps", "cancelled", "resumed",
                  "checkpoint_step", "n_params", "n_weights"):
            setattr(self, k, h[k])
        self.cancelled = bool(self.cancelled)


def _printer(log_every):
    """A progress callback printing smelt train's plain lines: one every
    log_every steps and at each epoch's last, and one per epoch."""
    meter = {"loss": 0.0, "n": 0, "ok": 0, "judged": 0}

    def show(p):
        if p["event"] == "epoch":
            line = "epoch %d/%d: train loss %.6g" % (
                p["epoch"] + 1, p["epochs"], p["loss"])
            if p["judged"]:
                line += " acc %.2f%%" % (100.0 * p["accuracy"])
            if "val_loss" in p:
                line += ", val loss %.6g" % p["val_loss"]
                if not math.isnan(p["val_accuracy"]):
                    line += " acc %.2f%%" % (100.0 * p["val_accuracy"])
            print(line, flush=True)
            return False
        meter["loss"] += p["loss"]
        meter["n"] += 1
        meter["ok"] += p["correct"]
        meter["judged"] += p["judged"]
        if p["step"] % log_every == 0 or p["batch"] == p["steps_per_epoch"]:
            line = "epoch %d/%d  step %d/%d  loss %.6g" % (
                p["epoch"] + 1, p["epochs"], p["step"], p["total_steps"],
                meter["loss"] / meter["n"])
            if meter["judged"]:
                line += "  acc %.2f%%" % (100.0 * meter["ok"]
                                           / meter["judged"])
            print(line, flush=True)
            meter.update(loss=0.0, n=0, ok=0, judged=0)
        return False
    return show


def train(model, inputs, target, loss="mse", optimizer="sgd", lr=1e-3,
          momentum=0.0, nesterov=False, weight_decay=None, beta1=0.9,
          beta2=0.999, eps=1e-8, clip_norm=0.0, warmup=0,
          schedule="constant", epochs=1, batch_size=32, seed=0,
          shuffle=True, freeze=None, threads=1, cast=False,
          val_fraction=0.0, checkpoint=None, checkpoint_every=0,
          resume=False, memory_budget=0, progress=False, log_every=10):
    """smelt train from Python, through the same library call
    (smelt_trainer_*, docs/TRAINING.md): the loss (mse, cross_entropy or
    bce_with_logits) appended to the model's first output, differentiated,
    the optimizer's update added (sgd, adam or adamw; torch.optim's
    formulas), the whole step compiled once for `batch_size` samples and
    run on every full batch of each epoch (the order drawn from `seed`
    unless shuffle=False; a last partial batch dropped), with a learning
    rate schedule (warmup steps, then constant or cosine), a held-out
    val_fraction evaluated after each epoch, and checkpoints in the
    folder `checkpoint` (every checkpoint_every steps and at each epoch's
    end) that resume=True continues from bit-exactly. The same options
    and seed give the same weights as `smelt train`.

    inputs: an array (or a list, one per model input) of samples along
    dim 0; target: one per sample. progress: True prints smelt train's
    lines; a callable gets a dict per step and per epoch and stops the
    run (at that step, the checkpoints intact) by returning True. The GIL
    is released while steps run; Ctrl-C raises KeyboardInterrupt at the
    next step. Returns (a trained copy of the model, a History: the loss
    of every step run, with per-epoch figures as attributes)."""
    import numpy as np

    if schedule not in ("constant", "cosine"):
        raise ValueError("schedule: 'constant' or 'cosine', not %r"
                         % (schedule,))
    if optimizer not in _OPTIMIZERS:
        raise ValueError("optimizer: sgd, adam or adamw, not %r"
                         % (optimizer,))
    xs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    xs = [np.asarray(x) for x in xs]
    y = np.asarray(target)
    n = len(y) if y.ndim else 0
    if any(x.ndim == 0 or len(x) != n for x in xs):
        raise ValueError("inputs and target hold different sample counts")
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError("val_fraction %r: in [0, 1)" % (val_fraction,))
    n_train = n - int(val_fraction * n + 0.5)
    if batch_size < 1 or n_train < batch_size:
        raise ValueError("batch_size %d: the data holds %d training samples"
                         % (batch_size, n_train))
    if cast and model.outputs:
        if loss == "cross_entropy":
            if y.dtype not in (np.int32, np.int64):
                y = y.astype(np.int64)
        else:
            out_dt = {"f32": np.float32, "f64": np.float64}.get(
                model.outputs[0][1])
            if out_dt is not None and y.dtype != out_dt:
                y = y.astype(out_dt)
    if progress is True:
        callback = _printer(max(1, log_every))
    elif callable(progress):
        callback = progress
    elif progress in (False, None):
        callback = None
    else:
        raise TypeError("progress: a bool or a callable, not %r"
                        % (progress,))
    trained, h = model._train(
        xs, y, loss=loss, optimizer=_OPTIMIZERS[optimizer],
        momentum=momentum, nesterov=nesterov,
        weight_decay=-1.0 if weight_decay is None else float(weight_decay),
        beta1=beta1, beta2=beta2, eps=eps, clip_norm=clip_norm, lr=lr,
        warmup=warmup, cosine=schedule == "cosine", epochs=epochs,
        batch_size=batch_size, seed=seed, shuffle=shuffle,
        val_fraction=val_fraction, freeze=_names(freeze), threads=threads,
        memory_budget=memory_budget,
        checkpoint=None if checkpoint is None else os.fspath(checkpoint),
        checkpoint_every=checkpoint_every, resume=resume, cast=cast,
        callback=callback)
    first_epoch = (h["step"] // max(1, h["steps_per_epoch"])
                   - len(h["epoch_loss"])) if h["epoch_loss"] else 0
    history = History(h, first_epoch)
    trained.val_losses = history.val_losses
    return trained, history
