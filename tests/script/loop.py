def scale(x: Tensor, n: int) -> Tensor:
    for i in range(n):
        x = x * 1.01
    return x


def scale3(x: Tensor) -> Tensor:
    for i in range(3):
        x = x * 1.01
    return x
