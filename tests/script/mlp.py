# A small MLP with a run-time number of residual blocks.
HIDDEN = 8


def block(h: Tensor, w: Tensor) -> Tensor:
    return h + relu(h @ w) * 0.5


def mlp(x: Tensor[f32, batch, 4], w_in: Tensor[f32, 4, HIDDEN],
        w: Tensor[f32, HIDDEN, HIDDEN], depth: int) -> Tensor:
    h = tanh(x @ w_in)
    for i in range(depth):
        h = block(h, w)
    return softmax(h, -1)
