# expect: 3:14: error: for loops must iterate over range(...)
def f(x: Tensor, xs: Tensor):
    for v in xs:
        x = x + v
    return x
