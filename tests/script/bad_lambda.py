# expect: 3:9: error: lambda expressions are not supported
def f(x):
    g = lambda v: v * 2
    return g(x)
