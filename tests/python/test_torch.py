"""smelt.from_torch against the modules' own outputs (<= 1e-4):
torchvision's resnet18 and mobilenet_v2 (random weights: nothing is
downloaded), a TransformerEncoder and a GPT-style block."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

import smelt  # noqa: E402

TOL = 1e-4


def compare(module, *xs, dynamic_axes=None, more=()):
    torch.manual_seed(0)
    module.eval()
    m = smelt.from_torch(module, xs, dynamic_axes=dynamic_axes)
    for args in [xs] + list(more):
        with torch.no_grad():
            want = module(*args)
        got = m(*[a.numpy() for a in args])
        assert got.shape == tuple(want.shape)
        err = float(np.abs(got - want.numpy()).max())
        assert err <= TOL, "max abs error %g" % err
    return m


def randomize_bn(module, seed):
    # BatchNorm statistics as a trained model has them, not 0 and 1
    g = torch.Generator().manual_seed(seed)
    for mod in module.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
    return module


def test_resnet18():
    torch.manual_seed(1)
    net = randomize_bn(torchvision.models.resnet18(num_classes=10), 1)
    x = torch.randn(2, 3, 64, 64)
    compare(net, x)


def test_mobilenet_v2():
    torch.manual_seed(2)
    net = randomize_bn(torchvision.models.mobilenet_v2(num_classes=10), 2)
    x = torch.randn(1, 3, 96, 96)
    compare(net, x)


def test_transformer_encoder_dynamic_batch():
    torch.manual_seed(3)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4,
                                             dim_feedforward=64, dropout=0.0,
                                             batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, num_layers=2)
    x = torch.randn(2, 10, 32)
    compare(enc, x, dynamic_axes={"src": {0: "batch"}},
            more=[(torch.randn(5, 10, 32),), (torch.randn(1, 10, 32),)])


class GPTBlock(torch.nn.Module):
    """Pre-norm causal self-attention and a GELU MLP, as GPT-2 has."""

    def __init__(self, d=48, heads=4, seq=16):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, 4 * d)
        self.out = torch.nn.Linear(4 * d, d)
        mask = torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, h, d // h).transpose(1, 2)
        k = k.view(b, t, h, d // h).transpose(1, 2)
        v = v.view(b, t, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // h)
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))


def test_gpt_block():
    torch.manual_seed(4)
    blk = GPTBlock()
    compare(blk, torch.randn(3, 16, 48))


def test_several_inputs_and_outputs_by_name():
    class Two(torch.nn.Module):
        def forward(self, a, b):
            return a + b, a * b

    m = smelt.from_torch(Two(), (torch.randn(2, 3), torch.randn(2, 3)),
                         output_names=["sum", "prod"])
    assert [n for n, _, _ in m.inputs] == ["a", "b"]
    a = np.ones((2, 3), np.float32)
    b = np.full((2, 3), 2.0, np.float32)
    s, p = m(a, b=b)
    np.testing.assert_allclose(s, 3.0)
    np.testing.assert_allclose(p, 2.0)
    d = m.run({"a": a, "b": b})
    assert sorted(d) == ["prod", "sum"]


class TinyGPT(torch.nn.Module):
    """Token and position embeddings, two GPT blocks, a head: int64
    tokens in."""

    def __init__(self, vocab=50, d=48, seq=16):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, d) * 0.1)
        self.blocks = torch.nn.Sequential(GPTBlock(d, 4, seq),
                                          GPTBlock(d, 4, seq))
        self.ln = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[:, :idx.shape[1]]
        return self.head(self.ln(self.blocks(x)))


def test_tiny_gpt_on_int64_tokens():
    torch.manual_seed(6)
    net = TinyGPT()
    idx = torch.randint(0, 50, (2, 16))
    m = compare(net, idx, more=[(torch.randint(0, 50, (2, 16)),)])
    assert m.inputs[0][:2] == ("idx", "i64")
