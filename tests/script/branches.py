# if / elif / else on run-time conditions (If nodes) and on constants
# (the branch is picked at compile time).
MODE = 2


def sign(x: Tensor[f32, ()]) -> Tensor:
    if x > 0.0:
        y = x * 0.0 + 1.0
    elif x < 0.0:
        y = x * 0.0 - 1.0
    else:
        y = x * 0.0
    return y


def clip_or_scale(x: Tensor, big: bool) -> Tensor:
    y = x
    if big:
        y = clamp(x, 0.0, 1.0)
    if MODE == 2:
        y = y * 2.0
    else:
        y = y * 3.0
    return y


def count(n: int) -> int:
    k = 0
    if n > 10:
        k = 2
    else:
        k = 1
    return k + n
