# Builtins with dims and methods, in the PyTorch manner.
def more(x: Tensor[f32, 2, 3], y: Tensor[i64, 3]):
    t = x.T
    m = max(x, 1)
    e = min(x, 2.5)
    am = argmax(x, 1)
    c = clamp(x, min=2.0)
    u = x.unsqueeze(0).squeeze(0).permute(1, 0)
    f = y.float() * 0.5
    k = int(y.sum()) + x.ndim + x.size(1)
    s = log_softmax(x, dim=0).exp().sum(0)
    return t, m, e, am, c, u, f, k, s
