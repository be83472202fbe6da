# expect: 5:12: error: 'y' is assigned in only one branch of the if at line 3
def f(x: Tensor, c: bool):
    if c:
        y = x * 2
    return y
