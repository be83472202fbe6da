#!/bin/sh
# The smelt CLI as a user meets it: help, run, print, dot, and one clear
# error line with a non-zero exit for each kind of bad input.
# usage: test_cli.sh SMELT_BINARY REPO_ROOT
set -u
SMELT=$1
ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE FRAGMENT -- CMD...: exit status CODE and FRAGMENT in stderr+stdout
expect() {
    code=$1 frag=$2
    shift 3
    "$@" >"$T/out" 2>&1
    got=$?
    if [ "$got" -ne "$code" ]; then
        bad "$* exited $got, expected $code"; sed 's/^/  | /' "$T/out"; return
    fi
    if [ -n "$frag" ] && ! grep -qF -- "$frag" "$T/out"; then
        bad "$* output lacks '$frag'"; sed 's/^/  | /' "$T/out"; return
    fi
    ok
}

expect 0 "usage: smelt VERB" -- "$SMELT" --help
expect 0 "run a model" -- "$SMELT" --help
expect 0 "--output-dir" -- "$SMELT" run --help
expect 0 "--raw" -- "$SMELT" print --help
expect 0 "--svg" -- "$SMELT" dot --help
expect 2 "unknown verb 'frobnicate'" -- "$SMELT" frobnicate
expect 2 "usage" -- "$SMELT"
expect 2 "unknown option '--bogus'" -- "$SMELT" run --bogus
expect 2 "no FILE given" -- "$SMELT" print

# run: values, files, timing
X="x=$ROOT/examples/mlp_x.npy"
expect 0 "probs: f32[2,4] =" -- "$SMELT" run "$ROOT/examples/mlp.ir" --input "$X" --output-dir "$T/o"
[ -f "$T/o/probs.npy" ] && ok || bad "run did not write probs.npy"
expect 0 "probs: f32[2,4] =" -- "$SMELT" run "$ROOT/examples/mlp.ir" -i "$ROOT/examples/mlp_x.npy"

# print --weights is canonical: printing the printed graph gives the same
# text
"$SMELT" print --weights "$ROOT/examples/mlp.ir" >"$T/a.ir" 2>&1 || bad "print failed"
"$SMELT" print --weights "$T/a.ir" >"$T/b.ir" 2>&1 || bad "print of printed failed"
cmp -s "$T/a.ir" "$T/b.ir" && ok || bad "print is not a fixed point"
grep -q "%h: f32\[batch,32\] = MatMul" "$T/a.ir" && ok || bad "print did not infer shapes"
# without --weights, constants of more than 16 values are one short line
"$SMELT" print "$ROOT/examples/mlp.ir" >"$T/s.ir" 2>&1 || bad "print failed"
grep -q '^  %w1: f32\[16,32\] = const <512 values, fnv1a [0-9a-f]\{8\}> \[0.000307538343, 0.0746863857, .*, \.\.\.\]$' "$T/s.ir" && ok || bad "print did not summarize w1: $(grep w1 "$T/s.ir" | cut -c1-120)"
grep -q '^  %b2: f32\[4\] = const \[0.045151677, ' "$T/s.ir" && ok || bad "print summarized a small constant"
[ "$(wc -L <"$T/s.ir")" -lt 200 ] && ok || bad "print wrote a line of $(wc -L <"$T/s.ir") characters"
"$SMELT" opt "$ROOT/examples/mlp.ir" >"$T/so.ir" 2>/dev/null || bad "opt failed"
grep -q 'const <512 values' "$T/so.ir" && ok || bad "opt did not summarize"

# dot
expect 0 "" -- "$SMELT" dot "$ROOT/examples/mlp.ir" -o "$T/g.dot"
grep -q "digraph" "$T/g.dot" && ok || bad "dot output is not a digraph"
if command -v dot >/dev/null 2>&1; then
    expect 0 "" -- "$SMELT" dot "$ROOT/examples/mlp.ir" --svg "$T/g.svg"
    grep -q "<svg" "$T/g.svg" && ok || bad "no svg written"
fi

# bad input: one clear line, non-zero exit
expect 1 "nope.ir" -- "$SMELT" print "$T/nope.ir"
printf 'graph g(%%a: f32[2]) {\n  %%b = Relu(%%y)\n  return %%b\n}\n' >"$T/undef.ir"
expect 1 "undef.ir:2:13: error: undefined value %y" -- "$SMELT" print "$T/undef.ir"
printf 'graph g(%%a: f32[2], %%b: f32[3]) {\n  %%c = Add(%%a, %%b)\n  return %%c\n}\n' >"$T/shape.ir"
expect 1 "shape.ir:2:8: Add node defining %c: Add: cannot broadcast" -- "$SMELT" print "$T/shape.ir"
printf 'graph g(%%a: f32[2]) {\n  %%c = Frob(%%a)\n  return %%c\n}\n' >"$T/op.ir"
expect 1 "unknown op 'Frob'" -- "$SMELT" print "$T/op.ir"
printf 'graph g(%%a: f32[2]) {\n  %%c = LeakyRelu(%%a) {alpha = "x"}\n  return %%c\n}\n' >"$T/attr.ir"
expect 1 "attribute 'alpha' must be float, not string" -- "$SMELT" print "$T/attr.ir"
printf 'graph g(%%x: f32[2]) {\n  %%y = Relu(%%x, %%x)\n  return %%y\n}\n' >"$T/arity.ir"
expect 1 "Relu takes 1 input, got 2" -- "$SMELT" print "$T/arity.ir"
expect 1 "Relu takes 1 input, got 2" -- "$SMELT" print --raw "$T/arity.ir"
expect 1 "no value for input 'x'" -- "$SMELT" run "$ROOT/examples/mlp.ir"
expect 1 "has no input 'y'" -- "$SMELT" run "$ROOT/examples/mlp.ir" --input "y=$ROOT/examples/mlp_x.npy"
expect 1 "input 'x': expected f32[batch,16], got f32[2,4]" -- "$SMELT" run "$ROOT/examples/mlp.ir" --input "x=$ROOT/examples/mlp_y.npy"
printf 'not numpy' >"$T/bad.npy"
expect 1 "bad.npy: not an .npy file" -- "$SMELT" run "$ROOT/examples/mlp.ir" --input "x=$T/bad.npy"

# an empty batch runs (the plan builder of the example CNN died with
# SIGFPE): the plan, every ISA, and bench with the batch bound to 0
printf '\223NUMPY\001\000v\000{'"'"'descr'"'"': '"'"'<f4'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (0, 1, 28, 28), }%50s\n' '' >"$T/x0.npy"
for isa in scalar avx2 avx512; do
    expect 0 "probs: f32[0,10]" -- "$SMELT" run "$ROOT/examples/digits_cnn.onnx" --input "$T/x0.npy" --isa $isa --threads 2
done
expect 0 "latency" -- "$SMELT" bench "$ROOT/examples/digits_cnn.onnx" --dim batch=0 --runs 3
# mknpy FILE DESCR SHAPE DATA: a v1.0 .npy from printf escapes
mknpy() {
    h="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
    n=$((${#h} + 1))
    printf '\223NUMPY\001\000' >"$1"
    printf "$(printf '\\%03o\\%03o' $((n % 256)) $((n / 256)))" >>"$1"
    printf '%s\n' "$h" >>"$1"
    printf "$4" >>"$1"
}
ONE='\000\000\200\077' INF='\000\000\200\177' NINF='\000\000\200\377'
NAN='\000\000\300\177'

# compare: infinities match only themselves, NaN is an error
mknpy "$T/one.npy" '<f4' '(1,)' "$ONE"
mknpy "$T/inf.npy" '<f4' '(1,)' "$INF"
mknpy "$T/ninf.npy" '<f4' '(1,)' "$NINF"
mknpy "$T/nan.npy" '<f4' '(1,)' "$NAN"
mknpy "$T/two.npy" '<f4' '(2,)' "$ONE$ONE"
expect 1 "NOT within tolerance" -- "$SMELT" compare "$T/one.npy" "$T/inf.npy"
expect 1 "NOT within tolerance" -- "$SMELT" compare "$T/inf.npy" "$T/one.npy"
expect 1 "NOT within tolerance" -- "$SMELT" compare "$T/ninf.npy" "$T/inf.npy"
expect 0 "within tolerance" -- "$SMELT" compare "$T/inf.npy" "$T/inf.npy"
expect 1 "NaN" -- "$SMELT" compare "$T/nan.npy" "$T/one.npy"
expect 1 "NaN" -- "$SMELT" compare "$T/one.npy" "$T/nan.npy"
expect 1 "--equal-nan" -- "$SMELT" compare "$T/nan.npy" "$T/nan.npy"
expect 0 "within tolerance" -- "$SMELT" compare "$T/nan.npy" "$T/nan.npy" --equal-nan
expect 1 "shapes differ: f32[1] ($T/one.npy) vs f32[2] ($T/two.npy)" -- "$SMELT" compare "$T/one.npy" "$T/two.npy"
expect 2 "--atol needs a number" -- "$SMELT" compare "$T/one.npy" "$T/one.npy" --atol x

# special files as inputs fail at once with a clear reason
MLP=$ROOT/examples/mlp.ir
expect 1 "Is a directory" -- "$SMELT" run "$MLP" --input "x=$T"
if mkfifo "$T/fifo.npy" 2>/dev/null; then
    expect 1 "not a regular file (a FIFO or pipe)" -- "$SMELT" run "$MLP" --input "x=$T/fifo.npy"
fi

# float64 inputs: a hint, and --cast converts
D1='\000\000\000\000\000\000\360\077' D=
i=0; while [ $i -lt 32 ]; do D="$D$D1"; i=$((i + 1)); done
mknpy "$T/x64.npy" '<f8' '(2, 16)' "$D"
expect 1 "pass --cast to convert" -- "$SMELT" run "$MLP" --input "x=$T/x64.npy"
expect 0 "probs: f32[2,4] =" -- "$SMELT" run "$MLP" --input "x=$T/x64.npy" --cast

# output files: one per name, no collisions, no hidden files
printf 'graph g(%%x: f32[2]) {\n  %%"a/b" = Relu(%%x)\n  %%a_b = Neg(%%x)\n  %%"" = Abs(%%x)\n  %%".h" = Exp(%%x)\n  return %%"a/b", %%a_b, %%"", %%".h"\n}\n' >"$T/names.ir"
mknpy "$T/x2.npy" '<f4' '(2,)' "$ONE$ONE"
expect 0 "a_b: f32[2] = -1 -1" -- "$SMELT" run "$T/names.ir" --input "$T/x2.npy" --output-dir "$T/n"
[ "$(ls -A "$T/n" | sort | tr '\n' ' ')" = "%.npy %2Eh.npy a%2Fb.npy a_b.npy " ] && ok || bad "output files: $(ls -A "$T/n")"

# integers print exactly (not through a double)
printf 'graph g(%%x: f32[1]) {\n  %%c: i64[2] = const [9007199254740993, -9223372036854775807]\n  %%d = Identity(%%c)\n  return %%d\n}\n' >"$T/i64.ir"
mknpy "$T/x1.npy" '<f4' '(1,)' "$ONE"
expect 0 "d: i64[2] = 9007199254740993 -9223372036854775807" -- "$SMELT" run "$T/i64.ir" --input "$T/x1.npy"

# more outputs than any fixed array would hold
{
    printf 'graph g(%%x: f32[1]) {\n'
    i=0; while [ $i -lt 300 ]; do printf '  %%y%d = Neg(%%x)\n' $i; i=$((i + 1)); done
    printf '  return %%y0'
    i=1; while [ $i -lt 300 ]; do printf ', %%y%d' $i; i=$((i + 1)); done
    printf '\n}\n'
} >"$T/wide.ir"
expect 0 "y299: f32[1] = -1" -- "$SMELT" run "$T/wide.ir" --input "$T/x1.npy"
expect 0 "latency" -- "$SMELT" bench "$T/wide.ir" --runs 1 --warmup 0

# one option parser: -O3 and -O 3 everywhere, values checked
expect 0 "probs: f32[2,4] =" -- "$SMELT" run "$MLP" -O3 -i "$ROOT/examples/mlp_x.npy"
expect 0 "probs: f32[2,4] =" -- "$SMELT" run "$MLP" -O 1 -i "$ROOT/examples/mlp_x.npy" --threads 2
expect 2 "option --input needs a value" -- "$SMELT" run "$MLP" --input
expect 2 "option --output-dir needs a value" -- "$SMELT" run "$MLP" --output-dir --reference
expect 2 "--threads needs a whole number" -- "$SMELT" run "$MLP" --threads two
expect 2 "--dim batch=-1: the size must be a whole number" -- "$SMELT" run "$MLP" --dim batch=-1
expect 2 "--dim batch is given twice" -- "$SMELT" bench "$MLP" --dim batch=1 --dim batch=2
expect 2 "no input has a dimension named 'bach'; the inputs' symbolic dims are: batch" -- "$SMELT" bench "$MLP" --dim bach=1
expect 2 "--fn picks a function of a script (.py)" -- "$SMELT" print "$MLP" --fn f
expect 2 "'smelt compare' takes no --fn option" -- "$SMELT" compare "$T/one.npy" "$T/one.npy" --fn f
expect 0 "" -- "$SMELT" dot "$MLP" -O 2 -o "$T/o.dot"
grep -q "digraph" "$T/o.dot" && ok || bad "dot -O 2 wrote no graph"

# bench: a symbolic batch defaults to 1 with a notice; an unwritable
# trace fails before any benchmarking
expect 0 "dim 0 (batch) set to 1" -- "$SMELT" bench "$MLP" --runs 1 --warmup 0
expect 1 "--trace $T/no/such/dir/t.json" -- "$SMELT" bench "$MLP" --runs 1 --trace "$T/no/such/dir/t.json"
grep -q "latency" "$T/out" && bad "bench ran before failing on --trace" || ok

# check plans every ISA of the CPU, or the one --isa names
expect 0 "[x] compiled plan (-O3) on scalar: every output matches" -- "$SMELT" check "$MLP" --isa scalar
expect 2 "--isa needs scalar, avx2 or avx512" -- "$SMELT" check "$MLP" --isa sse
# zero Pads folded into Conv / AveragePool pads (fold_pad, asymmetric):
# the compiled plan on every ISA matches the model with its Pads
expect 0 "every output matches the model as loaded" -- "$SMELT" check "$ROOT/tests/passes/fold_pad.ir" -O 2

# a script's outputs carry the variable names the user wrote
printf 'def f(x: Tensor) -> Tuple[Tensor, Tensor]:\n    y = x * 2.0\n    y = y + 1.0\n    z = y\n    z = z * y\n    return y, z\n' >"$T/names.py"
expect 0 "y: f32[1] = 3" -- "$SMELT" run "$T/names.py" --input "$T/x1.npy"
expect 0 "z: f32[1] = 9" -- "$SMELT" run "$T/names.py" --input "$T/x1.npy"

# --why-not-fused names an unknown dimension as the reason
printf 'graph g(%%x: f32[batch,4], %%w: f32[4,4], %%b: f32[n,4]) {\n  %%h = MatMul(%%x, %%w)\n  %%y = Add(%%h, %%b)\n  return %%y\n}\n' >"$T/wnf.ir"
expect 0 "dimension 'n' is symbolic, so this cannot be proven" -- "$SMELT" opt "$T/wnf.ir" -O2 --why-not-fused

# --help lists exactly the options a verb takes
"$SMELT" bench --help >"$T/bh" 2>&1
grep -q -- "--output-dir" "$T/bh" && bad "bench --help lists --output-dir" || ok
grep -q -- "--runs R" "$T/bh" && ok || bad "bench --help lacks --runs"
for verb in run print dot opt check script info compare bench; do
    "$SMELT" $verb --help >"$T/h" 2>&1 || bad "$verb --help failed"
    # every long option in the help is accepted by the verb (none is
    # "unknown" or "takes no")
    for o in $(grep -o -- '--[a-z][a-z-]*' "$T/h" | sort -u); do
        "$SMELT" $verb $o >"$T/opt_out" 2>&1
        if grep -q "unknown option\|takes no $o option" "$T/opt_out"; then
            bad "$verb --help lists $o but $verb refuses it"
        fi
    done
done
ok
# a loader's message names the file once
expect 1 "smelt: $ROOT/tests/onnx/bad/dup_attr.onnx: onnx: node 'sm' (Softmax): attribute 'axis' appears more than once" -- "$SMELT" print "$ROOT/tests/onnx/bad/dup_attr.onnx"
expect 1 "smelt: $ROOT/tests/ir_bad/loop_label.ir:3:32: error: sub-block 0 of Loop" -- "$SMELT" print "$ROOT/tests/ir_bad/loop_label.ir"

# a run that would never end stops at --timeout, naming the Loop
printf 'graph g() {\n  %%t: bool[] = const true\n  %%x: f32[] = const 1.0\n  %%r: f32[] = Loop(_, %%t, %%x) @spin body(%%i: i64[], %%c: bool[], %%v: f32[]) {\n    return %%c, %%v\n  }\n  return %%r\n}\n' >"$T/spin.ir"
expect 1 "node 'spin' (Loop): Loop: after" -- "$SMELT" run "$T/spin.ir" --timeout 0.1
expect 1 "time limit (timeout) of 100 ms" -- "$SMELT" run "$T/spin.ir" --reference --timeout 0.1
expect 1 "time limit (timeout) of 100 ms" -- "$SMELT" bench "$T/spin.ir" --runs 1 --warmup 0 --timeout 0.1
expect 1 "time limit (timeout) of 100 ms" -- "$SMELT" check "$T/spin.ir" --timeout 0.1
expect 2 "--timeout needs a number in 0.001" -- "$SMELT" run "$T/spin.ir" --timeout 0

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
