# expect: 4:5: error: 'acc' is an int before the loop and a Tensor after its body
def f(x: Tensor, n: int):
    acc = 0
    for i in range(n):
        acc = acc + x
    return acc
