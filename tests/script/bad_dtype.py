# expect: 3:14: error: Add: 
def f(x: Tensor[f32, 2], y: Tensor[i64, 2]):
    return x + y
