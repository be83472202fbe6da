# expect: 2:10: error: unsupported type annotation
def f(x: Optional[Tensor]):
    return x
