#!/usr/bin/python3
"""Export the real-model suite (tests/models/) from PyTorch to ONNX.

usage: /usr/bin/python3 scripts/gen_models.py [--out DIR] [--force] [NAME...]

Writes, for each model NAME, into DIR (default: build/models):

  NAME.onnx            the model: random weights from a fixed seed, eval
                       mode, opset 17, a dynamic batch dimension
  NAME_input_I.npy     input I (float32 images, int64 token ids)
  NAME_expected_I.npy  output I as PyTorch computes it (float32, eval mode)

Models: resnet18 and mobilenet_v2 (torchvision, weights=None), bert (token
and position embeddings, nn.TransformerEncoder, a tanh pooler), gpt (a
causal decoder written by hand: pre-LayerNorm blocks whose attention is
matmul, a causal mask and softmax, GELU MLP, final LayerNorm, LM head tied
to the token embedding) and mlp (8x1024 -> 4096 -> 4096 -> 1024, the
benchmark model).

The files are large (up to ~100 MB) and so are generated, not committed.
Each model's files are cached: NAME.stamp records a hash of this script,
and a model whose stamp matches is left alone without importing torch, so
calling the script again is cheap. The output is deterministic.

Needs Debian's python3-torch, python3-torchvision (torch 1.13) and
python3-onnx (to name the graphs); exits with status 77 and a one-line
message when they are missing.
"""
import argparse
import hashlib
import os
import sys

ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MODELS = ["resnet18", "mobilenet_v2", "bert", "gpt", "mlp"]
EXIT_MISSING = 77  # what tests/models/run_models.sh reports as a skip
OPSET = 17


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def up_to_date(out, name, stamp):
    path = os.path.join(out, name + ".stamp")
    for f in (".onnx", "_input_0.npy", "_expected_0.npy"):
        if not os.path.exists(os.path.join(out, name + f)):
            return False
    try:
        with open(path) as f:
            return f.read().strip() == stamp
    except OSError:
        return False


def import_torch():
    """Imports torch, torchvision and onnx, or exits 77 saying what is
    missing."""
    try:
        import numpy as np
        try:
            np.float, np.int, np.bool, np.object  # noqa: B018
        except AttributeError:  # Debian's python3-onnx predates numpy 1.24
            np.float, np.int, np.bool, np.object = float, int, bool, object
        import onnx  # noqa: F401
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        sys.stderr.write(
            "gen_models.py: %s; the real-model tests need Debian's "
            "python3-torch, python3-torchvision and python3-onnx "
            "(apt-get install python3-torch python3-torchvision "
            "python3-onnx)\n" % e)
        sys.exit(EXIT_MISSING)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    return torch


# ---- the models ---------------------------------------------------------------


def perturb_batchnorm(torch, model, gen):
    """Fresh BatchNorm layers are the identity (mean 0, var 1, weight 1,
    bias 0); give them random statistics so that their folding is tested."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
                m.weight.copy_(torch.rand(n, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(n, generator=gen) * 0.1)


def make_torchvision(torch, name):
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    gen = torch.Generator().manual_seed(1)
    perturb_batchnorm(torch, model, gen)
    x = torch.randn(1, 3, 224, 224, generator=gen)
    return model, (x,), ["image"], ["logits"], {"image": {0: "batch"},
                                                "logits": {0: "batch"}}


def make_bert(torch):
    nn = torch.nn

    class Bert(nn.Module):
        """BERT-style encoder: token + learned position embeddings, a
        LayerNorm, post-norm TransformerEncoder layers, a tanh pooler on the
        first token."""

        def __init__(self, vocab=1000, d=256, heads=4, layers=4, ffn=1024,
                     max_seq=64):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Parameter(torch.randn(1, max_seq, d) * 0.02)
            self.norm = nn.LayerNorm(d)
            layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.1,
                                               activation="gelu",
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(
                layer, layers, enable_nested_tensor=False)
            self.pool = nn.Linear(d, d)

        def forward(self, ids):
            h = self.tok(ids) + self.pos[:, :ids.shape[1]]
            h = self.encoder(self.norm(h))
            return h, torch.tanh(self.pool(h[:, 0]))

    torch.manual_seed(0)
    model = Bert()
    ids = torch.randint(0, 1000, (2, 32),
                        generator=torch.Generator().manual_seed(1))
    return model, (ids,), ["input_ids"], ["hidden", "pooled"], {
        "input_ids": {0: "batch", 1: "seq"},
        "hidden": {0: "batch", 1: "seq"},
        "pooled": {0: "batch"}}


def make_gpt(torch):
    nn = torch.nn
    import math

    class Attention(nn.Module):
        """Causal multi-head self-attention, written out: one projection to
        q, k, v, scores q k^T / sqrt(d_head), positions after the query
        masked to -inf, softmax, weighted sum, output projection."""

        def __init__(self, d, heads, max_seq):
            super().__init__()
            self.heads, self.hd = heads, d // heads
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.register_buffer(
                "mask", torch.tril(torch.ones(max_seq, max_seq)).view(
                    1, 1, max_seq, max_seq))

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            hd = self.hd
            q = q.view(b, t, self.heads, hd).transpose(1, 2)
            k = k.view(b, t, self.heads, hd).transpose(1, 2)
            v = v.view(b, t, self.heads, hd).transpose(1, 2)
            att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0,
                                  float("-inf"))
            att = torch.softmax(att, dim=-1)
            y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self, d, heads, max_seq):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = Attention(d, heads, max_seq)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                     nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class Gpt(nn.Module):
        def __init__(self, vocab=512, d=256, heads=4, layers=4, max_seq=64):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(max_seq, d)
            self.blocks = nn.ModuleList(
                [Block(d, heads, max_seq) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.head.weight = self.tok.weight  # tied, as in GPT-2
            for name, p in self.named_parameters():
                if p.dim() == 2:  # GPT-2's initialisation
                    nn.init.normal_(p, 0.0, 0.02)

        def forward(self, ids):
            t = ids.shape[1]
            pos = torch.arange(t, dtype=torch.int64, device=ids.device)
            x = self.tok(ids) + self.pos(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln_f(x))

    torch.manual_seed(0)
    model = Gpt()
    ids = torch.randint(0, 512, (2, 32),
                        generator=torch.Generator().manual_seed(1))
    return model, (ids,), ["input_ids"], ["logits"], {
        "input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}


def make_mlp(torch):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(),
                          nn.Linear(4096, 4096), nn.ReLU(),
                          nn.Linear(4096, 1024))
    x = torch.randn(8, 1024, generator=torch.Generator().manual_seed(1))
    return model, (x,), ["x"], ["y"], {"x": {0: "batch"}, "y": {0: "batch"}}


def build(torch, name):
    if name in ("resnet18", "mobilenet_v2"):
        return make_torchvision(torch, name)
    return {"bert": make_bert, "gpt": make_gpt, "mlp": make_mlp}[name](torch)


def save_npy(path, a):
    """np.save through a temporary file, so that a reader never sees half a
    file (the release and sanitizer suites may share one cache)."""
    import numpy as np
    tmp = path + ".tmp%d" % os.getpid()
    with open(tmp, "wb") as f:
        np.save(f, a)
    os.replace(tmp, path)


def export(torch, name, out, stamp):
    import numpy as np
    import onnx
    model, inputs, in_names, out_names, dyn = build(torch, name)
    model.eval()
    # The expected outputs come from the same (non fast-path) code the
    # exporter traces: grad mode on, eval mode, float32.
    outs = model(*inputs)
    if not isinstance(outs, tuple):
        outs = (outs,)
    path = os.path.join(out, name + ".onnx")
    tmp = path + ".tmp%d" % os.getpid()
    torch.onnx.export(model, inputs, tmp, opset_version=OPSET,
                      input_names=in_names, output_names=out_names,
                      dynamic_axes=dyn, do_constant_folding=True)
    m = onnx.load(tmp)
    m.graph.name = name
    onnx.save(m, tmp)
    os.replace(tmp, path)
    for i, x in enumerate(inputs):
        save_npy(os.path.join(out, "%s_input_%d.npy" % (name, i)),
                 x.detach().numpy())
    for i, y in enumerate(outs):
        save_npy(os.path.join(out, "%s_expected_%d.npy" % (name, i)),
                 y.detach().numpy().astype(np.float32))
    spath = os.path.join(out, name + ".stamp")
    with open(spath + ".tmp%d" % os.getpid(), "w") as f:
        f.write(stamp + "\n")
    os.replace(spath + ".tmp%d" % os.getpid(), spath)
    print("gen_models.py: wrote %s (%.1f MB)" %
          (path, os.path.getsize(path) / 1e6))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "models"),
                    help="cache directory (default: build/models)")
    ap.add_argument("--force", action="store_true",
                    help="regenerate even when the cache is up to date")
    ap.add_argument("names", nargs="*", metavar="NAME",
                    help="models to export (default: all of %s)" %
                    ", ".join(MODELS))
    args = ap.parse_args()
    names = args.names or MODELS
    for n in names:
        if n not in MODELS:
            ap.error("unknown model '%s' (known: %s)" % (n, ", ".join(MODELS)))
    stamp = script_hash()
    todo = [n for n in names
            if args.force or not up_to_date(args.out, n, stamp)]
    if not todo:
        return 0
    torch = import_torch()
    os.makedirs(args.out, exist_ok=True)
    for n in todo:
        export(torch, n, args.out, stamp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
