# Imports, decorators and a main guard (so that the file also runs under
# Python), tuple assignment, augmented assignment, generic op calls,
# range(start, stop, step) with a run-time stop, and early returns.
import torch
from typing import Tuple


@torch.jit.script
def statements(x: Tensor[f32, 4], n: int) -> Tuple[Tensor, int]:
    a, b = x, n
    a, b = a * 2.0, b + 1
    a += 1.0
    y = leaky_relu(a - 4.0, 0.5)
    p, q = split(y, num_outputs=2)
    acc = 0.0 * x
    for i in range(1, n, 2):
        acc = acc + i
    if n > 5:
        return y, b
    return cat([q, p], 0) + acc[0], b * 10


if __name__ == "__main__":
    with torch.no_grad():
        print(statements(torch.ones(4), 3))
