# expect: 3:22: error: generator expressions are not supported
def f(x: Tensor):
    return sum(x * i for i in range(3))
