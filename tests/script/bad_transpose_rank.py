# expect: 3:14: error: transpose(x, 0, 1) needs the rank of x
def f(x: Tensor):
    return x.transpose(0, 1)
