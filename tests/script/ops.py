# Ops of the op table as functions and methods, builtins with dims.
def ops(x: Tensor[f32, 2, 3]) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    a = x.softmax(-1)
    b = x.transpose(0, 1).reshape(3, 2)
    c = cat([x, x * 2.0], 0).sum(0)
    d = stack([x[0], x[1, :]], 1)
    e = where(x > 2.0, x, 0.0)
    f = x[:, 1:3].exp().log() + tensor([10.0, 20.0])
    return a, b, c, d, e, f


def shapes(x: Tensor[f32, batch, 4]) -> Tuple[Tensor, int]:
    n = x.shape[1]
    y = x.reshape(-1, 2, 2).sum(2)
    return y + n, x.shape[0]
