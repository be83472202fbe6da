# expect: 5:13: error: return inside a loop is not supported
def f(x: Tensor, n: int):
    for i in range(n):
        if i > 2:
            return x
        x = x + 1
    return x
