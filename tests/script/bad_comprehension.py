# expect: 3:17: error: list comprehensions are not supported
def f(x):
    ys = [x * i for i in range(3)]
    return cat(ys, 0)
