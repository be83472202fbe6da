# expect: 6:12: error: argument 'n' of 'repeat' is annotated int but gets a Tensor
def repeat(x: Tensor, n: int) -> Tensor:
    return x * n

def f(x: Tensor):
    return repeat(x, x)
