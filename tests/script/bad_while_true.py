# expect: 3:5: error: this while loop never ends
def f(x: Tensor):
    while True:
        x = x * 2
    return x
