# expect: 2:17: error: expected ':', got end of line
def f(x: Tensor)
    return x
