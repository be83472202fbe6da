def foo(x, y):
    return x * y + 2
