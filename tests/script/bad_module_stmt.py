# expect: 2:1: error: statements at module level are not supported
for i in range(3):
    pass

def f(x):
    return x
