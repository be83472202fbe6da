# expect: 3:5: error: global and nonlocal are not supported
def f(x: Tensor):
    global W
    return x
