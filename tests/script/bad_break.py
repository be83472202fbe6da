# expect: 5:13: error: break is not supported
def f(x: Tensor, n: int):
    for i in range(n):
        if i > 2:
            break
    return x
