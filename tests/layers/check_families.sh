#!/bin/sh
# check_families.sh ROOT - an op family has one name in every layer
# (docs/ARCHITECTURE.md, "Op families"): the shape functions of family F
# live in src/ir/shape_F.c, its reference kernels in src/kernels/ref/F.c,
# its optimized CPU kernels (where it has any) in src/kernels/cpu/F.c, its
# unit tests in tests/unit/test_ref_F.c and test_cpu_F.c. A family too
# large for one file splits it as F_WHAT.c (cpu/conv_winograd.c,
# ref/reduce_mapped.c, cpu/movement_transpose.c). The files that serve
# every family are named below.
#
# Prints every file whose name no family in the other layers answers, and
# exits 1 when there is any.
root=${1:-.}
cd "$root" || exit 2

# Helpers of a whole layer rather than one family.
shape_helpers="util check"
ref_helpers="ref_util"
cpu_helpers="cpu_ops cpu_util cpuid gemm registry rowsplit isa_avx512 isa_avx2
isa_scalar"
# CPU tests of what is not one family: the registry, the GEMM driver and
# the tables' vector math, channels-last plans (plan/layout.c).
cpu_test_helpers="registry gemm layout"

# base DIR PREFIX SUFFIX: the names F of DIR/PREFIX F SUFFIX, one a line.
base() {
    for f in "$1"/"$2"*"$3"; do
        [ -e "$f" ] || continue
        f=${f##*/}
        f=${f#"$2"}
        printf '%s\n' "${f%"$3"}"
    done
}

# listed NAME LIST: whether NAME is a word of LIST.
listed() {
    for w in $2; do
        [ "$w" = "$1" ] && return 0
    done
    return 1
}

# answered NAME FAMILIES: whether NAME, or its part before the first _,
# is one of FAMILIES.
answered() {
    listed "$1" "$2" || listed "${1%%_*}" "$2"
}

shapes=$(base src/ir shape_ .c)
refs=$(base src/kernels/ref "" .c)
cpus=$(base src/kernels/cpu "" .c)
[ -n "$shapes" ] && [ -n "$refs" ] || {
    echo "families: no shape functions or reference kernels under $root"
    exit 2
}

bad=0
miss() {
    echo "$1: $2"
    bad=1
}
for f in $shapes; do
    listed "$f" "$shape_helpers" && continue
    listed "$f" "$refs" ||
        miss "src/ir/shape_$f.c" "no src/kernels/ref/$f.c of that family"
done
for f in $refs; do
    listed "$f" "$ref_helpers" && continue
    answered "$f" "$shapes" ||
        miss "src/kernels/ref/$f.c" "no src/ir/shape_$f.c of that family"
done
for f in $cpus; do
    listed "$f" "$cpu_helpers" && continue
    answered "$f" "$refs" ||
        miss "src/kernels/cpu/$f.c" "no src/kernels/ref/$f.c of that family"
done
for f in $(base tests/unit test_ref_ .c); do
    answered "$f" "$refs" ||
        miss "tests/unit/test_ref_$f.c" "no src/kernels/ref/$f.c to test"
done
for f in $(base tests/unit test_cpu_ .c); do
    listed "$f" "$cpu_test_helpers" && continue
    answered "$f" "$cpus" ||
        miss "tests/unit/test_cpu_$f.c" "no src/kernels/cpu/$f.c to test"
done
exit $bad
