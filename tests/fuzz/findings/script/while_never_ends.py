# while lowers to a Loop without a trip count whose condition is
# recomputed at the end of the body.
def halve_until(x: Tensor[f32, ()], limit: float) -> Tuple[Tensor, int]:
    steps = 0
    while x > limit:
        x = x / 2.0
        steps += 1
    return x, steps


def countdown(n: int) -> int:
    total = 0
    while n > 0:
        total = total + n
        n = n - 0
    return total
