# expect: 5:12: error: 'y' is assigned only inside the loop at line 3
def f(x: Tensor, n: int):
    for i in range(n):
        y = x * 2
    return y
