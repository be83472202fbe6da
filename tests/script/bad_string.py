# expect: 3:9: error: string literal is not closed
def f(x: Tensor):
    s = "abc
    return x
