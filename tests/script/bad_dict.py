# expect: 3:9: error: dict and set literals are not supported
def f(x: Tensor):
    d = {"a": x}
    return x
