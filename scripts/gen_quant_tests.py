#!/usr/bin/python3
"""Writes the quantization test models (docs/QUANTIZATION.md):

tests/onnx/bad/quant_*.onnx   quantized models with bad parameters (zero,
                              NaN or negative scales, an i32 zero point
                              that is not 0, a zero point out of its
                              dtype's range, per-channel scales of the
                              wrong length) that the loader must refuse,
                              naming the node (tests/unit/test_onnx_bad.c)

    /usr/bin/python3 scripts/gen_quant_tests.py
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAD = os.path.join(ROOT, "tests", "onnx", "bad")
F = TensorProto.FLOAT


def model(nodes, inits, inputs, outputs):
    g = helper.make_graph(nodes, "q", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    return m


def save(name, m):
    with open(os.path.join(BAD, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def quantize(scale, name):
    """x [2, 4] -> QuantizeLinear(scale, zero point u8 0) -> y."""
    save(name, model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")],
        [numpy_helper.from_array(np.array(scale, np.float32), "s"),
         numpy_helper.from_array(np.array(0, np.uint8), "z")],
        [helper.make_tensor_value_info("x", F, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 4])]))


def dequantize(w, scale, zp, name, axis=1):
    """A constant w dequantized per axis, times the input x."""
    save(name, model(
        [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"],
                          name="dq", axis=axis),
         helper.make_node("MatMul", ["x", "wf"], ["y"], name="mm")],
        [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(scale, np.float32), "s"),
         numpy_helper.from_array(zp, "z")],
        [helper.make_tensor_value_info("x", F, [2, w.shape[0]])],
        [helper.make_tensor_value_info("y", F, [2, w.shape[1]])]))


def qlinear_matmul(b_scale, name):
    """QLinearMatMul of the u8 input and a constant s8 weight."""
    w = np.arange(12, dtype=np.int8).reshape(4, 3)
    save(name, model(
        [helper.make_node("QLinearMatMul",
                          ["a", "as", "az", "w", "ws", "wz", "ys", "yz"],
                          ["y"], name="qmm")],
        [numpy_helper.from_array(np.array(0.1, np.float32), "as"),
         numpy_helper.from_array(np.array(128, np.uint8), "az"),
         numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(b_scale, np.float32), "ws"),
         numpy_helper.from_array(np.zeros(3, np.int8), "wz"),
         numpy_helper.from_array(np.array(0.2, np.float32), "ys"),
         numpy_helper.from_array(np.array(128, np.uint8), "yz")],
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 3])]))


def matmul_integer_zp(zp, name):
    """MatMulInteger of the u8 input and a constant s8 weight [4, 3] with
    the weight's zero point zp (per column: 3 values)."""
    w = np.arange(12, dtype=np.int8).reshape(4, 3)
    save(name, model(
        [helper.make_node("MatMulInteger", ["a", "w", "az", "wz"], ["y"],
                          name="mmi")],
        [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(128, np.uint8), "az"),
         numpy_helper.from_array(zp, "wz")],
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 3])]))


def main():
    os.makedirs(BAD, exist_ok=True)
    w8 = np.arange(12, dtype=np.int8).reshape(4, 3)
    quantize(0.0, "quant_zero_scale")
    quantize(-0.5, "quant_neg_scale")
    dequantize(w8, [0.1, float("nan"), 0.1], np.zeros(3, np.int8),
               "quant_nan_scale")
    qlinear_matmul([0.1, -0.1, 0.1], "quant_neg_channel_scale")
    dequantize(w8, [0.1, 0.1], np.zeros(2, np.int8), "quant_axis_len")
    dequantize(np.arange(12, dtype=np.int32).reshape(4, 3), 0.1,
               np.array(5, np.int32), "quant_i32_zero_point")
    matmul_integer_zp(np.zeros(2, np.int8), "quant_mmi_zero_point_len")
    # a u8 zero point stored as int32_data 300: out of the dtype's range
    m = model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")],
        [numpy_helper.from_array(np.array(0.1, np.float32), "s"),
         helper.make_tensor("z", TensorProto.UINT8, [], [0])],
        [helper.make_tensor_value_info("x", F, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 4])])
    del m.graph.initializer[1].int32_data[:]
    m.graph.initializer[1].int32_data.append(300)
    save("quant_zero_point_range", m)


if __name__ == "__main__":
    main()
