# expect: 5:16: error: recursive call of 'fact' is not supported
def fact(x: Tensor, n: int) -> Tensor:
    if n <= 1:
        return x
    return x * fact(x, n - 1)

def f(x: Tensor, n: int):
    return fact(x, n)
