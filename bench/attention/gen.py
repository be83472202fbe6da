#!/usr/bin/python3
"""Export the attention benchmark's models from PyTorch to ONNX.

usage: /usr/bin/python3 bench/attention/gen.py [--out DIR] [--force]

Writes into DIR (default: build/attention_bench), each model once (a
model whose .onnx exists is left alone unless --force):

  attn_T{T}_{full,causal}.onnx  one attention as PyTorch exports it,
        written out: q k^T / 8, for causal a constant lower-triangle bool
        mask through masked_fill(-inf), softmax, @ v; inputs q, k, v of
        [1, 8, T, 64] (batch 1, 8 heads of 64); T in 512 .. 8192
  attn_T{T}_{full,causal}.ir    the same attention as one Smelt
        `Attention` node (text IR), for the fused kernel without depending
        on the recognition pass
  gpt_d{D}_s{S}.onnx  a GPT-style decoder: 4 pre-LayerNorm blocks of
        causal self-attention (written out as above) and a GELU MLP, on
        embeddings x [1, S, D] (the token lookup is left out: it is not
        attention and costs nothing)
  bert_d{D}_s{S}.onnx a BERT-style encoder: 4 nn.TransformerEncoderLayer
        (post-norm, GELU) on x [1, S, D]
  NAME_input_I.npy    the inputs, float32, from a fixed seed

Needs Debian's python3-torch (1.13) and python3-onnx; exits with status 77
when they are missing. The files are generated, not committed.
"""
import argparse
import math
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", ".."))
LENGTHS = [512, 1024, 2048, 4096, 8192]
MODELS = [("gpt", 384, 256), ("gpt", 768, 1024), ("bert", 384, 256),
          ("bert", 768, 512)]
OPSET = 17


def single(torch, T, causal):
    nn = torch.nn

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            if causal:
                self.register_buffer(
                    "keep", torch.ones(T, T, dtype=torch.bool).tril())

        def forward(self, q, k, v):
            s = torch.matmul(q, k.transpose(-2, -1)) / 8.0
            if causal:
                s = s.masked_fill(~self.keep, float("-inf"))
            return torch.matmul(torch.softmax(s, dim=-1), v)

    g = torch.Generator().manual_seed(T + causal)
    xs = tuple(torch.randn(1, 8, T, 64, generator=g) for _ in range(3))
    return Attn(), xs, ["q", "k", "v"]


def decoder(torch, d, seq):
    nn = torch.nn
    heads = d // 64

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.register_buffer("mask", torch.tril(
                torch.ones(seq, seq)).view(1, 1, seq, seq))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q = q.view(b, t, heads, 64).transpose(1, 2)
            k = k.view(b, t, heads, 64).transpose(1, 2)
            v = v.view(b, t, heads, 64).transpose(1, 2)
            att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(64)
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0,
                                  float("-inf"))
            att = torch.softmax(att, dim=-1)
            y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                     nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    torch.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(4)], nn.LayerNorm(d))
    x = torch.randn(1, seq, d, generator=torch.Generator().manual_seed(1))
    return model, (x,), ["x"]


def encoder(torch, d, seq):
    nn = torch.nn
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d, d // 64, 4 * d, dropout=0.1,
                                       activation="gelu", batch_first=True)
    model = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
    x = torch.randn(1, seq, d, generator=torch.Generator().manual_seed(1))
    return model, (x,), ["x"]


def save(torch, np, out, name, model, xs, in_names):
    model.eval()
    path = os.path.join(out, name + ".onnx")
    tmp = path + ".tmp%d" % os.getpid()
    # grad mode on: under no_grad nn.TransformerEncoderLayer takes its
    # fused fast path, which the exporter cannot trace
    torch.onnx.export(model, xs, tmp, opset_version=OPSET,
                      input_names=in_names, output_names=["y"],
                      do_constant_folding=True)
    os.replace(tmp, path)
    for i, x in enumerate(xs):
        np.save(os.path.join(out, "%s_input_%d.npy" % (name, i)),
                x.numpy().astype(np.float32))
    print("gen.py: wrote %s (%.1f MB)" % (path, os.path.getsize(path) / 1e6))


def save_ir(out, name, T, causal):
    dims = "f32[1,8,%d,64]" % T
    with open(os.path.join(out, name + ".ir"), "w") as f:
        f.write("graph %s(%%q: %s, %%k: %s, %%v: %s) {\n"
                "  %%y: %s = Attention(%%q, %%k, %%v) {scale = 0.125, "
                "causal = %d}\n  return %%y\n}\n"
                % (name, dims, dims, dims, dims, causal))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build",
                                                  "attention_bench"))
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print("gen.py: needs python3-torch and numpy (%s)" % e)
        sys.exit(77)
    os.makedirs(args.out, exist_ok=True)
    todo = []
    for T in LENGTHS:
        for causal in (0, 1):
            name = "attn_T%d_%s" % (T, "causal" if causal else "full")
            save_ir(args.out, name, T, causal)
            todo.append((name, lambda T=T, c=causal: single(torch, T, c)))
    for kind, d, s in MODELS:
        name = "%s_d%d_s%d" % (kind, d, s)
        fn = decoder if kind == "gpt" else encoder
        todo.append((name, lambda fn=fn, d=d, s=s: fn(torch, d, s)))
    for name, make in todo:
        if not args.force and os.path.exists(
                os.path.join(args.out, name + ".onnx")):
            continue
        model, xs, in_names = make()
        save(torch, np, args.out, name, model, xs, in_names)


if __name__ == "__main__":
    main()
