# expect: 3:5: error: 'y' is a Tensor on one branch and an int on the other
def f(x: Tensor, c: bool):
    if c:
        y = x * 2
    else:
        y = 0
    return y
