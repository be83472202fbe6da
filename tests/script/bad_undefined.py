# expect: 3:16: error: name 'bias' is not defined
def f(x: Tensor):
    return x + bias
