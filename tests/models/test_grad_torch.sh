#!/bin/sh
# `smelt grad` against PyTorch's autograd on models exported from PyTorch
# (scripts/gen_grad_models.py: an MLP, a CNN with BatchNorm in eval mode,
# a transformer encoder layer - as exported and with its attention fused
# into one Attention node - and an MLP of bare matrices whose ops had
# rules first). Each model's gradients are computed as a
# compiled plan (the default) and on the reference interpreter, and every
# gradient PyTorch has must lie within 1e-4 of it, relative to its
# largest element: max|smelt - torch| <= 1e-4 * max|torch|.
#
# A model with ops that have no gradient rule yet is reported as a skip
# naming those ops (never a silent pass): the run exits 77, a ctest skip,
# unless every model ran. With STRICT set to "strict", such a model fails.
# usage: test_grad_torch.sh SMELT_BINARY REPO_ROOT CACHE_DIR [strict]
set -u
SMELT=$1
ROOT=$2
CACHE=$3
STRICT=${4:-}
TOL=1e-4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
    echo "SKIP grad: no python3 to export the models with"
    exit 77
fi
"$PY" "$ROOT/scripts/gen_grad_models.py" --out "$CACHE"
rc=$?
if [ "$rc" -eq 77 ]; then
    echo "SKIP grad: PyTorch is missing (see above)"
    exit 77
elif [ "$rc" -ne 0 ]; then
    echo "FAIL grad: scripts/gen_grad_models.py exited $rc"
    exit 1
fi

fail=0
skip=0
# transformer_fused: the encoder layer with its attention fused first
# (smelt opt --passes=fuse_attention: one Attention node, initializers
# untouched), so its gradient runs through Attention's rule and the
# AttentionGrad kernel; PyTorch's gradients are the layer's own.
if ! "$SMELT" opt "$CACHE/transformer.onnx" --passes=fuse_attention \
    -o "$T/transformer_fused.ir" >"$T/opt.out" 2>&1 ||
    [ "$(grep -c '= Attention(' "$T/transformer_fused.ir")" -ne 1 ]; then
    echo "FAIL transformer_fused: fuse_attention did not make one Attention node"
    cat "$T/opt.out"
    fail=$((fail + 1))
fi
for m in mlp cnn transformer transformer_fused matmul_mlp; do
    file="$CACHE/$m.onnx"
    base=$m
    if [ "$m" = transformer_fused ]; then
        file="$T/transformer_fused.ir"
        base=transformer
    fi
    for mode in plan reference; do
        flag=
        [ "$mode" = reference ] && flag=--reference
        out="$T/$m.$mode"
        # shellcheck disable=SC2086
        if ! "$SMELT" grad "$file" --input "x=$CACHE/${base}_input_0.npy" \
            --output-dir "$out" $flag >"$T/run.out" 2>"$T/run.err"; then
            if grep -q "has no gradient rule yet" "$T/run.err"; then
                # every op without a rule that a gradient flows through,
                # not only the first the backward walk met
                ops=$("$PY" "$ROOT/tests/models/grad_path_ops.py" \
                    "$CACHE/$base.onnx" "$ROOT/src/ir/ops.def")
                echo "SKIP $m: ops without a gradient rule: $ops"
                skip=$((skip + 1))
                break
            fi
            echo "FAIL $m ($mode): smelt grad failed"
            cat "$T/run.out" "$T/run.err"
            fail=$((fail + 1))
            continue
        fi
        sed "s/^/$m ($mode): /" "$T/run.out"
        if ! "$PY" - "$CACHE/${base}_grads" "$out" "$TOL" "$m ($mode)" <<'PYEOF'
import os
import sys

import numpy as np

want_dir, got_dir, tol, label = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
bad = 0
names = sorted(os.listdir(want_dir))
for f in names:
    want = np.load(os.path.join(want_dir, f)).astype(np.float64)
    path = os.path.join(got_dir, f)
    if not os.path.exists(path):
        print("FAIL %s: smelt grad wrote no %s" % (label, f))
        bad += 1
        continue
    got = np.load(path).astype(np.float64)
    if got.shape != want.shape:
        print("FAIL %s: %s has shape %s, PyTorch's %s"
              % (label, f, got.shape, want.shape))
        bad += 1
        continue
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    rel = err / scale if scale > 0 else err
    ok = rel <= tol and np.all(np.isfinite(got))
    print("%s %s: %s max err %.3g, %.3g of its largest element"
          % ("ok  " if ok else "FAIL", label, f[:-4], err, rel))
    bad += not ok
extra = sorted(set(os.listdir(got_dir)) - set(names))
if extra:
    print("%s: not compared (PyTorch has no such parameter): %s"
          % (label, ", ".join(extra)))
sys.exit(1 if bad else 0)
PYEOF
        then
            fail=$((fail + 1))
        fi
    done
done
if [ "$fail" -ne 0 ]; then
    echo "grad: $fail model runs failed"
    exit 1
fi
if [ "$skip" -ne 0 ]; then
    if [ "$STRICT" = strict ]; then
        echo "grad: $skip models lack gradient rules (strict)"
        exit 1
    fi
    echo "grad: $skip models skipped for missing gradient rules"
    exit 77
fi
echo "grad: every gradient within $TOL of PyTorch's"
