#!/bin/sh
# --disable PASS[,PASS] on the verbs that optimize (run, bench, check,
# opt): the named passes leave the pipeline, so a model can be compared
# with and without one; a name that is no pass is an error that lists the
# passes. The model is tests/passes/fuse_attention_masks.ir's first
# attention with its shapes: fuse_attention makes one Attention node of it.
# usage: test_disable.sh SMELT_BINARY REPO_ROOT
set -u
SMELT=$1
ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

cat >"$T/a.ir" <<'IR'
graph attn(%q: f32[2,2,3,4], %k: f32[2,2,5,4], %v: f32[2,2,5,4], %m: f32[3,5]) {
  %s8: f32[] = const 0.5
  %t: f32[2,2,4,5] = Transpose(%k) {perm = [0, 1, 3, 2]}
  %s: f32[2,2,3,5] = MatMul(%q, %t)
  %d: f32[2,2,3,5] = Mul(%s, %s8)
  %a: f32[2,2,3,5] = Add(%d, %m)
  %p: f32[2,2,3,5] = Softmax(%a) {axis = -1}
  %o: f32[2,2,3,4] = MatMul(%p, %v)
  return %o
}
IR

# opt: fused by default, not with the pass disabled (alone or in a list)
"$SMELT" opt -O2 "$T/a.ir" -o "$T/on.ir" >/dev/null 2>&1 || bad "opt failed"
grep -q "= Attention(" "$T/on.ir" && ok || bad "opt -O2 did not fuse"
for d in fuse_attention "cse,fuse_attention" "fuse_attention,fuse_epilogue"; do
    "$SMELT" opt -O2 "$T/a.ir" --disable "$d" -o "$T/off.ir" >"$T/out" 2>&1 ||
        bad "opt --disable $d failed: $(cat "$T/out")"
    if grep -q "Attention" "$T/off.ir" || ! grep -q "= Softmax(" "$T/off.ir"; then
        bad "opt --disable $d still fused"
    else
        ok
    fi
done
"$SMELT" opt -O2 "$T/a.ir" --disable fuse_attention --stats >"$T/out" 2>&1
grep -q "fuse_attention" "$T/out" && bad "--stats lists a disabled pass" || ok

# run and check with and without the pass compute the same
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c "
import numpy as np
r = np.random.default_rng(1)
for n, s in (('q', (2, 2, 3, 4)), ('k', (2, 2, 5, 4)), ('v', (2, 2, 5, 4)), ('m', (3, 5))):
    np.save('$T/' + n + '.npy', r.uniform(-2, 2, s).astype(np.float32))
" || { echo "SKIP: no numpy to write the inputs"; exit 77; }
IN="-i q=$T/q.npy -i k=$T/k.npy -i v=$T/v.npy -i m=$T/m.npy"
"$SMELT" run "$T/a.ir" $IN --output-dir "$T/r1" >/dev/null 2>&1 || bad "run failed"
"$SMELT" run "$T/a.ir" $IN --disable fuse_attention --output-dir "$T/r0" \
    >/dev/null 2>&1 || bad "run --disable failed"
"$SMELT" compare "$T/r1/o.npy" "$T/r0/o.npy" >/dev/null 2>&1 && ok ||
    bad "run with and without fuse_attention differ"
"$SMELT" check "$T/a.ir" -O2 --disable fuse_attention >"$T/out" 2>&1 && ok ||
    { bad "check --disable failed"; sed 's/^/  | /' "$T/out"; }
"$SMELT" bench "$T/a.ir" --disable fuse_attention,fuse_epilogue --runs 1 \
    --warmup 0 >"$T/out" 2>&1 && ok ||
    { bad "bench --disable failed"; sed 's/^/  | /' "$T/out"; }

# an unknown name: exit 1, the name, and the passes to choose from
for verb in run opt bench check; do
    [ $verb = run ] || IN=
    "$SMELT" $verb "$T/a.ir" $IN --disable fuse_attentoin >"$T/out" 2>&1
    rc=$?
    if [ "$rc" -ne 1 ] || ! grep -q "cannot disable 'fuse_attentoin'" "$T/out" ||
        ! grep -q "fuse_attention, fuse_epilogue" "$T/out"; then
        bad "$verb --disable fuse_attentoin: exit $rc"; sed 's/^/  | /' "$T/out"
    else
        ok
    fi
done

echo "test_disable: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
