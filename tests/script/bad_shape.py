# expect: 3:14: error: MatMul
def f(a: Tensor[f32, 2, 3], b: Tensor[f32, 4, 5]):
    return a @ b
