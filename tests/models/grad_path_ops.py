#!/usr/bin/python3
"""The ops of an ONNX model that a gradient flows through and that have no
gradient rule yet (marked sm_grad_todo in ops.def), sorted, on one line.

usage: grad_path_ops.py MODEL.onnx OPS_DEF

A gradient flows from every floating-point initializer through each node
that reads a value it reaches, into the node's floating-point outputs,
as smelt_graph_grad marks values (docs/AUTOGRAD.md): ops marked
sm_grad_none or sm_grad_zero stop it, integer and boolean values (shape
paths) never carry it. test_grad_torch.sh names these ops when it skips a
model, so the report lists every missing rule, not only the first the
backward walk met.
"""
import re
import sys

import numpy as np  # noqa: F401  (onnx needs it)

try:
    np.float, np.int, np.bool, np.object  # noqa: B018
except AttributeError:  # Debian's python3-onnx predates numpy 1.24
    np.float, np.int, np.bool, np.object = float, int, bool, object
import onnx  # noqa: E402
from onnx import TensorProto  # noqa: E402

FLOATS = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16,
          TensorProto.BFLOAT16}


def rules(ops_def):
    """op name -> its rule column."""
    out = {}
    row = re.compile(r"^OP\((\w+),.*,\s*(\w+)\)\s*$")
    for line in open(ops_def):
        m = row.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


def main(argv):
    model = onnx.shape_inference.infer_shapes(onnx.load(argv[1]))
    rule = rules(argv[2])
    g = model.graph
    dtype = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        dtype[v.name] = v.type.tensor_type.elem_type
    marked = set()
    for t in g.initializer:
        dtype[t.name] = t.data_type
        if t.data_type in FLOATS:
            marked.add(t.name)
    missing = set()
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    dtype[n.output[0]] = a.t.data_type
        if not any(i in marked for i in n.input):
            continue
        r = rule.get(n.op_type, "sm_grad_todo")
        if r in ("sm_grad_none", "sm_grad_zero"):
            continue
        outs = [o for o in n.output if dtype.get(o) in FLOATS]
        if outs and r == "sm_grad_todo":
            missing.add(n.op_type)
        marked.update(outs)
    print(" ".join(sorted(missing)))


if __name__ == "__main__":
    main(sys.argv)
