# expect: 3:5: error: nested functions are not supported
def f(x: Tensor):
    def g(v):
        return v
    return g(x)
