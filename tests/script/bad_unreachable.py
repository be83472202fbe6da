# expect: 4:5: error: code after return never runs
def f(x: Tensor):
    return x
    x = x + 1
