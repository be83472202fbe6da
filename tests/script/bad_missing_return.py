# expect: 2:1: error: 'f' does not return a value
def f(x: Tensor):
    y = x + 1
