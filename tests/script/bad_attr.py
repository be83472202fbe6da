# expect: 3:14: error: attribute 'weight' of a Tensor is not supported
def f(x):
    return x.weight * 2
