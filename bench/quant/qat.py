#!/usr/bin/python3
"""Quantization-aware training against post-training int8 (issue 17 item
5, docs/QUANTIZATION.md "Quantization-aware training").

    qat.py [--smelt build/smelt] [--work DIR] [--epochs 15] [--qat-epochs 5]
           [--widen 300] [--channels 8]

The model: the digits CNN of examples/digits_train (Conv 1->16, Relu,
MaxPool, Conv 16->32, Relu, MaxPool, Gemm 128->64, Relu, Gemm 64->10),
trained in f32 by `smelt train` from its random initial weights. The
trained CNN loses almost nothing under int8 (it is too small and too
evenly scaled). So the script makes it lose honestly, as real models
do: --channels of the first convolution's output channels are scaled up
by --widen (their weights and bias times F) and the second convolution's
weights reading them scaled down by 1/F. Relu and MaxPool commute with a
positive scale, so the f32 model computes the same function (its
accuracy is printed), but its activations have channels of very
different ranges, the imbalance that cross-layer equalization papers
describe in real networks (MobileNet's depthwise layers): one u8 scale
per tensor, fitted to the widest channel, leaves the others few levels.

Then, with the activations quantized per tensor (u8) and the weights per
channel (s8), every step by `smelt`:
  PTQ  `quantize --qat` (scales observed on the training images, min /
       max) and at once `quantize --convert`: post-training int8; and
       the same with the percentile observer at each of --percentiles
       (clipping the wide channels instead);
  QAT  the same --qat file trained by `smelt train` for --qat-epochs
       (AdamW, lr 1e-3; weights and scales learned through the
       straight-through estimator), then --convert.
Accuracy is on the 360 held-out digits, by `smelt run` and, when
bench/peers/setup.sh has installed it, by ONNX Runtime on the same int8
files. No timing.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "examples", "digits_train")
ORT_MODULES = os.path.join(ROOT, "bench", "peers", "node_modules")


class Pipeline:
    """The files of one run in work, made with the smelt binary."""

    def __init__(self, smelt, work):
        self.smelt, self.work = smelt, work
        os.makedirs(work, exist_ok=True)
        for f in ("init.onnx", "x_train.npy", "y_train.npy", "x_test.npy",
                  "y_test.npy"):
            shutil.copy(os.path.join(DATA, f), work)

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, *args, ok=True):
        r = subprocess.run([self.smelt] + list(args), cwd=self.work,
                           capture_output=True, text=True)
        if ok and r.returncode:
            sys.exit("smelt %s failed:\n%s%s" % (" ".join(args), r.stdout,
                                                 r.stderr))
        return r

    def train(self, model, out, epochs, lr):
        self.run("train", model, "--input", "x=x_train.npy", "--target",
                 "y_train.npy", "--loss", "cross_entropy", "--optimizer",
                 "adamw", "--lr", str(lr), "--epochs", str(epochs),
                 "--batch-size", "32", "--seed", "1", "--save", out)

    def qat(self, model, out, *extra):
        self.run("quantize", "--qat", model, "-o", out, "--input",
                 "x=x_train.npy", "--per-channel", "--conv", *extra)

    def convert(self, model, out):
        self.run("quantize", "--convert", model, "-o", out)

    def logits(self, model):
        tag = "out_" + os.path.splitext(os.path.basename(model))[0]
        self.run("run", model, "--input", "x=x_test.npy", "--output-dir", tag)
        return np.load(self.path(os.path.join(tag, "logits.npy")))

    def accuracy(self, model):
        y = np.load(self.path("y_test.npy"))
        return float((self.logits(model).argmax(1) == y).mean())

    def ort_logits(self, model, level="all"):
        """ONNX Runtime's logits on x_test, or None when not installed;
        level: its graphOptimizationLevel (disabled, basic, extended,
        all)."""
        if not os.path.isdir(os.path.join(ORT_MODULES, "onnxruntime-node")):
            return None
        js = """
const path = require('path'), fs = require('fs');
const ort = require(path.join(process.argv[2], 'onnxruntime-node'));
(async () => {
  const b = fs.readFileSync(process.argv[4]);
  const hl = b.readUInt16LE(8), h = b.subarray(10, 10 + hl).toString();
  const shape = h.match(/'shape': \\((.*?)\\)/)[1].split(',')
                  .filter(s => s.trim()).map(Number);
  const x = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hl,
                                            b.byteOffset + b.length));
  const s = await ort.InferenceSession.create(
      process.argv[3], {logSeverityLevel: 3,
                        graphOptimizationLevel: process.argv[6]});
  const r = await s.run({x: new ort.Tensor('float32', x, shape)});
  fs.writeFileSync(process.argv[5], Buffer.from(r.logits.data.buffer));
})().catch(e => { console.error(e.message); process.exit(1); });
"""
        out = model + ".ort.bin"
        r = subprocess.run(["node", "-e", js, "-", ORT_MODULES, model,
                            self.path("x_test.npy"), out, level],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit("onnxruntime failed on %s: %s" % (model, r.stderr))
        return np.fromfile(out, np.float32).reshape(-1, 10)

    def ort_accuracy(self, model):
        lg = self.ort_logits(model)
        if lg is None:
            return None
        y = np.load(self.path("y_test.npy"))
        return float((lg.argmax(1) == y).mean())


def widen(src, dst, factor, channels):
    """Scales the first `channels` output channels of the first Conv by
    factor and the second Conv's weights reading them by 1 / factor: the
    same f32 function, activations of imbalanced ranges."""
    m = onnx.load(src)
    init = {t.name: t for t in m.graph.initializer}
    convs = [n for n in m.graph.node if n.op_type == "Conv"]
    w0n, b0n = convs[0].input[1], convs[0].input[2]
    w1n = convs[1].input[1]
    w0, b0, w1 = (numpy_helper.to_array(init[n]).copy()
                  for n in (w0n, b0n, w1n))
    w0[:channels] *= factor
    b0[:channels] *= factor
    w1[:, :channels] /= factor
    for n, a in ((w0n, w0), (b0n, b0), (w1n, w1)):
        init[n].CopyFrom(numpy_helper.from_array(a.astype(np.float32), n))
    onnx.save(m, dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smelt", default=os.path.join(ROOT, "build", "smelt"))
    ap.add_argument("--work", default="/tmp/smelt_qat_bench")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--qat-epochs", type=int, default=5)
    ap.add_argument("--widen", type=float, default=300)
    ap.add_argument("--channels", type=int, default=8)
    ap.add_argument("--percentiles", default="99.99,99,90",
                    help="post-training int8 with the percentile observer "
                    "at each of these too (empty: none)")
    a = ap.parse_args()
    p = Pipeline(os.path.abspath(a.smelt), a.work)
    p.train("init.onnx", "fp32.onnx", a.epochs, 3e-3)
    widen(p.path("fp32.onnx"), p.path("wide.onnx"), a.widen, a.channels)
    p.qat("wide.onnx", "qat0.onnx")
    p.convert("qat0.onnx", "ptq_int8.onnx")
    pct = [v for v in a.percentiles.split(",") if v]
    for v in pct:
        p.qat("wide.onnx", "qat_p%s.onnx" % v, "--observer", "percentile",
              "--percentile", v)
        p.convert("qat_p%s.onnx" % v, "ptq_int8_p%s.onnx" % v)
    p.train("qat0.onnx", "qat_trained.onnx", a.qat_epochs, 1e-3)
    p.convert("qat_trained.onnx", "qat_int8.onnx")
    rows = [("f32 (trained)", "fp32.onnx"),
            ("f32, %d channels widened x%g" % (a.channels, a.widen),
             "wide.onnx"),
            ("post-training int8 (min/max)", "ptq_int8.onnx")]
    rows += [("post-training int8 (percentile %s)" % v,
              "ptq_int8_p%s.onnx" % v) for v in pct]
    rows += [("QAT int8 (min/max, %d epochs)" % a.qat_epochs,
              "qat_int8.onnx")]
    print("digits CNN, 360 held-out images; int8: u8 activations per "
          "tensor, s8 weights per channel")
    print("%-40s %8s %12s" % ("model", "smelt", "onnxruntime"))
    for label, f in rows:
        s = p.accuracy(p.path(f))
        o = p.ort_accuracy(p.path(f)) if "int8" in f else None
        print("%-40s %8.4f %12s" % (label, s,
                                    "%.4f" % o if o is not None else "-"))


if __name__ == "__main__":
    main()
