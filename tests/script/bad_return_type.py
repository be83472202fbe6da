# expect: 3:5: error: 'f' is annotated to return int but returns a Tensor
def f(x: Tensor) -> int:
    return x + 1
