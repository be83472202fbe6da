#!/usr/bin/python3
"""Export the attention models of tests/models/test_attention_models.sh.

usage: /usr/bin/python3 scripts/gen_attention_models.py OUT_DIR

Writes into OUT_DIR, for each model NAME below:

  NAME.onnx            the model, eval mode, random weights from a fixed
                       seed, static shapes
  NAME_input_I.npy     input I
  NAME_expected_I.npy  output I as PyTorch computes it (float32)
  NAME.count           how many Attention nodes the fuse_attention pass
                       must make of it (one per attention core)

Models: nn.MultiheadAttention at opsets 13 and 17, without masks, with a
key_padding_mask, with a float and a bool attn_mask, and with both;
nn.TransformerEncoderLayer (norm_first False and True); a hand-written
GPT block pair with a causal mask (masked_fill of a tril buffer); a
grouped-query block (8 query heads, 2 kv heads, repeat_kv, causal); a
BERT-style encoder (embeddings, 2 layers, a padding mask). No row is
fully masked. OUT_DIR/stamp records a hash of this script: when it
matches, nothing is exported again (torch is not even imported).

Needs Debian's python3-torch and python3-onnx; exits 77 (a ctest skip)
when they are missing. The output is deterministic.
"""
import hashlib
import math
import os
import sys

EXIT_MISSING = 77


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def models(torch):
    """name -> (module, inputs, input names, opset, Attention nodes)."""
    nn = torch.nn
    gen = torch.Generator().manual_seed(1)
    d, heads, t, b = 64, 4, 12, 2
    x = torch.randn(b, t, d, generator=gen)
    kpm = torch.zeros(b, t, dtype=torch.bool)
    kpm[0, 9:] = True  # padding: the last keys of sequence 0
    kpm[1, 11:] = True
    am_float = torch.randn(t, t, generator=gen)
    am_bool = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)

    class Mha(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = nn.MultiheadAttention(d, heads, batch_first=True)

        def forward(self, x, kpm=None, am=None):
            return self.m(x, x, x, key_padding_mask=kpm, attn_mask=am,
                          need_weights=False)[0]

    class MhaMask(Mha):
        """attn_mask given as a constant of the model."""

        def __init__(self, am):
            super().__init__()
            self.register_buffer("am", am)

        def forward(self, x, kpm=None):
            return super().forward(x, kpm, self.am)

    class GptAttention(nn.Module):
        def __init__(self, d, heads, kv_heads, t):
            super().__init__()
            self.h, self.kvh, self.hd = heads, kv_heads, d // heads
            self.q = nn.Linear(d, d)
            self.kv = nn.Linear(d, 2 * kv_heads * self.hd)
            self.proj = nn.Linear(d, d)
            self.register_buffer("mask", torch.tril(torch.ones(t, t)).view(
                1, 1, t, t))

        def forward(self, x):
            b, t, d = x.shape
            hd = self.hd
            q = self.q(x).view(b, t, self.h, hd).transpose(1, 2)
            k, v = self.kv(x).split(self.kvh * hd, dim=2)
            k = k.view(b, t, self.kvh, hd).transpose(1, 2)
            v = v.view(b, t, self.kvh, hd).transpose(1, 2)
            g = self.h // self.kvh
            if g > 1:  # repeat_kv
                k = k[:, :, None].expand(b, self.kvh, g, t, hd).reshape(
                    b, self.h, t, hd)
                v = v[:, :, None].expand(b, self.kvh, g, t, hd).reshape(
                    b, self.h, t, hd)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0,
                                  float("-inf"))
            y = torch.softmax(att, dim=-1) @ v
            return self.proj(y.transpose(1, 2).reshape(b, t, d))

    class Block(nn.Module):
        def __init__(self, heads, kv_heads):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = GptAttention(d, heads, kv_heads, t)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                     nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(100, d)
            self.pos = nn.Embedding(t, d)
            layer = nn.TransformerEncoderLayer(d, heads, 128, dropout=0.0,
                                               batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2,
                                             enable_nested_tensor=False)

        def forward(self, ids, pad):
            pos = torch.arange(ids.shape[1])
            return self.enc(self.tok(ids) + self.pos(pos),
                            src_key_padding_mask=pad)

    def enc(norm_first):
        return nn.TransformerEncoderLayer(d, heads, 128, dropout=0.0,
                                          batch_first=True,
                                          norm_first=norm_first)

    ids = torch.randint(0, 100, (b, t), generator=gen)
    out = {}
    for opset in (13, 17):
        out["mha_o%d" % opset] = (Mha(), (x,), ["x"], opset, 1)
        out["mha_kpm_o%d" % opset] = (Mha(), (x, kpm), ["x", "kpm"], opset, 1)
        out["mha_am_float_o%d" % opset] = (MhaMask(am_float), (x,), ["x"],
                                           opset, 1)
        out["mha_am_bool_o%d" % opset] = (MhaMask(am_bool), (x,), ["x"],
                                          opset, 1)
        out["mha_both_o%d" % opset] = (MhaMask(am_bool), (x, kpm),
                                       ["x", "kpm"], opset, 1)
    out["encoder_post"] = (enc(False), (x,), ["x"], 17, 1)
    out["encoder_pre"] = (enc(True), (x,), ["x"], 17, 1)
    out["gpt"] = (nn.Sequential(Block(heads, heads), Block(heads, heads)),
                  (x,), ["x"], 17, 2)
    out["gqa"] = (nn.Sequential(Block(8, 2)), (x,), ["x"], 17, 1)
    out["bert"] = (Bert(), (ids, kpm), ["ids", "pad"], 17, 2)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_attention_models.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    stamp = os.path.join(out, "stamp")
    if os.path.exists(stamp) and open(stamp).read().strip() == script_hash():
        return 0
    try:
        import numpy as np
        import onnx  # noqa: F401
        import torch
    except ImportError as e:
        print("gen_attention_models.py: %s (python3-torch and python3-onnx "
              "are needed)" % e)
        return EXIT_MISSING
    import warnings
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    for name, (m, inputs, names, opset, count) in models(torch).items():
        torch.manual_seed(0)
        m.eval()
        with torch.no_grad():
            y = m(*inputs)
        torch.onnx.export(m, inputs, os.path.join(out, name + ".onnx"),
                          opset_version=opset, input_names=names,
                          output_names=["y"], do_constant_folding=True)
        for i, a in enumerate(inputs):
            np.save(os.path.join(out, "%s_input_%d.npy" % (name, i)),
                    a.numpy())
        np.save(os.path.join(out, name + "_expected_0.npy"),
                y.numpy().astype(np.float32))
        with open(os.path.join(out, name + ".count"), "w") as f:
            f.write("%d\n" % count)
    with open(stamp, "w") as f:
        f.write(script_hash() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
