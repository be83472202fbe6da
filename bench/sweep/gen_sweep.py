#!/usr/bin/python3
"""Export the sweep's models from PyTorch to ONNX (issue 16).

usage: /usr/bin/python3 bench/sweep/gen_sweep.py [--out DIR] [--force]
       [--list] [NAME...]

The sweep is a spread of shapes nobody tuned for: VGG-, ResNet- (basic
and bottleneck), MobileNet-, EfficientNet- (SiLU, squeeze-excite) and
ShuffleNet-style convolution nets with channels 16-512, resolution
32-224, batch 1-16, grouped and depthwise layers, kernels 1/3/5/7,
strides and dilations; pre- and post-norm encoders with tanh-GELU and
decoders with embeddings and large vocabulary heads (d_model 128-1024,
heads 2-16, seq 16-1024); MLPs of widths 64-8192 at batch 1-256. Every
other model is exported at opset 13, the rest at 17, so both importers'
forms (LayerNormalization as one op or decomposed, Split's attribute or
input) are exercised.

Writes, for each model NAME, into DIR (default: build/sweep):

  NAME.onnx            random weights from a fixed seed, eval mode
  NAME_input_I.npy     input I (float32 images or features, int64 ids)
  NAME_expected_I.npy  output I as PyTorch computes it (float32)
  NAME.json            family, opset, what the model is, its FLOPs
  NAME.stamp           a hash of this script: the cache is reused while
                       it matches, without importing torch

The scale series (item 4 of the issue) are models too, named
scale_batch_B (one CNN at batch B = 1..64) and scale_seq_S (one encoder
at sequence length S = 16..1024), and two tiny ones (family "tiny") for
the harness's test; `--list` prints every name. The output
is deterministic: each model is built after torch.manual_seed(0) and its
inputs come from a generator seeded with 1. Exits 77 when torch,
torchvision or onnx is missing.
"""
import argparse
import hashlib
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
EXIT_MISSING = 77

# ---- the model list --------------------------------------------------------
# Each row: name, family, builder, keyword arguments. The builders are
# below; a builder returns (module, inputs, input names, dynamic axes).

SPECS = [
    # convolution nets
    ("vgg_c64_r32_b1", "vgg", "vgg", dict(chans=(64, 128, 256), res=32, batch=1)),
    ("vgg_c32_r64_b4", "vgg", "vgg", dict(chans=(32, 64, 128), res=64, batch=4)),
    ("resnet_basic_c64_r56_b1", "resnet", "resnet_basic",
     dict(width=64, res=56, batch=1)),
    ("resnet_basic_c16_r32_b16", "resnet", "resnet_basic",
     dict(width=16, res=32, batch=16)),
    ("resnet18_r96_b2", "resnet", "torchvision",
     dict(arch="resnet18", res=96, batch=2)),
    ("resnet50_r128_b1", "resnet", "torchvision",
     dict(arch="resnet50", res=128, batch=1)),
    ("resnet_bneck_c256_r28_b1", "resnet", "bottleneck",
     dict(width=256, res=28, batch=1)),
    ("resnext_g8_c128_r28_b2", "resnet", "resnext",
     dict(width=128, groups=8, res=28, batch=2)),
    ("mobilenet_v2_r160_b1", "mobilenet", "torchvision",
     dict(arch="mobilenet_v2", res=160, batch=1)),
    ("mobilenet_k5_r96_b1", "mobilenet", "dwsep",
     dict(k=5, width=32, res=96, batch=1)),
    ("efficientnet_r112_b1", "efficientnet", "effnet",
     dict(width=16, res=112, batch=1)),
    ("efficientnet_r64_b4", "efficientnet", "effnet",
     dict(width=24, res=64, batch=4)),
    ("shufflenet_v2_r224_b1", "shufflenet", "torchvision",
     dict(arch="shufflenet_v2_x0_5", res=224, batch=1)),
    ("shufflenet_v2_r128_b4", "shufflenet", "torchvision",
     dict(arch="shufflenet_v2_x1_0", res=128, batch=4)),
    ("stem_k7_r224_b1", "conv", "stem", dict(res=224, batch=1)),
    ("dilated_c64_r64_b1", "conv", "dilated", dict(width=64, res=64, batch=1)),
    ("pointwise_c512_r14_b8", "conv", "pointwise",
     dict(width=512, res=14, batch=8)),
    ("conv_k5_c32_r64_b2", "conv", "k5", dict(width=32, res=64, batch=2)),
    ("late_c512_r7_b1", "conv", "late", dict(width=512, res=7, batch=1)),
    ("pooling_c32_r128_b1", "conv", "pools", dict(width=32, res=128, batch=1)),
    # MLPs
    ("mlp_w64_d16_b1", "mlp", "mlp", dict(widths=[64] * 17, batch=1)),
    ("mlp_w512_d8_b1", "mlp", "mlp", dict(widths=[512] * 9, batch=1)),
    ("mlp_w4096_b1", "mlp", "mlp", dict(widths=[784, 4096, 4096, 10], batch=1)),
    ("mlp_w1024_b256", "mlp", "mlp", dict(widths=[1024] * 4, batch=256)),
    ("mlp_w8192_b32", "mlp", "mlp", dict(widths=[1000, 8192, 1000], batch=32)),
    ("mlp_odd_b7", "mlp", "mlp", dict(widths=[100, 300, 77, 10], batch=7)),
    # transformers
    ("enc_d128_h2_s64_b1", "encoder", "encoder",
     dict(d=128, heads=2, seq=64, layers=2, batch=1)),
    ("enc_d256_h4_s128_b1", "encoder", "encoder",
     dict(d=256, heads=4, seq=128, layers=2, batch=1)),
    ("enc_d512_h8_s256_b1", "encoder", "encoder",
     dict(d=512, heads=8, seq=256, layers=1, batch=1)),
    ("enc_d1024_h16_s16_b1", "encoder", "encoder",
     dict(d=1024, heads=16, seq=16, layers=2, batch=1)),
    ("enc_d256_h4_s1024_b1", "encoder", "encoder",
     dict(d=256, heads=4, seq=1024, layers=1, batch=1)),
    ("enc_post_d384_h6_s128_b2", "encoder", "encoder",
     dict(d=384, heads=6, seq=128, layers=2, batch=2, post=True)),
    ("dec_d256_h4_s64_v8192_b1", "decoder", "decoder",
     dict(d=256, heads=4, seq=64, layers=2, vocab=8192, batch=1)),
    ("dec_d512_h8_s32_v16000_b2", "decoder", "decoder",
     dict(d=512, heads=8, seq=32, layers=2, vocab=16000, batch=2)),
]

SCALE_BATCH = [1, 2, 4, 8, 16, 32, 64]
SCALE_SEQ = [16, 32, 64, 128, 256, 512, 1024]
SCALE = ([("scale_batch_%d" % b, "scale_batch", "resnet_basic",
           dict(width=32, res=32, batch=b)) for b in SCALE_BATCH]
         + [("scale_seq_%d" % s, "scale_seq", "encoder",
             dict(d=256, heads=4, seq=s, layers=2, batch=1))
            for s in SCALE_SEQ])
# Tiny models for the harness's own test (tests/models/test_sweep.sh):
# never part of the sweep.
TINY = [("tiny_cnn_r16_b2", "tiny", "resnet_basic",
         dict(width=4, res=16, batch=2)),
        ("tiny_mlp_b3", "tiny", "mlp", dict(widths=[12, 20, 5], batch=3))]
ALL = SPECS + SCALE + TINY


def opset_of(name):
    """Every other model of the main list is exported at opset 13; the
    scale series stay at 17 so each series is one model family."""
    names = [s[0] for s in SPECS]
    if name in names:
        return 13 if names.index(name) % 2 else 17
    return 17


# ---- builders ---------------------------------------------------------------


def image(torch, batch, res, chans=3):
    gen = torch.Generator().manual_seed(1)
    return torch.randn(batch, chans, res, res, generator=gen)


def perturb_batchnorm(torch, model):
    """Fresh BatchNorm layers are the identity; give them random
    statistics so that a wrong fold would show."""
    gen = torch.Generator().manual_seed(2)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
                m.weight.copy_(torch.rand(n, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(n, generator=gen) * 0.1)


def cbr(nn, cin, cout, k=3, s=1, groups=1, dil=1, act="relu"):
    acts = {"relu": nn.ReLU, "silu": nn.SiLU, "relu6": nn.ReLU6,
            None: nn.Identity}
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, s, dil * (k // 2), dilation=dil,
                  groups=groups, bias=False),
        nn.BatchNorm2d(cout), acts[act]())


def head(nn, cin, classes=100):
    return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(cin, classes))


def b_vgg(torch, chans, res, batch):
    nn = torch.nn
    layers, cin = [], 3
    for c in chans:
        layers += [nn.Conv2d(cin, c, 3, 1, 1), nn.ReLU(),
                   nn.Conv2d(c, c, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2)]
        cin = c
    layers += [nn.Flatten(), nn.Linear(cin * (res // 2 ** len(chans)) ** 2,
                                       256), nn.ReLU(), nn.Linear(256, 10)]
    return nn.Sequential(*layers), image(torch, batch, res)


def basic_block(torch, cin, cout, stride):
    nn = torch.nn

    class Basic(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = cbr(nn, cin, cout, 3, stride)
            self.b = cbr(nn, cout, cout, 3, 1, act=None)
            self.short = (nn.Identity() if stride == 1 and cin == cout
                          else cbr(nn, cin, cout, 1, stride, act=None))

        def forward(self, x):
            return torch.relu(self.b(self.a(x)) + self.short(x))
    return Basic()


def b_resnet_basic(torch, width, res, batch):
    nn = torch.nn
    w = width
    model = nn.Sequential(
        cbr(nn, 3, w, 3, 1),
        basic_block(torch, w, w, 1), basic_block(torch, w, w, 1),
        basic_block(torch, w, 2 * w, 2), basic_block(torch, 2 * w, 2 * w, 1),
        basic_block(torch, 2 * w, 4 * w, 2), head(nn, 4 * w))
    return model, image(torch, batch, res)


def bottleneck(torch, cin, mid, cout, stride, groups=1):
    nn = torch.nn

    class Bneck(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                cbr(nn, cin, mid, 1), cbr(nn, mid, mid, 3, stride, groups),
                cbr(nn, mid, cout, 1, act=None))
            self.short = (nn.Identity() if stride == 1 and cin == cout
                          else cbr(nn, cin, cout, 1, stride, act=None))

        def forward(self, x):
            return torch.relu(self.body(x) + self.short(x))
    return Bneck()


def b_bottleneck(torch, width, res, batch):
    nn = torch.nn
    w = width
    model = nn.Sequential(
        cbr(nn, 3, w, 3, 1), bottleneck(torch, w, w // 4, w, 1),
        bottleneck(torch, w, w // 4, w, 1),
        bottleneck(torch, w, w // 2, 2 * w, 2),
        bottleneck(torch, 2 * w, w // 2, 2 * w, 1), head(nn, 2 * w))
    return model, image(torch, batch, res)


def b_resnext(torch, width, groups, res, batch):
    nn = torch.nn
    w = width
    model = nn.Sequential(
        cbr(nn, 3, w, 3, 1), bottleneck(torch, w, w, w, 1, groups),
        bottleneck(torch, w, w, w, 1, groups),
        bottleneck(torch, w, 2 * w, 2 * w, 2, groups), head(nn, 2 * w))
    return model, image(torch, batch, res)


def b_torchvision(torch, arch, res, batch):
    import torchvision
    model = getattr(torchvision.models, arch)(weights=None)
    return model, image(torch, batch, res)


def b_dwsep(torch, k, width, res, batch):
    """MobileNet-v1-style: depthwise kxk then pointwise, ReLU6."""
    nn = torch.nn
    w = width
    layers = [cbr(nn, 3, w, 3, 2, act="relu6")]
    for cout, s in ((2 * w, 1), (4 * w, 2), (4 * w, 1), (8 * w, 2),
                    (8 * w, 1), (16 * w, 2)):
        layers += [cbr(nn, w, w, k, s, groups=w, act="relu6"),
                   cbr(nn, w, cout, 1, act="relu6")]
        w = cout
    return nn.Sequential(*layers, head(nn, w)), image(torch, batch, res)


def mbconv(torch, cin, cout, expand, k, stride):
    """EfficientNet's MBConv: 1x1 expansion, depthwise kxk, squeeze-excite
    (global pool, two 1x1 convs, sigmoid gate), 1x1 projection, SiLU, a
    residual where the shapes allow."""
    nn = torch.nn
    mid = cin * expand

    class MB(nn.Module):
        def __init__(self):
            super().__init__()
            self.exp = cbr(nn, cin, mid, 1, act="silu")
            self.dw = cbr(nn, mid, mid, k, stride, groups=mid, act="silu")
            sq = max(1, cin // 4)
            self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1),
                                    nn.Conv2d(mid, sq, 1), nn.SiLU(),
                                    nn.Conv2d(sq, mid, 1), nn.Sigmoid())
            self.proj = cbr(nn, mid, cout, 1, act=None)
            self.res = stride == 1 and cin == cout

        def forward(self, x):
            h = self.dw(self.exp(x))
            h = self.proj(h * self.se(h))
            return h + x if self.res else h
    return MB()


def b_effnet(torch, width, res, batch):
    nn = torch.nn
    w = width
    blocks = [cbr(nn, 3, 2 * w, 3, 2, act="silu"),
              mbconv(torch, 2 * w, w, 1, 3, 1)]
    cin = w
    for cout, k, s, n in ((int(1.5 * w), 3, 2, 2), (int(2.5 * w), 5, 2, 2),
                          (5 * w, 3, 2, 2), (7 * w, 5, 1, 2)):
        for i in range(n):
            blocks.append(mbconv(torch, cin, cout, 6, k, s if i == 0 else 1))
            cin = cout
    blocks += [cbr(nn, cin, 16 * w, 1, act="silu"), head(nn, 16 * w)]
    return nn.Sequential(*blocks), image(torch, batch, res)


def b_stem(torch, res, batch):
    """ResNet's stem (7x7 stride 2, max-pool 3x3 stride 2) and a stage."""
    nn = torch.nn
    model = nn.Sequential(cbr(nn, 3, 64, 7, 2), nn.MaxPool2d(3, 2, 1),
                          basic_block(torch, 64, 64, 1), head(nn, 64))
    return model, image(torch, batch, res)


def b_dilated(torch, width, res, batch):
    nn = torch.nn
    w = width
    model = nn.Sequential(cbr(nn, 3, w, 3), cbr(nn, w, w, 3, dil=2),
                          cbr(nn, w, w, 3, dil=4), cbr(nn, w, w, 3, dil=2),
                          nn.Conv2d(w, 21, 1))
    return model, image(torch, batch, res)


def b_pointwise(torch, width, res, batch):
    nn = torch.nn
    w = width
    model = nn.Sequential(cbr(nn, 3, w // 2, 1), cbr(nn, w // 2, w, 1),
                          cbr(nn, w, w // 2, 1), cbr(nn, w // 2, w, 1),
                          head(nn, w))
    return model, image(torch, batch, res)


def b_k5(torch, width, res, batch):
    nn = torch.nn
    w = width
    model = nn.Sequential(cbr(nn, 3, w, 5), cbr(nn, w, w, 5),
                          cbr(nn, w, 2 * w, 5, 2), cbr(nn, 2 * w, 2 * w, 5),
                          head(nn, 2 * w))
    return model, image(torch, batch, res)


def b_late(torch, width, res, batch):
    nn = torch.nn
    w = width
    model = nn.Sequential(basic_block(torch, w, w, 1),
                          basic_block(torch, w, w, 1), head(nn, w, 1000))
    return model, image(torch, batch, res, w)


def b_pools(torch, width, res, batch):
    """Small convolutions between max- and average-pools: what the pools'
    fixed per-call cost weighs in."""
    nn = torch.nn
    w = width
    model = nn.Sequential(cbr(nn, 3, w, 3), nn.MaxPool2d(2),
                          cbr(nn, w, w, 3), nn.AvgPool2d(2),
                          cbr(nn, w, w, 3), nn.MaxPool2d(3, 2, 1),
                          cbr(nn, w, w, 3), nn.AvgPool2d(3, 1, 1),
                          nn.MaxPool2d(2), head(nn, w))
    return model, image(torch, batch, res)


def b_mlp(torch, widths, batch):
    nn = torch.nn
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths):
            layers.append(nn.ReLU())
    x = torch.randn(batch, widths[0],
                    generator=torch.Generator().manual_seed(1))
    return nn.Sequential(*layers), x


def attention_block(torch, d, heads, post, causal, max_seq):
    """One transformer block, attention written out as PyTorch users
    write it (q k^T / sqrt(d_head), an optional causal mask, softmax),
    MLP with tanh-GELU; pre-norm unless post."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.h, self.hd = heads, d // heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d),
                                     nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * d, d))
            if causal:
                self.register_buffer("mask", torch.tril(
                    torch.ones(max_seq, max_seq)).view(1, 1, max_seq,
                                                       max_seq))

        def attn(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q = q.reshape(b, t, self.h, self.hd).transpose(1, 2)
            k = k.reshape(b, t, self.h, self.hd).transpose(1, 2)
            v = v.reshape(b, t, self.h, self.hd).transpose(1, 2)
            s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.hd)
            if causal:
                s = s.masked_fill(self.mask[:, :, :t, :t] == 0,
                                  float("-inf"))
            y = torch.matmul(torch.softmax(s, dim=-1), v)
            return self.proj(y.transpose(1, 2).reshape(b, t, d))

        def forward(self, x):
            if post:
                x = self.ln1(x + self.attn(x))
                return self.ln2(x + self.mlp(x))
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))
    return Block()


def b_encoder(torch, d, heads, seq, layers, batch, post=False):
    """An encoder on features (as after an embedding or a patchifier):
    input [batch, seq, d], a final LayerNorm."""
    nn = torch.nn
    model = nn.Sequential(*[attention_block(torch, d, heads, post, False,
                                            seq) for _ in range(layers)],
                          nn.LayerNorm(d))
    x = torch.randn(batch, seq, d, generator=torch.Generator().manual_seed(1))
    return model, x


def b_decoder(torch, d, heads, seq, layers, vocab, batch):
    nn = torch.nn

    class Dec(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.blocks = nn.Sequential(*[attention_block(
                torch, d, heads, False, True, seq) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1], dtype=torch.int64)
            return self.head(self.ln(self.blocks(self.tok(ids)
                                                 + self.pos(pos))))
    ids = torch.randint(0, vocab, (batch, seq),
                        generator=torch.Generator().manual_seed(1))
    return Dec(), ids


BUILDERS = {
    "vgg": b_vgg, "resnet_basic": b_resnet_basic, "bottleneck": b_bottleneck,
    "resnext": b_resnext, "torchvision": b_torchvision, "dwsep": b_dwsep,
    "effnet": b_effnet, "stem": b_stem, "dilated": b_dilated,
    "pointwise": b_pointwise, "k5": b_k5, "late": b_late, "pools": b_pools,
    "mlp": b_mlp, "encoder": b_encoder, "decoder": b_decoder,
}


def count_flops(torch, model, x):
    """Multiply-adds x 2 of the Conv2d and Linear layers and of the
    attention matmuls, counted with forward hooks: the work against which
    the scale plots compare latency."""
    total = [0]

    def conv(m, inp, out):
        k = m.kernel_size[0] * m.kernel_size[1] * m.in_channels // m.groups
        total[0] += 2 * out.numel() * k

    def lin(m, inp, out):
        total[0] += 2 * out.numel() * m.in_features

    hooks = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv))
        elif isinstance(m, torch.nn.Linear):
            hooks.append(m.register_forward_hook(lin))
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    if x.dim() == 3 or x.dtype == torch.int64:  # attention: 2 matmuls
        for m in model.modules():
            if hasattr(m, "hd"):
                b, t = x.shape[0], x.shape[1]
                total[0] += 2 * 2 * b * m.h * t * t * m.hd
    return total[0]


# ---- export -----------------------------------------------------------------


def import_torch():
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
        sys.stderr.write("gen_sweep.py: %s; the sweep needs Debian's "
                         "python3-torch, python3-torchvision and "
                         "python3-onnx\n" % e)
        sys.exit(EXIT_MISSING)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    return torch


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def up_to_date(out, name, stamp):
    for f in (".onnx", "_input_0.npy", "_expected_0.npy", ".json"):
        if not os.path.exists(os.path.join(out, name + f)):
            return False
    try:
        with open(os.path.join(out, name + ".stamp")) as f:
            return f.read().strip() == stamp
    except OSError:
        return False


def write_atomic(path, write):
    """write(f) into a temporary file renamed over path, so a reader never
    sees half a file."""
    tmp = path + ".tmp%d" % os.getpid()
    with open(tmp, "wb") as f:
        write(f)
    os.replace(tmp, path)


def export(torch, spec, out, stamp):
    import numpy as np
    import onnx
    name, family, builder, kw = spec
    torch.manual_seed(0)
    model, x = BUILDERS[builder](torch, **kw)
    perturb_batchnorm(torch, model)
    model.eval()
    with torch.no_grad():
        y = model(x)
    flops = count_flops(torch, model, x)
    seq_dim = x.dim() >= 2 and family in ("encoder", "decoder",
                                          "scale_seq")
    dyn = {"x": {0: "batch"}, "y": {0: "batch"}}
    if seq_dim:
        dyn = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    opset = opset_of(name)
    path = os.path.join(out, name + ".onnx")
    tmp = path + ".tmp%d" % os.getpid()
    torch.onnx.export(model, (x,), tmp, opset_version=opset,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes=dyn, do_constant_folding=True)
    m = onnx.load(tmp)
    m.graph.name = name
    onnx.save(m, tmp)
    os.replace(tmp, path)
    write_atomic(os.path.join(out, name + "_input_0.npy"),
                 lambda f: np.save(f, x.numpy()))
    write_atomic(os.path.join(out, name + "_expected_0.npy"),
                 lambda f: np.save(f, y.numpy().astype(np.float32)))
    meta = {"name": name, "family": family, "opset": opset,
            "what": "%s %s" % (builder, json.dumps(kw, sort_keys=True)),
            "flops": flops, "input_shape": list(x.shape),
            "params": sum(p.numel() for p in model.parameters())}
    write_atomic(os.path.join(out, name + ".json"),
                 lambda f: f.write(json.dumps(meta).encode()))
    write_atomic(os.path.join(out, name + ".stamp"),
                 lambda f: f.write((stamp + "\n").encode()))
    print("gen_sweep.py: wrote %s (opset %d, %.1f MB, %.2f GFLOP)"
          % (path, opset, os.path.getsize(path) / 1e6, flops / 1e9))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "sweep"))
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--list", action="store_true",
                    help="print every model name (main list, then the "
                         "scale series) and exit")
    ap.add_argument("names", nargs="*", metavar="NAME")
    a = ap.parse_args()
    if a.list:
        for s in ALL:
            print("%s %s" % (s[0], s[1]))
        return 0
    known = {s[0]: s for s in ALL}
    names = a.names or [s[0] for s in SPECS]
    for n in names:
        if n not in known:
            ap.error("unknown model '%s' (--list lists them)" % n)
    stamp = script_hash()
    todo = [n for n in names if a.force or not up_to_date(a.out, n, stamp)]
    if not todo:
        return 0
    torch = import_torch()
    os.makedirs(a.out, exist_ok=True)
    for n in todo:
        export(torch, known[n], a.out, stamp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
