"""The four models of the training-step benchmark (issue 14 item 9), as
PyTorch modules: one definition that gen_train_models.py exports to ONNX
for Smelt and torch_train_step.py trains in PyTorch, so both sides run
the same network from the same weights.

Each entry of MODELS gives the module's builder, the batch size, the
input shape of one sample, the loss (`smelt train --loss` name) and the
target: a class count for cross_entropy, None for mse (a target of the
output's shape).
"""
import os
import sys

ROOT = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def mlp(torch):
    nn = torch.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 2048), nn.ReLU(),
                         nn.Linear(2048, 2048), nn.ReLU(),
                         nn.Linear(2048, 10))


def digits(torch):
    """examples/digits_train's CNN (scripts/gen_train_digits.py)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gen_train_digits
    return gen_train_digits.model()


def resnet18(torch):
    import torchvision
    return torchvision.models.resnet18(num_classes=1000)


class Encoder(object):
    """Two nn.TransformerEncoderLayer (d 256, 4 heads, feed-forward
    1024, batch first) without dropout: Smelt's step and PyTorch's then
    compute the same function, and no random mask is drawn on either
    side."""

    @staticmethod
    def build(torch):
        layer = torch.nn.TransformerEncoderLayer(
            d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
            batch_first=True)
        m = torch.nn.TransformerEncoder(layer, num_layers=2,
                                        enable_nested_tensor=False)
        # the layers are deep copies of one: draw each one's weights anew,
        # or the exporter would share the equal tensors between them
        for lay in m.layers:
            lay.self_attn._reset_parameters()
            lay.linear1.reset_parameters()
            lay.linear2.reset_parameters()
        return m


# name: (builder, batch, sample shape, loss, classes or None)
MODELS = {
    "mlp": (mlp, 64, (784,), "cross_entropy", 10),
    "digits": (digits, 256, (1, 8, 8), "cross_entropy", 10),
    "resnet18": (resnet18, 8, (3, 64, 64), "cross_entropy", 1000),
    "transformer": (Encoder.build, 8, (128, 256), "mse", None),
}
ORDER = ["mlp", "digits", "resnet18", "transformer"]
# Initializers Smelt must not train: BatchNorm's running statistics are
# buffers in PyTorch, updated by the forward pass, never by the optimizer.
FREEZE = {"resnet18": "*running_mean,*running_var"}


def build(torch, name):
    """The module `name` with seeded random weights. Norm layers' scales
    and shifts are drawn at random too: fresh ones are all ones or zeros,
    and the ONNX exporter would merge equal initializers into one, so
    Smelt would train fewer tensors than PyTorch."""
    torch.manual_seed(0)
    m = MODELS[name][0](torch)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (torch.nn.LayerNorm, torch.nn.BatchNorm2d)):
                n = mod.weight.numel()
                mod.weight.copy_(torch.rand(n, generator=gen) + 0.5)
                mod.bias.copy_(torch.randn(n, generator=gen) * 0.1)
    return m
