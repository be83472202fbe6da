#!/usr/bin/python3
"""gen_op_tests.py - writes the per-op reference test suite, tests/ops/.

For every op of src/ir/ops.def this writes one or more cases, each a
directory tests/ops/<Op>_<case>/ holding

  model.ir          a small graph in the text form of docs/IR.md: the graph
                    parameters are the inputs, one op node (or an If/Loop with
                    its sub-blocks), and the return of the outputs;
  input_<i>.npy     one per graph parameter, in order;
  expected_<i>.npy  one per graph output, computed here with numpy or torch
                    (never by Smelt) following ONNX semantics (opset 17, and
                    opset 18 where ops.def takes its newer form: Split
                    num_outputs, Pad axes, reduction axes as input; Gelu
                    from opset 20; Smelt's fused ops as the comment above
                    their ops.def rows describes them).

tests/unit/test_ops.c runs every case through the reference interpreter and
compares. Inputs that ONNX models usually hold as initializers (shapes, axes,
pads, ...) are mostly written as `const` values in the graph, with a few
cases passing them as runtime inputs instead.

Run with Debian's interpreter: /usr/bin/python3 scripts/gen_op_tests.py
The output is deterministic (fixed per-op seeds, single-threaded torch, no
timestamps); the script wipes and rewrites tests/ops/ and nothing else.
"""
import math
import os
import re
import shutil
import sys
import zlib

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    sys.exit("gen_op_tests.py: numpy and torch are required (%s); run it "
             "with /usr/bin/python3, or install python3-numpy and "
             "python3-torch" % e)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS_DEF = os.path.join(ROOT, "src", "ir", "ops.def")
OUT_DIR = os.path.join(ROOT, "tests", "ops")

torch.set_num_threads(1)
np.seterr(all="ignore")

f16, f32, f64 = np.float16, np.float32, np.float64
i8, i16, i32, i64, u8 = np.int8, np.int16, np.int32, np.int64, np.uint8
BOOL = np.bool_
INT64_MAX = 2**63 - 1
INT64_MIN = -2**63

DTYPE_NAMES = {
    np.dtype(f32): "f32", np.dtype(f64): "f64", np.dtype(f16): "f16",
    np.dtype(i8): "i8", np.dtype(u8): "u8", np.dtype(i16): "i16",
    np.dtype(i32): "i32", np.dtype(i64): "i64", np.dtype(BOOL): "bool",
}
# ONNX TensorProto codes for Cast.to
ONNX_CODE = {f32: 1, u8: 2, i8: 3, i16: 5, i32: 6, i64: 7, BOOL: 9,
             f16: 10, f64: 11}

# --------------------------------------------------------------------------
# IR text writing


class C:
    """An input written as a `const` value in the graph, not a parameter."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)


class T:
    """A tensor-valued attribute."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)


def type_str(arr, dims=None):
    """`f32[2,3]`; dims overrides the shape (symbolic names, '?')."""
    if dims is None:
        dims = arr.shape
    return "%s[%s]" % (DTYPE_NAMES[arr.dtype], ",".join(str(d) for d in dims))


def fmt_num(v, dt):
    if dt == np.dtype(BOOL):
        return "true" if v else "false"
    if dt.kind in "iu":
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = ("%.17g" if dt == np.dtype(f64) else "%.9g") % v
    if not any(ch in s for ch in ".en"):
        s += ".0"
    return s


def literal(arr):
    if arr.ndim == 0:
        return fmt_num(arr.item(), arr.dtype)
    return "[" + ", ".join(fmt_num(v, arr.dtype) for v in arr.ravel()) + "]"


def fmt_attr(v):
    if isinstance(v, T):
        return "tensor %s %s" % (type_str(v.arr), literal(v.arr))
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, float):
        return repr(v)  # always holds '.', 'e', 'inf' or 'nan'
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_attr(x) for x in v) + "]"
    raise TypeError("attribute value %r" % (v,))


CASES = {}  # case name -> (model text, [inputs], [expected outputs])


def add_case(name, text, inputs, outputs):
    if name in CASES:
        raise SystemExit("duplicate case " + name)
    if not re.match(r"^[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+$", name):
        raise SystemExit("bad case name " + name)
    CASES[name] = (text, [np.asarray(a) for a in inputs],
                   [np.asarray(a) for a in outputs])


def case(op, cname, inputs, outputs, attrs=None, in_dims=None, out_dims=None):
    """One node of `op`. inputs: ndarray (graph parameter), C(ndarray)
    (graph constant) or None (absent, `_`). outputs: the expected arrays.
    attrs: ordered dict of attributes. in_dims / out_dims: optional shape
    overrides per parameter / output (symbolic dims), None entries keep."""
    name = "%s_%s" % (op, cname)
    params, consts, args, feeds = [], [], [], []
    for k, x in enumerate(inputs):
        if x is None:
            args.append("_")
        elif isinstance(x, C):
            cn = "%%c%d" % len(consts)
            consts.append("  %s: %s = const %s" % (cn, type_str(x.arr),
                                                 literal(x.arr)))
            args.append(cn)
        else:
            x = np.asarray(x)
            pn = "%%x%d" % len(params)
            dims = in_dims[k] if in_dims and k < len(in_dims) else None
            params.append("%s: %s" % (pn, type_str(x, dims)))
            args.append(pn)
            feeds.append(x)
    outs = []
    for j, y in enumerate(outputs):
        y = np.asarray(y)
        dims = out_dims[j] if out_dims and j < len(out_dims) else None
        outs.append("%%y%d: %s" % (j, type_str(y, dims)))
    attr_s = ""
    if attrs:
        attr_s = " {" + ", ".join("%s = %s" % (k, fmt_attr(v))
                                  for k, v in attrs.items()) + "}"
    lines = ["# %s: generated by scripts/gen_op_tests.py, do not edit" % name,
             "graph %s(%s) {" % (name, ", ".join(params))]
    lines += consts
    lines.append("  %s = %s(%s)%s" % (", ".join(outs), op, ", ".join(args),
                                      attr_s))
    lines.append("  return " + ", ".join("%%y%d" % j
                                         for j in range(len(outputs))))
    lines.append("}")
    add_case(name, "\n".join(lines) + "\n", feeds, outputs)


def raw_case(op, cname, body, inputs, outputs):
    """A hand-written graph (control flow): body is the text between the
    graph's braces, params are %x<i> typed from `inputs` (or from (arr,
    dims) pairs)."""
    name = "%s_%s" % (op, cname)
    params, feeds = [], []
    for k, x in enumerate(inputs):
        dims = None
        if isinstance(x, tuple):
            x, dims = x
        x = np.asarray(x)
        params.append("%%x%d: %s" % (k, type_str(x, dims)))
        feeds.append(x)
    text = ("# %s: generated by scripts/gen_op_tests.py, do not edit\n"
            "graph %s(%s) {\n%s}\n" % (name, name, ", ".join(params),
                                       body.strip("\n") + "\n"))
    add_case(name, text, feeds, outputs)


# --------------------------------------------------------------------------
# data

R = None


def seed(tag):
    """Per-op generator so that adding a case elsewhere changes nothing."""
    global R
    R = np.random.default_rng(zlib.crc32(tag.encode()))


def rf(*shape, lo=-2.0, hi=2.0, dt=f32):
    return R.uniform(lo, hi, shape).astype(dt)


def ri(*shape, lo=-5, hi=6, dt=i32):
    return R.integers(lo, hi, shape).astype(dt)


def rb(*shape):
    return R.integers(0, 2, shape).astype(BOOL)


def d(a):
    return np.asarray(a).astype(f64)


def like(y, x):
    return np.asarray(y).astype(np.asarray(x).dtype)


# --------------------------------------------------------------------------
# elementwise unary
# Each float op: f32 [3,5] in its domain; f64 and/or f16 variants; special
# values (nan/inf) where the op defines them; integer forms where ONNX allows
# them (Neg, Abs, Relu); a symbolic batch dim on Relu and Exp.

UNARY = {
    # name: (f64 function, lo, hi, extra dtypes)
    "Neg": (np.negative, -3, 3, [f64, f16]),
    "Abs": (np.abs, -3, 3, [f64]),
    "Sqrt": (np.sqrt, 0.01, 4, [f64, f16]),
    "Exp": (np.exp, -3, 3, [f64, f16]),
    "Log": (np.log, 0.01, 4, [f64]),
    "Tanh": (np.tanh, -3, 3, [f64]),
    "Sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), -6, 6, [f64, f16]),
    "Relu": (lambda x: np.maximum(x, 0), -3, 3, [f64, f16]),
    "Erf": (np.vectorize(math.erf, otypes=[f64]), -3, 3, [f64]),
    "Reciprocal": (np.reciprocal, 0.25, 3, [f64]),
    "Floor": (np.floor, -4, 4, [f64]),
    "Ceil": (np.ceil, -4, 4, [f64]),
    "Sin": (np.sin, -4, 4, [f64]),
    "Cos": (np.cos, -4, 4, [f64]),
    "Softplus": (lambda x: np.log1p(np.exp(x)), -5, 5, [f64]),
}


def gen_unary():
    for op, (fn, lo, hi, extra) in UNARY.items():
        seed(op)
        x = rf(3, 5, lo=lo, hi=hi)
        case(op, "f32", [x], [like(fn(d(x)), x)])
        for dt in extra:
            x = rf(2, 7, lo=lo, hi=hi, dt=dt)
            case(op, DTYPE_NAMES[np.dtype(dt)], [x], [like(fn(d(x)), x)])
        x = rf(11, lo=lo, hi=hi)
        case(op, "1d_odd", [x], [like(fn(d(x)), x)])
    seed("unary-special")
    # integers and special values
    x = ri(3, 4)
    case("Neg", "i32", [x], [-x])
    x = ri(2, 5, dt=i64)
    case("Neg", "i64", [x], [-x])
    x = ri(3, 4)
    case("Abs", "i32", [x], [np.abs(x)])
    x = ri(5, dt=i64)
    case("Abs", "i64", [x], [np.abs(x)])
    x = ri(2, 3, dt=i32)
    case("Relu", "i32", [x], [np.maximum(x, 0)])
    x = ri(7, dt=i64)
    case("Relu", "i64", [x], [np.maximum(x, 0)])
    x = rf(4, 3)
    case("Relu", "sym", [x], [np.maximum(x, 0)],
         in_dims=[("batch", 3)], out_dims=[("batch", 3)])
    x = rf(2, 3)
    case("Exp", "sym", [x], [like(np.exp(d(x)), x)],
         in_dims=[("n", "m")], out_dims=[("n", "m")])
    x = np.array([-1.0, 0.0, 4.0, np.inf, np.nan], f32)
    case("Sqrt", "special", [x], [like(np.sqrt(d(x)), x)])
    x = np.array([-1.0, 0.0, 1.0, np.inf, np.nan], f32)
    case("Log", "special", [x], [like(np.log(d(x)), x)])
    x = np.array([-np.inf, -100.0, 0.0, 100.0, np.inf], f32)
    case("Exp", "special", [x], [like(np.exp(d(x)), x)])
    case("Tanh", "special", [x], [like(np.tanh(d(x)), x)])
    case("Sigmoid", "special", [x],
         [like(1.0 / (1.0 + np.exp(-d(x))), x)])
    x = np.array([-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.0, -2.0], f32)
    case("Floor", "halves", [x], [np.floor(x)])
    case("Ceil", "halves", [x], [np.ceil(x)])
    x = np.array([0.0, -0.0, 2.0, -4.0], f32)
    case("Reciprocal", "zero", [x], [like(1.0 / d(x), x)])
    x = np.array([-30.0, -1.0, 0.0, 1.0, 30.0], f32)
    case("Softplus", "wide", [x], [like(np.log1p(np.exp(d(x))), x)])


def gen_identity():
    # Identity: f32, i64, bool, f16, a 0-d scalar, a symbolic dim
    seed("Identity")
    for dt in (f32, f16):
        x = rf(2, 3, dt=dt)
        case("Identity", DTYPE_NAMES[np.dtype(dt)], [x], [x])
    x = ri(4, dt=i64)
    case("Identity", "i64", [x], [x])
    x = rb(3, 2)
    case("Identity", "bool", [x], [x])
    x = np.array(2.5, f32)
    case("Identity", "scalar", [x], [x])
    x = rf(3, 2)
    case("Identity", "sym", [x], [x], in_dims=[("b", 2)], out_dims=[("b", 2)])


def gen_leakyrelu():
    # LeakyRelu: default alpha 0.01; alpha 0.2; f64; alpha 0 on f16
    seed("LeakyRelu")
    lr = lambda x, a: np.where(d(x) < 0, a * d(x), d(x))
    x = rf(3, 4)
    case("LeakyRelu", "default", [x], [like(lr(x, 0.01), x)])
    x = rf(2, 5)
    case("LeakyRelu", "alpha", [x], [like(lr(x, 0.2), x)], {"alpha": 0.2})
    x = rf(7, dt=f64)
    case("LeakyRelu", "f64", [x], [like(lr(x, 1.5), x)], {"alpha": 1.5})
    x = rf(2, 3, dt=f16)
    case("LeakyRelu", "f16", [x], [like(lr(x, 0.5), x)], {"alpha": 0.5})


def gen_not():
    # Not: bool 2-D, bool scalar
    seed("Not")
    x = rb(3, 4)
    case("Not", "bool", [x], [~x])
    case("Not", "scalar", [np.array(True)], [np.array(False)])


def gen_clip():
    # Clip (opset 13): min and max as optional scalar inputs: none, min
    # only, max only (min `_`), both (as parameters and as constants), ints
    seed("Clip")
    x = rf(3, 4, lo=-3, hi=3)
    case("Clip", "none", [x], [x])
    lo = np.array(-0.5, f32)
    hi = np.array(1.25, f32)
    case("Clip", "min_only", [x, lo], [np.maximum(x, lo)])
    case("Clip", "max_only", [x, None, hi], [np.minimum(x, hi)])
    case("Clip", "both", [x, lo, hi], [np.clip(x, lo, hi)])
    x = rf(2, 5, lo=-3, hi=3)
    case("Clip", "both_const", [x, C(lo), C(hi)], [np.clip(x, lo, hi)])
    x = ri(3, 5, lo=-10, hi=10)
    case("Clip", "i32", [x, C(np.array(-3, i32)), C(np.array(4, i32))],
         [np.clip(x, -3, 4).astype(i32)])
    x = ri(6, lo=-10, hi=10, dt=i64)
    case("Clip", "i64_max", [x, None, C(np.array(2, i64))],
         [np.minimum(x, 2)])
    x = rf(5, dt=f64)
    case("Clip", "f64", [x, np.array(-1.0), np.array(0.5)],
         [np.clip(x, -1.0, 0.5)])


def gen_cast():
    # Cast: f32->i32/i64 (truncation toward zero), f32->f16 (incl. overflow
    # to inf, saturate=0), f16->f32, f32<->f64, i64->f32, i32<->i64,
    # f32->bool / bool->f32 / bool->i64, i32->bool, f32->u8 / u8->i32,
    # f32->i8, f32->i16; bf16 is skipped (numpy cannot represent it).
    seed("Cast")
    x = np.array([[-2.7, -1.5, -0.4, 0.0], [0.4, 1.5, 2.7, 100.9]], f32)
    case("Cast", "f32_i32", [x], [x.astype(i32)], {"to": ONNX_CODE[i32]})
    case("Cast", "f32_i64", [x], [x.astype(i64)], {"to": ONNX_CODE[i64]})
    case("Cast", "f32_bool", [x], [x.astype(BOOL)], {"to": ONNX_CODE[BOOL]})
    x = np.array([0.1, -3.14159, 65504.0, 1e5, -1e-8, 1.0 / 3], f32)
    case("Cast", "f32_f16", [x], [x.astype(f16)], {"to": ONNX_CODE[f16]})
    case("Cast", "f32_f16_nosat", [x], [x.astype(f16)],
         {"to": ONNX_CODE[f16], "saturate": 0})
    x = rf(3, 3, dt=f16)
    case("Cast", "f16_f32", [x], [x.astype(f32)], {"to": ONNX_CODE[f32]})
    x = rf(2, 3)
    case("Cast", "f32_f64", [x], [x.astype(f64)], {"to": ONNX_CODE[f64]})
    x = rf(5, dt=f64) / 3
    case("Cast", "f64_f32", [x], [x.astype(f32)], {"to": ONNX_CODE[f32]})
    x = ri(2, 4, lo=-1000, hi=1000, dt=i64)
    case("Cast", "i64_f32", [x], [x.astype(f32)], {"to": ONNX_CODE[f32]})
    case("Cast", "i64_i32", [x], [x.astype(i32)], {"to": ONNX_CODE[i32]})
    x = ri(5, lo=-3, hi=3)
    case("Cast", "i32_i64", [x], [x.astype(i64)], {"to": ONNX_CODE[i64]})
    case("Cast", "i32_bool", [x], [x.astype(BOOL)], {"to": ONNX_CODE[BOOL]})
    x = rb(2, 3)
    case("Cast", "bool_f32", [x], [x.astype(f32)], {"to": ONNX_CODE[f32]})
    case("Cast", "bool_i64", [x], [x.astype(i64)], {"to": ONNX_CODE[i64]})
    x = np.array([0.0, 1.9, 127.5, 200.0, 255.0], f32)
    case("Cast", "f32_u8", [x], [x.astype(u8)], {"to": ONNX_CODE[u8]})
    x = np.array([0, 7, 128, 255], u8)
    case("Cast", "u8_i32", [x], [x.astype(i32)], {"to": ONNX_CODE[i32]})
    x = np.array([-128.0, -3.9, 0.5, 127.0], f32)
    case("Cast", "f32_i8", [x], [x.astype(i8)], {"to": ONNX_CODE[i8]})
    x = np.array([-32768.0, -300.7, 0.0, 32767.0], f32)
    case("Cast", "f32_i16", [x], [x.astype(i16)], {"to": ONNX_CODE[i16]})
    x = rf(3, 2)
    case("Cast", "f32_f32", [x], [x], {"to": ONNX_CODE[f32]})


def gen_dropout():
    # Dropout at inference (training_mode absent or false): the identity,
    # and the optional mask output all true; ratio given; seed set.
    seed("Dropout")
    x = rf(3, 4)
    case("Dropout", "basic", [x], [x])
    case("Dropout", "mask", [x], [x, np.ones(x.shape, BOOL)])
    x = rf(2, 5)
    case("Dropout", "ratio", [x, C(np.array(0.5, f32)),
                              C(np.array(False))],
         [x, np.ones(x.shape, BOOL)], {"seed": 3})
    x = rf(4, dt=f64)
    case("Dropout", "f64_absent_ratio", [x, None, np.array(False)], [x])


# --------------------------------------------------------------------------
# broadcasting binary and n-ary
# Add/Sub/Mul: same shape; [2,3,4] with [4]; [2,1,4] with [3,1]; with a
# 0-d scalar; f64, f16, i32, i64, u8 (no overflow); a symbolic batch dim.


def gen_arith():
    fns = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}
    for op, fn in fns.items():
        seed(op)
        a, b = rf(3, 4), rf(3, 4)
        case(op, "same", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = rf(2, 3, 4), rf(4)
        case(op, "bcast_row", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = rf(2, 1, 4), rf(3, 1)
        case(op, "bcast_both", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = np.array(1.5, f32), rf(2, 3)
        case(op, "scalar_left", [a, b], [like(fn(d(a), d(b)), b)])
        a, b = rf(5), np.array(-0.25, f32)
        case(op, "scalar_right", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = rf(2, 3, dt=f64), rf(1, 3, dt=f64)
        case(op, "f64", [a, b], [fn(a, b)])
        a, b = rf(3, 3, dt=f16), rf(3, 1, dt=f16)
        case(op, "f16", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = ri(3, 4), ri(4)
        case(op, "i32", [a, b], [fn(a, b).astype(i32)])
        a, b = ri(2, 3, dt=i64), ri(2, 1, dt=i64)
        case(op, "i64", [a, b], [fn(a, b)])
        a, b = rf(4, 3), rf(3)
        case(op, "sym", [a, b], [like(fn(d(a), d(b)), a)],
             in_dims=[("batch", 3)], out_dims=[("batch", 3)])
    a = R.integers(10, 100, (2, 3)).astype(u8)
    b = R.integers(0, 10, (3,)).astype(u8)
    case("Add", "u8", [a, b], [(a.astype(i32) + b).astype(u8)])
    case("Sub", "u8", [a, b], [(a.astype(i32) - b).astype(u8)])
    case("Add", "big_i64", [np.array([2**40, -2**50], i64),
                            np.array([3, 2**52 + 1], i64)],
         [np.array([2**40 + 3, -2**50 + 2**52 + 1], i64)])


def trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def gen_div():
    # Div: f32 same and broadcast, f64, division by zero (inf/nan), integer
    # division truncating toward zero (as C and ONNX Runtime) on i32 and
    # i64 with negative operands, a symbolic dim
    seed("Div")
    a, b = rf(3, 4), rf(3, 4, lo=0.5, hi=2)
    case("Div", "same", [a, b], [like(d(a) / d(b), a)])
    a, b = rf(2, 3, 4), rf(3, 1, lo=-2, hi=-0.5)
    case("Div", "bcast", [a, b], [like(d(a) / d(b), a)])
    a, b = rf(5, dt=f64), rf(5, lo=1, hi=3, dt=f64)
    case("Div", "f64", [a, b], [a / b])
    a = np.array([1.0, -1.0, 0.0, 2.0], f32)
    b = np.array([0.0, 0.0, 0.0, np.inf], f32)
    case("Div", "by_zero", [a, b], [like(d(a) / d(b), a)])
    a = np.array([7, -7, 7, -7, 0, 1, -1, 9], i32)
    b = np.array([2, 2, -2, -2, 3, 3, 3, -4], i32)
    case("Div", "i32_trunc", [a, b], [trunc_div(a, b)])
    a = ri(3, 4, lo=-100, hi=100, dt=i64)
    b = np.array([3, -5, 7, -2], i64)
    case("Div", "i64_bcast", [a, b], [trunc_div(a, b)])
    a, b = rf(3, 2), np.array(4.0, f32)
    case("Div", "sym", [a, b], [like(d(a) / 4.0, a)],
         in_dims=[("n", 2)], out_dims=[("n", 2)])


def gen_pow():
    # Pow: f32^f32 (positive base), f32 with exponent scalar 2.0, f32
    # (negative base) with i32 and i64 integer exponents (ONNX allows the
    # exponent a different type; the output has the base's type), i64^i64,
    # f64, 0^0 = 1
    seed("Pow")
    a, b = rf(3, 4, lo=0.1, hi=3), rf(3, 4, lo=-2, hi=2)
    case("Pow", "f32", [a, b], [like(np.power(d(a), d(b)), a)])
    a = rf(2, 5)
    case("Pow", "square", [a, C(np.array(2.0, f32))],
         [like(d(a) ** 2, a)])
    a, b = rf(2, 3, lo=-3, hi=3), np.array([2, 3, -1], i32)
    case("Pow", "int_exp_i32", [a, b], [like(np.power(d(a), d(b)), a)])
    a, b = rf(4, lo=-2, hi=2), np.array(3, i64)
    case("Pow", "int_exp_i64", [a, b], [like(np.power(d(a), 3.0), a)])
    a, b = ri(2, 3, lo=-4, hi=5, dt=i64), ri(3, lo=0, hi=4, dt=i64)
    case("Pow", "i64", [a, b], [np.power(a, b)])
    a, b = rf(3, lo=0.5, hi=2, dt=f64), rf(2, 1, dt=f64)
    case("Pow", "f64_bcast", [a, b], [np.power(a, b)])
    a = np.array([0.0, 0.0, 2.0, -2.0], f32)
    b = np.array([0.0, 2.0, -1.0, 0.5], f32)
    case("Pow", "special", [a, b], [like(np.power(d(a), d(b)), a)])


def gen_minmax_sum():
    # Min/Max/Sum (variadic): one input, two same shape, three inputs with
    # broadcasting, i32, i64, f64
    for op, fn in (("Min", np.minimum), ("Max", np.maximum),
                   ("Sum", np.add)):
        seed(op)
        a = rf(3, 4)
        case(op, "one", [a], [a])
        a, b = rf(3, 4), rf(3, 4)
        case(op, "two", [a, b], [like(fn(d(a), d(b)), a)])
        a, b, c = rf(2, 3, 1), rf(4), rf(3, 1)
        case(op, "three_bcast", [a, b, c],
             [like(fn(fn(d(a), d(b)), d(c)), a)])
        a, b = ri(2, 3), ri(1, 3)
        case(op, "i32", [a, b], [fn(a, b).astype(i32)])
        a, b, c = ri(4, dt=i64), ri(4, dt=i64), ri(1, dt=i64)
        case(op, "i64", [a, b, c], [fn(fn(a, b), c)])
        a, b = rf(2, 2, dt=f64), rf(2, 2, dt=f64)
        case(op, "f64", [a, b], [fn(a, b)])
        a, b = rf(2, 3, dt=f16), rf(3, dt=f16)
        case(op, "f16", [a, b], [like(fn(d(a), d(b)), a)])


def gen_compare():
    # Equal/Less/Greater: f32 with ties, broadcast, i64, i32 scalar, bool
    # (Equal), output bool; a symbolic dim
    for op, fn in (("Equal", np.equal), ("Less", np.less),
                   ("Greater", np.greater)):
        seed(op)
        a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 2.5]], f32)
        b = np.array([[1.0, 3.0, 2.0], [-1.0, -0.0, 2.5]], f32)
        case(op, "f32", [a, b], [fn(a, b)])
        a, b = ri(2, 3, 4, lo=-2, hi=3).astype(f32), ri(4, lo=-2, hi=3)
        case(op, "bcast", [a, b.astype(f32)], [fn(a, b)])
        a, b = ri(3, 4, lo=-2, hi=3, dt=i64), ri(3, 1, lo=-2, hi=3, dt=i64)
        case(op, "i64", [a, b], [fn(a, b)])
        a, b = ri(5, lo=-2, hi=3), np.array(0, i32)
        case(op, "i32_scalar", [a, b], [fn(a, b)])
        a, b = rf(4, 2), rf(2)
        case(op, "sym", [a, b], [fn(a, b)],
             in_dims=[("n", 2)], out_dims=[("n", 2)])
        a = np.array([np.nan, 1.0, np.inf, -np.inf], f32)
        b = np.array([np.nan, np.nan, np.inf, 0.0], f32)
        case(op, "special", [a, b], [fn(a, b)])
    seed("Equal-bool")
    a, b = rb(2, 3), rb(3)
    case("Equal", "bool", [a, b], [a == b])


def gen_logic():
    # And/Or: bool same shape, broadcast, scalar
    for op, fn in (("And", np.logical_and), ("Or", np.logical_or)):
        seed(op)
        a, b = rb(3, 4), rb(3, 4)
        case(op, "same", [a, b], [fn(a, b)])
        a, b = rb(2, 1, 3), rb(4, 1)
        case(op, "bcast", [a, b], [fn(a, b)])
        a, b = rb(5), np.array(op == "And")
        case(op, "scalar", [a, b], [fn(a, b)])


def gen_where():
    # Where: same shape f32; all three broadcast; i64; bool values; scalar
    # branch values
    seed("Where")
    c, x, y = rb(3, 4), rf(3, 4), rf(3, 4)
    case("Where", "same", [c, x, y], [np.where(c, x, y)])
    c, x, y = rb(3, 1), rf(1, 4), rf(2, 1, 1)
    case("Where", "bcast", [c, x, y], [np.where(c, x, y)])
    c, x, y = rb(5), ri(5, dt=i64), ri(1, dt=i64)
    case("Where", "i64", [c, x, y], [np.where(c, x, y)])
    c, x, y = rb(2, 3), rb(2, 3), rb(3)
    case("Where", "bool", [c, x, y], [np.where(c, x, y)])
    c = rb(2, 3)
    x, y = np.array(1.0, f32), np.array(-1.0, f32)
    case("Where", "scalars", [c, x, y], [np.where(c, x, y).astype(f32)])


# --------------------------------------------------------------------------
# contractions


def gen_matmul():
    # MatMul: 2-D; 1-D x 2-D; 2-D x 1-D; 1-D x 1-D (0-d result); batched
    # 3-D x 2-D; broadcast batch dims [2,1,3,4] x [3,4,5]; f64; f16; i32; i64;
    # odd sizes; a symbolic batch dim
    seed("MatMul")
    mm = lambda a, b: like(np.matmul(d(a), d(b)), a)
    a, b = rf(3, 4), rf(4, 5)
    case("MatMul", "2d", [a, b], [mm(a, b)])
    a, b = rf(4), rf(4, 3)
    case("MatMul", "1d_2d", [a, b], [mm(a, b)])
    a, b = rf(2, 4), rf(4)
    case("MatMul", "2d_1d", [a, b], [mm(a, b)])
    a, b = rf(5), rf(5)
    case("MatMul", "1d_1d", [a, b], [mm(a, b)])
    a, b = rf(2, 3, 4), rf(4, 2)
    case("MatMul", "batched", [a, b], [mm(a, b)])
    a, b = rf(2, 1, 3, 4), rf(3, 4, 5)
    case("MatMul", "bcast_batch", [a, b], [mm(a, b)])
    a, b = rf(4), rf(2, 4, 3)
    case("MatMul", "1d_3d", [a, b], [mm(a, b)])
    a, b = rf(3, 7, dt=f64), rf(7, 1, dt=f64)
    case("MatMul", "f64", [a, b], [np.matmul(a, b)])
    a, b = rf(2, 3, dt=f16), rf(3, 4, dt=f16)
    case("MatMul", "f16", [a, b], [mm(a, b)])
    a, b = ri(2, 3), ri(3, 2)
    case("MatMul", "i32", [a, b], [np.matmul(a, b).astype(i32)])
    a, b = ri(2, 2, 3, dt=i64), ri(2, 3, 1, dt=i64)
    case("MatMul", "i64", [a, b], [np.matmul(a, b)])
    a, b = rf(13, 17), rf(17, 11)
    case("MatMul", "odd", [a, b], [mm(a, b)])
    a, b = rf(3, 4), rf(4, 2)
    case("MatMul", "sym", [a, b], [mm(a, b)],
         in_dims=[("batch", 4)], out_dims=[("batch", 2)])


def gen_gemm():
    # Gemm: A[3,4] B[4,5] no C; transA; transB; both; alpha/beta with C
    # [5] (row broadcast), [3,1] (column), 0-d scalar and full [3,5]; f64
    seed("Gemm")

    def gemm(a, b, c=None, alpha=1.0, beta=1.0, ta=0, tb=0):
        A = d(a).T if ta else d(a)
        B = d(b).T if tb else d(b)
        y = alpha * (A @ B)
        if c is not None:
            y = y + beta * d(c)
        return like(y, a)

    a, b = rf(3, 4), rf(4, 5)
    case("Gemm", "noC", [a, b], [gemm(a, b)])
    a, b = rf(4, 3), rf(4, 5)
    case("Gemm", "transA", [a, b], [gemm(a, b, ta=1)], {"transA": 1})
    a, b = rf(3, 4), rf(5, 4)
    case("Gemm", "transB", [a, b], [gemm(a, b, tb=1)], {"transB": 1})
    a, b = rf(4, 3), rf(5, 4)
    case("Gemm", "transAB", [a, b], [gemm(a, b, ta=1, tb=1)],
         {"transA": 1, "transB": 1})
    a, b, c = rf(3, 4), rf(4, 5), rf(5)
    case("Gemm", "C_row", [a, b, c], [gemm(a, b, c, 0.5, 2.0)],
         {"alpha": 0.5, "beta": 2.0})
    a, b, c = rf(3, 4), rf(4, 5), rf(3, 1)
    case("Gemm", "C_col", [a, b, c], [gemm(a, b, c, beta=-1.0)],
         {"beta": -1.0})
    a, b, c = rf(3, 4), rf(4, 5), np.array(0.75, f32)
    case("Gemm", "C_scalar", [a, b, c], [gemm(a, b, c, alpha=2.0)],
         {"alpha": 2.0})
    a, b, c = rf(3, 4), rf(5, 4), rf(3, 5)
    case("Gemm", "C_full", [a, b, C(c)], [gemm(a, b, c, tb=1)],
         {"transB": 1})
    a, b, c = rf(2, 3, dt=f64), rf(3, 4, dt=f64), rf(1, 4, dt=f64)
    case("Gemm", "f64", [a, b, c], [gemm(a, b, c, 1.25, 0.5)],
         {"alpha": 1.25, "beta": 0.5})
    a, b = rf(4, 3), rf(4, 3)
    case("Gemm", "sym", [a, b], [gemm(a, b, tb=1)], {"transB": 1},
         in_dims=[("batch", 3)], out_dims=[("batch", 4)])


def conv_ref(x, w, b, strides, pads, dil, group):
    """ONNX Conv through torch in float64; pads [b1..bn, e1..en] may be
    asymmetric, so the input is padded explicitly first."""
    nd = x.ndim - 2
    tp = []
    for i in reversed(range(nd)):
        tp += [pads[i], pads[i + nd]]
    xt = F.pad(torch.from_numpy(d(x)), tp)
    wt = torch.from_numpy(d(w))
    bt = torch.from_numpy(d(b)) if b is not None else None
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    y = fn(xt, wt, bt, stride=list(strides), padding=0, dilation=list(dil),
           groups=group)
    return like(y.numpy(), x)


def same_pads(sizes, k, s, dil, upper):
    """auto_pad SAME_UPPER / SAME_LOWER: output ceil(in / stride), the odd
    pad at the end (upper) or the beginning (lower)."""
    nd = len(sizes)
    pb, pe = [0] * nd, [0] * nd
    for i in range(nd):
        out = -(-sizes[i] // s[i])
        total = max(0, (out - 1) * s[i] + (k[i] - 1) * dil[i] + 1 - sizes[i])
        small = total // 2
        pb[i], pe[i] = (small, total - small) if upper else (total - small,
                                                              small)
    return pb + pe


def gen_conv():
    # Conv: 1-D; 2-D plain; 2-D symmetric pads + stride 2; asymmetric pads;
    # dilations 2; group 2; depthwise (group = C) with bias; bias; auto_pad
    # SAME_UPPER (stride 1 and stride 2), SAME_LOWER (stride 2), VALID;
    # explicit kernel_shape; 3-D; f64; odd sizes; a symbolic batch dim
    seed("Conv")

    def cv(cname, xs, ws, bias=False, strides=None, pads=None, dil=None,
           group=1, auto_pad=None, kernel_shape=False, dt=f32, in_dims=None,
           out_dims=None):
        x = rf(*xs, dt=dt)
        w = rf(*ws, lo=-1, hi=1, dt=dt)
        b = rf(ws[0], dt=dt) if bias else None
        nd = len(xs) - 2
        st = strides or [1] * nd
        dl = dil or [1] * nd
        attrs = {}
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pp = same_pads(list(xs[2:]), list(ws[2:]), st, dl,
                           auto_pad == "SAME_UPPER")
        else:
            pp = pads or [0] * (2 * nd)
        if auto_pad:
            attrs["auto_pad"] = auto_pad
        if dil:
            attrs["dilations"] = dil
        if group != 1:
            attrs["group"] = group
        if kernel_shape:
            attrs["kernel_shape"] = list(ws[2:])
        if pads:
            attrs["pads"] = pads
        if strides:
            attrs["strides"] = strides
        y = conv_ref(x, w, b, st, pp, dl, group)
        ins = [x, w] + ([b] if bias else [])
        case("Conv", cname, ins, [y], attrs, in_dims, out_dims)

    cv("1d", (1, 2, 9), (3, 2, 3))
    cv("1d_pads_stride", (2, 3, 10), (2, 3, 4), bias=True, strides=[3],
       pads=[2, 1])
    cv("2d", (1, 3, 5, 5), (2, 3, 3, 3))
    cv("2d_pad_stride", (2, 2, 7, 6), (3, 2, 3, 3), strides=[2, 2],
       pads=[1, 1, 1, 1])
    cv("2d_asym_pads", (1, 2, 5, 6), (2, 2, 3, 2), pads=[0, 1, 2, 0])
    cv("2d_dilations", (1, 2, 7, 7), (2, 2, 3, 3), dil=[2, 2], pads=[1, 2,
                                                                     1, 2])
    cv("2d_stride_hw", (1, 1, 8, 7), (2, 1, 2, 3), strides=[3, 2])
    cv("2d_group2", (1, 4, 5, 5), (6, 2, 3, 3), group=2, bias=True)
    cv("2d_depthwise", (2, 3, 6, 6), (3, 1, 3, 3), group=3, bias=True,
       pads=[1, 1, 1, 1])
    cv("2d_bias", (1, 3, 4, 4), (4, 3, 1, 1), bias=True)
    cv("2d_same_upper", (1, 2, 5, 6), (2, 2, 3, 4), auto_pad="SAME_UPPER")
    cv("2d_same_upper_s2", (1, 2, 6, 7), (3, 2, 3, 3), auto_pad="SAME_UPPER",
       strides=[2, 2])
    cv("2d_same_lower_s2", (1, 2, 6, 7), (3, 2, 4, 3),
       auto_pad="SAME_LOWER", strides=[2, 2])
    cv("2d_valid", (1, 2, 5, 5), (1, 2, 2, 3), auto_pad="VALID")
    cv("2d_kernel_shape", (1, 2, 4, 5), (2, 2, 2, 3), kernel_shape=True)
    cv("3d", (1, 2, 4, 5, 3), (2, 2, 2, 3, 2), bias=True,
       pads=[1, 0, 1, 0, 1, 1])
    cv("f64", (1, 2, 5, 4), (2, 2, 3, 3), dt=f64, strides=[1, 2],
       pads=[1, 1, 1, 1])
    cv("odd", (1, 5, 11, 9), (7, 5, 5, 3), bias=True, strides=[2, 1],
       pads=[2, 1, 2, 1])
    cv("sym", (2, 2, 5, 5), (3, 2, 3, 3), pads=[1, 1, 1, 1],
       in_dims=[("N", 2, 5, 5)], out_dims=[("N", 3, 5, 5)])


def gen_convgradweight():
    # ConvGradWeight (Smelt's, Conv's kernel gradient): 1-D; 2-D plain;
    # pads + stride 2; asymmetric pads; dilations; group 2; depthwise; a
    # stride that leaves the input's end unread; 3-D; f64; odd sizes.
    # Expected: torch's gradient of conv_ref's convolution for the kernel.
    seed("ConvGradWeight")

    def gw(cname, xs, ks, m, strides=None, pads=None, dil=None, group=1,
           dt=f32):
        nd = len(xs) - 2
        st = strides or [1] * nd
        dl = dil or [1] * nd
        pp = pads or [0] * (2 * nd)
        x = rf(*xs, dt=dt)
        tp = []
        for i in reversed(range(nd)):
            tp += [pp[i], pp[i + nd]]
        xt = F.pad(torch.from_numpy(d(x)), tp)
        wt = torch.zeros((m, xs[1] // group) + tuple(ks), dtype=torch.float64,
                         requires_grad=True)
        fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
        y = fn(xt, wt, None, stride=st, padding=0, dilation=dl, groups=group)
        dy = rf(*y.shape, dt=dt)
        (dw,) = torch.autograd.grad(y, wt, torch.from_numpy(d(dy)))
        attrs = {"kernel_shape": list(ks)}
        if dil:
            attrs["dilations"] = dil
        if group != 1:
            attrs["group"] = group
        if pads:
            attrs["pads"] = pads
        if strides:
            attrs["strides"] = strides
        case("ConvGradWeight", cname, [x, dy], [like(dw.numpy(), x)], attrs)

    gw("1d", (2, 2, 9), (3,), 3)
    gw("2d", (2, 3, 5, 5), (3, 3), 2)
    gw("2d_pad_stride", (2, 2, 7, 6), (3, 3), 3, strides=[2, 2],
       pads=[1, 1, 1, 1])
    gw("2d_asym_pads", (1, 2, 5, 6), (3, 2), 2, pads=[0, 1, 2, 0])
    gw("2d_dilations", (2, 2, 7, 7), (3, 3), 2, dil=[2, 2],
       pads=[1, 2, 1, 2])
    gw("2d_group2", (2, 4, 5, 5), (3, 3), 6, group=2, pads=[1, 1, 1, 1])
    gw("2d_depthwise", (3, 3, 6, 6), (3, 3), 3, group=3, pads=[1, 1, 1, 1])
    gw("2d_stride_unread", (2, 2, 8, 7), (2, 3), 2, strides=[3, 2])
    gw("3d", (1, 2, 4, 5, 3), (2, 3, 2), 2, pads=[1, 0, 1, 0, 1, 1])
    gw("f64", (2, 2, 5, 4), (3, 3), 2, strides=[1, 2], pads=[1, 1, 1, 1],
       dt=f64)
    gw("odd", (3, 5, 11, 9), (5, 3), 7, strides=[2, 1], pads=[2, 1, 2, 1])


def convt_ref(x, w, b, strides, pads, dil, group, outpad):
    """ONNX ConvTranspose through torch in float64: the full transposed
    convolution (with output_padding rows at the end), then pads cropped
    from each side."""
    nd = x.ndim - 2
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d,
          3: F.conv_transpose3d}[nd]
    bt = torch.from_numpy(d(b)) if b is not None else None
    y = fn(torch.from_numpy(d(x)), torch.from_numpy(d(w)), bt,
           stride=list(strides), padding=0, output_padding=list(outpad),
           groups=group, dilation=list(dil)).numpy()
    sl = [slice(None), slice(None)]
    for i in range(nd):
        sl.append(slice(pads[i], y.shape[2 + i] - pads[i + nd]))
    return like(y[tuple(sl)], x)


def gen_convtranspose():
    # ConvTranspose: 1-D; 2-D plain; strides 2; strides 2 with
    # output_padding 1; group 2 with bias; pads (symmetric and asymmetric);
    # dilations; output_shape (the pads it implies split evenly);
    # explicit kernel_shape; f64
    seed("ConvTranspose")

    def ct(cname, xs, ws, bias=False, strides=None, pads=None, dil=None,
           group=1, outpad=None, output_shape=None, kernel_shape=False,
           dt=f32):
        x = rf(*xs, dt=dt)
        w = rf(*ws, lo=-1, hi=1, dt=dt)
        b = rf(ws[1] * group, dt=dt) if bias else None
        nd = len(xs) - 2
        st = strides or [1] * nd
        dl = dil or [1] * nd
        op = outpad or [0] * nd
        pp = pads or [0] * (2 * nd)
        attrs = {}
        if dil:
            attrs["dilations"] = dil
        if group != 1:
            attrs["group"] = group
        if kernel_shape:
            attrs["kernel_shape"] = list(ws[2:])
        if outpad:
            attrs["output_padding"] = outpad
        if output_shape:
            attrs["output_shape"] = output_shape
            pp = [0] * (2 * nd)
            for i in range(nd):
                total = (st[i] * (xs[2 + i] - 1) + op[i] +
                         (ws[2 + i] - 1) * dl[i] + 1 - output_shape[i])
                assert total >= 0 and total % 2 == 0, "ambiguous split"
                pp[i] = pp[i + nd] = total // 2
        if pads:
            attrs["pads"] = pads
        if strides:
            attrs["strides"] = strides
        y = convt_ref(x, w, b, st, pp, dl, group, op)
        ins = [x, w] + ([b] if bias else [])
        case("ConvTranspose", cname, ins, [y], attrs)

    ct("1d", (1, 2, 5), (2, 3, 3))
    ct("2d", (1, 2, 3, 4), (2, 3, 3, 3))
    ct("2d_stride2", (1, 2, 3, 3), (2, 2, 3, 3), strides=[2, 2])
    ct("2d_stride2_outpad", (1, 1, 3, 4), (1, 2, 3, 2), strides=[2, 3],
       outpad=[1, 2])
    ct("2d_group2_bias", (2, 4, 3, 3), (4, 3, 2, 2), group=2, bias=True,
       strides=[2, 1])
    ct("2d_pads", (1, 2, 4, 4), (2, 2, 3, 3), strides=[2, 2],
       pads=[1, 1, 1, 1])
    ct("2d_asym_pads", (1, 1, 3, 3), (1, 2, 3, 3), strides=[2, 2],
       pads=[0, 1, 2, 0])
    ct("2d_dilations", (1, 2, 3, 3), (2, 1, 2, 3), dil=[2, 2], bias=True)
    ct("2d_output_shape", (1, 2, 3, 3), (2, 2, 3, 3), strides=[2, 2],
       output_shape=[5, 5])
    ct("2d_kernel_shape", (1, 1, 2, 3), (1, 2, 2, 2), kernel_shape=True)
    ct("f64", (1, 2, 3, 2), (2, 1, 3, 3), dt=f64, strides=[1, 2],
       pads=[1, 0, 1, 0])


# --------------------------------------------------------------------------
# pooling and normalization


def pool_ref(x, kind, k, s, pads, dil, ceil_mode, cip=0, storage_order=0):
    """ONNX MaxPool / AveragePool in plain numpy (float64 math). Returns
    (Y, Indices). Indices flatten over the whole input tensor (N and C
    included), row-major, or column-major over the spatial dims when
    storage_order is 1. count_include_pad counts window positions inside
    the padded extent; otherwise only positions inside the input."""
    N, Cc = x.shape[:2]
    sp = x.shape[2:]
    nd = len(sp)
    outs = []
    for i in range(nd):
        eff = (k[i] - 1) * dil[i] + 1
        num = sp[i] + pads[i] + pads[i + nd] - eff
        o = (-(-num // s[i]) if ceil_mode else num // s[i]) + 1
        # keep away from the ceil_mode corner where implementations differ
        assert (o - 1) * s[i] < sp[i] + pads[i], "window starts in pad"
        outs.append(o)
    y = np.zeros((N, Cc) + tuple(outs), f64)
    idx = np.zeros(y.shape, i64)
    xd = d(x)
    for n in range(N):
        for c in range(Cc):
            for o in np.ndindex(*outs):
                best, bi, acc, cnt_in, cnt_pad = -np.inf, -1, 0.0, 0, 0
                for kk in np.ndindex(*k):
                    p = [o[i] * s[i] - pads[i] + kk[i] * dil[i]
                         for i in range(nd)]
                    if all(-pads[i] <= p[i] < sp[i] + pads[i + nd]
                           for i in range(nd)):
                        cnt_pad += 1
                    if not all(0 <= p[i] < sp[i] for i in range(nd)):
                        continue
                    v = xd[(n, c) + tuple(p)]
                    cnt_in += 1
                    acc += v
                    if v > best:
                        best = v
                        if storage_order == 0:
                            flat = 0
                            for i in range(nd):
                                flat = flat * sp[i] + p[i]
                        else:
                            flat = 0
                            for i in reversed(range(nd)):
                                flat = flat * sp[i] + p[i]
                        bi = (n * Cc + c) * int(np.prod(sp)) + flat
                if kind == "max":
                    y[(n, c) + o] = best
                    idx[(n, c) + o] = bi
                else:
                    y[(n, c) + o] = acc / (cnt_pad if cip else cnt_in)
    return like(y, x), idx


def gen_pool():
    # MaxPool: 2-D k2 s2; pads + stride 1 (padding never wins); 1-D;
    # ceil_mode 1; dilations 2; Indices output (row-major, and
    # storage_order 1); auto_pad SAME_UPPER; asymmetric pads; u8 and f64;
    # 3-D; kernel 1x1 stride 2
    # AveragePool: k2 s2; count_include_pad 0 and 1 with pads; asymmetric
    # pads with count_include_pad 1; ceil_mode 1; 1-D; auto_pad SAME_LOWER
    # and SAME_UPPER; dilations; f64
    seed("Pool")

    def pl(op, cname, xs, k, strides=None, pads=None, dil=None, ceil=0,
           cip=0, auto_pad=None, so=0, want_idx=False, dt=f32, x=None):
        if x is None:
            x = rf(*xs, dt=dt) if dt != u8 else \
                R.permutation(np.prod(xs)).reshape(xs).astype(u8)
        nd = len(k)
        st = strides or [1] * nd
        dl = dil or [1] * nd
        attrs = {}
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pp = same_pads(list(x.shape[2:]), k, st, dl,
                           auto_pad == "SAME_UPPER")
            attrs["auto_pad"] = auto_pad
        else:
            pp = pads or [0] * (2 * nd)
        if ceil:
            attrs["ceil_mode"] = 1
        if cip:
            attrs["count_include_pad"] = 1
        if dil:
            attrs["dilations"] = dil
        attrs["kernel_shape"] = k
        if pads:
            attrs["pads"] = pads
        if so:
            attrs["storage_order"] = so
        if strides:
            attrs["strides"] = strides
        y, idx = pool_ref(x, "max" if op == "MaxPool" else "avg", k, st, pp,
                          dl, ceil, cip, so)
        case(op, cname, [x], [y, idx] if want_idx else [y], attrs)
        return x, y, pp

    # cross-check the numpy pooling against torch where torch applies
    def check_torch(got, want):
        assert np.allclose(d(got), want, rtol=1e-6, atol=1e-6), "pool_ref"

    x, y, _ = pl("MaxPool", "2d", (1, 2, 4, 6), [2, 2], strides=[2, 2])
    check_torch(y, F.max_pool2d(torch.from_numpy(d(x)), 2, 2).numpy())
    x, y, _ = pl("MaxPool", "2d_pads", (2, 1, 5, 5), [3, 3],
                 pads=[1, 1, 1, 1])
    check_torch(y, F.max_pool2d(torch.from_numpy(d(x)), 3, 1, 1).numpy())
    pl("MaxPool", "1d", (1, 3, 9), [3], strides=[2])
    x, y, _ = pl("MaxPool", "2d_ceil", (1, 1, 5, 7), [2, 2], strides=[2, 2],
                 ceil=1)
    check_torch(y, F.max_pool2d(torch.from_numpy(d(x)), 2, 2,
                                ceil_mode=True).numpy())
    x, y, _ = pl("MaxPool", "2d_dilations", (1, 2, 6, 6), [2, 2],
                 dil=[2, 2], pads=[1, 1, 1, 1])
    check_torch(y, F.max_pool2d(torch.from_numpy(d(x)), 2, 1, 1,
                                dilation=2).numpy())
    pl("MaxPool", "2d_indices", (2, 2, 4, 5), [2, 2], strides=[2, 2],
       pads=[0, 0, 1, 1], want_idx=True)
    pl("MaxPool", "2d_indices_colmajor", (1, 2, 4, 5), [3, 2],
       strides=[1, 2], so=1, want_idx=True)
    pl("MaxPool", "1d_indices", (2, 2, 7), [2], strides=[2], ceil=1,
       want_idx=True)
    pl("MaxPool", "2d_same_upper", (1, 1, 5, 6), [3, 2], strides=[2, 2],
       auto_pad="SAME_UPPER")
    pl("MaxPool", "2d_asym_pads", (1, 2, 4, 4), [2, 3], pads=[1, 0, 0, 2])
    pl("MaxPool", "u8", (1, 2, 4, 4), [2, 2], strides=[2, 2], dt=u8)
    pl("MaxPool", "f64", (1, 1, 5, 5), [3, 3], strides=[2, 2], dt=f64,
       pads=[1, 1, 1, 1])
    pl("MaxPool", "3d", (1, 1, 4, 4, 3), [2, 2, 2], strides=[2, 2, 1])
    pl("MaxPool", "k1_s2", (1, 2, 5, 5), [1, 1], strides=[2, 2])

    x, y, _ = pl("AveragePool", "2d", (1, 2, 4, 6), [2, 2], strides=[2, 2])
    check_torch(y, F.avg_pool2d(torch.from_numpy(d(x)), 2, 2).numpy())
    x, y, _ = pl("AveragePool", "pads_exclude", (1, 2, 5, 5), [3, 3],
                 pads=[1, 1, 1, 1], strides=[2, 2])
    check_torch(y, F.avg_pool2d(torch.from_numpy(d(x)), 3, 2, 1,
                                count_include_pad=False).numpy())
    x, y, _ = pl("AveragePool", "pads_include", (1, 2, 5, 5), [3, 3],
                 pads=[1, 1, 1, 1], strides=[2, 2], cip=1)
    check_torch(y, F.avg_pool2d(torch.from_numpy(d(x)), 3, 2, 1,
                                count_include_pad=True).numpy())
    pl("AveragePool", "asym_pads_include", (1, 1, 4, 5), [2, 3],
       pads=[1, 0, 0, 2], cip=1)
    pl("AveragePool", "asym_pads_exclude", (1, 1, 4, 5), [2, 3],
       pads=[1, 0, 0, 2])
    x, y, _ = pl("AveragePool", "ceil", (1, 1, 5, 7), [2, 2],
                 strides=[2, 2], ceil=1)
    check_torch(y, F.avg_pool2d(torch.from_numpy(d(x)), 2, 2,
                                ceil_mode=True).numpy())
    x, y, _ = pl("AveragePool", "1d", (2, 3, 8), [3], strides=[1])
    check_torch(y, F.avg_pool1d(torch.from_numpy(d(x)), 3, 1).numpy())
    pl("AveragePool", "same_lower", (1, 2, 5, 5), [2, 2],
       auto_pad="SAME_LOWER")
    pl("AveragePool", "same_upper", (1, 1, 5, 6), [3, 3], strides=[2, 2],
       auto_pad="SAME_UPPER")
    pl("AveragePool", "dilations", (1, 1, 6, 6), [2, 2], dil=[2, 2])
    pl("AveragePool", "f64", (1, 2, 4, 4), [2, 2], strides=[1, 2], dt=f64)


def gen_globalpool():
    # GlobalAveragePool / GlobalMaxPool: 4-D, 3-D (1-D spatial), 5-D, f64
    seed("GlobalPool")
    for op, fn in (("GlobalAveragePool", np.mean), ("GlobalMaxPool", np.max)):
        for cname, shape, dt in (("4d", (2, 3, 4, 5), f32),
                                 ("3d", (1, 2, 7), f32),
                                 ("5d", (1, 2, 2, 3, 2), f32),
                                 ("f64", (2, 2, 3, 3), f64)):
            x = rf(*shape, dt=dt)
            ax = tuple(range(2, x.ndim))
            case(op, cname, [x], [like(fn(d(x), axis=ax, keepdims=True), x)])


def gen_batchnorm():
    # BatchNormalization (inference): 4-D NCHW; 2-D [N,C]; 3-D with
    # epsilon 1e-3 and momentum 0.5 (unused at inference); f64; params as
    # constants
    seed("BatchNormalization")

    def bn(cname, shape, eps=None, mom=None, dt=f32, const=False):
        x = rf(*shape, dt=dt)
        c = shape[1]
        sc, b, m = rf(c, dt=dt), rf(c, dt=dt), rf(c, dt=dt)
        v = rf(c, lo=0.1, hi=2, dt=dt)
        bs = (1, c) + (1,) * (len(shape) - 2)
        e = 1e-5 if eps is None else eps
        y = ((d(x) - d(m).reshape(bs)) / np.sqrt(d(v).reshape(bs) + e) *
             d(sc).reshape(bs) + d(b).reshape(bs))
        attrs = {}
        if eps is not None:
            attrs["epsilon"] = eps
        if mom is not None:
            attrs["momentum"] = mom
        ins = [x] + ([C(a) for a in (sc, b, m, v)] if const else
                     [sc, b, m, v])
        case("BatchNormalization", cname, ins, [like(y, x)], attrs)

    bn("4d", (2, 3, 4, 5))
    bn("2d", (4, 3))
    bn("3d_eps", (2, 4, 5), eps=1e-3, mom=0.5)
    bn("f64", (1, 2, 3, 3), dt=f64)
    bn("const", (2, 3, 2, 2), const=True)


def gen_layernorm():
    # LayerNormalization: axis -1 with bias; axis -2 (normalize over the
    # last two dims) with the Mean and InvStdDev outputs; axis 1 on 3-D
    # without bias (B absent) and epsilon 1e-3; axis 0 (everything);
    # f64 (Mean and InvStdDev stay f32: stash_type 1); a symbolic batch dim
    seed("LayerNormalization")

    def ln(cname, shape, axis, bias=True, eps=None, outs=1, dt=f32,
           in_dims=None, out_dims=None):
        x = rf(*shape, dt=dt)
        a = axis % len(shape)
        nshape = shape[a:]
        sc = rf(*nshape, dt=dt)
        b = rf(*nshape, dt=dt) if bias else None
        e = 1e-5 if eps is None else eps
        ax = tuple(range(a, len(shape)))
        xd = d(x)
        mean = xd.mean(axis=ax, keepdims=True)
        var = ((xd - mean) ** 2).mean(axis=ax, keepdims=True)
        inv = 1.0 / np.sqrt(var + e)
        y = (xd - mean) * inv * d(sc)
        if bias:
            y = y + d(b)
        attrs = {}
        if axis != -1:
            attrs["axis"] = axis
        if eps is not None:
            attrs["epsilon"] = eps
        ins = [x, sc] + ([b] if bias else [])
        # Mean and InvStdDev have type U: f32 for the default stash_type 1
        res = [like(y, x), mean.astype(f32), inv.astype(f32)][:outs]
        case("LayerNormalization", cname, ins, res, attrs, in_dims, out_dims)

    ln("axis_last", (2, 3, 8), -1)
    ln("axis_m2_stats", (2, 3, 4), -2, outs=3)
    ln("axis1_nobias", (2, 3, 5), 1, bias=False, eps=1e-3, outs=2)
    ln("axis0", (3, 4), 0, outs=3)
    ln("f64", (4, 6), -1, dt=f64, outs=3)
    ln("sym", (3, 5), -1, in_dims=[("batch", 5)], out_dims=[("batch", 5)])


def gen_softmax():
    # Softmax / LogSoftmax: default axis (-1); axis 0; axis 1 of 3-D; axis
    # -2; f64; large values (needs the max subtracted); a symbolic dim
    for op in ("Softmax", "LogSoftmax"):
        seed(op)

        def sm(x, axis):
            xd = d(x)
            z = xd - xd.max(axis=axis, keepdims=True)
            ez = np.exp(z)
            s = ez.sum(axis=axis, keepdims=True)
            r = ez / s if op == "Softmax" else z - np.log(s)
            return like(r, x)

        x = rf(3, 5, lo=-3, hi=3)
        case(op, "default", [x], [sm(x, -1)])
        x = rf(4, 3, lo=-3, hi=3)
        case(op, "axis0", [x], [sm(x, 0)], {"axis": 0})
        x = rf(2, 3, 4, lo=-3, hi=3)
        case(op, "axis1_3d", [x], [sm(x, 1)], {"axis": 1})
        case(op, "axis_m2", [x], [sm(x, -2)], {"axis": -2})
        x = rf(2, 6, lo=-3, hi=3, dt=f64)
        case(op, "f64", [x], [sm(x, -1)])
        x = np.array([[1000.0, 999.0, 998.0], [-1000.0, -999.0, 0.0]], f32)
        case(op, "large", [x], [sm(x, -1)])
        x = rf(3, 4)
        case(op, "sym", [x], [sm(x, -1)], in_dims=[("n", 4)],
             out_dims=[("n", 4)])


# --------------------------------------------------------------------------
# reductions


def gen_reduce():
    # ReduceSum/Mean/Max/Min: axes attribute [1]; axes attribute [0,2]
    # keepdims 0; axes input (negative axis, as a constant and as a graph
    # parameter); no axes (reduce all, keepdims 1 and 0); noop_with_empty_axes
    # 1 with no axes (identity) and with an empty axes input; axes input
    # empty with noop 0 (reduce all); integer dtypes (not Mean); f64
    fns = {"ReduceSum": np.sum, "ReduceMean": np.mean,
           "ReduceMax": np.max, "ReduceMin": np.min}
    for op, fn in fns.items():
        seed(op)
        red = lambda x, ax, kd: like(fn(d(x), axis=ax, keepdims=bool(kd)), x)
        x = rf(3, 4, 5)
        case(op, "attr_axis1", [x], [red(x, (1,), 1)], {"axes": [1]})
        case(op, "attr_axes02_nokeep", [x], [red(x, (0, 2), 0)],
             {"axes": [0, 2], "keepdims": 0})
        x = rf(2, 3, 4)
        case(op, "input_axis_neg", [x, C(np.array([-1], i64))],
             [red(x, (2,), 1)])
        case(op, "input_axes_param", [x, np.array([0, -1], i64)],
             [red(x, (0, 2), 0)], {"keepdims": 0})
        x = rf(3, 5)
        case(op, "all_keep", [x], [red(x, None, 1)])
        case(op, "all_nokeep", [x], [red(x, None, 0)], {"keepdims": 0})
        case(op, "noop_empty", [x], [x], {"noop_with_empty_axes": 1})
        case(op, "noop_empty_input", [x, C(np.zeros(0, i64))], [x],
             {"noop_with_empty_axes": 1})
        case(op, "empty_input_all", [x, C(np.zeros(0, i64))],
             [red(x, None, 1)])
        x = rf(2, 3, 2, dt=f64)
        case(op, "f64", [x], [red(x, (1,), 0)], {"axes": [-2],
                                                 "keepdims": 0})
        x = rf(7, 3)
        case(op, "odd", [x], [red(x, (0,), 1)], {"axes": [0]})
        if op != "ReduceMean":
            x = ri(3, 4)
            case(op, "i32", [x], [fn(x, axis=1, keepdims=True).astype(i32)],
                 {"axes": [1]})
            x = ri(2, 3, 2, lo=-1000, hi=1000, dt=i64)
            case(op, "i64", [x, C(np.array([0, 2], i64))],
                 [fn(x, axis=(0, 2), keepdims=False)], {"keepdims": 0})


def gen_argmax():
    # ArgMax: default axis 0 keepdims 1; axis -1 keepdims 0; ties with
    # select_last_index 0 and 1; i32 input; 3-D axis 1; f64
    seed("ArgMax")

    def am(x, axis, kd, last=0):
        if last:
            r = x.shape[axis] - 1 - np.argmax(np.flip(x, axis), axis=axis)
        else:
            r = np.argmax(x, axis=axis)
        if kd:
            r = np.expand_dims(r, axis)
        return r.astype(i64)

    x = rf(4, 3)
    case("ArgMax", "default", [x], [am(x, 0, 1)])
    x = rf(3, 5)
    case("ArgMax", "axis_m1_nokeep", [x], [am(x, -1, 0)],
         {"axis": -1, "keepdims": 0})
    x = np.array([[1, 3, 3, 0], [2, 2, 1, 2], [0, 0, 0, 0]], f32)
    case("ArgMax", "ties_first", [x], [am(x, 1, 1)], {"axis": 1})
    case("ArgMax", "ties_last", [x], [am(x, 1, 1, 1)],
         {"axis": 1, "select_last_index": 1})
    x = ri(2, 4, 3, lo=-3, hi=3)
    case("ArgMax", "i32_axis1", [x], [am(x, 1, 0)], {"axis": 1,
                                                     "keepdims": 0})
    case("ArgMax", "i32_last", [x], [am(x, 2, 1, 1)],
         {"axis": 2, "select_last_index": 1})
    x = rf(5, dt=f64)
    case("ArgMax", "f64_1d", [x], [am(x, 0, 0)], {"keepdims": 0})


# --------------------------------------------------------------------------
# layout and shape


def onnx_reshape(x, shape, allowzero=0):
    shape = list(shape)
    if not allowzero:
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def gen_reshape():
    # Reshape: plain; -1 inferred; 0 copies a dim; to 0-d scalar; to 1-D;
    # shape as a runtime parameter; allowzero 1 (no zeros in the shape);
    # i64 and bool data; a symbolic batch dim with 0 and -1
    seed("Reshape")
    x = rf(2, 3, 4)
    for cname, shp in (("plain", [4, 6]), ("infer", [2, -1, 2]),
                       ("zero_copies", [0, 12]), ("flat", [-1])):
        s = np.array(shp, i64)
        case("Reshape", cname, [x, C(s)], [onnx_reshape(x, s)])
    s = np.array([2, 0, 2, -1], i64)
    case("Reshape", "param_shape", [x, s], [onnx_reshape(x, s)])
    s = np.array([6, 4], i64)
    case("Reshape", "allowzero", [x, C(s)], [x.reshape(6, 4)],
         {"allowzero": 1})
    x1 = np.array([7.5], f32)
    case("Reshape", "to_scalar", [x1, C(np.zeros(0, i64))],
         [x1.reshape(())])
    xi = ri(2, 6, dt=i64)
    case("Reshape", "i64", [xi, C(np.array([3, 4], i64))],
         [xi.reshape(3, 4)])
    xb = rb(4, 2)
    case("Reshape", "bool", [xb, C(np.array([2, 2, 2], i64))],
         [xb.reshape(2, 2, 2)])
    x = rf(3, 2, 4)
    case("Reshape", "sym", [x, C(np.array([0, -1], i64))],
         [x.reshape(3, 8)], in_dims=[("batch", 2, 4)],
         out_dims=[("batch", 8)])


def gen_flatten():
    # Flatten: default axis 1; axis 0 ([1, N]); axis 2 of 4-D; axis -1;
    # axis equal to the rank ([N, 1]); i64
    seed("Flatten")
    x = rf(2, 3, 4, 2)
    fl = lambda x, a: x.reshape(int(np.prod(x.shape[:a])), -1)
    case("Flatten", "default", [x], [fl(x, 1)])
    case("Flatten", "axis0", [x], [x.reshape(1, -1)], {"axis": 0})
    case("Flatten", "axis2", [x], [fl(x, 2)], {"axis": 2})
    case("Flatten", "axis_m1", [x], [fl(x, 3)], {"axis": -1})
    case("Flatten", "axis_rank", [x], [x.reshape(-1, 1)], {"axis": 4})
    xi = ri(3, 2, 2, dt=i64)
    case("Flatten", "i64", [xi], [fl(xi, 1)])


def gen_squeeze():
    # Squeeze: axes input [1]; axes input negative [-1, 0]; axes attribute
    # (older opsets); no axes (all size-1 dims); to a 0-d scalar; i32
    # Unsqueeze: axes input [0]; [0, 3] (output-rank positions); negative
    # [-1]; attribute form; from 0-d; unsorted axes [2, 0]; bool
    seed("Squeeze")
    x = rf(1, 3, 1, 4, 1)
    case("Squeeze", "input_axis", [x, C(np.array([2], i64))],
         [x.reshape(1, 3, 4, 1)])
    case("Squeeze", "input_neg", [x, C(np.array([-1, 0], i64))],
         [x.reshape(3, 1, 4)])
    case("Squeeze", "attr", [x], [x.reshape(1, 3, 4)], {"axes": [4, 2]})
    case("Squeeze", "all", [x], [x.reshape(3, 4)])
    x1 = np.array([[3.5]], f32)
    case("Squeeze", "to_scalar", [x1], [x1.reshape(())])
    xi = ri(2, 1, 3)
    case("Squeeze", "i32", [xi, C(np.array([1], i64))], [xi.reshape(2, 3)])

    seed("Unsqueeze")
    x = rf(3, 4)
    case("Unsqueeze", "front", [x, C(np.array([0], i64))],
         [x.reshape(1, 3, 4)])
    case("Unsqueeze", "two", [x, C(np.array([0, 3], i64))],
         [x.reshape(1, 3, 4, 1)])
    case("Unsqueeze", "neg", [x, C(np.array([-1], i64))],
         [x.reshape(3, 4, 1)])
    case("Unsqueeze", "unsorted", [x, C(np.array([2, 0], i64))],
         [x.reshape(1, 3, 1, 4)])
    case("Unsqueeze", "attr", [x], [x.reshape(3, 1, 4)], {"axes": [1]})
    x0 = np.array(1.25, f32)
    case("Unsqueeze", "from_scalar", [x0, C(np.array([0], i64))],
         [x0.reshape(1)])
    xb = rb(2, 3)
    case("Unsqueeze", "bool_param", [xb, np.array([1, -1], i64)],
         [xb.reshape(2, 1, 3, 1)])


def gen_transpose():
    # Transpose: default perm (reverse); perm [1,0]; [0,2,1]; 4-D
    # [0,3,1,2] (NCHW->NHWC style); i64; bool; 1-D
    seed("Transpose")
    x = rf(2, 3, 4)
    case("Transpose", "default", [x], [x.transpose()])
    case("Transpose", "perm021", [x], [x.transpose(0, 2, 1)],
         {"perm": [0, 2, 1]})
    x2 = rf(3, 5)
    case("Transpose", "2d", [x2], [x2.T], {"perm": [1, 0]})
    x4 = rf(2, 3, 2, 4)
    case("Transpose", "4d", [x4], [x4.transpose(0, 3, 1, 2)],
         {"perm": [0, 3, 1, 2]})
    xi = ri(2, 3, 2, dt=i64)
    case("Transpose", "i64", [xi], [xi.transpose(2, 0, 1)],
         {"perm": [2, 0, 1]})
    xb = rb(3, 2)
    case("Transpose", "bool", [xb], [xb.T])
    x1 = rf(5)
    case("Transpose", "1d", [x1], [x1])


def gen_concat():
    # Concat: axis 0; axis 1; axis -1 with three inputs; a single input;
    # i64; bool; a symbolic dim not on the axis
    seed("Concat")
    a, b = rf(2, 3), rf(4, 3)
    case("Concat", "axis0", [a, b], [np.concatenate([a, b], 0)], {"axis": 0})
    a, b = rf(2, 1, 3), rf(2, 4, 3)
    case("Concat", "axis1", [a, b], [np.concatenate([a, b], 1)], {"axis": 1})
    a, b, c = rf(2, 2), rf(2, 1), rf(2, 3)
    case("Concat", "three_neg", [a, b, c], [np.concatenate([a, b, c], -1)],
         {"axis": -1})
    case("Concat", "one", [a], [a], {"axis": 0})
    a, b = ri(3, dt=i64), ri(2, dt=i64)
    case("Concat", "i64", [a, b], [np.concatenate([a, b])], {"axis": 0})
    a, b = rb(1, 2), rb(1, 3)
    case("Concat", "bool", [a, b], [np.concatenate([a, b], 1)], {"axis": 1})
    a, b = rf(3, 2), rf(3, 3)
    case("Concat", "sym", [a, b],
         [np.concatenate([a, b], 1)], {"axis": 1},
         in_dims=[("n", 2), ("n", 3)], out_dims=[("n", 5)])


def gen_split():
    # Split: equal parts (output count decides); split attribute [2,4] on
    # axis 1; split input (constant); negative axis; num_outputs 3 on 7
    # (opset 18: parts of ceil(7/3) = 3, the last smaller); i64; one output
    seed("Split")
    x = rf(6, 4)
    case("Split", "equal", [x], np.split(x, 3, 0))
    x = rf(2, 6)
    case("Split", "attr", [x], np.split(x, [2], 1), {"axis": 1,
                                                     "split": [2, 4]})
    x = rf(5, 3)
    case("Split", "input", [x, C(np.array([1, 3, 1], i64))],
         np.split(x, [1, 4], 0))
    x = rf(2, 3, 4)
    case("Split", "neg_axis", [x, C(np.array([3, 1], i64))],
         np.split(x, [3], 2), {"axis": -1})
    x = rf(7, 2)
    case("Split", "num_outputs", [x], np.split(x, [3, 6], 0),
         {"num_outputs": 3})
    xi = ri(4, 2, dt=i64)
    case("Split", "i64", [xi], np.split(xi, 2, 0))
    x = rf(3, 2)
    case("Split", "one", [x], [x], {"axis": 1})


def onnx_slice(x, starts, ends, axes=None, steps=None):
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    sl = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        sl[a % x.ndim] = slice(int(s), int(e), int(st))
    return x[tuple(sl)]


def gen_slice():
    # Slice: starts/ends only; with axes; negative starts/ends; ends past
    # the end (INT64_MAX); negative step (reverse to the front with
    # INT64_MIN); step 2 and -2; negative axes; axes absent (`_`) with steps
    # present; i32 indices; starts/ends as runtime parameters; i64 data
    seed("Slice")
    x = rf(4, 5)

    def sc(cname, x, starts, ends, axes=None, steps=None, it=i64,
           param=False):
        arr = lambda v: np.array(v, it)
        wrap = (lambda v: arr(v)) if param else (lambda v: C(arr(v)))
        ins = [x, wrap(starts), wrap(ends)]
        if axes is not None:
            ins.append(wrap(axes))
        elif steps is not None:
            ins.append(None)
        if steps is not None:
            ins.append(wrap(steps))
        case("Slice", cname, ins, [onnx_slice(x, starts, ends, axes, steps)])

    sc("basic", x, [1, 0], [3, 4])
    sc("axes", x, [1], [4], axes=[1])
    sc("negative", x, [-3, -4], [-1, 5], axes=[0, 1])
    sc("end_max", x, [2], [INT64_MAX], axes=[1])
    sc("reverse", x, [-1], [INT64_MIN], axes=[0], steps=[-1])
    sc("reverse_part", x, [3], [0], axes=[1], steps=[-1])
    sc("step2", x, [0, 1], [5, 5], axes=[1, 0], steps=[2, 1])
    sc("step_m2", x, [4], [-6], axes=[1], steps=[-2])
    sc("neg_axes", x, [1, 1], [3, 4], axes=[-1, -2])
    sc("no_axes_steps", x, [0, 4], [4, 0], steps=[3, -1])
    sc("i32_idx", x, [1], [3], axes=[1], it=i32)
    sc("param", x, [0, 2], [2, 5], axes=[0, 1], param=True)
    x3 = ri(3, 4, 5, dt=i64)
    sc("3d_i64", x3, [1, -1, 0], [3, 0, 5], axes=[0, 1, 2], steps=[1, -2, 2])
    sc("clamp_start", x, [-100, 10], [100, 2], axes=[0, 1], steps=[1, -1])


def gen_gather():
    # Gather: axis 0 with 1-D indices; 2-D indices; negative indices; axis
    # 1; axis -1; 0-d index (drops the axis); i32 indices; i64 data; bool
    seed("Gather")
    x = rf(5, 4)

    def g(cname, x, idx, axis=0, param=False):
        ax = axis % x.ndim
        nidx = np.where(idx < 0, idx + x.shape[ax], idx)
        attrs = {"axis": axis} if axis != 0 else None
        case("Gather", cname, [x, idx if param else C(idx)],
             [np.take(x, nidx, axis=ax)], attrs)

    g("axis0", x, np.array([4, 0, 2], i64), param=True)
    g("2d_idx", x, np.array([[0, 1], [3, 3], [2, 4]], i64), param=True)
    g("neg_idx", x, np.array([-1, -5, 1], i64))
    g("axis1", x, np.array([[3], [0]], i64), axis=1)
    x3 = rf(2, 3, 4)
    g("axis_m1", x3, np.array([2, -1], i64), axis=-1, param=True)
    g("scalar_idx", x3, np.array(1, i64), axis=1)
    g("i32_idx", x, np.array([1, -2], i32), param=True)
    g("i64_data", ri(4, 3, dt=i64), np.array([3, 1], i64))
    g("bool_data", rb(3, 2), np.array([2, 0, 2], i64))


def gen_expand():
    # Expand: [3,1] to [2,3,4]; shape of lower rank than the input; shape
    # with 1s that keep the input's dims; a 0-d input; shape as runtime
    # parameter; i64; bool
    seed("Expand")

    def ex(cname, x, shp, param=False):
        s = np.array(shp, i64)
        y = np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(shp)))
        case("Expand", cname, [x, s if param else C(s)], [y.copy()])

    ex("rank_up", rf(3, 1), [2, 3, 4])
    ex("lower_rank", rf(2, 1, 4), [3, 1])
    ex("ones", rf(3, 4), [1, 1])
    ex("scalar", np.array(2.5, f32), [2, 3])
    ex("param", rf(1, 3), [4, 3], param=True)
    ex("i64", ri(2, 1, dt=i64), [2, 5])
    ex("bool", rb(1, 2), [3, 1, 2])


def gen_tile():
    # Tile: repeats [2,3]; 3-D with ones; 1-D; repeats as parameter; i64
    seed("Tile")
    for cname, x, reps, param in (("2d", rf(2, 3), [2, 3], False),
                                  ("3d", rf(2, 1, 3), [1, 3, 2], False),
                                  ("1d", rf(4), [3], True),
                                  ("ones", rf(2, 2), [1, 1], False),
                                  ("i64", ri(2, 2, dt=i64), [2, 1], True),
                                  ("bool", rb(1, 3), [2, 2], False)):
        r = np.array(reps, i64)
        case("Tile", cname, [x, r if param else C(r)], [np.tile(x, reps)])


def onnx_pad(x, pads, mode="constant", value=0, axes=None):
    nd = x.ndim
    if axes is None:
        axes = list(range(nd))
    k = len(axes)
    pw = [[0, 0] for _ in range(nd)]
    for j, a in enumerate(axes):
        pw[a % nd] = [pads[j], pads[j + k]]
    pos = [[max(p, 0) for p in q] for q in pw]
    if mode == "constant":
        y = np.pad(x, pos, mode="constant", constant_values=value)
    else:
        y = np.pad(x, pos, mode=mode)
    sl = tuple(slice(-min(q[0], 0), y.shape[i] + min(q[1], 0))
               for i, q in enumerate(pw))
    return y[sl]


def gen_pad():
    # Pad: constant 0 (default); constant_value 1.5; reflect; edge; a
    # negative pad (crops); axes input (opset 18) with negative axis; i32
    # with a constant value; 3-D edge; pads as a runtime parameter
    seed("Pad")
    x = rf(3, 4)

    def pd(cname, x, pads, mode=None, value=None, axes=None, param=False):
        p = np.array(pads, i64)
        ins = [x, p if param else C(p)]
        if value is not None:
            ins.append(C(np.array(value, x.dtype)))
        elif axes is not None:
            ins.append(None)
        if axes is not None:
            ins.append(C(np.array(axes, i64)))
        y = onnx_pad(x, pads, mode or "constant",
                     0 if value is None else value, axes)
        case("Pad", cname, ins, [y], {"mode": mode} if mode else None)

    pd("constant_zero", x, [1, 0, 0, 2])
    pd("constant_value", x, [0, 1, 2, 1], value=1.5)
    pd("reflect", x, [2, 1, 1, 3], mode="reflect")
    pd("edge", x, [1, 2, 2, 1], mode="edge")
    pd("negative", x, [-1, 1, 0, -2])
    pd("axes", x, [2, 1], value=-1.0, axes=[-1])
    pd("axes_no_value", rf(2, 3, 2), [1, 1, 0, 2], axes=[0, 2])
    pd("i32", ri(2, 3), [1, 1, 1, 1], value=7)
    pd("edge_3d", rf(2, 2, 3), [0, 1, 1, 1, 0, 2], mode="edge")
    pd("reflect_1d", rf(5), [3, 2], mode="reflect", param=True)
    pd("constant_explicit", rf(2, 2), [1, 1, 1, 1], mode="constant")


def gen_shape():
    # Shape: default; start 1; end -1; start -2; start/end past the ends
    # (clamped); a 0-d input (empty output); a symbolic batch dim
    seed("Shape")
    x = rf(2, 3, 4)
    sh = lambda x, s=None, e=None: np.array(x.shape[s:e], i64)
    case("Shape", "default", [x], [sh(x)])
    case("Shape", "start1", [x], [sh(x, 1)], {"start": 1})
    case("Shape", "end_m1", [x], [sh(x, None, -1)], {"end": -1})
    case("Shape", "start_m2", [x], [sh(x, -2)], {"start": -2})
    case("Shape", "start_end", [x], [sh(x, 1, 2)], {"end": 2, "start": 1})
    case("Shape", "clamped", [x], [sh(x, -10, 10)], {"end": 10,
                                                     "start": -10})
    case("Shape", "scalar", [np.array(1.0, f32)], [np.zeros(0, i64)])
    x = rf(5, 3)
    case("Shape", "sym", [x], [sh(x)], in_dims=[("batch", 3)])
    xb = rb(2, 2)
    case("Shape", "bool", [xb], [sh(xb)])


def gen_constantofshape():
    # ConstantOfShape: default value (f32 0); f32 2.5; i64 7; bool true;
    # i32 -3; empty shape (0-d output); shape as a runtime parameter
    seed("ConstantOfShape")
    for cname, shp, val, param in (
            ("default", [2, 3], None, False),
            ("f32", [3, 2], np.array([2.5], f32), False),
            ("i64", [4], np.array([7], i64), True),
            ("bool", [2, 2], np.array([True]), False),
            ("i32", [1, 3, 2], np.array([-3], i32), True),
            ("scalar", [], np.array([1.5], f32), False)):
        s = np.array(shp, i64)
        y = np.full(shp, 0.0 if val is None else val[0],
                    f32 if val is None else val.dtype)
        case("ConstantOfShape", cname, [s if param else C(s)], [y],
             {"value": T(val)} if val is not None else None)


def gen_range():
    # Range: f32 with step 0.5; negative delta i64; i32; f32 length from
    # ceil of a fraction; parameters and constants; f64
    seed("Range")
    for cname, st, li, de, dt, param in (
            ("f32", 0.5, 3.0, 0.5, f32, True),
            ("i64_neg", 10, 1, -3, i64, True),
            ("i32", -2, 5, 2, i32, False),
            ("f32_frac", 1.0, 2.0, 0.3, f32, False),
            ("f64", -1.0, 1.0, 0.25, f64, True),
            ("i64_one", 3, 4, 5, i64, False)):
        s, l, dd = (np.array(v, dt) for v in (st, li, de))
        n = max(int(math.ceil((float(l) - float(s)) / float(dd))), 0)
        if np.dtype(dt).kind == "f":
            y = (d(s) + np.arange(n) * d(dd)).astype(dt)
        else:
            y = (int(s) + np.arange(n, dtype=i64) * int(dd)).astype(dt)
        ins = [s, l, dd] if param else [C(s), C(l), C(dd)]
        case("Range", cname, ins, [y])


def gen_constant():
    # Constant: value tensor f32 [2,3]; value tensor i32; value_float;
    # value_floats; value_int; value_ints; value tensor bool 0-d
    seed("Constant")
    v = rf(2, 3)
    case("Constant", "tensor", [], [v], {"value": T(v)})
    v = ri(4)
    case("Constant", "tensor_i32", [], [v], {"value": T(v)})
    case("Constant", "value_float", [], [np.array(2.5, f32)],
         {"value_float": 2.5})
    case("Constant", "value_floats", [], [np.array([1.0, -0.5, 3.25], f32)],
         {"value_floats": [1.0, -0.5, 3.25]})
    case("Constant", "value_int", [], [np.array(7, i64)], {"value_int": 7})
    case("Constant", "value_ints", [], [np.array([3, -1, 4], i64)],
         {"value_ints": [3, -1, 4]})
    case("Constant", "tensor_bool", [], [np.array(True)],
         {"value": T(np.array(True))})


# --------------------------------------------------------------------------
# control flow


def gen_if():
    # If: cond true and false, the branches reading outer values (graph
    # parameters); two outputs with a branch returning an outer value
    # directly and a constant inside a branch; cond from a comparison
    seed("If")
    a, b = rf(2, 3), rf(2, 3)
    body = """
  %y0: f32[2,3] = If(%x0) then_branch() {
    %t0: f32[2,3] = Add(%x1, %x2)
    return %t0
  } else_branch() {
    %e0: f32[2,3] = Mul(%x1, %x2)
    return %e0
  }
  return %y0
"""
    raw_case("If", "then", body, [np.array(True), a, b],
             [like(d(a) + d(b), a)])
    raw_case("If", "else", body, [np.array(False), a, b],
             [like(d(a) * d(b), a)])
    body2 = """
  %y0: f32[3], %y1: f32[3] = If(%x0) then_branch() {
    %k: f32[] = const 2.0
    %t0: f32[3] = Mul(%x1, %k)
    return %t0, %x1
  } else_branch() {
    %e0: f32[3] = Neg(%x1)
    return %x1, %e0
  }
  return %y0, %y1
"""
    v = rf(3)
    raw_case("If", "two_out_then", body2, [np.array(True), v],
             [like(2.0 * d(v), v), v])
    raw_case("If", "two_out_else", body2, [np.array(False), v], [v, -v])
    body3 = """
  %c: bool[] = Greater(%x0, %x1)
  %y0: i64[2] = If(%c) then_branch() {
    %t0: i64[2] = Sub(%x2, %x2)
    return %t0
  } else_branch() {
    %e0: i64[2] = Add(%x2, %x2)
    return %e0
  }
  return %y0
"""
    vi = np.array([3, -4], i64)
    raw_case("If", "computed_cond", body3,
             [np.array(1.0, f32), np.array(2.0, f32), vi], [vi + vi])


def gen_loop():
    # Loop: counted (M constant 3, cond absent) with a loop-carried [2]
    # vector, a body reading an outer value and a scan output built from
    # the iteration number; a while loop (M absent, cond true) that exits
    # by its condition, with a scan output of unknown length; M and cond
    # both given, M ends it first, two carried values (one i64 counting
    # iteration numbers); M as a graph parameter with a carried value
    # passing through unchanged
    seed("Loop")
    x, inc = rf(2), rf(2)
    body = """
  %m: i64[] = const 3
  %y0: f32[2], %y1: f32[3,2] = Loop(%m, _, %x0) body(%i: i64[], %cin: bool[], %acc: f32[2]) {
    %acc2: f32[2] = Add(%acc, %x1)
    %fi: f32[] = Cast(%i) {to = 1}
    %sc: f32[2] = Mul(%acc2, %fi)
    return %cin, %acc2, %sc
  }
  return %y0, %y1
"""
    acc, scans = d(x), []
    for it in range(3):
        acc = acc + d(inc)
        scans.append(acc * it)
    raw_case("Loop", "counted", body, [x, inc],
             [like(acc, x), like(np.stack(scans), x)])

    body = """
  %y0: f32[], %y1: f32[?] = Loop(_, %x0, %x1) body(%i: i64[], %cin: bool[], %v: f32[]) {
    %k: f32[] = const 2.0
    %v2: f32[] = Mul(%v, %k)
    %c2: bool[] = Less(%v2, %x2)
    %s: f32[] = Identity(%v2)
    return %c2, %v2, %s
  }
  return %y0, %y1
"""
    v, scans = 1.0, []
    while True:
        v *= 2.0
        scans.append(v)
        if not v < 20.0:
            break
    raw_case("Loop", "while_cond", body,
             [np.array(True), np.array(1.0, f32), np.array(20.0, f32)],
             [np.array(v, f32), np.array(scans, f32)])

    body = """
  %y0: f32[], %y1: i64[], %y2: f32[?] = Loop(%x0, %x1, %x2, %x3) body(%i: i64[], %cin: bool[], %v: f32[], %n: i64[]) {
    %k: f32[] = const 3.0
    %big: f32[] = const 1000.0
    %v2: f32[] = Mul(%v, %k)
    %n2: i64[] = Add(%n, %i)
    %c2: bool[] = Less(%v2, %big)
    %s: f32[] = Add(%v2, %v)
    return %c2, %v2, %n2, %s
  }
  return %y0, %y1, %y2
"""
    v, n, scans = 1.0, 10, []
    for it in range(4):
        v2 = v * 3.0
        scans.append(v2 + v)
        v, n = v2, n + it
    raw_case("Loop", "trip_and_cond", body,
             [np.array(4, i64), np.array(True), np.array(1.0, f32),
              np.array(10, i64)],
             [np.array(v, f32), np.array(n, i64), np.array(scans, f32)])

    body = """
  %y0: i64[3], %y1: f32[2,2] = Loop(%x0, _, %x1, %x2) body(%i: i64[], %cin: bool[], %a: i64[3], %b: f32[2,2]) {
    %a2: i64[3] = Identity(%a)
    %b2: f32[2,2] = Add(%b, %b)
    return %cin, %a2, %b2
  }
  return %y0, %y1
"""
    a, b = ri(3, dt=i64), rf(2, 2)
    raw_case("Loop", "param_trip", body, [np.array(2, i64), a, b],
             [a, like(d(b) * 4.0, b)])


def gelu(x, approximate="none"):
    x = d(x)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) *
                                        (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + np.vectorize(math.erf, otypes=[f64])(
        x / math.sqrt(2.0)))


def activation(y, name, alpha=None, beta=None):
    """The activations of FusedConv / FusedGemm (ops.def's comment), in
    float64: clip's bounds and leakyrelu's slope are alpha / beta."""
    y = d(y)
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    return {
        "none": lambda: y,
        "relu": lambda: np.maximum(y, 0.0),
        "relu6": lambda: np.clip(y, 0.0, 6.0),
        "clip": lambda: np.clip(y, alpha, beta),
        "sigmoid": lambda: sig(y),
        "silu": lambda: y * sig(y),
        "gelu": lambda: gelu(y),
        "gelu_tanh": lambda: gelu(y, "tanh"),
        "leakyrelu": lambda: np.where(y < 0, alpha * y, y),
        "tanh": lambda: np.tanh(y),
    }[name]()


def gen_fused():
    # Gelu (ONNX opset 20): approximate "none" (erf) and "tanh"; f64; odd
    # FusedConv = Conv (+ bias) then an activation: every activation once;
    # leakyrelu slope and clip bounds through activation_alpha / _beta;
    # with pads, strides, groups and auto_pad; without bias
    # FusedGemm = Gemm then an activation: with C, transB, alpha/beta
    # FusedElementwise: the node's inputs are the body's parameters, its
    # outputs the body's returns: a chain on one input; two inputs with
    # broadcasting; a constant in the body; two outputs
    seed("Gelu")
    x = rf(3, 5, lo=-4, hi=4)
    case("Gelu", "default", [x], [like(gelu(x), x)])
    x = rf(2, 7, lo=-4, hi=4)
    case("Gelu", "tanh", [x], [like(gelu(x, "tanh"), x)],
         {"approximate": "tanh"})
    x = rf(4, 3, lo=-4, hi=4, dt=f64)
    case("Gelu", "f64", [x], [gelu(x)])
    x = rf(11, lo=-4, hi=4)
    case("Gelu", "odd", [x], [like(gelu(x, "tanh"), x)],
         {"approximate": "tanh"})

    seed("FusedConv")

    def fc(cname, act, xs, ws, bias=True, alpha=None, beta=None, pads=None,
           strides=None, group=1, auto_pad=None):
        x = rf(*xs)
        w = rf(*ws, lo=-1, hi=1)
        b = rf(ws[0]) if bias else None
        nd = len(xs) - 2
        st = strides or [1] * nd
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pp = same_pads(list(xs[2:]), list(ws[2:]), st, [1] * nd,
                           auto_pad == "SAME_UPPER")
        else:
            pp = pads or [0] * (2 * nd)
        attrs = {}
        if auto_pad:
            attrs["auto_pad"] = auto_pad
        if group != 1:
            attrs["group"] = group
        if pads:
            attrs["pads"] = pads
        if strides:
            attrs["strides"] = strides
        if act != "none":
            attrs["activation"] = act
        if alpha is not None:
            attrs["activation_alpha"] = alpha
        if beta is not None:
            attrs["activation_beta"] = beta
        y = conv_ref(x, w, b, st, pp, [1] * nd, group)
        y = like(activation(y, act, alpha, beta), x)
        case("FusedConv", cname, [x, w] + ([b] if bias else []), [y], attrs)

    fc("none", "none", (1, 2, 5, 5), (3, 2, 3, 3))
    fc("relu", "relu", (1, 3, 6, 5), (4, 3, 3, 3), pads=[1, 1, 1, 1])
    fc("relu_nobias", "relu", (2, 2, 5, 5), (2, 2, 3, 3), bias=False)
    fc("relu6", "relu6", (1, 2, 5, 5), (2, 2, 3, 3), strides=[2, 2])
    fc("clip", "clip", (1, 2, 5, 5), (3, 2, 2, 2), alpha=-0.5, beta=0.75)
    fc("sigmoid", "sigmoid", (1, 2, 4, 6), (2, 2, 3, 3), pads=[0, 1, 2, 1])
    fc("silu", "silu", (1, 4, 5, 5), (4, 2, 3, 3), group=2)
    fc("gelu", "gelu", (1, 3, 5, 5), (3, 1, 3, 3), group=3,
       pads=[1, 1, 1, 1])
    fc("gelu_tanh", "gelu_tanh", (1, 2, 6, 6), (2, 2, 3, 3),
       auto_pad="SAME_UPPER", strides=[2, 2])
    fc("leakyrelu", "leakyrelu", (1, 2, 5, 4), (3, 2, 3, 2), alpha=0.1)
    fc("tanh", "tanh", (1, 2, 9), (2, 2, 3), strides=[2])

    seed("FusedGemm")

    def fg(cname, act, ash, bsh, csh=None, alpha=None, beta=None, ta=0,
           tb=0, ga=None, gb=None):
        a, b = rf(*ash), rf(*bsh)
        c = rf(*csh) if csh is not None else None
        A = d(a).T if ta else d(a)
        B = d(b).T if tb else d(b)
        y = (1.0 if ga is None else ga) * (A @ B)
        if c is not None:
            y = y + (1.0 if gb is None else gb) * d(c)
        attrs = {}
        if ga is not None:
            attrs["alpha"] = ga
        if gb is not None:
            attrs["beta"] = gb
        if ta:
            attrs["transA"] = 1
        if tb:
            attrs["transB"] = 1
        if act != "none":
            attrs["activation"] = act
        if alpha is not None:
            attrs["activation_alpha"] = alpha
        if beta is not None:
            attrs["activation_beta"] = beta
        y = like(activation(y, act, alpha, beta), a)
        case("FusedGemm", cname, [a, b] + ([c] if c is not None else []),
             [y], attrs)

    fg("none", "none", (3, 4), (4, 5), (5,))
    fg("relu", "relu", (3, 4), (4, 5), (5,))
    fg("relu_noC", "relu", (2, 6), (6, 3))
    fg("relu6_transB", "relu6", (3, 4), (5, 4), (3, 5), tb=1)
    fg("clip", "clip", (4, 3), (4, 2), (1, 2), alpha=-0.25, beta=0.5, ta=1)
    fg("sigmoid_alpha_beta", "sigmoid", (3, 4), (4, 5), (3, 1), ga=0.5,
       gb=2.0)
    fg("silu", "silu", (2, 3), (3, 4), (4,))
    fg("gelu", "gelu", (3, 5), (5, 2), (2,))
    fg("gelu_tanh", "gelu_tanh", (3, 5), (2, 5), (2,), tb=1)
    fg("leakyrelu", "leakyrelu", (3, 4), (4, 5), (5,), alpha=0.2)
    fg("tanh", "tanh", (2, 4), (4, 3), np.array(0.5, f32).shape)

    seed("FusedElementwise")
    x = rf(3, 4)
    body = """
  %y0: f32[3,4] = FusedElementwise(%x0) body(%p0: f32[3,4]) {
    %t0: f32[3,4] = Exp(%p0)
    %t1: f32[3,4] = Neg(%t0)
    return %t1
  }
  return %y0
"""
    raw_case("FusedElementwise", "chain", body, [x],
             [like(-np.exp(d(x)), x)])
    a, b = rf(2, 3, 4), rf(4)
    body = """
  %y0: f32[2,3,4] = FusedElementwise(%x0, %x1) body(%p0: f32[2,3,4], %p1: f32[4]) {
    %t0: f32[2,3,4] = Add(%p0, %p1)
    %t1: f32[2,3,4] = Relu(%t0)
    return %t1
  }
  return %y0
"""
    raw_case("FusedElementwise", "bcast_add_relu", body, [a, b],
             [like(np.maximum(d(a) + d(b), 0.0), a)])
    a, b = rf(3, 5), rf(3, 5)
    body = """
  %y0: f32[3,5], %y1: f32[3,5] = FusedElementwise(%x0, %x1) body(%p0: f32[3,5], %p1: f32[3,5]) {
    %k: f32[] = const 0.5
    %t0: f32[3,5] = Mul(%p0, %p1)
    %t1: f32[3,5] = Mul(%t0, %k)
    %t2: f32[3,5] = Sigmoid(%t1)
    %t3: f32[3,5] = Sub(%t2, %p0)
    return %t2, %t3
  }
  return %y0, %y1
"""
    sg = 1.0 / (1.0 + np.exp(-(d(a) * d(b) * 0.5)))
    raw_case("FusedElementwise", "two_out_const", body, [a, b],
             [like(sg, a), like(sg - d(a), a)])


def gen_empty():
    # Zero-size tensors, which ONNX allows and kernels must not trip on:
    # Add broadcasting [0,3] with [3]; Slice whose start passes its end;
    # Range of length 0; Concat with an empty input; Reshape allowzero 1
    # keeping a real 0; ReduceSum over an empty axis (zeros); Loop with a
    # trip count of 0 (carried value unchanged, scan output [0,2])
    seed("empty")
    a, b = np.zeros((0, 3), f32), rf(3)
    case("Add", "empty", [a, b], [a + b])
    x = rf(4, 5)
    case("Slice", "empty", [x, C(np.array([3], i64)), C(np.array([1], i64)),
                            C(np.array([0], i64))], [x[3:1]])
    case("Range", "empty", [C(np.array(5, i64)), C(np.array(2, i64)),
                            C(np.array(1, i64))], [np.zeros(0, i64)])
    a, b = rf(2, 3), np.zeros((0, 3), f32)
    case("Concat", "empty_input", [a, b], [a], {"axis": 0})
    x = np.zeros((0, 3), f32)
    case("Reshape", "allowzero_zero", [x, C(np.array([3, 0], i64))],
         [x.reshape(3, 0)], {"allowzero": 1})
    x = np.zeros((2, 0), f32)
    case("ReduceSum", "empty_axis", [x, C(np.array([1], i64))],
         [np.zeros((2, 1), f32)])
    body = """
  %y0: f32[2], %y1: f32[0,2] = Loop(%x0, _, %x1) body(%i: i64[], %cin: bool[], %v: f32[2]) {
    %v2: f32[2] = Neg(%v)
    return %cin, %v2, %v2
  }
  return %y0, %y1
"""
    v = rf(2)
    raw_case("Loop", "zero_trip", body, [np.array(0, i64), v],
             [v, np.zeros((0, 2), f32)])


# --------------------------------------------------------------------------
# more math, activations, logic and reductions; quantization
# (the ops of ops.def's section of that name; expected values in numpy
# float64 following ONNX opset <= 17)

MATH_UNARY = {
    # name: (f64 function, lo, hi, extra dtypes)
    "Tan": (np.tan, -1.2, 1.2, [f64, f16]),
    "Asin": (np.arcsin, -0.99, 0.99, [f64]),
    "Acos": (np.arccos, -0.99, 0.99, [f64]),
    "Atan": (np.arctan, -5, 5, [f64, f16]),
    "Sinh": (np.sinh, -3, 3, [f64]),
    "Cosh": (np.cosh, -3, 3, [f64]),
    "Asinh": (np.arcsinh, -5, 5, [f64]),
    "Acosh": (np.arccosh, 1, 6, [f64]),
    "Atanh": (np.arctanh, -0.99, 0.99, [f64]),
    "Softsign": (lambda x: x / (1 + np.abs(x)), -5, 5, [f64, f16]),
    "HardSwish": (lambda x: x * np.clip(x / 6 + 0.5, 0, 1), -5, 5, [f64]),
    "Mish": (lambda x: x * np.tanh(np.log1p(np.exp(x))), -6, 6, [f64]),
}


def gen_math_unary():
    # trigonometric / hyperbolic functions and parameterless activations:
    # f32 [3,5] in the domain, f64 / f16 variants, an odd 1-D length;
    # out-of-domain and special values; a symbolic dim
    for op, (fn, lo, hi, extra) in MATH_UNARY.items():
        seed(op)
        x = rf(3, 5, lo=lo, hi=hi)
        case(op, "f32", [x], [like(fn(d(x)), x)])
        for dt in extra:
            x = rf(2, 3, lo=lo, hi=hi, dt=dt)
            case(op, DTYPE_NAMES[np.dtype(dt)], [x], [like(fn(d(x)), x)])
        x = rf(7, lo=lo, hi=hi)
        case(op, "1d_odd", [x], [like(fn(d(x)), x)])
    seed("math-special")
    x = np.array([-2.0, -1.0, 1.0, 2.0, np.nan], f32)
    for op in ("Asin", "Acos", "Atanh"):
        case(op, "domain", [x], [like(MATH_UNARY[op][0](d(x)), x)])
    x = np.array([0.5, 1.0, np.inf, np.nan], f32)
    case("Acosh", "domain", [x], [like(np.arccosh(d(x)), x)])
    x = np.array([-np.inf, -30.0, 0.0, 30.0, np.inf], f32)
    case("Mish", "wide", [x], [like(MATH_UNARY["Mish"][0](d(x)), x)])
    case("Softsign", "wide", [x], [like(d(x) / (1 + np.abs(d(x))), x)])
    x = rf(4, 3)
    case("Tan", "sym", [x], [like(np.tan(d(x)), x)],
         in_dims=[("batch", 3)], out_dims=[("batch", 3)])


def gen_sign_round():
    # Sign: f32 with zeros and nan, i32, i64, f64. Round: halves to even,
    # negative halves, f64, f16, inf/nan
    seed("Sign")
    x = np.array([[-2.5, -0.0, 0.0, 3.0], [np.nan, 1e-30, -1e30, 7.0]], f32)
    case("Sign", "f32", [x], [np.sign(x)])
    x = ri(3, 4)
    case("Sign", "i32", [x], [np.sign(x)])
    x = ri(5, dt=i64)
    case("Sign", "i64", [x], [np.sign(x)])
    x = rf(2, 3, dt=f64)
    case("Sign", "f64", [x], [np.sign(x)])
    seed("Round")
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, 2.6, -2.6,
                  np.inf, -np.inf, np.nan], f32)
    case("Round", "halves", [x], [np.round(x)])
    x = rf(3, 4, lo=-10, hi=10)
    case("Round", "f32", [x], [np.round(x)])
    x = rf(5, lo=-10, hi=10, dt=f64)
    case("Round", "f64", [x], [np.round(x)])
    x = np.array([0.5, 1.5, -3.5, 4.25], f16)
    case("Round", "f16", [x], [np.round(x)])


def gen_isnan_isinf():
    # IsNaN / IsInf: bool outputs; IsInf's detect_negative/detect_positive
    x = np.array([[1.0, np.nan, -np.inf], [np.inf, 0.0, -np.nan]], f32)
    case("IsNaN", "f32", [x], [np.isnan(x)])
    case("IsNaN", "f64", [x.astype(f64)], [np.isnan(x)])
    case("IsNaN", "f16", [x.astype(f16)], [np.isnan(x)])
    case("IsInf", "default", [x], [np.isinf(x)])
    case("IsInf", "negative", [x], [np.isneginf(x)],
         {"detect_positive": 0})
    case("IsInf", "positive", [x.astype(f64)], [np.isposinf(x)],
         {"detect_negative": 0})
    case("IsInf", "neither", [x], [np.zeros(x.shape, BOOL)],
         {"detect_negative": 0, "detect_positive": 0})


def gen_param_activations():
    # Elu, Selu, Celu, ThresholdedRelu, HardSigmoid: default attributes and
    # custom ones, f64 / f16; Shrink soft and hard, on integers too
    seed("activations2")  # the tag the cases were made with
    x = rf(3, 4, lo=-3, hi=3)
    x64 = rf(2, 5, lo=-3, hi=3, dt=f64)
    x16 = rf(2, 3, lo=-3, hi=3, dt=f16)

    def elu(v, a=1.0):
        return np.where(v < 0, a * np.expm1(v), v)

    case("Elu", "default", [x], [like(elu(d(x)), x)])
    case("Elu", "alpha", [x64], [elu(x64, 0.5)], {"alpha": 0.5})
    case("Elu", "f16", [x16], [like(elu(d(x16), 2.0), x16)], {"alpha": 2.0})
    sa, sg = 1.67326319217681884765625, 1.05070102214813232421875

    def selu(v, a=sa, g=sg):
        return np.where(v > 0, g * v, g * a * np.expm1(v))

    case("Selu", "default", [x], [like(selu(d(x)), x)])
    case("Selu", "custom", [x64], [selu(x64, 2.0, 3.0)],
         {"alpha": 2.0, "gamma": 3.0})

    def celu(v, a=1.0):
        return np.maximum(0, v) + np.minimum(0, a * np.expm1(v / a))

    case("Celu", "default", [x], [like(celu(d(x)), x)])
    case("Celu", "alpha", [x64], [celu(x64, 2.0)], {"alpha": 2.0})
    case("ThresholdedRelu", "default", [x],
         [like(np.where(d(x) > 1.0, d(x), 0), x)])
    case("ThresholdedRelu", "alpha", [x64], [np.where(x64 > 0.5, x64, 0)],
         {"alpha": 0.5})
    case("ThresholdedRelu", "f16", [x16],
         [like(np.where(d(x16) > -0.5, d(x16), 0), x16)], {"alpha": -0.5})

    def hsig(v, a=0.2, b=0.5):
        return np.clip(a * v + b, 0, 1)

    case("HardSigmoid", "default", [x], [like(hsig(d(x)), x)])
    case("HardSigmoid", "custom", [x64], [hsig(x64, 0.5, 0.6)],
         {"alpha": 0.5, "beta": 0.6})

    def shrink(v, lambd=0.5, bias=0.0):
        return np.where(v < -lambd, v + bias,
                        np.where(v > lambd, v - bias, 0))

    case("Shrink", "hard", [x], [like(shrink(d(x)), x)])
    case("Shrink", "soft", [x64], [shrink(x64, 1.5, 1.5)],
         {"lambd": 1.5, "bias": 1.5})
    xi = ri(2, 5, lo=-4, hi=5)
    case("Shrink", "i32", [xi], [shrink(xi, 1.5, 1.0).astype(i32)],
         {"lambd": 1.5, "bias": 1.0})
    case("Shrink", "sym", [x], [like(shrink(d(x), 1.0, 0.25), x)],
         {"lambd": 1.0, "bias": 0.25},
         in_dims=[("n", 4)], out_dims=[("n", 4)])


def gen_prelu():
    # PRelu: slope per channel [C,1,1] on [N,C,H,W], scalar slope, same
    # shape, f64, i32 (ONNX opset 16 allows integers)
    seed("PRelu")
    pr = lambda x, s: np.where(x < 0, s * x, x)
    x, s = rf(2, 3, 2, 2), rf(3, 1, 1)
    case("PRelu", "channel", [x, s], [like(pr(d(x), d(s)), x)])
    x, s = rf(3, 4), np.array(0.25, f32)
    case("PRelu", "scalar", [x, s], [like(pr(d(x), 0.25), x)])
    x, s = rf(2, 5), rf(2, 5)
    case("PRelu", "same", [x, C(s)], [like(pr(d(x), d(s)), x)])
    x, s = rf(4, 3, dt=f64), rf(3, dt=f64)
    case("PRelu", "f64", [x, s], [pr(x, s)])
    x, s = ri(3, 4), ri(4)
    case("PRelu", "i32", [x, s], [pr(x, s).astype(i32)])


def gen_bitwise():
    # BitwiseAnd/Or/Xor on i32, i64, u8, i8 with broadcasting; BitwiseNot;
    # Xor on bool; BitShift LEFT / RIGHT on u8 (overflowing bits drop)
    fns = {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or,
           "BitwiseXor": np.bitwise_xor}
    for op, fn in fns.items():
        seed(op)
        a, b = ri(3, 4, lo=-100, hi=100), ri(4, lo=-100, hi=100)
        case(op, "i32", [a, b], [fn(a, b)])
        a, b = ri(2, 3, lo=-2**40, hi=2**40, dt=i64), ri(2, 1, lo=0,
                                                          hi=2**40, dt=i64)
        case(op, "i64", [a, b], [fn(a, b)])
        a, b = R.integers(0, 256, (2, 3)).astype(u8), R.integers(
            0, 256, (3,)).astype(u8)
        case(op, "u8", [a, b], [fn(a, b)])
        a, b = ri(4, lo=-128, hi=128, dt=i8), np.array(-86, i8)
        case(op, "i8", [a, b], [fn(a, b)])
    seed("BitwiseNot")
    x = ri(3, 4, lo=-100, hi=100)
    case("BitwiseNot", "i32", [x], [np.invert(x)])
    x = R.integers(0, 256, (5,)).astype(u8)
    case("BitwiseNot", "u8", [x], [np.invert(x)])
    x = ri(2, 3, lo=-2**50, hi=2**50, dt=i64)
    case("BitwiseNot", "i64", [x], [np.invert(x)])
    x = ri(4, lo=-128, hi=128, dt=i8)
    case("BitwiseNot", "i8", [x], [np.invert(x)])
    seed("Xor")
    a, b = rb(3, 4), rb(3, 4)
    case("Xor", "same", [a, b], [np.logical_xor(a, b)])
    a, b = rb(2, 1, 3), rb(4, 1)
    case("Xor", "bcast", [a, b], [np.logical_xor(a, b)])
    seed("BitShift")
    x = np.array([16, 4, 1, 255, 128, 3], u8)
    y = np.array([1, 2, 3, 1, 7, 0], u8)
    case("BitShift", "left", [x, y], [np.left_shift(x, y)],
         {"direction": "LEFT"})
    case("BitShift", "right", [x, y], [np.right_shift(x, y)],
         {"direction": "RIGHT"})
    x = R.integers(0, 256, (2, 3)).astype(u8)
    case("BitShift", "bcast", [x, C(np.array([2], u8))],
         [np.left_shift(x, np.uint8(2))], {"direction": "LEFT"})


def gen_mod():
    # Mod: integers with mixed signs (Python's sign rule, fmod 0), C's fmod
    # (fmod 1) on integers and floats, broadcasting, u8, i8, i64, division
    # by zero on integers (0), f64 and f16 with fmod 1
    seed("Mod")
    a = np.array([-4, 7, 5, 4, -7, 8, 0, -9], i32)
    b = np.array([2, -3, 8, -2, 3, 5, 3, -4], i32)
    case("Mod", "i32", [a, b], [np.mod(a, b)])
    case("Mod", "i32_fmod", [a, b], [np.fmod(a, b)], {"fmod": 1})
    a, b = ri(3, 4, lo=-50, hi=50, dt=i64), np.array([3, -5, 7, -2], i64)
    case("Mod", "i64_bcast", [a, b], [np.mod(a, b)])
    a, b = R.integers(0, 256, (5,)).astype(u8), np.array(7, u8)
    case("Mod", "u8", [a, b], [np.mod(a, b)])
    a, b = ri(6, lo=-128, hi=128, dt=i8), ri(6, lo=1, hi=20, dt=i8)
    case("Mod", "i8", [a, b], [np.mod(a, b)])
    a, b = np.array([5, -5, 0], i32), np.array([0, 0, 0], i32)
    case("Mod", "by_zero", [a, b], [np.zeros(3, i32)])
    a = np.array([-4.3, 7.2, 5.0, 4.3, -7.2, 8.0], f32)
    b = np.array([2.1, -3.4, 8.0, -2.1, 3.4, 5.0], f32)
    case("Mod", "f32_fmod", [a, b], [like(np.fmod(d(a), d(b)), a)],
         {"fmod": 1})
    a, b = rf(2, 3, lo=-10, hi=10, dt=f64), rf(3, lo=0.5, hi=3, dt=f64)
    case("Mod", "f64_fmod", [a, b], [np.fmod(a, b)], {"fmod": 1})
    a, b = rf(4, lo=-10, hi=10, dt=f16), rf(4, lo=0.5, hi=3, dt=f16)
    case("Mod", "f16_fmod", [a, b], [like(np.fmod(d(a), d(b)), a)],
         {"fmod": 1})


def gen_compare_or_equal():
    # LessOrEqual / GreaterOrEqual: f32 with ties, broadcasting, i64, nan
    for op, fn in (("LessOrEqual", np.less_equal),
                   ("GreaterOrEqual", np.greater_equal)):
        seed(op)
        a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 2.5]], f32)
        b = np.array([[1.0, 3.0, 2.0], [-1.0, -0.0, 2.4]], f32)
        case(op, "f32", [a, b], [fn(a, b)])
        a, b = ri(2, 3, 4, lo=-2, hi=3).astype(f32), ri(4, lo=-2, hi=3)
        case(op, "bcast", [a, b.astype(f32)], [fn(a, b)])
        a, b = ri(3, 4, lo=-2, hi=3, dt=i64), ri(3, 1, lo=-2, hi=3, dt=i64)
        case(op, "i64", [a, b], [fn(a, b)])
        a = np.array([np.nan, 1.0, np.inf, -np.inf], f32)
        b = np.array([np.nan, np.nan, np.inf, 0.0], f32)
        case(op, "special", [a, b], [fn(a, b)])


def gen_mean():
    # Mean (variadic, floats): one input, two, three with broadcasting,
    # f64, f16
    seed("Mean")
    a = rf(3, 4)
    case("Mean", "one", [a], [a])
    a, b = rf(3, 4), rf(3, 4)
    case("Mean", "two", [a, b], [like((d(a) + d(b)) / 2, a)])
    a, b, c = rf(2, 3, 1), rf(4), rf(3, 1)
    case("Mean", "three_bcast", [a, b, c],
         [like((d(a) + d(b) + d(c)) / 3, a)])
    a, b = rf(2, 2, dt=f64), rf(2, 2, dt=f64)
    case("Mean", "f64", [a, b], [(a + b) / 2])
    a, b = rf(2, 3, dt=f16), rf(3, dt=f16)
    case("Mean", "f16", [a, b], [like((d(a) + d(b)) / 2, a)])


def logsumexp(x, axis, keepdims):
    if np.size(x) == 0:  # -inf, from the log of an empty sum
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


def gen_reduce_mapped():
    # ReduceProd/L1/L2/LogSum/LogSumExp/SumSquare: axes attribute, axes
    # input (negative, as a parameter), keepdims 0, all axes,
    # noop_with_empty_axes, f64; integer inputs (Prod, L1, SumSquare exact;
    # L2 truncated); LogSumExp of large values (no overflow); an empty
    # reduction (Prod 1, SumSquare 0, LogSum -inf, LogSumExp -inf)
    fns = {
        "ReduceProd": lambda x, ax, kd: np.prod(x, axis=ax, keepdims=kd),
        "ReduceL1": lambda x, ax, kd: np.sum(np.abs(x), axis=ax,
                                             keepdims=kd),
        "ReduceL2": lambda x, ax, kd: np.sqrt(np.sum(x * x, axis=ax,
                                                     keepdims=kd)),
        "ReduceLogSum": lambda x, ax, kd: np.log(np.sum(x, axis=ax,
                                                        keepdims=kd)),
        "ReduceLogSumExp": logsumexp,
        "ReduceSumSquare": lambda x, ax, kd: np.sum(x * x, axis=ax,
                                                    keepdims=kd),
    }
    for op, fn in fns.items():
        seed(op)
        lo = 0.1 if op == "ReduceLogSum" else -2.0
        hi = 1.5 if op == "ReduceProd" else 2.0
        red = lambda x, ax, kd: like(fn(d(x), ax, bool(kd)), x)
        x = rf(3, 4, 5, lo=lo, hi=hi)
        case(op, "attr_axis1", [x], [red(x, (1,), 1)], {"axes": [1]})
        case(op, "attr_axes02_nokeep", [x], [red(x, (0, 2), 0)],
             {"axes": [0, 2], "keepdims": 0})
        x = rf(2, 3, 4, lo=lo, hi=hi)
        case(op, "input_axis_neg", [x, C(np.array([-1], i64))],
             [red(x, (2,), 1)])
        case(op, "input_axes_param", [x, np.array([0, -1], i64)],
             [red(x, (0, 2), 0)], {"keepdims": 0})
        x = rf(3, 5, lo=lo, hi=hi)
        case(op, "all_keep", [x], [red(x, None, 1)])
        case(op, "all_nokeep", [x], [red(x, None, 0)], {"keepdims": 0})
        case(op, "noop_empty", [x], [x], {"noop_with_empty_axes": 1})
        x = rf(2, 3, 2, lo=lo, hi=hi, dt=f64)
        case(op, "f64", [x], [red(x, (1,), 0)], {"axes": [-2],
                                                 "keepdims": 0})
        x = np.zeros((2, 0, 3), f32)
        case(op, "empty", [x], [red(x, (1,), 0)], {"axes": [1],
                                                   "keepdims": 0})
    seed("reduce_mapped-int")
    x = ri(3, 4, lo=-3, hi=4)
    case("ReduceProd", "i32", [x],
         [np.prod(x, axis=1, keepdims=True).astype(i32)],
         {"axes": [1]})
    x = ri(2, 3, 2, lo=-1000, hi=1000, dt=i64)
    case("ReduceL1", "i64", [x], [np.sum(np.abs(x), axis=(0, 2))],
         {"axes": [0, 2], "keepdims": 0})
    case("ReduceSumSquare", "i64", [x], [np.sum(x * x, axis=(0, 2))],
         {"axes": [0, 2], "keepdims": 0})
    x = ri(3, 4, lo=-9, hi=10)
    case("ReduceL2", "i32", [x],
         [np.sqrt(np.sum(d(x) ** 2, axis=0)).astype(i32)],
         {"axes": [0], "keepdims": 0})
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, -np.inf, -np.inf]],
                 f32)
    case("ReduceLogSumExp", "large", [x], [like(logsumexp(d(x), 1, 0), x)],
         {"axes": [1], "keepdims": 0})


def gen_argmin():
    # ArgMin: like ArgMax: default axis 0 keepdims 1; axis -1 keepdims 0;
    # ties with select_last_index 0 and 1; i32; f64; nan wins
    seed("ArgMin")

    def am(x, axis, kd, last=0):
        if last:
            r = x.shape[axis] - 1 - np.argmin(np.flip(x, axis), axis=axis)
        else:
            r = np.argmin(x, axis=axis)
        if kd:
            r = np.expand_dims(r, axis)
        return r.astype(i64)

    x = rf(4, 3)
    case("ArgMin", "default", [x], [am(x, 0, 1)])
    x = rf(3, 5)
    case("ArgMin", "axis_m1_nokeep", [x], [am(x, -1, 0)],
         {"axis": -1, "keepdims": 0})
    x = np.array([[1, 0, 0, 3], [2, 2, 1, 1], [0, 0, 0, 0]], f32)
    case("ArgMin", "ties_first", [x], [am(x, 1, 1)], {"axis": 1})
    case("ArgMin", "ties_last", [x], [am(x, 1, 1, 1)],
         {"axis": 1, "select_last_index": 1})
    x = ri(2, 4, 3, lo=-3, hi=3)
    case("ArgMin", "i32_axis1", [x], [am(x, 1, 0)], {"axis": 1,
                                                     "keepdims": 0})
    x = ri(3, 2, lo=-2**62, hi=2**62, dt=i64)
    case("ArgMin", "i64_last", [x], [am(x, 0, 1, 1)],
         {"select_last_index": 1})
    x = np.array([3.0, np.nan, -1.0, np.nan], f64)
    case("ArgMin", "nan", [x], [am(x, 0, 0)], {"keepdims": 0})


def gen_hardmax():
    # Hardmax (opset 13): default axis -1, axis 0 and 1 of a 3-D input,
    # ties (first wins), f64
    seed("Hardmax")

    def hm(x, axis=-1):
        y = np.zeros_like(x)
        np.put_along_axis(y, np.expand_dims(np.argmax(x, axis=axis), axis),
                          1, axis=axis)
        return y

    x = rf(3, 4)
    case("Hardmax", "default", [x], [hm(x)])
    x = rf(2, 3, 4)
    case("Hardmax", "axis0", [x], [hm(x, 0)], {"axis": 0})
    case("Hardmax", "axis1", [x], [hm(x, 1)], {"axis": 1})
    x = np.array([[3, 3, 3, 1], [0, 5, 5, 2]], f32)
    case("Hardmax", "ties", [x], [hm(x)])
    x = rf(2, 5, dt=f64)
    case("Hardmax", "f64", [x], [hm(x, -2)], {"axis": -2})


def gen_lpnorm():
    # LpNormalization: p 2 along the last axis (default), p 1 along axis
    # 0, f64, a 3-D input
    seed("LpNormalization")

    def lp(x, axis, p):
        n = np.sum(np.abs(x) ** p, axis=axis, keepdims=True) ** (1.0 / p)
        return x / n

    x = rf(3, 4)
    case("LpNormalization", "default", [x], [like(lp(d(x), -1, 2), x)])
    case("LpNormalization", "p1_axis0", [x], [like(lp(d(x), 0, 1), x)],
         {"axis": 0, "p": 1})
    x = rf(2, 3, 4, dt=f64)
    case("LpNormalization", "f64_axis1", [x], [lp(x, 1, 2)], {"axis": 1})


def gen_mvn():
    # MeanVarianceNormalization: default axes [0,2,3], axes [1], a 3-D
    # input over its last axis, f64
    seed("MeanVarianceNormalization")

    def mvn(x, axes):
        m = np.mean(x, axis=axes, keepdims=True)
        v = np.mean(x * x, axis=axes, keepdims=True) - m * m
        return (x - m) / (np.sqrt(v) + 1e-9)

    x = rf(2, 3, 2, 4)
    case("MeanVarianceNormalization", "default", [x],
         [like(mvn(d(x), (0, 2, 3)), x)])
    case("MeanVarianceNormalization", "axis1", [x],
         [like(mvn(d(x), (1,)), x)], {"axes": [1]})
    x = rf(3, 5, dt=f64)
    case("MeanVarianceNormalization", "f64_last", [x], [mvn(x, (-1,))],
         {"axes": [-1]})


def gen_lrn():
    # LRN: size 3 with default alpha/beta/bias; an even size (window
    # floor((size-1)/2) before, ceil after); custom parameters; f64
    seed("LRN")

    def lrn(x, size, alpha=1e-4, beta=0.75, bias=1.0):
        C = x.shape[1]
        sq = np.zeros_like(x)
        lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
        for c in range(C):
            sq[:, c] = np.sum(x[:, max(0, c - lo):min(C, c + hi + 1)] ** 2,
                              axis=1)
        return x / (bias + alpha / size * sq) ** beta

    x = rf(2, 5, 3, 3)
    case("LRN", "default", [x], [like(lrn(d(x), 3), x)], {"size": 3})
    case("LRN", "even", [x], [like(lrn(d(x), 4, 0.5, 0.6, 2.0), x)],
         {"alpha": 0.5, "beta": 0.6, "bias": 2.0, "size": 4})
    x = rf(1, 4, 5, dt=f64)
    case("LRN", "f64_3d", [x], [lrn(x, 5, 0.1, 1.0, 1.5)],
         {"alpha": 0.1, "beta": 1.0, "bias": 1.5, "size": 5})


def gen_instancenorm():
    # InstanceNormalization: 4-D, 3-D with epsilon, f64
    seed("InstanceNormalization")

    def inorm(x, s, b, eps=1e-5):
        ax = tuple(range(2, x.ndim))
        m = np.mean(x, axis=ax, keepdims=True)
        v = np.var(x, axis=ax, keepdims=True)
        sh = (-1,) + (1,) * (x.ndim - 2)
        return s.reshape(sh) * (x - m) / np.sqrt(v + eps) + b.reshape(sh)

    x, s, b = rf(2, 3, 4, 5), rf(3), rf(3)
    case("InstanceNormalization", "4d", [x, s, b],
         [like(inorm(d(x), d(s), d(b)), x)])
    x, s, b = rf(2, 2, 6), rf(2), rf(2)
    case("InstanceNormalization", "eps", [x, C(s), C(b)],
         [like(inorm(d(x), d(s), d(b), 0.01), x)], {"epsilon": 0.01})
    x, s, b = rf(1, 3, 2, 2, dt=f64), rf(3, dt=f64), rf(3, dt=f64)
    case("InstanceNormalization", "f64", [x, s, b], [inorm(x, s, b)])


def lppool_ref(x, k, s, pads, p):
    """LpPool over the spatial dims of x in float64: the p-norm of each
    window, padding contributing nothing."""
    nd = x.ndim - 2
    sp = x.shape[2:]
    outs = [(sp[i] + pads[i] + pads[i + nd] - k[i]) // s[i] + 1
            for i in range(nd)]
    y = np.zeros(x.shape[:2] + tuple(outs), f64)
    for o in np.ndindex(*outs):
        acc = np.zeros(x.shape[:2], f64)
        for kk in np.ndindex(*k):
            q = [o[i] * s[i] - pads[i] + kk[i] for i in range(nd)]
            if all(0 <= q[i] < sp[i] for i in range(nd)):
                acc += np.abs(d(x)[(slice(None), slice(None)) + tuple(q)]) ** p
        y[(slice(None), slice(None)) + o] = acc ** (1.0 / p)
    return y


def gen_lppool():
    # LpPool: 2-D p 2 (default), strides and pads with p 1, 1-D p 3, f64;
    # GlobalLpPool: p 2 (default), p 1, p 3 on 3-D, f64
    seed("LpPool")
    x = rf(1, 2, 5, 5)
    case("LpPool", "default", [x], [like(lppool_ref(x, [2, 2], [1, 1],
                                                    [0, 0, 0, 0], 2), x)],
         {"kernel_shape": [2, 2]})
    case("LpPool", "strides_pads_p1", [x],
         [like(lppool_ref(x, [3, 3], [2, 2], [1, 1, 1, 0], 1), x)],
         {"kernel_shape": [3, 3], "p": 1, "pads": [1, 1, 1, 0],
          "strides": [2, 2]})
    x = rf(2, 3, 7)
    case("LpPool", "1d_p3", [x], [like(lppool_ref(x, [3], [2], [0, 0], 3),
                                       x)],
         {"kernel_shape": [3], "p": 3, "strides": [2]})
    x = rf(1, 1, 4, 4, dt=f64)
    case("LpPool", "f64", [x], [lppool_ref(x, [2, 2], [2, 2], [0] * 4, 2)],
         {"kernel_shape": [2, 2], "strides": [2, 2]})
    seed("GlobalLpPool")

    def glp(x, p):
        ax = tuple(range(2, x.ndim))
        return np.sum(np.abs(d(x)) ** p, axis=ax, keepdims=True) ** (1.0 / p)

    x = rf(2, 3, 4, 4)
    case("GlobalLpPool", "default", [x], [like(glp(x, 2), x)])
    case("GlobalLpPool", "p1", [x], [like(glp(x, 1), x)], {"p": 1})
    x = rf(1, 2, 5)
    case("GlobalLpPool", "3d_p3", [x], [like(glp(x, 3), x)], {"p": 3})
    x = rf(1, 2, 2, 3, dt=f64)
    case("GlobalLpPool", "f64", [x], [glp(x, 2)])


def gen_castlike():
    # CastLike: the dtype of the second input (its values unused):
    # f32 -> i64 (truncation), i32 -> f32, f64 -> f16, f32 -> bool
    seed("CastLike")
    x = np.array([[-2.7, -1.5, 0.4], [1.5, 2.7, 100.9]], f32)
    case("CastLike", "f32_i64", [x, np.zeros(1, i64)], [x.astype(i64)])
    case("CastLike", "f32_bool", [x, C(np.zeros(2, BOOL))], [x.astype(BOOL)])
    x = ri(2, 3)
    case("CastLike", "i32_f32", [x, np.zeros((), f32)], [x.astype(f32)])
    x = rf(4, dt=f64) / 3
    case("CastLike", "f64_f16", [x, np.zeros(3, f16)], [x.astype(f16)])


def gen_det():
    # Det: 2x2, 3x3 batch, 4x4 f64, a singular matrix, 1x1
    seed("Det")
    x = np.arange(4).reshape(2, 2).astype(f32)
    case("Det", "2d", [x], [like(np.linalg.det(d(x)), x)])
    x = rf(2, 3, 3, 3)
    case("Det", "batch", [x], [like(np.linalg.det(d(x)), x)])
    x = rf(4, 4, dt=f64)
    case("Det", "f64", [x], [np.linalg.det(x)])
    x = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 5]], f32)
    case("Det", "singular", [x], [np.array(0.0, f32)])
    x = rf(3, 1, 1)
    case("Det", "1x1", [x], [x.reshape(3)])


def gen_einsum():
    # Einsum: matmul, transpose, trace, diagonal, batch matmul over '...',
    # implicit output, outer product, full sum, three operands, broadcast
    # ellipsis, spaces, integers
    seed("Einsum")

    def ein(eq, *ops, dt=None):
        r = np.einsum(eq.replace(" ", ""), *[d(o) for o in ops])
        return np.asarray(r).astype(dt or ops[0].dtype)

    a, b = rf(3, 4), rf(4, 5)
    case("Einsum", "matmul", [a, b], [ein("ij,jk->ik", a, b)],
         {"equation": "ij,jk->ik"})
    case("Einsum", "implicit", [a, b], [ein("ij,jk", a, b)],
         {"equation": "ij,jk"})
    case("Einsum", "transpose", [a], [ein("ij->ji", a)],
         {"equation": "ij->ji"})
    case("Einsum", "sum_all", [a], [ein("ij->", a)], {"equation": "ij->"})
    x = rf(4, 4)
    case("Einsum", "trace", [x], [ein("ii", x)], {"equation": "ii"})
    x = rf(2, 3, 3)
    case("Einsum", "batch_diagonal", [x], [ein("...ii->...i", x)],
         {"equation": "...ii ->...i"})
    a, b = rf(2, 3, 4), rf(2, 4, 2)
    case("Einsum", "batch_matmul", [a, b], [ein("bij,bjk->bik", a, b)],
         {"equation": "bij, bjk -> bik"})
    a, b = rf(2, 1, 3, 4), rf(5, 4, 2)
    case("Einsum", "ellipsis_bcast", [a, b],
         [ein("...ij,...jk->...ik", a, b)],
         {"equation": "...ij,...jk->...ik"})
    a, b = rf(3), rf(4)
    case("Einsum", "outer", [a, b], [ein("i,j->ij", a, b)],
         {"equation": "i,j->ij"})
    a, b, c = rf(2, 3), rf(3, 4), rf(4, 2)
    case("Einsum", "three", [a, b, c], [ein("ij,jk,kl->il", a, b, c)],
         {"equation": "ij,jk,kl->il"})
    a, b = ri(2, 3, dt=i64), ri(3, dt=i64)
    case("Einsum", "i64", [a, b], [ein("ij,j->i", a, b, dt=i64)],
         {"equation": "ij,j->i"})
    a = rf(2, 3, dt=f64)
    case("Einsum", "f64_upper", [a], [ein("Ab->bA", a)],
         {"equation": "Ab->bA"})


def qround(v, dt):
    lo, hi = (0, 255) if dt == u8 else (-128, 127)
    return np.clip(np.rint(v), lo, hi).astype(dt)


def gen_quantize():
    # QuantizeLinear: per tensor u8 and i8 (halves to even, saturation),
    # no zero point (u8), per axis 1 and axis 0, i32 input;
    # DequantizeLinear: per tensor u8, i8, per axis, i32 without zero
    # point; DynamicQuantizeLinear: ONNX's example and all-positive data
    seed("QuantizeLinear")
    x = np.array([0, 2, 3, 5, 1000, -254, -1000, -3, 257], f32)
    s, z = np.array(2.0, f32), np.array(128, u8)
    case("QuantizeLinear", "u8", [x, s, z], [qround(np.rint(x / s) + z, u8)])
    s, z = np.array(4.0, f32), np.array(-2, i8)
    case("QuantizeLinear", "i8", [x, C(s), C(z)],
         [qround(np.rint(x / s) + d(z), i8)])
    case("QuantizeLinear", "no_zp", [x, C(np.array(3.0, f32))],
         [qround(x / np.float32(3.0), u8)])
    x = rf(1, 3, 2, 2, lo=-100, hi=100)
    s, z = np.array([2, 4, 5], f32), np.array([84, 24, 196], u8)
    case("QuantizeLinear", "axis1", [x, s, z],
         [qround(np.rint(x / s.reshape(1, 3, 1, 1)) +
                 d(z).reshape(1, 3, 1, 1), u8)])
    x = rf(2, 3, lo=-100, hi=100)
    s, z = np.array([0.5, 3.0], f32), np.array([0, -10], i8)
    case("QuantizeLinear", "axis0", [x, s, z],
         [qround(np.rint(x / s.reshape(2, 1)) + d(z).reshape(2, 1), i8)],
         {"axis": 0})
    x = ri(5, lo=-500, hi=500)
    case("QuantizeLinear", "i32", [x, np.array(2.0, f32), np.array(10, u8)],
         [qround(np.rint(d(x) / 2.0) + 10, u8)])
    seed("DequantizeLinear")
    x = np.array([0, 3, 128, 255], u8)
    case("DequantizeLinear", "u8", [x, np.array(2.0, f32),
                                    np.array(128, u8)],
         [((d(x) - 128) * 2).astype(f32)])
    x = np.array([-128, -1, 0, 127], i8)
    case("DequantizeLinear", "i8", [x, C(np.array(0.5, f32)),
                                    C(np.array(-3, i8))],
         [((d(x) + 3) * 0.5).astype(f32)])
    x = R.integers(0, 256, (1, 3, 2, 2)).astype(u8)
    s, z = np.array([2, 4, 5], f32), np.array([84, 24, 196], u8)
    case("DequantizeLinear", "axis1", [x, s, z],
         [((d(x) - d(z).reshape(1, 3, 1, 1)) *
           d(s).reshape(1, 3, 1, 1)).astype(f32)])
    x = ri(4, lo=-1000, hi=1000)
    case("DequantizeLinear", "i32", [x, np.array(0.25, f32)],
         [(d(x) * 0.25).astype(f32)])
    seed("DynamicQuantizeLinear")
    for name, x in (("example", np.array([0, 2, -3, -2.5, 1.34, 0.5], f32)),
                    ("positive", np.array([[1, 2.1, 1.3, 2.5],
                                           [3.34, 4.0, 1.5, 2.6]], f32))):
        lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
        sc = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
        zp = qround(np.float32(-np.float32(lo) / sc), u8)
        y = qround(np.rint(x / sc) + zp, u8)
        case("DynamicQuantizeLinear", name, [x],
             [y, np.array(sc, f32), np.array(zp, u8)])


def fakequant_ref(x, s, z, qt, axis):
    """QuantizeLinear then DequantizeLinear in x's dtype (s, z per tensor
    or along axis), the division rounded to x's dtype first."""
    shape = [1] * x.ndim
    if s.ndim == 1 and s.size > 1:
        shape[axis] = s.size
    sb, zb = d(s).reshape(shape), d(z).reshape(shape)
    u = (d(x) / sb).astype(x.dtype)
    lo, hi = (-128, 127) if qt == i8 else (0, 255)
    q = np.clip(np.rint(d(u)) + zb, lo, hi)
    return ((q - zb) * sb).astype(x.dtype)


def gen_fakequantize():
    # FakeQuantize (Smelt's QAT op): per tensor u8 (values past both ends
    # of the range), per tensor i8 without saturation, per axis 1 (u8) and
    # axis 0 (i8), no zero point (u8), f64
    seed("FakeQuantize")

    def fq(cname, x, s, z, axis=1):
        ins = [x, C(s)] + ([C(z)] if z is not None else [])
        qt = z.dtype if z is not None else u8
        attrs = {"axis": axis} if s.ndim == 1 and s.size > 1 else None
        case("FakeQuantize", cname, ins,
             [fakequant_ref(x, s, z if z is not None else np.array(0, u8),
                            qt, axis)], attrs)

    fq("u8", rf(3, 7, lo=-4, hi=6), np.array(0.03, f32), np.array(100, u8))
    fq("i8", rf(11, lo=-1, hi=1), np.array(0.01, f32), np.array(3, i8))
    fq("axis1", rf(2, 3, 4, lo=-2, hi=2), np.array([0.01, 0.02, 0.005], f32),
       np.array([128, 90, 200], u8))
    fq("axis0", rf(4, 5, lo=-1, hi=1), np.array([0.004, 0.01, 0.02, 0.008],
                                                 f32),
       np.array([0, -5, 10, 1], i8), axis=0)
    fq("no_zp", rf(6, lo=-1, hi=9), np.array(0.02, f32), None)
    fq("f64", rf(2, 5, lo=-3, hi=3, dt=f64), np.array(0.02, f64),
       np.array(-10, i8))


def gen_fusedqmatmul():
    # FusedQMatMul (Smelt's, ops.def): an f32 A quantized per call as
    # DynamicQuantizeLinear does (per-column i8 weights with a bias; a 3-D
    # batch with relu), a u8 A with scale and zero point against u8
    # weights with per-column zero points (gelu), an i8 A without bias
    seed("FusedQMatMul")

    def dql(x):
        lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
        sc = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
        zp = qround(np.float32(-np.float32(lo) / sc), u8)
        return qround(np.rint(x / sc) + zp, u8), sc, zp

    def fq(a, sa, za, b, sb, zb, bias, act):
        acc = (d(a) - d(za)) @ (d(b) - d(zb))
        s = np.float32(sa) * np.asarray(sb, f32)
        v = acc.astype(f32) * s
        if bias is not None:
            v = v + bias
        return activation(v, act).astype(f32)

    x = rf(3, 5)
    b = ri(5, 4, lo=-127, hi=128, dt=i8)
    sb = R.uniform(0.01, 0.1, 4).astype(f32)
    bias = rf(4)
    q, sc, zp = dql(x)
    case("FusedQMatMul", "dynamic", [x, C(b), C(sb), None, C(bias)],
         [fq(q, sc, zp, b, sb, np.int8(0), bias, "none")])
    x = rf(2, 3, 6)
    b = ri(6, 3, lo=-128, hi=128, dt=i8)
    sb = np.array(0.05, f32)
    q, sc, zp = dql(x)
    case("FusedQMatMul", "dynamic_batch_relu", [x, C(b), C(sb)],
         [fq(q, sc, zp, b, sb, np.int8(0), None, "relu")],
         {"activation": "relu"})
    a = R.integers(0, 256, (4, 3)).astype(u8)
    b = R.integers(0, 256, (3, 5)).astype(u8)
    sb = R.uniform(0.01, 0.1, 5).astype(f32)
    zb = R.integers(0, 256, 5).astype(u8)
    sa, za = np.array(0.02, f32), np.array(130, u8)
    bias = rf(5)
    case("FusedQMatMul", "u8_gelu", [a, C(b), C(sb), C(zb), C(bias), C(sa),
                                     C(za)],
         [fq(a, sa, za, b, sb, zb, bias, "gelu")], {"activation": "gelu"})
    a = ri(2, 4, lo=-128, hi=128, dt=i8)
    b = ri(4, 3, lo=-128, hi=128, dt=i8)
    sa, za = np.array(0.03, f32), np.array(-7, i8)
    case("FusedQMatMul", "i8", [a, b, np.array(0.5, f32), None, None, sa, za],
         [fq(a, sa, za, b, np.float32(0.5), np.int8(0), None, "none")])
    # a residual (input 7) of the result's shape, after the bias, before
    # the activation
    x = rf(2, 3, 5)
    b = ri(5, 4, lo=-127, hi=128, dt=i8)
    sb = R.uniform(0.01, 0.1, 4).astype(f32)
    bias, res = rf(4), rf(2, 3, 4)
    q, sc, zp = dql(x)
    y = fq(q, sc, zp, b, sb, np.int8(0), bias, "none") + res
    case("FusedQMatMul", "residual_relu",
         [x, C(b), C(sb), None, C(bias), None, None, res],
         [activation(y, "relu").astype(f32)], {"activation": "relu"})


def conv_int_ref(x, w, b, strides, pads):
    """Conv of integer-valued float64 operands (exact), via conv_ref."""
    return conv_ref(d(x), d(w), None if b is None else d(b), strides, pads,
                    [1] * (x.ndim - 2), 1)


def gen_qmatmul_qconv():
    # MatMulInteger: u8 with zero points, i8 without, per-row / per-column
    # zero points, a 3-D batch; QLinearMatMul: ONNX's example, i8 with
    # per-row and per-column scales; ConvInteger: u8 with zero points,
    # pads; QLinearConv: per tensor with bias, per channel i8 weights
    seed("MatMulInteger")
    A = np.array([[11, 7, 3], [10, 6, 2], [9, 5, 1], [8, 4, 0]], u8)
    B = np.array([[1, 4], [2, 5], [3, 6]], u8)
    case("MatMulInteger", "u8_zp", [A, B, np.array(12, u8),
                                    np.array(0, u8)],
         [((d(A) - 12) @ d(B)).astype(i32)])
    A, B = ri(2, 5, lo=-128, hi=128, dt=i8), ri(5, 3, lo=-128, hi=128, dt=i8)
    case("MatMulInteger", "i8", [A, B], [(d(A) @ d(B)).astype(i32)])
    A = R.integers(0, 256, (3, 4)).astype(u8)
    B = R.integers(0, 256, (4, 2)).astype(u8)
    za, zb = np.array([1, 100, 255], u8), np.array([128, 7], u8)
    case("MatMulInteger", "per_row_col", [A, B, za, zb],
         [((d(A) - d(za)[:, None]) @ (d(B) - d(zb))).astype(i32)])
    A = R.integers(0, 256, (2, 2, 3)).astype(u8)
    B = R.integers(0, 256, (3, 4)).astype(u8)
    case("MatMulInteger", "batch", [A, B, C(np.array(128, u8))],
         [((d(A) - 128) @ d(B)).astype(i32)])
    seed("QLinearMatMul")

    def qmm(a, sa, za, b, sb, zb, sy, zy, dt):
        acc = (d(a) - d(za).reshape(-1, 1)) @ (d(b) - d(zb))
        m = (d(sa).reshape(-1, 1) * d(sb)) / d(sy)
        return qround(acc * m + d(zy), dt)

    a = np.array([[208, 236, 0, 238], [3, 214, 255, 29]], u8)
    b = np.array([[152, 51, 244], [60, 26, 255], [0, 127, 246],
                  [127, 254, 247]], u8)
    prm = [np.array([0.0066], f32), np.array([113], u8),
           np.array([0.00705], f32), np.array([114], u8),
           np.array([0.0107], f32), np.array([118], u8)]
    case("QLinearMatMul", "example", [a, prm[0], prm[1], b, prm[2], prm[3],
                                      prm[4], prm[5]],
         [qmm(a, prm[0], prm[1], b, prm[2], prm[3], prm[4], prm[5], u8)])
    a, b = ri(3, 4, lo=-128, hi=128, dt=i8), ri(4, 2, lo=-128, hi=128, dt=i8)
    sa, za = np.array([0.01, 0.02, 0.03], f32), np.array([0, 1, -1], i8)
    sb, zb = np.array([0.05, 0.04], f32), np.array([3, -3], i8)
    sy, zy = np.array(0.5, f32), np.array(-5, i8)
    case("QLinearMatMul", "i8_rows_cols", [a, C(sa), C(za), b, C(sb), C(zb),
                                           C(sy), C(zy)],
         [qmm(a, sa, za, b, sb, zb, sy, zy, i8)])
    seed("ConvInteger")
    x = R.integers(0, 256, (1, 2, 4, 4)).astype(u8)
    w = R.integers(0, 256, (3, 2, 2, 2)).astype(u8)
    case("ConvInteger", "u8_zp", [x, w, np.array(100, u8),
                                  np.array(128, u8)],
         [conv_int_ref(d(x) - 100, d(w) - 128, None, [1, 1],
                       [0] * 4).astype(i32)])
    x = R.integers(0, 256, (1, 1, 3, 3)).astype(u8)
    w = R.integers(0, 256, (1, 1, 2, 2)).astype(u8)
    case("ConvInteger", "pads", [x, w, np.array(1, u8)],
         [conv_int_ref(d(x) - 1, d(w), None, [1, 1],
                       [1, 1, 1, 1]).astype(i32)],
         {"pads": [1, 1, 1, 1]})
    seed("QLinearConv")

    def qconv(x, sx, zx, w, sw, zw, sy, zy, b, pads, dt):
        M = w.shape[0]
        acc = conv_int_ref(d(x) - d(zx), d(w) - d(zw).reshape(-1, 1, 1, 1)
                           if np.size(zw) > 1 else d(w) - d(zw),
                           b, [1, 1], pads)
        m = d(sx) * d(sw).reshape(1, -1, 1, 1) / d(sy)
        if np.size(sw) == 1:
            m = np.full((1, M, 1, 1), d(sx) * d(sw).item() / d(sy))
        return qround(acc * m + d(zy), dt)

    x = R.integers(0, 256, (1, 2, 4, 4)).astype(u8)
    w = R.integers(0, 256, (3, 2, 3, 3)).astype(u8)
    b = ri(3, lo=-5000, hi=5000)
    prm = [np.array(0.02, f32), np.array(120, u8), np.array(0.01, f32),
           np.array(130, u8), np.array(0.3, f32), np.array(100, u8)]
    case("QLinearConv", "u8_bias", [x, prm[0], prm[1], w, prm[2], prm[3],
                                    prm[4], prm[5], b],
         [qconv(x, prm[0], prm[1], w, prm[2], prm[3], prm[4], prm[5], b,
                [1, 1, 1, 1], u8)], {"pads": [1, 1, 1, 1]})
    x = R.integers(0, 256, (1, 1, 3, 3)).astype(u8)
    w = ri(2, 1, 2, 2, lo=-128, hi=128, dt=i8)
    sw, zw = np.array([0.01, 0.03], f32), np.array([0, 2], i8)
    case("QLinearConv", "per_channel", [x, C(np.array(0.05, f32)),
                                        C(np.array(10, u8)), w, C(sw),
                                        C(zw), C(np.array(0.2, f32)),
                                        C(np.array(5, i8))],
         [qconv(x, np.array(0.05, f32), np.array(10, u8), w, sw, zw,
                np.array(0.2, f32), np.array(5, i8), None, [0] * 4, i8)])


def nll_ref(logp, target, weight=None, reduction="mean", ignore_index=None):
    """ONNX's NegativeLogLikelihoodLoss in float64: the negated
    log-probability of each target class, weighted (0 where ignored),
    then none / sum / mean (the sum over the sum of the weights)."""
    N, Cc = logp.shape[:2]
    lp = d(logp).reshape(N, Cc, -1)
    t = target.reshape(N, -1)
    loss = np.zeros(t.shape)
    w = np.zeros(t.shape)
    for n in range(N):
        for k in range(t.shape[1]):
            if ignore_index is not None and t[n, k] == ignore_index:
                continue
            w[n, k] = 1.0 if weight is None else d(weight)[t[n, k]]
            loss[n, k] = -w[n, k] * lp[n, t[n, k], k]
    if reduction == "none":
        return loss.reshape(target.shape)
    if reduction == "sum":
        return np.array(loss.sum())
    return np.array(loss.sum() / w.sum())


def log_softmax1(x):
    x = d(x)
    m = np.max(x, axis=1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))


def gen_losses():
    # NegativeLogLikelihoodLoss: [N,C] mean, [N,C,d] with weights (mean),
    # [N,C,d1,d2] sum, none, ignore_index (negative) with weights, i32
    # targets, f64. SoftmaxCrossEntropyLoss: mean, sum with weights, none
    # with the log_prob output, ignore_index, [N,C,d], f64
    op = "NegativeLogLikelihoodLoss"
    seed(op)
    x, t = rf(3, 5), ri(3, lo=0, hi=5, dt=i64)
    case(op, "NC_mean", [x, t], [like(nll_ref(x, t), x)])
    x, t, w = rf(2, 4, 3), ri(2, 3, lo=0, hi=4, dt=i64), rf(4, lo=0.1, hi=1)
    case(op, "NCd_weight", [x, t, w], [like(nll_ref(x, t, w), x)])
    x, t = rf(2, 3, 2, 2), ri(2, 2, 2, lo=0, hi=3, dt=i64)
    case(op, "NCd1d2_sum", [x, t], [like(nll_ref(x, t, None, "sum"), x)],
         {"reduction": "sum"})
    case(op, "NCd1d2_none", [x, t], [like(nll_ref(x, t, None, "none"), x)],
         {"reduction": "none"})
    x, w = rf(2, 3, 4), rf(3, lo=0.1, hi=1)
    t = np.array([[0, -1, 2, 1], [-1, -1, 1, 2]], i64)
    case(op, "ignore_weight", [x, t, C(w)],
         [like(nll_ref(x, t, w, "mean", -1), x)], {"ignore_index": -1})
    x, t = rf(4, 3), ri(4, lo=0, hi=3)
    t[1] = 7
    case(op, "i32_ignore_sum", [x, t],
         [like(nll_ref(x, t, None, "sum", 7), x)],
         {"ignore_index": 7, "reduction": "sum"})
    x, t = rf(2, 3, dt=f64), ri(2, lo=0, hi=3, dt=i64)
    case(op, "f64_none", [x, t], [nll_ref(x, t, None, "none")],
         {"reduction": "none"})
    op = "SoftmaxCrossEntropyLoss"
    seed(op)
    x, t = rf(3, 5), ri(3, lo=0, hi=5, dt=i64)
    case(op, "mean", [x, t], [like(nll_ref(log_softmax1(x), t), x)])
    x, t, w = rf(2, 4, 3), ri(2, 3, lo=0, hi=4, dt=i64), rf(4, lo=0.1, hi=1)
    case(op, "sum_weight", [x, t, w],
         [like(nll_ref(log_softmax1(x), t, w, "sum"), x)],
         {"reduction": "sum"})
    x, t = rf(2, 3), ri(2, lo=0, hi=3, dt=i64)
    lp = log_softmax1(x)
    case(op, "none_log_prob", [x, t],
         [like(nll_ref(lp, t, None, "none"), x), like(lp, x)],
         {"reduction": "none"})
    x = rf(2, 3, 4)
    t = np.array([[0, 5, 2, 1], [5, 5, 1, 2]], i32)
    case(op, "ignore", [x, t],
         [like(nll_ref(log_softmax1(x), t, None, "mean", 5), x)],
         {"ignore_index": 5})
    x, t = rf(2, 4, dt=f64), ri(2, lo=0, hi=4, dt=i64)
    case(op, "f64", [x, t], [nll_ref(log_softmax1(x), t)])



GENERATORS_MATH = [
    gen_math_unary, gen_sign_round, gen_isnan_isinf, gen_param_activations,
    gen_prelu, gen_bitwise, gen_mod, gen_compare_or_equal, gen_mean,
    gen_reduce_mapped, gen_argmin, gen_hardmax, gen_lpnorm, gen_mvn, gen_lrn,
    gen_instancenorm, gen_lppool, gen_castlike, gen_det, gen_einsum,
    gen_quantize, gen_fakequantize, gen_qmatmul_qconv, gen_fusedqmatmul,
    gen_losses,
]


# --------------------------------------------------------------------------
# more indexing, layout and sequence ops
# (the ops of ops.def's section of that name: gathers and scatters, TopK,
# NonZero, OneHot, CumSum, Trilu, EyeLike, DepthToSpace, SpaceToDepth,
# Resize, Upsample, Size, Compress, ReverseSequence, Unique, RNN, GRU,
# LSTM, NonMaxSuppression, RoiAlign). Expected values come from numpy
# written here after the ONNX (opset <= 17) specifications and the
# reference code of ONNX's own backend tests.


def ix_gather_elements(x, ind, axis):
    ind = np.where(ind < 0, ind + x.shape[axis], ind)
    idx = list(np.indices(ind.shape, sparse=True))
    idx[axis] = ind
    return x[tuple(idx)]


def gen_gatherelements():
    # GatherElements: axis 0 and 1; negative indices; indices smaller than
    # data in the other dim; 3-D axis -1; i32 indices; i64 and bool data;
    # a symbolic dim
    seed("GatherElements")

    def ge(cname, x, ind, axis=0, **kw):
        attrs = {"axis": axis} if axis != 0 else None
        case("GatherElements", cname, [x, ind],
             [ix_gather_elements(x, ind, axis % x.ndim)], attrs, **kw)

    x = rf(3, 4)
    ge("axis0", x, R.integers(0, 3, (2, 4)).astype(i64))
    ge("axis1", x, R.integers(0, 4, (3, 5)).astype(i64), axis=1)
    ge("neg_idx", x, R.integers(-4, 4, (3, 2)).astype(i64), axis=1)
    ge("smaller", x, R.integers(0, 3, (2, 2)).astype(i64))
    ge("3d_axis_m1", rf(2, 3, 4), R.integers(-4, 4, (2, 3, 6)).astype(i64),
       axis=-1)
    ge("i32_idx", x, R.integers(0, 3, (3, 4)).astype(i32))
    ge("i64_data", ri(4, 2, dt=i64), R.integers(0, 4, (5, 2)).astype(i64))
    ge("bool_data", rb(2, 3), R.integers(0, 3, (2, 3)).astype(i64), axis=1)
    ge("sym", x, R.integers(0, 4, (3, 2)).astype(i64), axis=1,
       in_dims=[("n", 4), ("n", 2)], out_dims=[("n", 2)])


def ix_gather_nd(x, ind, b=0):
    m = ind.shape[-1]
    nb = int(np.prod(ind.shape[:b])) if b else 1
    xr = x.reshape((nb,) + x.shape[b:])
    ir = ind.reshape((nb, -1, m))
    out = [xr[(bi,) + tuple(int(v) for v in t)]
           for bi in range(nb) for t in ir[bi]]
    shape = ind.shape[:-1] + x.shape[b + m:]
    return np.asarray(out, dtype=x.dtype).reshape(shape)


def gen_gathernd():
    # GatherND: full tuples (elements), short tuples (slices), batch_dims
    # 1 and 2, negative indices, i32 data, i32 indices, 1-D indices
    seed("GatherND")

    def gn(cname, x, ind, b=0):
        attrs = {"batch_dims": b} if b else None
        case("GatherND", cname, [x, ind], [ix_gather_nd(x, ind, b)], attrs)

    x = rf(3, 4)
    gn("elements", x, np.array([[0, 1], [2, 3], [1, 0]], i64))
    gn("rows", rf(3, 4, 2), np.array([[[2], [0]], [[1], [1]]], i64))
    gn("batch1", rf(2, 3, 4), np.array([[[1, 3], [0, 0]], [[2, 1], [1, 2]]],
                                       i64), b=1)
    gn("batch2", rf(2, 3, 4), np.array([[[1], [3], [0]], [[2], [0], [1]]],
                                       i64), b=2)
    gn("neg_idx", x, np.array([[-1, -4], [0, -2]], i64))
    gn("i32_data", ri(2, 2, 3, dt=i32), np.array([[1, 0], [0, 1]], i64))
    gn("1d_idx", x, np.array([1, 2], i64))


def ix_scatter_elements(x, ind, upd, axis, reduction="none"):
    y = x.copy()
    ind = np.where(ind < 0, ind + x.shape[axis], ind)
    for idx in np.ndindex(ind.shape):
        t = list(idx)
        t[axis] = ind[idx]
        t = tuple(t)
        if reduction == "none":
            y[t] = upd[idx]
        elif reduction == "add":
            y[t] = y[t] + upd[idx]
        elif reduction == "mul":
            y[t] = y[t] * upd[idx]
        elif reduction == "max":
            y[t] = max(y[t], upd[idx])
        else:
            y[t] = min(y[t], upd[idx])
    return y


def gen_scatterelements():
    # ScatterElements: axis 0 and 1, negative indices, indices smaller than
    # data, the reductions add (with repeated indices), mul, max, min, i64
    # and f64 data, 3-D; Scatter (the deprecated alias) with and without
    # axis
    seed("ScatterElements")

    def se(cname, x, ind, upd, axis=0, reduction=None, op="ScatterElements"):
        attrs = {}
        if axis:
            attrs["axis"] = axis
        if reduction:
            attrs["reduction"] = reduction
        y = ix_scatter_elements(x, ind, upd, axis % x.ndim,
                                reduction or "none")
        case(op, cname, [x, ind, upd], [y], attrs or None)

    x = rf(3, 3)
    se("axis0", x, np.array([[1, 0, 2], [0, 2, 1]], i64), rf(2, 3))
    se("axis1", x, np.array([[2, 0], [1, 1], [0, 2]], i64), rf(3, 2), axis=1)
    se("neg_idx", x, np.array([[-1, -3]], i64), rf(1, 2), axis=1)
    se("add_dup", rf(1, 5), np.array([[1, 1, 3]], i64), rf(1, 3), axis=1,
       reduction="add")
    se("mul", rf(2, 3), np.array([[1, 1], [0, 2]], i64), rf(2, 2), axis=1,
       reduction="mul")
    se("max", rf(3, 2), np.array([[0, 1], [0, 1], [2, 0]], i64), rf(3, 2),
       reduction="max")
    se("min", rf(3, 2), np.array([[2, 1], [2, 1]], i64), rf(2, 2),
       reduction="min")
    se("i64", ri(4, 2, dt=i64), np.array([[3, 0], [1, 2]], i64),
       ri(2, 2, dt=i64), reduction="add")
    se("f64_3d", rf(2, 3, 2, dt=f64), R.integers(0, 3, (2, 2, 2)).astype(i32),
       rf(2, 2, 2, dt=f64), axis=1)
    se("with_axis", x, np.array([[1, 0]], i64), rf(1, 2), axis=1,
       op="Scatter")
    se("without_axis", x, np.array([[2, 0, 1]], i64), rf(1, 3), op="Scatter")


def ix_scatter_nd(x, ind, upd, reduction="none"):
    y = x.copy()
    for idx in np.ndindex(ind.shape[:-1]):
        t = tuple(int(v) for v in ind[idx])
        u = upd[idx]
        if reduction == "none":
            y[t] = u
        elif reduction == "add":
            y[t] = y[t] + u
        elif reduction == "mul":
            y[t] = y[t] * u
        elif reduction == "max":
            y[t] = np.maximum(y[t], u)
        else:
            y[t] = np.minimum(y[t], u)
    return y


def gen_scatternd():
    # ScatterND: element updates (k = rank), slice updates, 2-D index grid,
    # negative indices, the reductions add (repeated indices), mul, max,
    # min, i32 data
    seed("ScatterND")

    def sn(cname, x, ind, upd, reduction=None):
        attrs = {"reduction": reduction} if reduction else None
        case("ScatterND", cname, [x, ind, upd],
             [ix_scatter_nd(x, ind, upd, reduction or "none")], attrs)

    sn("elements", rf(8), np.array([[4], [3], [1], [7]], i64), rf(4))
    sn("slices", rf(4, 3, 2), np.array([[0], [2]], i64), rf(2, 3, 2))
    sn("grid", rf(3, 4), np.array([[[0, 1], [2, 3]], [[1, 1], [0, 0]]], i64),
       rf(2, 2))
    sn("neg_idx", rf(3, 4), np.array([[-1, -2], [0, -4]], i64), rf(2))
    sn("add", rf(4, 2), np.array([[1], [1], [3]], i64), rf(3, 2),
       reduction="add")
    sn("mul", rf(4, 2), np.array([[0], [0]], i64), rf(2, 2), reduction="mul")
    sn("max", rf(3, 3), np.array([[0, 0], [2, 1], [0, 0]], i64), rf(3),
       reduction="max")
    sn("min", rf(3, 3), np.array([[1], [2]], i64), rf(2, 3), reduction="min")
    sn("i32", ri(2, 3, dt=i32), np.array([[1, 2], [0, 0]], i64),
       ri(2, dt=i32))


def ix_topk(x, k, axis, largest=True):
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(i64)


def gen_topk():
    # TopK: largest along axis 1 and -1, smallest, axis 0, ties (the lower
    # index first), k = 0 and k = dim, i64 data, K as a graph input, the
    # opset-1 form with attribute k
    seed("TopK")

    def tk(cname, x, k, axis=-1, largest=1, param=False, attr_k=False):
        attrs = {"axis": axis} if axis != -1 else {}
        if not largest:
            attrs["largest"] = 0
        vals, idx = ix_topk(x, k, axis % x.ndim, bool(largest))
        if attr_k:
            attrs["k"] = k
            ins = [x]
        else:
            kk = np.array([k], i64)
            ins = [x, kk if param else C(kk)]
        case("TopK", cname, ins, [vals, idx], attrs or None)

    x = rf(3, 5)
    tk("axis1", x, 3, axis=1)
    tk("neg_axis", rf(2, 3, 4), 2)
    tk("smallest", x, 2, axis=1, largest=0)
    tk("axis0", x, 2, axis=0)
    tk("ties", np.array([[1, 3, 3, 2, 3], [0, 0, 1, 1, 0]], f32), 3)
    tk("ties_smallest", np.array([[1, 3, 3, 1, 3]], f32), 3, largest=0)
    tk("k0", x, 0)
    tk("k_all", x, 5)
    tk("i64", ri(2, 6, dt=i64), 4)
    tk("param", x, 2, param=True)
    tk("attr_k", x, 2, axis=1, attr_k=True)


def gen_nonzero():
    # NonZero: 2-D f32 (with -0.0 and nan), 3-D bool, 1-D i32, all zero
    seed("NonZero")
    x = np.array([[1.0, 0.0, -0.0], [np.nan, 2.5, 0.0]], f32)
    case("NonZero", "f32", [x], [np.array(np.nonzero(x), i64)])
    x = rb(2, 3, 2)
    case("NonZero", "bool_3d", [x], [np.array(np.nonzero(x), i64)])
    x = ri(7, lo=-1, hi=2)
    case("NonZero", "i32", [x], [np.array(np.nonzero(x), i64)])
    x = np.zeros((2, 3), f32)
    case("NonZero", "all_zero", [x], [np.zeros((2, 0), i64)])


def ix_onehot(ind, depth, values, axis=-1):
    ind = np.asarray(ind).astype(i64)
    r = ind.ndim
    ax = axis if axis >= 0 else axis + r + 1
    k = np.where(ind < 0, ind + depth, ind)
    grid = np.arange(depth).reshape([depth if d == ax else 1
                                     for d in range(r + 1)])
    return np.where(np.expand_dims(k, ax) == grid, values[1],
                    values[0]).astype(values.dtype)


def gen_onehot():
    # OneHot: default axis -1, axis 0 and 1, negative axis, negative and
    # out-of-range indices, float indices and depth, i64 values, depth as
    # graph input
    seed("OneHot")

    def oh(cname, ind, depth, values, axis=-1, param=False):
        attrs = {"axis": axis} if axis != -1 else None
        dp = np.asarray(depth)
        case("OneHot", cname, [ind, dp if param else C(dp), C(values)],
             [ix_onehot(ind, int(dp.reshape(-1)[0]), values, axis)], attrs)

    v = np.array([0.0, 1.0], f32)
    oh("default", np.array([[1, 4], [0, 2]], i64), np.array(5, i64), v)
    oh("axis0", np.array([2, 0, 1], i64), np.array([3], i64),
       np.array([-1.0, 2.5], f32), axis=0)
    oh("axis1", np.array([[0, 3], [2, 1]], i32), np.array(4, i64), v, axis=1)
    oh("neg_axis", np.array([[0, 3], [2, 1]], i64), np.array(4, i64), v,
       axis=-2)
    oh("neg_idx", np.array([-1, -3, 9, -7, 0], i64), np.array(3, i64), v)
    oh("float", np.array([1.7, 0.2, 2.9], f32), np.array(3.5, f32),
       np.array([3, 7], i64))
    oh("param", np.array([[1], [0]], i64), np.array(2, i64), v, param=True)


def ix_cumsum(x, axis, exclusive=0, reverse=0):
    d = np.asarray(x).astype(f64 if x.dtype.kind == "f" else i64)
    if reverse:
        d = np.flip(d, axis)
    y = np.cumsum(d, axis=axis)
    if exclusive:
        y = y - d
    if reverse:
        y = np.flip(y, axis)
    return y.astype(x.dtype)


def gen_cumsum():
    # CumSum: 1-D, exclusive, reverse, both; 2-D axis 0, 1 and -1; i32,
    # i64 and f64; the axis as i32 and as a graph input; a symbolic dim
    seed("CumSum")

    def cs(cname, x, axis, ex=0, rev=0, at=i64, param=False, **kw):
        attrs = {}
        if ex:
            attrs["exclusive"] = 1
        if rev:
            attrs["reverse"] = 1
        a = np.array(axis, at)
        case("CumSum", cname, [x, a if param else C(a)],
             [ix_cumsum(x, axis, ex, rev)], attrs or None, **kw)

    x = rf(5)
    cs("1d", x, 0)
    cs("1d_exclusive", x, 0, ex=1)
    cs("1d_reverse", x, 0, rev=1)
    cs("1d_reverse_exclusive", x, 0, ex=1, rev=1)
    x = rf(3, 4)
    cs("2d_axis0", x, 0)
    cs("2d_axis1", x, 1, rev=1)
    cs("2d_neg_axis", x, -1, ex=1)
    cs("i32", ri(2, 5), 1, at=i32)
    cs("i64", ri(4, 3, dt=i64), 0, ex=1, rev=1)
    cs("f64", rf(2, 3, dt=f64), 1, param=True)
    cs("sym", rf(3, 2), 1, in_dims=[("n", 2)], out_dims=[("n", 2)])


def gen_trilu():
    # Trilu: upper (default) and lower, k positive, negative and past the
    # matrix, non-square, batched 3-D, i64, k as a graph input, a symbolic
    # batch dim
    seed("Trilu")

    def tr(cname, x, k=None, upper=1, param=False, **kw):
        attrs = {"upper": 0} if not upper else None
        ins = [x]
        if k is not None:
            kk = np.array(k, i64)
            ins.append(kk if param else C(kk))
        kv = 0 if k is None else k
        y = np.triu(x, kv) if upper else np.tril(x, kv)
        case("Trilu", cname, ins, [y], attrs, **kw)

    x = rf(4, 5)
    tr("triu", x)
    tr("tril", x, upper=0)
    tr("triu_pos", x, 2)
    tr("triu_neg", x, -1)
    tr("tril_pos", x, 1, upper=0)
    tr("tril_neg", x, -2, upper=0)
    tr("triu_out", x, 7)
    tr("tril_out_neg", x, -9, upper=0)
    tr("3d", rf(2, 3, 3), 0, upper=0)
    tr("i64", ri(3, 2, dt=i64), 1)
    tr("param", x, -1, param=True)
    tr("sym", rf(3, 4, 4), in_dims=[("b", 4, 4)], out_dims=[("b", 4, 4)])


def gen_eyelike():
    # EyeLike: square, non-square with k 1 and -2, dtype attribute (i64
    # from f32, bool), k past the matrix, f64
    seed("EyeLike")

    def ey(cname, x, k=0, dtype=None):
        attrs = {}
        if k:
            attrs["k"] = k
        dt = x.dtype
        if dtype is not None:
            attrs["dtype"] = ONNX_CODE[dtype]
            dt = np.dtype(dtype)
        case("EyeLike", cname, [x],
             [np.eye(x.shape[0], x.shape[1], k, dtype=dt)], attrs or None)

    ey("square", rf(3, 3))
    ey("k1", rf(3, 4), k=1)
    ey("k_m2", rf(4, 3), k=-2)
    ey("dtype_i64", rf(2, 3), dtype=i64)
    ey("dtype_bool", ri(3, 3), k=-1, dtype=BOOL)
    ey("k_out", rf(2, 2), k=5)
    ey("f64", rf(2, 4, dt=f64), k=2)


def ix_d2s(x, b, mode="DCR"):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def ix_s2d(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


def gen_depthtospace():
    # DepthToSpace: DCR (default) and CRD, blocksize 2 and 3, batch 2,
    # i64; SpaceToDepth: blocksize 2 and 3, i64
    seed("DepthToSpace")
    x = rf(1, 8, 2, 3)
    case("DepthToSpace", "dcr", [x], [ix_d2s(x, 2)], {"blocksize": 2})
    case("DepthToSpace", "crd", [x], [ix_d2s(x, 2, "CRD")],
         {"blocksize": 2, "mode": "CRD"})
    x = rf(2, 9, 2, 1)
    case("DepthToSpace", "b3", [x], [ix_d2s(x, 3)], {"blocksize": 3})
    x = ri(1, 4, 1, 2, dt=i64)
    case("DepthToSpace", "i64_crd", [x], [ix_d2s(x, 2, "CRD")],
         {"blocksize": 2, "mode": "CRD"})
    seed("SpaceToDepth")
    x = rf(1, 2, 4, 6)
    case("SpaceToDepth", "b2", [x], [ix_s2d(x, 2)], {"blocksize": 2})
    x = rf(2, 1, 3, 6)
    case("SpaceToDepth", "b3", [x], [ix_s2d(x, 3)], {"blocksize": 3})
    x = ri(1, 3, 2, 2, dt=i64)
    case("SpaceToDepth", "i64", [x], [ix_s2d(x, 2)], {"blocksize": 2})
    x = rf(1, 8, 2, 3)
    case("SpaceToDepth", "roundtrip", [ix_d2s(x, 2)], [x], {"blocksize": 2})


# Resize: ONNX's interpolation (onnx/backend/test/case/node/resize.py),
# one axis at a time: an output position maps to an input coordinate, the
# n nearest positions of the edge-padded input get the weights.

def ix_resize_weights(n_in, n_out, scale, mode, ctm, nearest, a, excl,
                      roi=(0.0, 1.0)):
    """[n_out, n_in] weights and the positions outside (tf_crop)."""
    wts = np.zeros((n_out, n_in))
    outside = np.zeros(n_out, bool)
    ow = scale * n_in
    for x in range(n_out):
        if ctm == "align_corners":
            xo = 0.0 if ow == 1 else x * (n_in - 1) / (ow - 1)
        elif ctm == "asymmetric":
            xo = x / scale
        elif ctm == "tf_crop_and_resize":
            ln = np.float32(roi[1]) - np.float32(roi[0])
            xo = (ln * (n_in - 1) / 2 if ow == 1
                  else x * ln * (n_in - 1) / (ow - 1))
            xo += roi[0] * (n_in - 1)
            if xo < 0 or xo > n_in - 1:
                outside[x] = True
                continue
        elif ctm == "pytorch_half_pixel":
            xo = -0.5 if ow == 1 else (x + 0.5) / scale - 0.5
        elif ctm == "tf_half_pixel_for_nn":
            xo = (x + 0.5) / scale
        else:
            xo = (x + 0.5) / scale - 0.5
        xo = float(xo)
        fl = math.floor(xo)
        ratio = 1.0 if xo == fl else xo - fl
        if mode == "nearest":
            if xo == fl:
                c = [0.0, 1.0]
            else:
                c = {"round_prefer_floor": [ratio <= 0.5, ratio > 0.5],
                     "round_prefer_ceil": [ratio < 0.5, ratio >= 0.5],
                     "floor": [1, 0], "ceil": [0, 1]}[nearest]
        elif mode == "linear":
            c = [1 - ratio, ratio]
        else:
            r, q = ratio, 1 - ratio
            c = [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                 ((a + 2) * r - (a + 3)) * r * r + 1,
                 ((a + 2) * q - (a + 3)) * q * q + 1,
                 ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a]
        c = np.array(c, f64)
        n = len(c)
        pad = (n + 1) // 2
        cand = sorted(range(n_in + 2 * pad),
                      key=lambda i: (abs(xo + pad - i), i))[:n]
        pos = np.array(sorted(cand)) - pad
        if excl:
            c = np.where((pos < 0) | (pos >= n_in), 0.0, c)
            c = c / c.sum()
        for p, cw in zip(pos, c):
            wts[x, min(max(p, 0), n_in - 1)] += cw
    return wts, outside


def ix_resize(x, scales=None, sizes=None, mode="nearest", ctm="half_pixel",
              nearest="round_prefer_floor", a=-0.75, excl=0, roi=None,
              extrap=0.0):
    y = x.astype(f64)
    mask = np.zeros((), bool)
    for d in range(x.ndim):
        if sizes is not None:
            n_out = int(sizes[d])
            s = n_out / x.shape[d]
        else:
            s = float(np.float32(scales[d]))
            n_out = int(math.floor(s * x.shape[d]))
        r = ((float(np.float32(roi[d])), float(np.float32(roi[x.ndim + d])))
             if roi is not None else (0.0, 1.0))
        wts, out = ix_resize_weights(x.shape[d], n_out, s, mode, ctm,
                                     nearest, a, excl, r)
        y = np.moveaxis(np.tensordot(wts, y, axes=([1], [d])), 0, d)
        mask = mask | out.reshape([-1 if k == d else 1
                                   for k in range(x.ndim)])
    return np.where(mask, extrap, y).astype(x.dtype)


def gen_resize():
    # Resize: nearest with each nearest_mode, linear and cubic; the
    # coordinate modes half_pixel, asymmetric, align_corners,
    # pytorch_half_pixel, tf_crop_and_resize (with extrapolation),
    # tf_half_pixel_for_nn; scales and sizes; up and down; cubic_coeff_a
    # and exclude_outside; 3-D and f64; an empty scales input beside sizes;
    # a symbolic batch dim kept by scale 1; scales as a graph input
    seed("Resize")

    def rs(cname, x, scales=None, sizes=None, param=False, roi=None,
           in_dims=None, out_dims=None, **attrs):
        kw = {}
        names = {"mode": "mode", "ctm": "coordinate_transformation_mode",
                 "nearest": "nearest_mode", "a": "cubic_coeff_a",
                 "excl": "exclude_outside", "extrap": "extrapolation_value"}
        node_attrs = {names[k]: v for k, v in attrs.items()}
        kw.update(attrs)
        y = ix_resize(x, scales, sizes, roi=roi, **kw)
        sc = None if scales is None else np.array(scales, f32)
        sz = None if sizes is None else np.array(sizes, i64)
        r = None if roi is None else C(np.array(roi, f32))
        ins = [x, r]
        if sc is not None:
            ins.append(sc if param else C(sc))
        elif sz is not None:
            empty = cname.endswith("empty")
            ins.append(C(np.zeros(0, f32)) if empty else None)
        if sz is not None:
            ins.append(sz if param else C(sz))
        case("Resize", cname, ins, [y], node_attrs or None, in_dims=in_dims,
             out_dims=out_dims)

    x = rf(1, 1, 2, 2)
    x4 = rf(1, 1, 4, 4)
    rs("nearest_up", x, scales=[1, 1, 2, 3])
    rs("nearest_down", rf(1, 1, 2, 4), scales=[1, 1, 0.6, 0.6])
    rs("nearest_sizes", x, sizes=[1, 1, 7, 8])
    rs("nearest_ceil", x, sizes=[1, 1, 8, 8], nearest="ceil")
    rs("nearest_floor_align", x, sizes=[1, 1, 8, 8], nearest="floor",
       ctm="align_corners")
    rs("nearest_prefer_ceil_asym", x4, sizes=[1, 1, 8, 8],
       nearest="round_prefer_ceil", ctm="asymmetric")
    rs("nearest_tf_half", x4, scales=[1, 1, 0.5, 1.5], mode="nearest",
       ctm="tf_half_pixel_for_nn")
    rs("linear_up", x, scales=[1, 1, 2, 2], mode="linear")
    rs("linear_down", rf(1, 1, 2, 4), scales=[1, 1, 0.6, 0.6], mode="linear")
    rs("linear_align", x, scales=[1, 1, 2, 2], mode="linear",
       ctm="align_corners")
    rs("linear_align_down", rf(1, 1, 2, 4), scales=[1, 1, 0.6, 0.6],
       mode="linear", ctm="align_corners")
    rs("linear_pytorch", x4, sizes=[1, 1, 3, 1], mode="linear",
       ctm="pytorch_half_pixel")
    rs("linear_asym", x4, scales=[1, 1, 1.5, 0.75], mode="linear",
       ctm="asymmetric")
    rs("tf_crop", x4, sizes=[1, 1, 3, 3], mode="linear",
       ctm="tf_crop_and_resize", roi=[0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8])
    rs("tf_crop_extrap", x4, sizes=[1, 1, 3, 3], mode="linear",
       ctm="tf_crop_and_resize", roi=[0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7],
       extrap=10.0)
    rs("cubic_up", x4, scales=[1, 1, 2, 2], mode="cubic")
    rs("cubic_down", x4, scales=[1, 1, 0.8, 0.8], mode="cubic")
    rs("cubic_align", x4, scales=[1, 1, 2, 2], mode="cubic",
       ctm="align_corners")
    rs("cubic_asym", x4, scales=[1, 1, 2, 2], mode="cubic", ctm="asymmetric")
    rs("cubic_a_excl", x4, scales=[1, 1, 2, 2], mode="cubic", a=-0.5,
       excl=1)
    rs("cubic_sizes", x4, sizes=[1, 1, 9, 10], mode="cubic")
    rs("3d_linear", rf(2, 3, 4), scales=[1, 1.5, 0.5], mode="linear")
    rs("f64", rf(1, 2, 3, dt=f64), sizes=[1, 4, 5], mode="linear")
    rs("sizes_scales_empty", x, sizes=[1, 1, 3, 5], mode="linear")
    rs("param", x, scales=[1, 1, 2, 2], mode="linear", param=True)
    rs("sym", rf(2, 1, 2, 2), scales=[1, 1, 2, 2],
       in_dims=[("n", 1, 2, 2)], out_dims=[("n", 1, 4, 4)])


def gen_upsample():
    # Upsample: nearest with integer scales (a repeat), linear
    # (asymmetric), scales as the opset-7 attribute
    seed("Upsample")
    x = rf(1, 1, 2, 2)
    sc = np.array([1, 1, 2, 3], f32)
    y = x.repeat(2, axis=2).repeat(3, axis=3)
    case("Upsample", "nearest", [x, C(sc)], [y])
    case("Upsample", "linear", [x, C(np.array([1, 1, 2, 2], f32))],
         [ix_resize(x, [1, 1, 2, 2], mode="linear", ctm="asymmetric")],
         {"mode": "linear"})
    case("Upsample", "attr", [x], [y], {"scales": [1.0, 1.0, 2.0, 3.0]})


def gen_size():
    # Size: 3-D, a scalar, an empty tensor, bool
    seed("Size")
    for cname, x in (("3d", rf(2, 3, 4)), ("scalar", np.array(1.5, f32)),
                     ("empty", np.zeros((3, 0), f32)), ("bool", rb(5))):
        case("Size", cname, [x], [np.array(x.size, i64)])


def gen_compress():
    # Compress: axis 0 and 1, no axis (flattened), negative axis, a
    # condition shorter than the axis, all false, i64 data
    seed("Compress")

    def cp(cname, x, cond, axis=None):
        cond = np.array(cond, BOOL)
        attrs = {"axis": axis} if axis is not None else None
        case("Compress", cname, [x, cond], [np.compress(cond, x, axis=axis)],
             attrs)

    x = rf(3, 2)
    cp("axis0", x, [0, 1, 1], 0)
    cp("axis1", x, [0, 1], 1)
    cp("flat", x, [0, 1, 0, 0, 1, 1])
    cp("neg_axis", rf(2, 3, 4), [1, 0, 1, 1], -1)
    cp("short", rf(4, 3), [1, 0], 0)
    cp("none", x, [0, 0, 0], 0)
    cp("i64", ri(2, 3, dt=i64), [1, 0, 1], 1)


def ix_reverse_sequence(x, lens, batch_axis, time_axis):
    y = x.copy()
    for b, n in enumerate(lens):
        src = [slice(None)] * x.ndim
        src[batch_axis] = b
        src[time_axis] = slice(0, n)
        dst = list(src)
        dst[time_axis] = slice(n - 1, None, -1) if n else slice(0, 0)
        y[tuple(src)] = x[tuple(dst)]
    return y


def gen_reversesequence():
    # ReverseSequence: time-major (default), batch-major, lengths 0 and
    # full, 3-D, i64
    seed("ReverseSequence")

    def rv(cname, x, lens, ba=1, ta=0):
        attrs = {"batch_axis": ba, "time_axis": ta} if (ba, ta) != (1, 0) \
            else None
        case("ReverseSequence", cname, [x, np.array(lens, i64)],
             [ix_reverse_sequence(x, lens, ba, ta)], attrs)

    rv("time", rf(4, 4), [4, 3, 2, 1])
    rv("batch", rf(4, 4), [1, 2, 3, 4], ba=0, ta=1)
    rv("zero_full", rf(3, 2, 2), [0, 3])
    rv("i64_3d", ri(2, 5, 3, dt=i64), [5, 2], ba=0, ta=1)


def ix_unique(x, axis=None, is_sorted=1):
    y, first, inv, cnt = np.unique(x, return_index=True, return_inverse=True,
                                   return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not is_sorted:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        first, cnt, inv = first[order], cnt[order], rank[inv]
        y = np.take(x.reshape(-1) if axis is None else x, first,
                    axis=0 if axis is None else axis)
    return [y, first.astype(i64), inv.astype(i64), cnt.astype(i64)]


def gen_unique():
    # Unique: sorted and in order of appearance without axis, axis 0,
    # axis 1 of a 3-D tensor, negative axis, i64, only the first output
    seed("Unique")

    def uq(cname, x, axis=None, is_sorted=1, n_out=4):
        attrs = {}
        if axis is not None:
            attrs["axis"] = axis
        if not is_sorted:
            attrs["sorted"] = 0
        outs = ix_unique(x, axis, is_sorted)[:n_out]
        case("Unique", cname, [x], outs, attrs or None)

    x = np.array([2.0, 1.0, 1.0, 3.0, 4.0, 3.0], f32)
    uq("sorted", x)
    uq("not_sorted", x, is_sorted=0)
    x = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]], f32)
    uq("axis0", x, axis=0)
    uq("axis0_not_sorted", x[::-1].copy(), axis=0, is_sorted=0)
    x = np.array([[[1.0, 1.0], [0.0, 1.0], [2.0, 1.0], [0.0, 1.0]],
                  [[1.0, 1.0], [0.0, 1.0], [2.0, 1.0], [0.0, 1.0]]], f32)
    uq("axis1_3d", x, axis=1)
    uq("neg_axis", np.array([[1, 0, 0, 2], [3, 0, 0, 1]], f32), axis=-1)
    uq("i64", ri(3, 4, lo=-2, hi=3, dt=i64))
    uq("y_only", np.array([3, 1, 3, 2], i32), n_out=1)


# The recurrent ops, step by step in float64 following the ONNX operator
# definitions: gates iofc (LSTM), zrh (GRU), one (RNN).

RNN_ACTS = {
    "relu": lambda x, a, b: np.maximum(x, 0),
    "tanh": lambda x, a, b: np.tanh(x),
    "sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "leakyrelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "hardsigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "affine": lambda x, a, b: a * x + b,
}
RNN_ALPHA = {"leakyrelu": 0.01, "hardsigmoid": 0.2, "affine": 1.0}
RNN_BETA = {"hardsigmoid": 0.5, "affine": 0.0}


def ix_acts(names, alphas, betas):
    fns, ia, ib = [], 0, 0
    for n in names:
        k = n.lower()
        a, b = RNN_ALPHA.get(k), RNN_BETA.get(k)
        if a is not None and alphas and ia < len(alphas):
            a, ia = alphas[ia], ia + 1
        if b is not None and betas and ib < len(betas):
            b, ib = betas[ib], ib + 1
        fns.append(lambda x, f=RNN_ACTS[k], a=a, b=b: f(x, a, b))
    return fns


def ix_rnn(kind, X, W, R, B=None, lens=None, h0=None, c0=None, P=None,
           direction="forward", layout=0, lbr=0, clip=None, acts=None,
           alphas=None, betas=None, input_forget=0):
    """Y, Y_h (and Y_c for LSTM) of an RNN/GRU/LSTM node."""
    g = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    na = {"RNN": 1, "GRU": 2, "LSTM": 3}[kind]
    dflt = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
            "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[kind]
    x = d(X)
    if layout:
        x = x.transpose(1, 0, 2)
    seq, batch, _ = x.shape
    nd = W.shape[0]
    H = R.shape[2]
    fns = ix_acts(acts or dflt * nd, alphas, betas)
    st0 = lambda s: (np.zeros((nd, batch, H)) if s is None else
                     (d(s).transpose(1, 0, 2) if layout else d(s)))
    h0, c0 = st0(h0), st0(c0)
    lens = [seq] * batch if lens is None else list(lens)
    Y = np.zeros((seq, nd, batch, H))
    Yh, Yc = np.zeros((nd, batch, H)), np.zeros((nd, batch, H))
    cl = (lambda v: v) if clip is None else (lambda v: np.clip(v, -clip,
                                                               clip))
    for di in range(nd):
        w, r = d(W[di]), d(R[di])
        bb = np.zeros(2 * g * H) if B is None else d(B[di])
        wb, rb = bb[:g * H], bb[g * H:]
        p = np.zeros(3 * H) if P is None else d(P[di])
        f = fns[di * na:(di + 1) * na]
        rev = direction == "reverse" or di == 1
        for b in range(batch):
            h, c = h0[di, b].copy(), c0[di, b].copy()
            n = lens[b]
            for s in range(n):
                t = n - 1 - s if rev else s
                xw = w @ x[t, b] + wb
                hr = r @ h + rb
                if kind == "RNN":
                    h = f[0](cl(xw + hr))
                elif kind == "GRU":
                    z = f[0](cl(xw[:H] + hr[:H]))
                    rr = f[0](cl(xw[H:2 * H] + hr[H:2 * H]))
                    if lbr:
                        hh = xw[2 * H:] + rr * hr[2 * H:]
                    else:
                        hh = xw[2 * H:] + r[2 * H:] @ (rr * h) + rb[2 * H:]
                    hh = f[1](cl(hh))
                    h = (1 - z) * hh + z * h
                else:
                    i = f[0](cl(xw[:H] + hr[:H] + p[:H] * c))
                    if input_forget:
                        ff = 1 - i
                    else:
                        ff = f[0](cl(xw[2 * H:3 * H] + hr[2 * H:3 * H] +
                                     p[2 * H:] * c))
                    c = ff * c + i * f[1](cl(xw[3 * H:] + hr[3 * H:]))
                    o = f[0](cl(xw[H:2 * H] + hr[H:2 * H] + p[H:2 * H] * c))
                    h = o * f[2](c)
                Y[t, di, b] = h
            Yh[di, b], Yc[di, b] = h, c
    if layout:
        Y = Y.transpose(2, 0, 1, 3)
        Yh, Yc = Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    outs = [Y, Yh] + ([Yc] if kind == "LSTM" else [])
    return [like(o, X) for o in outs]


def gen_rnn():
    # RNN, GRU, LSTM: defaults; with biases and initial states;
    # bidirectional; reverse with sequence lengths (one of them 0);
    # layout 1; GRU linear_before_reset; named activations with alpha and
    # beta; clip; LSTM peepholes and input_forget; f64; fewer outputs
    for kind, g in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        seed(kind)
        H, I = 3, 2

        def wts(nd, h=H, i=I):
            return (rf(nd, g * h, i, lo=-0.6, hi=0.6),
                    rf(nd, g * h, h, lo=-0.6, hi=0.6),
                    rf(nd, 2 * g * h, lo=-0.3, hi=0.3))

        def rc(cname, X, W, R, B=None, lens=None, h0=None, c0=None, P=None,
               n_out=None, attrs=None, **kw):
            attrs = dict(attrs or {})
            outs = ix_rnn(kind, X, W, R, B, lens, h0, c0, P, **kw)
            if n_out:
                outs = outs[:n_out]
            ins = [X, W, R, B, None if lens is None else np.array(lens, i32),
                   h0]
            if kind == "LSTM":
                ins += [c0, P]
            while ins and ins[-1] is None:
                ins.pop()
            case(kind, cname, ins, outs, attrs or None)

        X = rf(4, 2, I)
        W, R, B = wts(1)
        rc("defaults", X, W, R, attrs={"hidden_size": H})
        h0 = rf(1, 2, H)
        c0 = rf(1, 2, H) if kind == "LSTM" else None
        rc("bias_init", X, W, R, B, h0=h0, c0=c0)
        W2, R2, B2 = wts(2)
        h02 = rf(2, 2, H)
        c02 = rf(2, 2, H) if kind == "LSTM" else None
        rc("bidirectional", X, W2, R2, B2, h0=h02, c0=c02,
           attrs={"direction": "bidirectional"}, direction="bidirectional")
        rc("reverse_lens", rf(4, 3, I), W, R, B, lens=[4, 2, 0],
           attrs={"direction": "reverse"}, direction="reverse")
        rc("lens", rf(3, 2, I), W, R, B, lens=[1, 3])
        Xb = rf(2, 3, I)
        h0b = rf(2, 1, H)
        c0b = rf(2, 1, H) if kind == "LSTM" else None
        rc("layout1", Xb, W, R, B, h0=h0b, c0=c0b, attrs={"layout": 1},
           layout=1)
        rc("layout1_bidir", Xb, W2, R2, B2, attrs={"layout": 1,
                                                  "direction":
                                                      "bidirectional"},
           layout=1, direction="bidirectional")
        acts = {"RNN": ["LeakyRelu"], "GRU": ["HardSigmoid", "Affine"],
                "LSTM": ["HardSigmoid", "LeakyRelu", "Tanh"]}[kind]
        al = {"RNN": [0.2], "GRU": [0.3, 0.5], "LSTM": [0.25, 0.1]}[kind]
        be = {"RNN": None, "GRU": [0.4, 0.1], "LSTM": [0.45]}[kind]
        attrs = {"activations": acts, "activation_alpha": al}
        if be:
            attrs["activation_beta"] = be
        rc("activations", X, W, R, B, attrs=attrs, acts=acts, alphas=al,
           betas=be)
        rc("clip", rf(3, 2, I, lo=-4, hi=4), W * 4, R, B,
           attrs={"clip": 0.5}, clip=0.5)
        rc("f64", X.astype(f64), W.astype(f64), R.astype(f64), B.astype(f64))
        rc("y_only", X, W, R, B, n_out=1)
        if kind == "GRU":
            rc("linear_before_reset", X, W, R, B, h0=h0,
               attrs={"linear_before_reset": 1}, lbr=1)
        if kind == "LSTM":
            P = rf(1, 3 * H)
            rc("peepholes", X, W, R, B, lens=[4, 3], h0=h0, c0=c0, P=P)
            rc("input_forget", X, W, R, B, P=P, attrs={"input_forget": 1},
               input_forget=1)


def ix_nms(boxes, scores, most, iou, min_score, center):
    def edges(bx):
        if center:
            return (bx[0] - bx[2] / 2, bx[0] + bx[2] / 2,
                    bx[1] - bx[3] / 2, bx[1] + bx[3] / 2)
        return (min(bx[1], bx[3]), max(bx[1], bx[3]),
                min(bx[0], bx[2]), max(bx[0], bx[2]))

    def over(p, q):
        a, b = edges(d(p)), edges(d(q))
        x0, x1 = max(a[0], b[0]), min(a[1], b[1])
        y0, y1 = max(a[2], b[2]), min(a[3], b[3])
        if x1 <= x0 or y1 <= y0:
            return False
        inter = (x1 - x0) * (y1 - y0)
        aa = (a[1] - a[0]) * (a[3] - a[2])
        ab = (b[1] - b[0]) * (b[3] - b[2])
        return aa > 0 and ab > 0 and inter / (aa + ab - inter) > iou

    sel = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            s = d(scores[b, c])
            cand = [i for i in range(len(s))
                    if min_score is None or s[i] > min_score]
            cand.sort(key=lambda i: (-s[i], i))
            kept = []
            for i in cand:
                if len(kept) >= most:
                    break
                if not any(over(boxes[b, i], boxes[b, j]) for j in kept):
                    kept.append(i)
                    sel.append([b, c, i])
    return np.array(sel, i64).reshape(-1, 3)


def gen_nms():
    # NonMaxSuppression: suppression by IOU, with a score threshold,
    # center-point boxes, flipped corners, identical boxes, two classes
    # and two batches, no max_output (no boxes), absent thresholds
    seed("NonMaxSuppression")
    bx = np.array([[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1],
                    [0.0, -0.1, 1.0, 0.9], [0.0, 10.0, 1.0, 11.0],
                    [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]]], f32)
    sc = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], f32)

    def nm(cname, boxes, scores, most=3, iou=0.5, min_score=0.0, center=0):
        ins = [boxes, scores]
        for v, dt in ((most, i64), (iou, f32), (min_score, f32)):
            ins.append(None if v is None else C(np.array([v], dt)))
        while ins[-1] is None:
            ins.pop()
        attrs = {"center_point_box": 1} if center else None
        case("NonMaxSuppression", cname, ins,
             [ix_nms(boxes, scores, most or 0, iou or 0.0, min_score,
                     center)], attrs)

    nm("iou", bx, sc)
    nm("iou_score", bx, sc, min_score=0.4)
    flipped = bx[:, :, [2, 3, 0, 1]].copy()
    nm("flipped", flipped, sc)
    cb = np.array([[[0.5, 0.5, 1.0, 1.0], [0.5, 0.6, 1.0, 1.0],
                    [0.5, 0.4, 1.0, 1.0], [0.5, 10.5, 1.0, 1.0],
                    [0.5, 10.6, 1.0, 1.0], [0.5, 100.5, 1.0, 1.0]]], f32)
    nm("center", cb, sc, center=1)
    nm("identical", np.tile(np.array([0, 0, 1, 1], f32), (1, 10, 1)),
       np.full((1, 1, 10), 0.9, f32))
    nm("two_classes", bx, np.concatenate([sc, sc[:, :, ::-1]], axis=1),
       most=2)
    nm("two_batches", np.concatenate([bx, bx]), np.concatenate([sc, sc]),
       most=2)
    nm("no_max", bx, sc, most=None, iou=None, min_score=None)
    nm("no_threshold", bx, sc, most=10, iou=None, min_score=None)
    nm("random", rf(2, 8, 4, lo=0, hi=3), rf(2, 2, 8, lo=0, hi=1), most=4,
       iou=0.3, min_score=0.2)


def ix_roialign(x, rois, bidx, oh, ow, ratio, scale, mode, half):
    n, c, h, w = x.shape
    y = np.zeros((len(rois), c, oh, ow))
    off = 0.5 if half else 0.0
    for r in range(len(rois)):
        x1, y1, x2, y2 = [float(v) * scale - off for v in rois[r]]
        rw, rh = x2 - x1, y2 - y1
        if not half:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / oh, rw / ow
        gh = ratio if ratio > 0 else int(math.ceil(rh / oh))
        gw = ratio if ratio > 0 else int(math.ceil(rw / ow))
        for ph in range(oh):
            for pw in range(ow):
                vals = []
                for iy in range(gh):
                    yy = y1 + ph * bh + (iy + 0.5) * bh / gh
                    for ixx in range(gw):
                        xx = x1 + pw * bw + (ixx + 0.5) * bw / gw
                        if yy < -1 or yy > h or xx < -1 or xx > w:
                            vals.append(np.zeros((4, c)))
                            continue
                        yv, xv = max(yy, 0.0), max(xx, 0.0)
                        y0, x0 = int(yv), int(xv)
                        if y0 >= h - 1:
                            y0 = y1i = h - 1
                            yv = float(y0)
                        else:
                            y1i = y0 + 1
                        if x0 >= w - 1:
                            x0 = x1i = w - 1
                            xv = float(x0)
                        else:
                            x1i = x0 + 1
                        ly, lx = yv - y0, xv - x0
                        hy, hx = 1 - ly, 1 - lx
                        img = d(x[int(bidx[r])])
                        vals.append(np.stack([hy * hx * img[:, y0, x0],
                                              hy * lx * img[:, y0, x1i],
                                              ly * hx * img[:, y1i, x0],
                                              ly * lx * img[:, y1i, x1i]]))
                if mode == "avg":
                    y[r, :, ph, pw] = (sum(v.sum(0) for v in vals) /
                                       max(gh * gw, 1)) if vals else 0
                elif vals:
                    y[r, :, ph, pw] = np.max([v.max(0) for v in vals], 0)
    return like(y, x)


def gen_roialign():
    # RoiAlign: avg with half_pixel (default) and output_half_pixel,
    # adaptive sampling (ratio 0), max mode, spatial_scale, ROIs of the
    # second batch image and partly outside the map
    seed("RoiAlign")
    x = rf(2, 2, 6, 5, lo=0, hi=1)
    rois = np.array([[0, 0, 4, 3], [1.5, 0.5, 4.2, 5.7], [-1, 2, 3, 7.5]],
                    f32)
    bidx = np.array([0, 1, 1], i64)

    def ra(cname, oh=3, ow=2, ratio=2, scale=1.0, mode="avg", half=True):
        attrs = {"output_height": oh, "output_width": ow,
                 "sampling_ratio": ratio}
        if scale != 1.0:
            attrs["spatial_scale"] = scale
        if mode != "avg":
            attrs["mode"] = mode
        if not half:
            attrs["coordinate_transformation_mode"] = "output_half_pixel"
        case("RoiAlign", cname, [x, rois, bidx],
             [ix_roialign(x, rois, bidx, oh, ow, ratio, scale, mode, half)],
             attrs)

    ra("half_pixel")
    ra("output_half_pixel", half=False)
    ra("adaptive", ratio=0, oh=2, ow=2)
    ra("max", mode="max")
    ra("scale", scale=0.5, ratio=0)


def gen_gridsample():
    # GridSample (expected values from torch.nn.functional.grid_sample in
    # float64): bilinear, nearest, bicubic; padding zeros, border,
    # reflection; align_corners 0 and 1; grid points past [-1, 1]; two
    # images of two channels; f64
    seed("GridSample")
    x = rf(2, 2, 3, 4)
    grid = rf(2, 3, 5, 2, lo=-1.3, hi=1.3)

    def gs(cname, x, grid, mode="bilinear", pad="zeros", align=0):
        attrs = {}
        if align:
            attrs["align_corners"] = 1
        if mode != "bilinear":
            attrs["mode"] = mode
        if pad != "zeros":
            attrs["padding_mode"] = pad
        y = F.grid_sample(torch.from_numpy(d(x)), torch.from_numpy(d(grid)),
                          mode=mode, padding_mode=pad,
                          align_corners=bool(align)).numpy()
        case("GridSample", cname, [x, grid], [like(y, x)], attrs or None)

    gs("bilinear", x, grid)
    gs("bilinear_align", x, grid, align=1)
    gs("nearest", x, grid, mode="nearest")
    gs("nearest_align", x, grid, mode="nearest", align=1)
    gs("bicubic", x, grid, mode="bicubic")
    gs("bicubic_border_align", x, grid, mode="bicubic", pad="border",
       align=1)
    gs("bicubic_reflection", x, grid, mode="bicubic", pad="reflection")
    gs("border", x, grid, pad="border")
    gs("reflection", x, grid, pad="reflection")
    gs("reflection_align", x, rf(2, 2, 3, 2, lo=-3, hi=3),
       pad="reflection", align=1)
    gs("f64", rf(1, 1, 4, 3, dt=f64), rf(1, 2, 2, 2, lo=-1, hi=1, dt=f64))


def gen_maxunpool():
    # MaxUnpool of MaxPool's indices (over the whole tensor): 2x2 stride 2,
    # 3x3 stride 2 with pads, output_shape larger than the unpooled shape,
    # 1-D
    seed("MaxUnpool")

    def mu(cname, x, k, s, pads=None, out_shape=None):
        nsp = x.ndim - 2
        pool = F.max_pool2d if nsp == 2 else F.max_pool1d
        p = pads[:nsp] if pads else [0] * nsp
        y, idx = pool(torch.from_numpy(x), k, s, p, return_indices=True)
        y, idx = y.numpy(), idx.numpy()
        un = [x.shape[0], x.shape[1]] + [
            (y.shape[2 + i] - 1) * s[i] - (2 * p[i]) + k[i]
            for i in range(nsp)]
        plane = int(np.prod(un[2:]))
        base = (np.arange(x.shape[0] * x.shape[1]) * plane).reshape(
            [x.shape[0], x.shape[1]] + [1] * nsp)
        gidx = (idx + base).astype(i64)
        flat = np.zeros(int(np.prod(un)), x.dtype)
        flat[gidx.reshape(-1)] = y.reshape(-1)
        res = flat.reshape(un)
        ins = [y, gidx]
        if out_shape is not None:
            full = np.zeros(out_shape, x.dtype)
            full[tuple(slice(0, n) for n in un)] = res
            res = full
            ins.append(C(np.array(out_shape, i64)))
        attrs = {"kernel_shape": list(k), "strides": list(s)}
        if pads:
            attrs["pads"] = list(pads)
        case("MaxUnpool", cname, ins, [res], attrs)

    mu("2x2", rf(1, 2, 4, 4), [2, 2], [2, 2])
    mu("3x3_pads", rf(2, 1, 5, 5), [3, 3], [2, 2], pads=[1, 1, 1, 1])
    mu("output_shape", rf(1, 1, 4, 4), [2, 2], [2, 2],
       out_shape=[1, 1, 5, 6])
    mu("1d", rf(1, 3, 6), [2], [2])


def attention_ref(q, k, v, scale, mask=None, causal=False):
    """Attention as ops.def's comment defines it, in float64, with the
    unfused graph's arithmetic: scores, ONNX Softmax (max subtracted, so a
    row of -inf only is NaN), then P @ V; kv head h // (Hq // Hkv)."""
    q, k, v = d(q), d(k), d(v)
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = scale * (q @ np.swapaxes(k, -1, -2))
    if mask is not None and mask.dtype == BOOL:
        s = np.where(mask, s, -np.inf)
    elif mask is not None:
        s = s + d(mask)
    if causal:
        tq, tk = s.shape[-2], s.shape[-1]
        keep = np.arange(tk)[None, :] <= np.arange(tq)[:, None] + (tk - tq)
        s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def gen_attention():
    # Attention (Smelt's): plain; grouped heads; Dv != D; float masks
    # broadcast ([Tq,Tk], [B,1,1,Tk]) and full; bool mask; causal with
    # Tq == Tk and bottom-right aligned Tq < Tk; causal with a mask; f64;
    # a fully masked row (NaN, as Softmax gives) and a row masked with
    # float min (an ordinary, uniform softmax)
    seed("Attention")

    def at(cname, qs, ks, vs, scale=0.5, mask=None, causal=False, dt=f32):
        q, k, v = rf(*qs, dt=dt), rf(*ks, dt=dt), rf(*vs, dt=dt)
        attrs = {"scale": float(scale)}
        if causal:
            attrs["causal"] = 1
        y = like(attention_ref(q, k, v, scale, mask, causal), q)
        case("Attention", cname, [q, k, v] + ([mask] if mask is not None
                                              else []), [y], attrs)

    at("plain", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4))
    at("grouped", (1, 4, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), scale=0.3)
    at("grouped_mqa", (2, 3, 2, 2), (2, 1, 4, 2), (2, 1, 4, 3))
    at("dv", (1, 2, 4, 3), (1, 2, 6, 3), (1, 2, 6, 5), scale=1.0)
    at("mask_2d", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4),
       mask=rf(3, 5, lo=-3, hi=1))
    at("mask_keys", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4),
       mask=rf(2, 1, 1, 5, lo=-3, hi=1))
    at("mask_full", (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4),
       mask=rf(1, 2, 3, 4, lo=-3, hi=1))
    at("mask_bool", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4),
       mask=np.array([[1, 1, 0, 1, 0], [1, 1, 1, 1, 0]],
                     BOOL).reshape(2, 1, 1, 5))
    at("causal", (1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4), causal=True)
    at("causal_bottom_right", (2, 1, 3, 4), (2, 1, 6, 4), (2, 1, 6, 4),
       causal=True)
    at("causal_mask", (1, 2, 4, 3), (1, 2, 4, 3), (1, 2, 4, 3),
       mask=rf(4, 4, lo=-1, hi=1), causal=True)
    at("f64", (1, 2, 3, 5), (1, 2, 4, 5), (1, 2, 4, 5), scale=0.25, dt=f64)
    m = np.ones((1, 1, 3, 4), BOOL)
    m[0, 0, 1, :] = False
    at("fully_masked_row", (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4), mask=m)
    m = np.zeros((3, 4), f32)
    m[2, :] = np.finfo(f32).min
    at("float_min_row", (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4), mask=m)


def attention_grad_ref(q, k, v, do, scale, mask=None, causal=False):
    """AttentionGrad as ops.def's comment defines it, in float64: the
    scores recomputed, dS = P * (dP - rowsum(P * dP)), dK and dV summed
    over each kv head's query heads, dMask summed to the mask's shape; a
    fully masked row has a zero dQ row and adds nothing elsewhere."""
    q, k, v, do = d(q), d(k), d(v), d(do)
    hkv = k.shape[1]
    g = q.shape[1] // hkv
    kr, vr = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = scale * (q @ np.swapaxes(kr, -1, -2))
    if mask is not None and mask.dtype == BOOL:
        s = np.where(mask, s, -np.inf)
    elif mask is not None:
        s = s + d(mask)
    if causal:
        tq, tk = s.shape[-2], s.shape[-1]
        keep = np.arange(tk)[None, :] <= np.arange(tq)[:, None] + (tk - tq)
        s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    dead = ~np.isfinite(m)
    e = np.exp(s - np.where(dead, 0.0, m))
    p = np.where(dead, 0.0, e / np.where(dead, 1.0, e.sum(-1, keepdims=True)))
    dp = do @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))
    dq = scale * (ds @ kr)
    dk = scale * (np.swapaxes(ds, -1, -2) @ q)
    dv = np.swapaxes(p, -1, -2) @ do
    b = q.shape[0]
    dk = dk.reshape(b, hkv, g, *dk.shape[2:]).sum(2)
    dv = dv.reshape(b, hkv, g, *dv.shape[2:]).sum(2)
    dm = None
    if mask is not None and mask.dtype != BOOL:
        dm = ds
        while dm.ndim > mask.ndim:
            dm = dm.sum(0)
        for ax in range(mask.ndim):
            if mask.shape[ax] == 1:
                dm = dm.sum(ax, keepdims=True)
    return dq, dk, dv, dm


def gen_attention_grad():
    # AttentionGrad (Attention's backward): plain; grouped and multi-query
    # heads with Dv != D; float masks broadcast and full, with and without
    # their gradient (the fourth output); bool mask with a fully masked
    # row (zero gradient there); causal, bottom-right aligned and with a
    # mask; f64
    seed("AttentionGrad")

    def ag(cname, qs, ks, vs, scale=0.5, mask=None, causal=False, dt=f32,
           dmask=False):
        q, k, v = rf(*qs, dt=dt), rf(*ks, dt=dt), rf(*vs, dt=dt)
        o = like(attention_ref(q, k, v, scale, mask, causal), q)
        o = np.nan_to_num(o, nan=0.0).astype(dt)
        do = rf(*o.shape, dt=dt)
        attrs = {"scale": float(scale)}
        if causal:
            attrs["causal"] = 1
        dq, dk, dv, dm = attention_grad_ref(q, k, v, do, scale, mask, causal)
        outs = [like(dq, q), like(dk, k), like(dv, v)]
        if dmask:
            outs.append(like(dm, mask))
        case("AttentionGrad", cname, [q, k, v, o, do] +
             ([mask] if mask is not None else []), outs, attrs)

    ag("plain", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4))
    ag("grouped", (1, 4, 3, 4), (1, 2, 7, 4), (1, 2, 7, 3), scale=0.3)
    ag("grouped_mqa", (2, 3, 2, 2), (2, 1, 4, 2), (2, 1, 4, 3))
    ag("mask_2d", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4),
       mask=rf(3, 5, lo=-3, hi=1), dmask=True)
    ag("mask_keys", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4),
       mask=rf(2, 1, 1, 5, lo=-3, hi=1), dmask=True)
    ag("mask_full_nograd", (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4),
       mask=rf(1, 2, 3, 4, lo=-3, hi=1))
    m = np.ones((1, 1, 3, 4), BOOL)
    m[0, 0, 1, :] = False
    m[0, 0, 2, 0] = False
    ag("mask_bool_masked_row", (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4),
       mask=m)
    ag("causal", (1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4), causal=True)
    ag("causal_bottom_right", (2, 1, 3, 4), (2, 1, 6, 4), (2, 1, 6, 4),
       causal=True)
    ag("causal_mask", (1, 2, 4, 3), (1, 2, 4, 3), (1, 2, 4, 3),
       mask=rf(4, 4, lo=-1, hi=1), causal=True, dmask=True)
    ag("f64", (1, 2, 3, 5), (1, 2, 4, 5), (1, 2, 4, 5), scale=0.25, dt=f64)


GENERATORS_INDEX = [
    gen_attention, gen_attention_grad, gen_gatherelements, gen_gathernd, gen_scatterelements, gen_scatternd,
    gen_topk, gen_nonzero, gen_onehot, gen_cumsum, gen_trilu, gen_eyelike,
    gen_depthtospace, gen_resize, gen_upsample, gen_size, gen_compress,
    gen_reversesequence, gen_unique, gen_rnn, gen_nms, gen_roialign,
    gen_gridsample, gen_maxunpool,
]


# --------------------------------------------------------------------------


def ops_from_def():
    names = []
    with open(OPS_DEF) as f:
        for line in f:
            m = re.match(r"\s*OP\(\s*(\w+)\s*,", line)
            if m:
                names.append(m.group(1))
    if not names:
        sys.exit("gen_op_tests.py: no OP( rows in " + OPS_DEF)
    return names


GENERATORS = [
    gen_identity, gen_unary, gen_leakyrelu, gen_not, gen_clip, gen_cast,
    gen_dropout, gen_arith, gen_div, gen_pow, gen_minmax_sum, gen_compare,
    gen_logic, gen_where, gen_matmul, gen_gemm, gen_conv, gen_convtranspose,
    gen_convgradweight,
    gen_pool, gen_globalpool, gen_batchnorm, gen_layernorm, gen_softmax,
    gen_reduce, gen_argmax, gen_reshape, gen_flatten, gen_squeeze,
    gen_transpose, gen_concat, gen_split, gen_slice, gen_gather, gen_expand,
    gen_tile, gen_pad, gen_shape, gen_constantofshape, gen_range,
    gen_constant, gen_if, gen_loop, gen_empty, gen_fused,
]
GENERATORS += GENERATORS_MATH
GENERATORS += GENERATORS_INDEX


def main():
    ops = ops_from_def()
    for gen in GENERATORS:
        gen()
    covered = set()
    for name in CASES:
        op = max((o for o in ops if name.startswith(o + "_")), key=len,
                 default=None)
        if op is None:
            sys.exit("gen_op_tests.py: case %s names no op of ops.def" % name)
        covered.add(op)
    missing = [o for o in ops if o not in covered]
    if missing:  # test_ops' coverage check fails on these
        print("gen_op_tests.py: warning: no cases for " + ", ".join(missing),
              file=sys.stderr)

    if os.path.isdir(OUT_DIR):
        shutil.rmtree(OUT_DIR)
    os.makedirs(OUT_DIR)
    total = 0
    for name in sorted(CASES):
        text, ins, outs = CASES[name]
        cdir = os.path.join(OUT_DIR, name)
        os.makedirs(cdir)
        with open(os.path.join(cdir, "model.ir"), "w") as f:
            f.write(text)
        for kind, arrs in (("input", ins), ("expected", outs)):
            for i, a in enumerate(arrs):
                a = np.array(a, order="C")  # keeps 0-d arrays 0-d
                if a.dtype not in DTYPE_NAMES:
                    sys.exit("%s: %s_%d has dtype %s" % (name, kind, i,
                                                         a.dtype))
                np.save(os.path.join(cdir, "%s_%d.npy" % (kind, i)), a)
        total += 1
    size = sum(os.path.getsize(os.path.join(dp, fn))
               for dp, _, fns in os.walk(OUT_DIR) for fn in fns)
    print("gen_op_tests.py: %d cases for %d ops in %s (%d bytes)" %
          (total, len(ops), os.path.relpath(OUT_DIR, ROOT), size))


if __name__ == "__main__":
    main()
