# expect: 3:14: error: unsupported operand types for '+': Tensor and str
def f(x: Tensor):
    return x + "one"
