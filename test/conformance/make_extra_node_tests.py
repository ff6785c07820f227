#!/usr/bin/env python3
"""Writes Sinter's own node tests in the ONNX backend layout (DIR/node/<test>/model.onnx and
test_data_set_0/{input,output}_K.pb), for what the ONNX suite leaves out. CumSum (the suite
has two tests in a dtype Sinter takes, both tiny): rows longer than one warp and than one
block, both directions, exclusive sums, an axis that is not the last, f16, and the position
ids Hugging Face models compute from an attention mask (Cast -> CumSum -> Sub -> Where, one
generated kernel). Transposes in shared-memory tiles (partial tiles, batch dimensions, every
innermost-moving 3-D permutation, f16) and tanh / tanh-GELU with f16 results over a wide range. ScatterND (the suite's indices are constants): indices given at run time,
repeated, negative, with each reduction, and element tuples. Quantized weights: DequantizeLinear
on constant int8 / uint8 / int4 / fp8 weights (per tensor, per axis, in blocks) before a MatMul,
and com.microsoft MatMulNBits (2, 4 and 8 bits, packed or float zero points or none, K not a
multiple of the block, act-order g_idx, bias, float16). Expected outputs come from numpy in
float64 (the quantized cases agree with onnxruntime 1.32 on CPU with graph optimizations off to
~1e-7; its default QDQ fusion quantizes the activations too). Conv beyond the suite's four
in-scope tests: groups (depthwise too), dilations, 1-D and 3-D, bias, every auto_pad, a 1x1
(no window table), a ViT-style patch embedding, batch 2 and f16, and ConvTranspose (groups, stride 2 with
output_padding, a 4x4 upsampling, 1-D dilation), against float64 numpy references that
onnxruntime (when installed) must agree with; Einsum in f32 (diagonals, ellipsis broadcasting,
three operands, implicit outputs) against numpy's float64 einsum; TopK (a router's 2 of 8, entries
equal to the lowest value, int64 smallest); RNN / GRU / LSTM with sequence_lens, clip, other
activations, linear_before_reset, input_forget, peepholes, batch-first layout and initial
states, against a float64 numpy transcription of the operator definitions that onnxruntime
(when installed) must agree with; If, Loop and Scan (run-time and compile-time conditions,
carried values, scan outputs, an If in a Loop body, reverse scans, opset 8's batched Scan),
against onnxruntime;
onnxruntime's quantize_dynamic on an MLP (DynamicQuantizeLinear, MatMulInteger), against
onnxruntime; DFT (padding, truncation, odd one-sided inverse, f16) and a Whisper-style STFT,
against numpy's float64 fft; GridSample (far-outside grids, every mode, reflection, 3-D, f16)
against onnxruntime; QLinearConv with per-channel scales and a bias, ConvInteger with zero
points, groups and padding, against onnxruntime.

    python3 test/conformance/make_extra_node_tests.py DIR
    python3 test/conformance/run_node_tests.py --from-testdata DIR --phase binary ...
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18


def cumsum(x, axis, exclusive=False, reverse=False):
    y = np.flip(x, axis) if reverse else x
    s = np.cumsum(y.astype(np.float64) if x.dtype.kind == "f" else y.astype(np.int64), axis=axis)
    if exclusive:
        s = s - (y.astype(s.dtype))
    return np.flip(s, axis) if reverse else s


def write(root, name, nodes, inputs, outputs, inits=(), opset=OPSET, microsoft=False):
    """inputs / outputs: (name, array) pairs; the arrays give the value infos' types.
    microsoft: the model also imports onnxruntime's contrib domain com.microsoft."""
    def info(n, a):
        return helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)

    graph = helper.make_graph(nodes, name, [info(n, a) for n, a in inputs],
                              [info(n, a) for n, a in outputs], list(inits))
    opsets = [helper.make_opsetid("", opset)]
    if microsoft:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10 if opset >= 21 else 9
    if not microsoft:  # the checker knows no contrib op
        onnx.checker.check_model(model)
    save_case(root, name, model, inputs, outputs)


def save_case(root, name, model, inputs, outputs):
    """Writes `model` and its one data set (inputs / outputs: (name, array) pairs)."""
    test = Path(root) / "node" / name
    data = test / "test_data_set_0"
    data.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(test / "model.onnx"))
    for kind, pairs in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(pairs):
            (data / f"{kind}_{k}.pb").write_bytes(numpy_helper.from_array(a, n).SerializeToString())


def axis_init(value):
    return numpy_helper.from_array(np.array(value, np.int64), "axis")


def cumsum_case(root, name, x, axis, exclusive=0, reverse=0):
    y = cumsum(x, axis, exclusive, reverse).astype(x.dtype)
    write(root, name, [helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive,
                                        reverse=reverse)],
          [("x", x)], [("y", y)], [axis_init(axis)])


def pack_low_first(codes, bits):
    """Unsigned codes [..., n] packed into bytes from the low bits up (n * bits % 8 == 0)."""
    per = 8 // bits
    c = codes.astype(np.uint8).reshape(*codes.shape[:-1], -1, per)
    out = np.zeros(c.shape[:-1], np.uint8)
    for j in range(per):
        out |= c[..., j] << (j * bits)
    return out


def matmul_nbits_case(root, name, rng, m, k, n, bits, block, dtype=np.float32, zero="packed",
                      g_idx=False, bias=False):
    """com.microsoft MatMulNBits: W[n, k] = (q - zero) * scale per block of k (or per g_idx
    group), Y = A @ W^T (+ bias); the reference in float64 from the unpacked codes."""
    blocks = -(-k // block)
    codes = rng.integers(0, 1 << bits, (n, blocks * block))
    scales = (rng.random((n, blocks)) * 0.2 + 0.05).astype(dtype)
    if dtype == np.float16:
        # Multiples of 1/256 below 1/4: scale * (q - zero) is exact in float16, so that the
        # weights a float16 MatMul reads are the reference's (their rounding, ~2^-11 of terms
        # that cancel, would otherwise exceed the elementwise tolerance near zero outputs).
        scales = (rng.integers(8, 64, (n, blocks)) / 256).astype(dtype)
    zeros = rng.integers(0, 1 << bits, (n, blocks))
    group = np.arange(k) // block
    if g_idx:
        group = rng.permutation(group)  # act-order: any block for any k
    inits = [numpy_helper.from_array(pack_low_first(codes, bits).reshape(n, blocks, -1), "B"),
             numpy_helper.from_array(scales.reshape(-1), "scales")]
    inputs = ["A", "B", "scales"]
    if zero == "packed":
        per = 8 // bits
        padded = np.zeros((n, -(-blocks // per) * per), np.int64)
        padded[:, :blocks] = zeros
        inits.append(numpy_helper.from_array(pack_low_first(padded, bits).reshape(-1), "zp"))
        inputs.append("zp")
    elif zero == "float":
        inits.append(numpy_helper.from_array(zeros.astype(dtype).reshape(-1), "zp"))
        inputs.append("zp")
    else:
        zeros = np.full((n, blocks), 1 << (bits - 1))
        inputs.append("")
    if g_idx:
        inits.append(numpy_helper.from_array(group.astype(np.int32), "g_idx"))
        inputs.append("g_idx")
    w = (codes[:, :k] - zeros[:, group]) * scales.astype(np.float64)[:, group]
    a = (rng.random((1, m, k)) * 2 - 1).astype(dtype)
    y = a.astype(np.float64) @ w.T
    if bias:
        b = (rng.random(n) * 2 - 1).astype(dtype)
        y = y + b
        if not g_idx:
            inputs.append("")
        inputs.append("bias")
        inits.append(numpy_helper.from_array(b, "bias"))
    while inputs[-1] == "":
        inputs.pop()
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n,
                            bits=bits, block_size=block)
    write(root, name, [node], [("A", a)], [("Y", y.astype(dtype))], inits, microsoft=True)


def dequantize_matmul_case(root, name, rng, wq, scale, zero, axis=1, block_size=0, opset=OPSET):
    """DequantizeLinear on a constant weight, then MatMul: the quantized-weight (QDQ) export.
    wq, zero: numpy int8/uint8 arrays, or (onnx tensor, codes) pairs for int4 and fp8; zero may
    be None."""
    tensor, codes = wq if isinstance(wq, tuple) else (numpy_helper.from_array(wq, "wq"), wq)
    tensor.name = "wq"
    ztensor, zero = zero if isinstance(zero, tuple) else (
        None if zero is None else numpy_helper.from_array(zero, "zp"), zero)
    k, n = codes.shape
    s, z = scale.astype(np.float64), zero.astype(np.float64) if zero is not None else 0.0
    if block_size:
        s = np.repeat(s, block_size, axis=axis)[:k] if axis == 0 else np.repeat(s, block_size, 1)[:, :n]
        if zero is not None:
            z = np.repeat(z, block_size, axis=axis)[:k] if axis == 0 else np.repeat(z, block_size, 1)[:, :n]
    elif scale.ndim == 1 and scale.size > 1:
        s = s.reshape((-1, 1) if axis == 0 else (1, -1))
        if zero is not None:
            z = z.reshape(s.shape)
    w = (codes.astype(np.float64) - z) * s
    x = (rng.random((2, 3, k)) * 2 - 1).astype(np.float32)
    inits = [tensor, numpy_helper.from_array(scale, "scale")]
    inputs = ["wq", "scale"]
    if ztensor is not None:
        ztensor.name = "zp"
        inits.append(ztensor)
        inputs.append("zp")
    attrs = {"axis": axis}
    if block_size:
        attrs["block_size"] = block_size
    nodes = [helper.make_node("DequantizeLinear", inputs, ["w"], **attrs),
             helper.make_node("MatMul", ["x", "w"], ["y"])]
    write(root, name, nodes, [("x", x)], [("y", (x.astype(np.float64) @ w).astype(np.float32))],
          inits, opset=opset)


def quantized_cases(root, rng):
    # QDQ weights: int8 per output channel with zero points, uint8 per tensor, int4 in blocks
    # of 16 along k (opset 21), fp8 e4m3 per tensor.
    wq = rng.integers(-128, 128, (64, 48)).astype(np.int8)
    dequantize_matmul_case(root, "test_sinter_dequantize_int8_per_axis_matmul", rng, wq,
                           (rng.random(48) * 0.01 + 0.001).astype(np.float32),
                           rng.integers(-5, 5, 48).astype(np.int8), axis=1)
    wq = rng.integers(0, 256, (32, 24)).astype(np.uint8)
    dequantize_matmul_case(root, "test_sinter_dequantize_uint8_per_tensor_matmul", rng, wq,
                           np.array(0.02, np.float32), np.array(128, np.uint8))
    codes = rng.integers(-8, 8, (64, 24))
    zcodes = rng.integers(-8, 8, (4, 24))
    dequantize_matmul_case(
        root, "test_sinter_dequantize_int4_blocked_matmul", rng,
        (helper.make_tensor("wq", TensorProto.INT4, codes.shape, codes.reshape(-1).tolist()), codes),
        (rng.random((4, 24)) * 0.1 + 0.01).astype(np.float32),
        (helper.make_tensor("zp", TensorProto.INT4, zcodes.shape, zcodes.reshape(-1).tolist()),
         zcodes),
        axis=0, block_size=16, opset=21)
    values = rng.choice(np.array([0.5, -1.0, 1.5, 2.0, -0.25, 3.0, -448.0, 448.0, 0.015625]),
                        (16, 8)).astype(np.float32)
    fp8_tensor = helper.make_tensor("wq", TensorProto.FLOAT8E4M3FN, values.shape,
                                    values.reshape(-1).tolist())
    dequantize_matmul_case(root, "test_sinter_dequantize_fp8_per_tensor_matmul", rng,
                           (fp8_tensor, values), np.array(0.01, np.float32), None, opset=19)
    # onnxruntime's block-quantized weights (MatMulNBits): 4 bits with packed zero points and
    # K not a multiple of the block, 8 bits without zero points, act-order groups with a bias,
    # float16 with zero points of the scales' type, 2 bits.
    matmul_nbits_case(root, "test_sinter_matmulnbits_4bit_zp_partial_block", rng, 3, 80, 40, 4, 32)
    matmul_nbits_case(root, "test_sinter_matmulnbits_8bit_no_zp", rng, 5, 64, 24, 8, 16, zero=None)
    matmul_nbits_case(root, "test_sinter_matmulnbits_4bit_g_idx_bias", rng, 2, 128, 32, 4, 32,
                      zero="float", g_idx=True, bias=True)
    matmul_nbits_case(root, "test_sinter_matmulnbits_4bit_f16_float_zp", rng, 4, 128, 64, 4, 64,
                      dtype=np.float16, zero="float", bias=True)
    matmul_nbits_case(root, "test_sinter_matmulnbits_2bit", rng, 1, 64, 16, 2, 16)


def transpose_cases(root, rng):
    """Transposes the generated kernels stage through shared memory in 32 x 32 tiles (64 x 64
    read and written in pairs for 16-bit and narrower elements): partial tiles, batch
    dimensions between and around the two, every innermost-moving permutation of a 3-D tensor,
    an addend read in the output's layout, an input read both transposed and not, f16, odd
    16-bit extents (a pair cut by the tile's end; rows that start a pair at an unaligned
    address) and a 1-byte result of 16-bit tiles."""
    def normal(*shape, dtype=np.float32):
        return rng.standard_normal(shape).astype(dtype)
    for perm, shape in (((1, 0), (100, 37)), ((0, 2, 1), (3, 40, 70)), ((2, 1, 0), (33, 5, 48)),
                        ((1, 2, 0), (64, 3, 17)), ((2, 0, 1), (20, 33, 65)),
                        ((0, 1, 3, 2), (2, 3, 48, 40))):
        x = normal(*shape)
        name = "_".join(map(str, perm))
        write(root, f"test_sinter_transpose_tiles_{name}",
              [helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))],
              [("x", x)], [("y", np.transpose(x, perm))])
    x, y = normal(2, 96, 130), normal(2, 130, 96)
    write(root, "test_sinter_transpose_tiles_add",
          [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
           helper.make_node("Add", ["t", "y"], ["z"])],
          [("x", x), ("y", y)], [("z", np.transpose(x, (0, 2, 1)) + y)])
    x = normal(64, 64)
    write(root, "test_sinter_transpose_tiles_plus_self",
          [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
           helper.make_node("Mul", ["t", "x"], ["z"])],
          [("x", x)], [("z", x.T * x)])
    x = normal(50, 90, dtype=np.float16)
    write(root, "test_sinter_transpose_tiles_f16_tanh",
          [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
           helper.make_node("Tanh", ["t"], ["z"])],
          [("x", x)], [("z", np.tanh(x.T.astype(np.float64)).astype(np.float16))])
    x, y = normal(3, 69, 41, dtype=np.float16), normal(3, 41, 69, dtype=np.float16)
    write(root, "test_sinter_transpose_tiles_f16_odd_add",
          [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
           helper.make_node("Add", ["t", "y"], ["z"])],
          [("x", x), ("y", y)],
          [("z", (np.transpose(x, (0, 2, 1)).astype(np.float32) + y).astype(np.float16))])
    x, y = normal(70, 45, dtype=np.float16), normal(45, 70, dtype=np.float16)
    write(root, "test_sinter_transpose_tiles_f16_greater",
          [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
           helper.make_node("Greater", ["t", "y"], ["z"])],
          [("x", x), ("y", y)], [("z", x.T > y)])


def rounded_function_cases(root, rng):
    """tanh and tanh-GELU with f16 results (the special-function-unit variants), over a range
    wide enough to reach both ends of each."""
    x = (rng.standard_normal((64, 256)) * 4).astype(np.float16)
    xd = x.astype(np.float64)
    write(root, "test_sinter_tanh_f16_wide",
          [helper.make_node("Tanh", ["x"], ["y"])], [("x", x)],
          [("y", np.tanh(xd).astype(np.float16))])
    u = 0.79788456080286535588 * (xd + 0.044715 * xd ** 3)
    write(root, "test_sinter_gelu_tanh_f16_wide",
          [helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")], [("x", x)],
          [("y", (0.5 * xd * (1 + np.tanh(u))).astype(np.float16))], opset=20)


def conv_reference(x, w, b, strides, pads, dilations, group):
    """Direct convolution in float64: pads = [begin..., end...] per spatial dimension."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    n, c = x.shape[:2]
    m, kernel = w.shape[0], w.shape[2:]
    r = len(kernel)
    xp = np.pad(x64, [(0, 0), (0, 0)] + [(pads[i], pads[i + r]) for i in range(r)])
    out = [(xp.shape[2 + i] - (dilations[i] * (kernel[i] - 1) + 1)) // strides[i] + 1
           for i in range(r)]
    y = np.zeros((n, m, *out))
    cg, mg = c // group, m // group
    for g in range(group):
        for k in np.ndindex(*kernel):
            window = [slice(None), slice(g * cg, (g + 1) * cg)] + [
                slice(k[i] * dilations[i], k[i] * dilations[i] + strides[i] * (out[i] - 1) + 1,
                      strides[i]) for i in range(r)]
            wk = w64[(slice(g * mg, (g + 1) * mg), slice(None)) + k]
            y[:, g * mg:(g + 1) * mg] += np.einsum("mc,nc...->nm...", wk, xp[tuple(window)])
    if b is not None:
        y += b.astype(np.float64).reshape(1, m, *[1] * r)
    return y


def same_pads(size, kernel, stride, dilation, upper):
    """ONNX auto_pad SAME_UPPER / SAME_LOWER as explicit [begin..., end...]."""
    begin, end = [], []
    for d, k, s, dl in zip(size, kernel, stride, dilation):
        total = max(0, ((d + s - 1) // s - 1) * s + dl * (k - 1) + 1 - d)
        begin.append(total // 2 if upper else total - total // 2)
        end.append(total - begin[-1])
    return begin + end


def conv_cases(root, rng):
    cases = [  # name, x shape, w shape, bias, attributes
        ("groups_dilation_bias", (2, 4, 9, 8), (6, 2, 3, 3), True,
         dict(group=2, dilations=[2, 2], pads=[1, 2, 1, 0])),
        ("depthwise_stride2_same_lower", (1, 3, 7, 6), (3, 1, 3, 3), True,
         dict(group=3, strides=[2, 2], auto_pad="SAME_LOWER")),
        ("same_upper_stride3", (1, 2, 8, 10), (3, 2, 2, 4), False,
         dict(strides=[3, 3], auto_pad="SAME_UPPER")),
        ("valid_rect_kernel", (2, 3, 6, 9), (2, 3, 1, 4), True, dict(auto_pad="VALID")),
        ("1d_stride2_pads", (2, 3, 10), (4, 3, 3), True, dict(strides=[2], pads=[1, 2])),
        ("3d", (1, 2, 4, 5, 3), (3, 2, 2, 3, 1), True,
         dict(strides=[1, 2, 1], pads=[0, 1, 0, 1, 1, 0])),
        ("1x1", (1, 8, 5, 5), (4, 8, 1, 1), True, {}),
        ("patch_embedding", (1, 3, 32, 32), (16, 3, 8, 8), True,
         dict(strides=[8, 8], kernel_shape=[8, 8])),
    ]
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    for name, xs, ws, has_bias, attrs in cases + [("f16_pads_bias", (1, 4, 6, 6), (5, 4, 3, 3),
                                                    True, dict(pads=[1, 1, 1, 1]))]:
        dtype = np.float16 if name.startswith("f16") else np.float32
        x = (rng.random(xs) * 2 - 1).astype(dtype)
        w = (rng.random(ws) * 2 - 1).astype(dtype)
        b = (rng.random(ws[0]) * 2 - 1).astype(dtype) if has_bias else None
        r = len(ws) - 2
        strides = attrs.get("strides", [1] * r)
        dilations = attrs.get("dilations", [1] * r)
        pads = attrs.get("pads", [0] * 2 * r)
        if attrs.get("auto_pad", "").startswith("SAME"):
            pads = same_pads(xs[2:], ws[2:], strides, dilations, attrs["auto_pad"] == "SAME_UPPER")
        y = conv_reference(x, w, b, strides, pads, dilations, attrs.get("group", 1)).astype(dtype)
        inputs = [("x", x), ("w", w)] + ([("b", b)] if has_bias else [])
        node = helper.make_node("Conv", [n for n, _ in inputs], ["y"], **attrs)
        write(root, f"test_sinter_conv_{name}", [node], inputs, [("y", y)], opset=22)
        if ort is not None:  # the external reference agrees with numpy's
            model = str(Path(root) / "node" / f"test_sinter_conv_{name}" / "model.onnx")
            got = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(
                None, dict(inputs))[0]
            tol = 2e-2 if dtype == np.float16 else 1e-5
            if not np.allclose(got.astype(np.float64), y.astype(np.float64), rtol=tol, atol=tol):
                sys.exit(f"make_extra_node_tests: onnxruntime disagrees with the numpy "
                         f"convolution on test_sinter_conv_{name}")


def conv_transpose_reference(x, w, b, strides, pads, dilations, group, output_padding):
    """Transposed convolution in float64 by scattering each input entry (pads = [begin...,
    end...])."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    n, c = x.shape[:2]
    mg, kernel = w.shape[1], w.shape[2:]
    r = len(kernel)
    full = [strides[i] * (x.shape[2 + i] - 1) + output_padding[i] +
            dilations[i] * (kernel[i] - 1) + 1 for i in range(r)]
    y = np.zeros((n, mg * group, *full))
    cg = c // group
    for g in range(group):
        for i in np.ndindex(*x.shape[2:]):
            for k in np.ndindex(*kernel):
                o = tuple(i[d] * strides[d] + k[d] * dilations[d] for d in range(r))
                contrib = np.einsum("nc,cm->nm", x64[(slice(None), slice(g * cg, (g + 1) * cg)) + i],
                                    w64[(slice(g * cg, (g + 1) * cg), slice(None)) + k])
                y[(slice(None), slice(g * mg, (g + 1) * mg)) + o] += contrib
    y = y[(slice(None), slice(None)) + tuple(slice(pads[d], full[d] - pads[d + r])
                                             for d in range(r))]
    if b is not None:
        y += b.astype(np.float64).reshape(1, -1, *[1] * r)
    return y


def conv_transpose_cases(root, rng):
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    cases = [  # name, x, w [C, M/G, k...], bias, attributes
        ("groups_stride2_output_padding", (2, 4, 3, 4), (4, 3, 3, 3), True,
         dict(group=2, strides=[2, 2], pads=[1, 0, 1, 1], output_padding=[1, 0])),
        ("upsample_4x4_stride2", (1, 3, 5, 5), (3, 2, 4, 4), True,
         dict(strides=[2, 2], pads=[1, 1, 1, 1])),
        ("1d_dilation", (1, 2, 6), (2, 3, 3), False, dict(dilations=[2], strides=[3])),
    ]
    for name, xs, ws, has_bias, attrs in cases:
        x = (rng.random(xs) * 2 - 1).astype(np.float32)
        w = (rng.random(ws) * 2 - 1).astype(np.float32)
        group = attrs.get("group", 1)
        b = (rng.random(ws[1] * group) * 2 - 1).astype(np.float32) if has_bias else None
        r = len(ws) - 2
        y = conv_transpose_reference(x, w, b, attrs.get("strides", [1] * r),
                                     attrs.get("pads", [0] * 2 * r),
                                     attrs.get("dilations", [1] * r), group,
                                     attrs.get("output_padding", [0] * r)).astype(np.float32)
        inputs = [("x", x), ("w", w)] + ([("b", b)] if has_bias else [])
        node = helper.make_node("ConvTranspose", [n for n, _ in inputs], ["y"], **attrs)
        write(root, f"test_sinter_convtranspose_{name}", [node], inputs, [("y", y)], opset=22)
        if ort is not None:
            model = str(Path(root) / "node" / f"test_sinter_convtranspose_{name}" / "model.onnx")
            got = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(
                None, dict(inputs))[0]
            if not np.allclose(got, y, rtol=1e-5, atol=1e-5):
                sys.exit(f"make_extra_node_tests: onnxruntime disagrees with the numpy transposed "
                         f"convolution on test_sinter_convtranspose_{name}")


def einsum_cases(root, rng):
    """Einsum in f32 (the suite's are mostly float64): numpy's float64 einsum the reference."""
    cases = [  # name, equation, operand shapes
        ("batch_matmul", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("inner_implicit", "i,i", [(7,), (7,)]),
        ("outer", "i,j->ij", [(3,), (4,)]),
        ("diagonal_trace", "ii->", [(5, 5)]),
        ("batch_diagonal_ellipsis", "...ii->...i", [(2, 3, 4, 4)]),
        ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        ("three_operands", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("sum_out_and_transpose", "abc->ca", [(2, 3, 4)]),
        ("attention_scores", "bhqd,bhkd->bhqk", [(1, 2, 3, 8), (1, 2, 5, 8)]),
        ("spaces_implicit", "ba , ca", [(3, 4), (2, 4)]),
    ]
    for name, equation, shapes in cases:
        inputs = [(f"x{i}", (rng.random(sh) * 2 - 1).astype(np.float32))
                  for i, sh in enumerate(shapes)]
        y = np.einsum(equation.replace(" ", ""),
                      *[a.astype(np.float64) for _, a in inputs]).astype(np.float32)
        y = np.asarray(y, dtype=np.float32)
        write(root, f"test_sinter_einsum_{name}",
              [helper.make_node("Einsum", [n for n, _ in inputs], ["y"], equation=equation)],
              inputs, [("y", y)], opset=18)


def topk_cases(root, rng):
    """TopK as a router takes it (2 of 8 experts per token, f16) and with entries equal to the
    type's lowest value left once the rest are taken (each index reported once)."""
    def topk(x, k, axis, largest):
        order = np.argsort(-x if largest else x, axis=axis, kind="stable")
        idx = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)

    cases = [
        ("router_f16", (rng.random((6, 8)) * 4 - 2).astype(np.float16), 2, -1, 1),
        ("lowest_values_left", np.array([[1, -np.inf, -np.inf, 2], [-np.inf, -np.inf, 3, 3]],
                                        np.float32), 4, 1, 1),
        ("smallest_int64_axis0", rng.integers(-5, 5, (5, 3)).astype(np.int64), 3, 0, 0),
    ]
    for name, x, k, axis, largest in cases:
        values, indices = topk(x, k, axis, largest)
        write(root, f"test_sinter_topk_{name}",
              [helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis,
                                largest=largest)],
              [("x", x)], [("values", values), ("indices", indices)],
              [numpy_helper.from_array(np.array([k], np.int64), "k")])


ACTIVATIONS = {
    "Sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "Tanh": lambda x, a, b: np.tanh(x),
    "Relu": lambda x, a, b: np.maximum(x, 0),
    "LeakyRelu": lambda x, a, b: np.where(x >= 0, x, a * x),
    "HardSigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "Affine": lambda x, a, b: a * x + b,
    "ScaledTanh": lambda x, a, b: a * np.tanh(b * x),
    "Softsign": lambda x, a, b: x / (1 + np.abs(x)),
}
DEFAULT_ALPHA_BETA = {"LeakyRelu": (0.01, 0), "HardSigmoid": (0.2, 0.5), "Affine": (1, 0),
                      "ScaledTanh": (1, 0)}


def recurrent_reference(cell, x, w, r, b=None, lens=None, h0=None, c0=None, p=None,
                        direction="forward", activations=None, alphas=(), betas=(), clip=None,
                        linear_before_reset=0, input_forget=0, layout=0):
    """RNN / GRU / LSTM as the ONNX operator definitions state them, in float64: Y, Y_h (and
    Y_c for LSTM), with sequence_lens (steps past a length keep the state, Y = 0)."""
    x, w, r = (a.astype(np.float64) for a in (x, w, r))
    if layout:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    steps, batch, _ = x.shape
    dirs = 2 if direction == "bidirectional" else 1
    hidden = r.shape[2]
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[cell]
    per = {"RNN": 1, "GRU": 2, "LSTM": 3}[cell]
    if activations is None:
        activations = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                       "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[cell] * dirs
    fns, ai, bi = [], 0, 0
    for name in activations:
        a, bb = DEFAULT_ALPHA_BETA.get(name, (0, 0))
        if name in ("LeakyRelu", "HardSigmoid", "Affine", "ScaledTanh") and ai < len(alphas):
            a, ai = alphas[ai], ai + 1
        if name in ("HardSigmoid", "Affine", "ScaledTanh") and bi < len(betas):
            bb, bi = betas[bi], bi + 1
        fns.append(lambda v, f=ACTIVATIONS[name], a=a, bb=bb: f(v, a, bb))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    lens = np.full(batch, steps) if lens is None else lens
    y = np.zeros((steps, dirs, batch, hidden))
    yh, yc = np.zeros((dirs, batch, hidden)), np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        f = fns[d * per:(d + 1) * per]
        bias = np.zeros(2 * gates * hidden) if b is None else b[d].astype(np.float64)
        wb, rb = bias[:gates * hidden], bias[gates * hidden:]
        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros((batch, hidden)) if c0 is None else c0[d].astype(np.float64)
        pp = np.zeros(3 * hidden) if p is None else p[d].astype(np.float64)
        order = range(steps - 1, -1, -1) if (direction == "reverse" or d == 1) else range(steps)
        for t in order:
            xw = x[t] @ w[d].T + wb
            live = (t < lens)[:, None]
            if cell == "RNN":
                nh, nc = f[0](cl(xw + h @ r[d].T + rb)), c
            elif cell == "GRU":
                hs = slice(0, hidden), slice(hidden, 2 * hidden), slice(2 * hidden, 3 * hidden)
                z = f[0](cl(xw[:, hs[0]] + h @ r[d][hs[0]].T + rb[hs[0]]))
                rr = f[0](cl(xw[:, hs[1]] + h @ r[d][hs[1]].T + rb[hs[1]]))
                if linear_before_reset:
                    cand = xw[:, hs[2]] + rr * (h @ r[d][hs[2]].T + rb[hs[2]])
                else:
                    cand = xw[:, hs[2]] + (rr * h) @ r[d][hs[2]].T + rb[hs[2]]
                nh, nc = (1 - z) * f[1](cl(cand)) + z * h, c
            else:
                g = xw + h @ r[d].T + rb
                gi, go, gf, gc = (g[:, k * hidden:(k + 1) * hidden] for k in range(4))
                i = f[0](cl(gi + pp[:hidden] * c))
                fg = 1 - i if input_forget else f[0](cl(gf + pp[2 * hidden:] * c))
                nc = fg * c + i * f[1](cl(gc))
                o = f[0](cl(go + pp[hidden:2 * hidden] * nc))
                nh = o * f[2](nc)
            y[t, d] = np.where(live, nh, 0)
            h, c = np.where(live, nh, h), np.where(live, nc, c)
        yh[d], yc[d] = h, c
    if layout:
        y, yh, yc = y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2), yc.transpose(1, 0, 2)
    return y, yh, yc


def recurrent_cases(root, rng):
    """What the suite's 18 recurrent tests leave out: sequence_lens (forward, reverse and
    bidirectional), clip, other activations with alpha / beta, GRU's linear_before_reset,
    LSTM's input_forget and peepholes with a batch-first layout and initial states."""
    def case(name, cell, steps, batch, inputs, hidden, lens=None, h0=False, c0=False,
             peep=False, **attrs):
        dirs = 2 if attrs.get("direction") == "bidirectional" else 1
        gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[cell]
        layout = attrs.get("layout", 0)
        rnd = lambda *s: (rng.random(s) * 1.6 - 0.8).astype(np.float32)
        x = rnd(steps, batch, inputs) if not layout else rnd(batch, steps, inputs)
        w, r, b = rnd(dirs, gates * hidden, inputs), rnd(dirs, gates * hidden, hidden), \
            rnd(dirs, 2 * gates * hidden)
        state = (lambda: rnd(dirs, batch, hidden)) if not layout else (lambda: rnd(batch, dirs, hidden))
        named = [("X", x), ("W", w), ("R", r), ("B", b)]
        extra = {"lens": None, "h0": state() if h0 else None, "c0": state() if c0 else None,
                 "p": rnd(dirs, 3 * hidden) if peep else None}
        if lens is not None:
            extra["lens"] = np.array(lens, np.int32)
        for key, onnx_name in (("lens", "sequence_lens"), ("h0", "initial_h"), ("c0", "initial_c"),
                               ("p", "P")):
            if cell != "LSTM" and key in ("c0", "p"):
                continue
            named.append((onnx_name, extra[key]))
        while named and named[-1][1] is None:
            named.pop()
        node_inputs = [nm if a is not None else "" for nm, a in named]
        feeds = [(nm, a) for nm, a in named if a is not None]
        ref_attrs = {k: v for k, v in attrs.items() if k not in ("activation_alpha", "activation_beta")}
        y, yh, yc = recurrent_reference(cell, x, w, r, b, extra["lens"], extra["h0"], extra["c0"],
                                        extra["p"], alphas=attrs.get("activation_alpha", ()),
                                        betas=attrs.get("activation_beta", ()), **ref_attrs)
        outs = [("Y", y.astype(np.float32)), ("Y_h", yh.astype(np.float32))]
        if cell == "LSTM":
            outs.append(("Y_c", yc.astype(np.float32)))
        node = helper.make_node(cell, node_inputs, [nm for nm, _ in outs], hidden_size=hidden, **attrs)
        write(root, name, [node], feeds, outs)
        if layout:  # onnxruntime has no batch-first recurrent ops
            return
        try:  # onnxruntime, where installed, must agree with the reference
            import onnxruntime as ort
        except ImportError:
            return
        model = str(Path(root) / "node" / name / "model.onnx")
        got = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(
            None, dict(feeds))
        for (nm, want), have in zip(outs, got):
            assert np.allclose(have, want, atol=2e-5), (name, nm, np.abs(have - want).max())

    case("test_sinter_lstm_sequence_lens_bidirectional", "LSTM", 5, 3, 4, 6, lens=[5, 2, 3],
         direction="bidirectional")
    case("test_sinter_gru_sequence_lens_reverse", "GRU", 4, 3, 5, 4, lens=[1, 4, 2],
         direction="reverse", h0=True)
    case("test_sinter_rnn_sequence_lens_clip", "RNN", 6, 2, 3, 5, lens=[6, 3], clip=0.5)
    case("test_sinter_gru_linear_before_reset", "GRU", 3, 2, 4, 3, linear_before_reset=1, h0=True)
    case("test_sinter_lstm_peepholes_batch_first_states", "LSTM", 4, 2, 3, 5, h0=True, c0=True,
         peep=True, layout=1)
    case("test_sinter_lstm_input_forget_activations", "LSTM", 3, 2, 3, 4, input_forget=1,
         activations=["HardSigmoid", "ScaledTanh", "Affine"], activation_alpha=[0.3, 0.9, 1.5],
         activation_beta=[0.4, 1.1, -0.2])
    case("test_sinter_gru_bidirectional_leaky", "GRU", 3, 2, 3, 4, direction="bidirectional",
         activations=["Sigmoid", "LeakyRelu", "HardSigmoid", "Softsign"],
         activation_alpha=[0.1, 0.25], activation_beta=[0.45])


def control_flow_cases(root, rng):
    """If with a condition known at run time (both branches, a select) and one computed from a
    shape, Loop with a carried value, a scan output, an outer value and an If inside its body,
    Scan in reverse along axis 1: onnxruntime's outputs are the expected ones (these cases are
    left out where it is not installed)."""
    try:
        import onnxruntime as ort
    except ImportError:
        print("make_extra_node_tests: onnxruntime not installed; no control-flow cases")
        return
    F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
    vi = helper.make_tensor_value_info

    def case(name, nodes, inputs, outputs, inits=(), opset=OPSET):
        graph = helper.make_graph(nodes, name, [vi(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                                                 for n, a in inputs],
                                  [vi(n, t, s) for n, t, s in outputs], list(inits))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 9
        got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, dict(inputs))
        write(root, name, nodes, inputs, [(n, g) for (n, _, _), g in zip(outputs, got)], inits,
              opset=opset)

    def branch(name, nodes, outs):
        return helper.make_graph(nodes, name, [], [vi(n, F, s) for n, s in outs])

    x = (rng.random((3, 4)) * 2 - 1).astype(np.float32)
    then_g = branch("then", [helper.make_node("Relu", ["x"], ["t"])], [("t", [3, 4])])
    else_g = branch("else", [helper.make_node("Neg", ["x"], ["e"])], [("e", [3, 4])])
    for flag in (True, False):
        case(f"test_sinter_if_runtime_cond_{str(flag).lower()}",
             [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
             [("c", np.array(flag)), ("x", x)], [("y", F, [3, 4])])
    # The condition from the input's shape: known when compiling, one branch imported.
    case("test_sinter_if_shape_cond",
         [helper.make_node("Shape", ["x"], ["s"]),
          helper.make_node("Gather", ["s", "one"], ["d"], axis=0),
          helper.make_node("Greater", ["d", "three"], ["c"]),
          helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
         [("x", x)], [("y", F, [3, 4])],
         [numpy_helper.from_array(np.array(1, np.int64), "one"),
          numpy_helper.from_array(np.array(3, np.int64), "three")])
    # Loop: 4 iterations of acc = acc * 0.5 + x (x from the outer scope), a scan output of
    # each acc, and inside the body an If on the iteration number.
    inner_then = branch("inner_then", [helper.make_node("Identity", ["acc_next"], ["o"])], [("o", [3, 4])])
    inner_else = branch("inner_else", [helper.make_node("Neg", ["acc_next"], ["o2"])], [("o2", [3, 4])])
    body = helper.make_graph(
        [helper.make_node("Mul", ["acc_in", "half"], ["h"]),
         helper.make_node("Add", ["h", "x"], ["acc_next"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Less", ["i", "two"], ["early"]),
         helper.make_node("If", ["early"], ["acc_out"], then_branch=inner_then, else_branch=inner_else),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [3, 4])],
        [vi("cond_out", B, []), vi("acc_out", F, [3, 4]), vi("scan_out", F, [3, 4])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
         numpy_helper.from_array(np.array(2, np.int64), "two")])
    case("test_sinter_loop_carried_scan_nested_if",
         [helper.make_node("Loop", ["m", "cond", "acc0"], ["acc", "accs"], body=body)],
         [("x", x), ("acc0", np.zeros((3, 4), np.float32))],
         [("acc", F, [3, 4]), ("accs", F, [4, 3, 4])],
         [numpy_helper.from_array(np.array(4, np.int64), "m"),
          numpy_helper.from_array(np.array(True), "cond")])
    # Scan: running sum over axis 1 of [2, 5, 3] in reverse, the per-step sums stacked on axis 1.
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "step"], ["sum_out"]),
         helper.make_node("Identity", ["sum_out"], ["each"])],
        "scan_body", [vi("sum_in", F, [2, 3]), vi("step", F, [2, 3])],
        [vi("sum_out", F, [2, 3]), vi("each", F, [2, 3])])
    seq = (rng.random((2, 5, 3)) * 2 - 1).astype(np.float32)
    case("test_sinter_scan_reverse_axis1",
         [helper.make_node("Scan", ["s0", "seq"], ["total", "sums"], body=scan_body, num_scan_inputs=1,
                           scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1])],
         [("s0", np.zeros((2, 3), np.float32)), ("seq", seq)],
         [("total", F, [2, 3]), ("sums", F, [2, 5, 3])])
    # Scan of opset 8: a batch of 3 sequences of 4 steps (axis 1), the state per batch element,
    # the second scan input read backwards; sequence_lens given as full lengths.
    scan8_body = helper.make_graph(
        [helper.make_node("Mul", ["acc_in", "a"], ["scaled"]),
         helper.make_node("Add", ["scaled", "b"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["each"])],
        "scan8_body", [vi("acc_in", F, [2]), vi("a", F, [2]), vi("b", F, [2])],
        [vi("acc_out", F, [2]), vi("each", F, [2])])
    for lengths in (False, True):
        case("test_sinter_scan8_batch_reverse" + ("_lengths" if lengths else ""),
             [helper.make_node("Scan", ["lens" if lengths else "", "acc0", "a", "b"], ["acc", "all"],
                               body=scan8_body, num_scan_inputs=2, directions=[0, 1])],
             [("acc0", (rng.random((3, 2)) * 2 - 1).astype(np.float32)),
              ("a", (rng.random((3, 4, 2)) + 0.5).astype(np.float32)),
              ("b", (rng.random((3, 4, 2)) * 2 - 1).astype(np.float32))],
             [("acc", F, [3, 2]), ("all", F, [3, 4, 2])],
             [numpy_helper.from_array(np.array([4, 4, 4], np.int64), "lens")] if lengths else (),
             opset=8)


def maxpool_indices_cases(root, rng):
    """MaxPool's Indices output beyond the suite's two 2-D cases: 1-D and 3-D windows with pads,
    strides, dilations and ceil_mode, both storage orders, batch and channels above 1, against
    onnxruntime (left out where it is not installed)."""
    try:
        import onnxruntime as ort
    except ImportError:
        print("make_extra_node_tests: onnxruntime not installed; no MaxPool Indices cases")
        return
    for name, shape, attrs in (
            ("1d_pads_ceil", (2, 3, 11), dict(kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1)),
            ("3d_dilated", (2, 2, 5, 6, 7), dict(kernel_shape=[2, 2, 3], dilations=[1, 2, 1],
                                                 strides=[1, 2, 2])),
            ("2d_storage_order_1", (1, 2, 6, 5), dict(kernel_shape=[3, 2], pads=[1, 0, 1, 1],
                                                      storage_order=1))):
        x = (rng.random(shape) * 4 - 2).astype(np.float32)
        node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                                   helper.make_tensor_value_info("i", TensorProto.INT64, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 9
        y, i = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})
        write(root, f"test_sinter_maxpool_indices_{name}", [node], [("x", x)], [("y", y), ("i", i)])


def pool_overhang_cases(root, rng):
    """Pools in ceil_mode whose one window is wider than the input (Hugging Face EfficientNet's
    pooler: its kernel is the last convolution's width, over small images): the window overhangs
    the end, only the input's entries count; against onnxruntime (left out where it is not
    installed)."""
    try:
        import onnxruntime as ort
    except ImportError:
        print("make_extra_node_tests: onnxruntime not installed; no pool overhang cases")
        return
    for name, op, shape, attrs in (
            ("avg_2d", "AveragePool", (2, 3, 3, 3), dict(kernel_shape=[8, 8], strides=[8, 8])),
            ("avg_2d_count_pad", "AveragePool", (1, 2, 3, 2),
             dict(kernel_shape=[4, 4], strides=[4, 4], pads=[1, 0, 0, 1], count_include_pad=1)),
            ("avg_1d_stride_2", "AveragePool", (1, 2, 3), dict(kernel_shape=[4], strides=[2])),
            ("max_2d", "MaxPool", (1, 2, 2, 3), dict(kernel_shape=[5, 5], strides=[5, 5]))):
        x = (rng.random(shape) * 4 - 2).astype(np.float32)
        node = helper.make_node(op, ["x"], ["y"], ceil_mode=1, **attrs)
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 9
        (y,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})
        write(root, f"test_sinter_pool_overhang_{name}", [node], [("x", x)], [("y", y)])


def moe_routing_cases(root, rng):
    """A mixture-of-experts block as Hugging Face's routing loop exports it (Qwen3-MoE through
    optimum): router softmax, top 2 of 4 experts, and per expert NonZero of its [top_k, tokens]
    mask, the listed tokens' rows gathered, a SwiGLU expert, the routing weight gathered at the
    flat (token, slot) position, and index_add_ as ScatterElements. The NonZero inputs are known
    only at run time, so Sinter pads them (compiler/lib/Import/PaddedValues.h); one token leaves
    most experts with no rows. Against onnxruntime (left out where it is not installed)."""
    try:
        import onnxruntime as ort
    except ImportError:
        print("make_extra_node_tests: onnxruntime not installed; no MoE routing cases")
        return
    node = helper.make_node
    hidden, inner, experts, top_k = 8, 6, 4, 2
    const = lambda name, a: numpy_helper.from_array(np.asarray(a), name)
    for tokens in (5, 1):
        inits = [const("gate", rng.standard_normal((hidden, experts)).astype(np.float32)),
                 const("k", np.array([top_k], np.int64)), const("top_k", np.array(top_k, np.int64)),
                 const("ones2", np.array([1, 1], np.int64)), const("axis1", np.array([1], np.int64)),
                 const("zeros", np.zeros((tokens, hidden), np.float32)),
                 const("flat_shape", np.array([tokens * top_k, 1], np.int64))]
        nodes = [node("MatMul", ["x", "gate"], ["logits"]),
                 node("Softmax", ["logits"], ["probs"], axis=1),
                 node("TopK", ["probs", "k"], ["weights", "selected"], axis=-1),
                 node("Reshape", ["weights", "flat_shape"], ["weights_flat"])]
        total = None
        for e in range(experts):
            inits += [const(f"id{e}", np.array(e, np.int64)),
                      const(f"up{e}", rng.standard_normal((hidden, 2 * inner)).astype(np.float32)),
                      const(f"down{e}", rng.standard_normal((inner, hidden)).astype(np.float32)),
                      const(f"split{e}", np.array([inner, inner], np.int64))]
            nodes += [
                node("Equal", ["selected", f"id{e}"], [f"hit{e}"]),
                node("Transpose", [f"hit{e}"], [f"mask{e}"], perm=[1, 0]),
                node("NonZero", [f"mask{e}"], [f"pairs{e}"]),
                node("Transpose", [f"pairs{e}"], [f"listed{e}"], perm=[1, 0]),
                node("Split", [f"listed{e}", "ones2"], [f"slot2d{e}", f"token2d{e}"], axis=1),
                node("Squeeze", [f"slot2d{e}", "axis1"], [f"slot{e}"]),
                node("Squeeze", [f"token2d{e}", "axis1"], [f"token{e}"]),
                node("Gather", ["x", f"token{e}"], [f"rows{e}"], axis=0),
                node("MatMul", [f"rows{e}", f"up{e}"], [f"gate_up{e}"]),
                node("Split", [f"gate_up{e}", f"split{e}"], [f"g{e}", f"u{e}"], axis=1),
                node("Sigmoid", [f"g{e}"], [f"sig{e}"]),
                node("Mul", [f"g{e}", f"sig{e}"], [f"silu{e}"]),
                node("Mul", [f"silu{e}", f"u{e}"], [f"act{e}"]),
                node("MatMul", [f"act{e}", f"down{e}"], [f"out{e}"]),
                node("Mul", [f"token{e}", "top_k"], [f"base{e}"]),
                node("Add", [f"slot{e}", f"base{e}"], [f"flat{e}"]),
                node("Gather", ["weights_flat", f"flat{e}"], [f"weight{e}"], axis=0),
                node("Mul", [f"out{e}", f"weight{e}"], [f"scaled{e}"]),
                node("Unsqueeze", [f"token{e}", "axis1"], [f"token_col{e}"]),
                node("Shape", [f"scaled{e}"], [f"scaled_shape{e}"]),
                node("Expand", [f"token_col{e}", f"scaled_shape{e}"], [f"targets{e}"]),
                node("ScatterElements", [total or "zeros", f"targets{e}", f"scaled{e}"],
                     [f"sum{e}"], axis=0, reduction="add")]
            total = f"sum{e}"
        nodes.append(node("Identity", [total], ["y"]))
        x = rng.standard_normal((tokens, hidden)).astype(np.float32)
        graph = helper.make_graph(nodes, "moe", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 9
        (y,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})
        write(root, f"test_sinter_moe_routing_padded_{tokens}_tokens", nodes, [("x", x)], [("y", y)],
              inits)


def dynamic_quantization_cases(root, rng):
    """onnxruntime's quantize_dynamic (its tool for int8 weights) on a two-layer MLP, int8 and
    uint8 weights: DynamicQuantizeLinear on the activations, MatMulInteger, the scales
    multiplied back. onnxruntime's outputs are the expected ones (left out where it is not
    installed)."""
    try:
        import tempfile
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        print("make_extra_node_tests: onnxruntime not installed; no dynamic quantization cases")
        return
    F = TensorProto.FLOAT
    w1 = (rng.standard_normal((48, 40)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(40) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((40, 24)) * 0.3).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
         helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])],
        "mlp", [helper.make_tensor_value_info("x", F, [5, 48])],
        [helper.make_tensor_value_info("y", F, [5, 24])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    x = rng.standard_normal((5, 48)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        onnx.save(model, f"{tmp}/mlp.onnx")
        for weight_type, tag in ((QuantType.QInt8, "int8"), (QuantType.QUInt8, "uint8")):
            quantize_dynamic(f"{tmp}/mlp.onnx", f"{tmp}/mlp_{tag}.onnx", weight_type=weight_type)
            quantized = onnx.load(f"{tmp}/mlp_{tag}.onnx")
            y, = ort.InferenceSession(quantized.SerializeToString(),
                                      providers=["CPUExecutionProvider"]).run(None, {"x": x})
            save_case(root, f"test_sinter_ort_quantize_dynamic_mlp_{tag}", quantized, [("x", x)],
                      [("y", y)])


def spectral_cases(root, rng):
    """DFT beyond the suite's 10x10 cases: zero-padding (dft_length past the signal) along a
    middle axis, truncation of a complex inverse, an odd-length one-sided inverse, f16; STFT
    as Whisper's front end computes it (400-entry periodic Hann window, hop 160, one-sided).
    Expected outputs from numpy's fft in float64."""
    def interleave(z):
        return np.stack([z.real, z.imag], axis=-1)

    def dft_case(name, x, dft_length=None, axis=-2, inverse=0, onesided=0, expected=None):
        inputs = [("x", x)]
        names = ["x", "", "axis"]
        inits = [numpy_helper.from_array(np.array(axis, np.int64), "axis")]
        if dft_length is not None:
            names[1] = "n"
            inits.append(numpy_helper.from_array(np.array(dft_length, np.int64), "n"))
        node = helper.make_node("DFT", names, ["y"], inverse=inverse, onesided=onesided)
        write(root, name, [node], inputs, [("y", expected.astype(x.dtype))], inits, opset=20)

    x = rng.standard_normal((2, 3, 12, 1)).astype(np.float32)
    dft_case("test_sinter_dft_zero_padded_middle_axis", x, dft_length=16, axis=2,
             expected=interleave(np.fft.fft(x[..., 0].astype(np.float64), n=16, axis=2)))
    z = rng.standard_normal((3, 9, 4, 2)).astype(np.float32)
    zc = z[..., 0].astype(np.float64) + 1j * z[..., 1]
    dft_case("test_sinter_dft_inverse_truncated", z, dft_length=7, axis=1, inverse=1,
             expected=interleave(np.fft.ifft(zc, n=7, axis=1)))
    h = rng.standard_normal((2, 5, 2)).astype(np.float32)
    hc = h[..., 0].astype(np.float64) + 1j * h[..., 1]
    dft_case("test_sinter_dft_irfft_odd", h, dft_length=9, axis=1, inverse=1, onesided=1,
             expected=np.fft.irfft(hc, n=9, axis=1)[..., np.newaxis])
    x16 = rng.standard_normal((1, 32, 1)).astype(np.float16)
    dft_case("test_sinter_dft_rfft_f16", x16, axis=1, onesided=1,
             expected=interleave(np.fft.rfft(x16[..., 0].astype(np.float64), axis=1)))

    signal = rng.standard_normal((1, 1600, 1)).astype(np.float32)
    n_fft, hop = 400, 160
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)).astype(np.float32)
    frames = 1 + (1600 - n_fft) // hop
    framed = np.stack([signal[0, f * hop:f * hop + n_fft, 0] for f in range(frames)])
    spectrum = np.fft.rfft(framed.astype(np.float64) * window.astype(np.float64), axis=-1)
    node = helper.make_node("STFT", ["signal", "step", "window"], ["y"])
    write(root, "test_sinter_stft_whisper_front_end", [node],
          [("signal", signal), ("window", window)],
          [("y", interleave(spectrum)[np.newaxis].astype(np.float32))],
          [numpy_helper.from_array(np.array(hop, np.int64), "step")], opset=17)


def grid_sample_cases(root, rng):
    """GridSample with grid points far outside the input (several reflections), every mode
    with reflection and zeros padding, both corner alignments, a 3-D input, f16: onnxruntime's
    outputs are the expected ones (left out where it is not installed)."""
    try:
        import onnxruntime as ort
    except ImportError:
        print("make_extra_node_tests: onnxruntime not installed; no GridSample cases")
        return
    for mode, padding, align, shape, grid_shape, dtype in (
            ("cubic", "reflection", 0, (2, 3, 5, 7), (2, 4, 6, 2), np.float32),
            ("cubic", "zeros", 1, (1, 2, 6, 4), (1, 5, 3, 2), np.float32),
            ("nearest", "reflection", 1, (1, 2, 5, 6), (1, 4, 4, 2), np.float32),
            ("linear", "reflection", 0, (1, 2, 3, 4, 5), (1, 2, 3, 4, 3), np.float32),
            ("linear", "border", 1, (2, 2, 4, 6), (2, 3, 5, 2), np.float16)):
        x = rng.standard_normal(shape).astype(dtype)
        grid = (rng.random(grid_shape) * 7 - 3.5).astype(dtype)
        node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding,
                                align_corners=align)
        t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        graph = helper.make_graph([node], "gs", [helper.make_tensor_value_info("x", t, shape),
                                                 helper.make_tensor_value_info("grid", t, grid_shape)],
                                  [helper.make_tensor_value_info("y", t, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        model.ir_version = 9
        y, = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"x": x, "grid": grid})
        name = f"test_sinter_gridsample_{mode}_{padding}_align{align}_{len(shape) - 2}d_{np.dtype(dtype).name}"
        write(root, name, [node], [("x", x), ("grid", grid)], [("y", y)], opset=20)


def quantized_conv_cases(root, rng):
    """QLinearConv as onnxruntime's static quantization writes it (uint8 activations, int8
    weights with one scale per output channel and zero points of 0, an int32 bias, padding and
    stride 2), and ConvInteger with zero points, groups and padding (onnxruntime takes no
    per-channel ConvInteger zero point): onnxruntime's outputs are the expected ones (left out
    where it is not installed), except where `exact`: uint8 x int8 products, which onnxruntime
    sums in saturating 16-bit pairs on CPUs without VNNI (20 of 48 outputs off by up to 6 on an
    AVX2 machine), so the expected outputs would depend on the CPU that made them; those take
    the ONNX reference implementation's exact integer arithmetic."""
    try:
        import onnxruntime as ort
    except ImportError:
        print("make_extra_node_tests: onnxruntime not installed; no quantized convolution cases")
        return
    from onnx.reference import ReferenceEvaluator

    def case(name, node, inputs, inits, out_type, exact=False):
        graph = helper.make_graph(
            [node], name, [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                           for n, a in inputs],
            [helper.make_tensor_value_info("y", out_type, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 9
        if exact:
            y, = ReferenceEvaluator(model).run(None, dict(inputs))
        else:
            y, = ort.InferenceSession(model.SerializeToString(),
                                      providers=["CPUExecutionProvider"]).run(None, dict(inputs))
        write(root, name, [node], inputs, [("y", y)], inits, opset=13)

    x = rng.integers(0, 256, (1, 3, 7, 6), dtype=np.uint8)
    w = rng.integers(-127, 128, (4, 3, 3, 3), dtype=np.int8)
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
             numpy_helper.from_array(np.array(128, np.uint8), "xz"),
             numpy_helper.from_array(w, "w"),
             numpy_helper.from_array((rng.random(4) * 0.01 + 0.001).astype(np.float32), "ws"),
             numpy_helper.from_array(np.zeros(4, np.int8), "wz"),
             numpy_helper.from_array(np.array(0.15, np.float32), "ys"),
             numpy_helper.from_array(np.array(120, np.uint8), "yz"),
             numpy_helper.from_array(rng.integers(-2000, 2000, 4).astype(np.int32), "b")]
    case("test_sinter_qlinearconv_per_channel_bias",
         helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                          pads=[1, 1, 1, 1], strides=[2, 2]), [("x", x)], inits, TensorProto.UINT8,
         exact=True)
    x2 = rng.integers(0, 256, (2, 4, 5, 5), dtype=np.uint8)
    w2 = rng.integers(0, 256, (6, 2, 3, 3), dtype=np.uint8)
    case("test_sinter_convinteger_groups_padding",
         helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], group=2, pads=[1, 0, 1, 0]),
         [("x", x2)], [numpy_helper.from_array(w2, "w"),
                       numpy_helper.from_array(np.array(7, np.uint8), "xz"),
                       numpy_helper.from_array(np.array(131, np.uint8), "wz")],
         TensorProto.INT32)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    rng = np.random.default_rng(2026)
    uniform = lambda *shape: rng.random(shape, dtype=np.float32)
    # Rows of one warp's chunks, of a 512-thread row (cross-warp sums), and of 1024 threads
    # with 69 chunks each (the running sums outgrow the registers).
    cumsum_case(root, "test_sinter_cumsum_int32_two_chunks_exclusive",
                rng.integers(-50, 50, (3, 40), dtype=np.int32), 1, exclusive=1)
    cumsum_case(root, "test_sinter_cumsum_f32_3000", uniform(4, 3000), 1)
    cumsum_case(root, "test_sinter_cumsum_f32_3000_reverse", uniform(4, 3000), -1, reverse=1)
    cumsum_case(root, "test_sinter_cumsum_f32_70000_reverse_exclusive", uniform(2, 70000), 1,
                exclusive=1, reverse=1)
    cumsum_case(root, "test_sinter_cumsum_int64_axis0_reverse",
                rng.integers(-1000, 1000, (37, 5), dtype=np.int64), 0, reverse=1)
    cumsum_case(root, "test_sinter_cumsum_f16", uniform(8, 100).astype(np.float16), 1)
    # position_ids = mask.cumsum(-1) - 1, with 1 where the mask is 0 (left padding).
    lengths = [300, 211, 1]
    mask = np.zeros((len(lengths), 300), bool)
    for row, n in enumerate(lengths):
        mask[row, 300 - n:] = True
    positions = np.cumsum(mask.astype(np.int64), axis=1) - 1
    positions = np.where(mask, positions, 1)
    write(root, "test_sinter_cumsum_position_ids",
          [helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.INT64),
           helper.make_node("CumSum", ["m", "axis"], ["c"]),
           helper.make_node("Sub", ["c", "one"], ["p"]),
           helper.make_node("Where", ["mask", "p", "one"], ["position_ids"])],
          [("mask", mask)], [("position_ids", positions)],
          [axis_init(1), numpy_helper.from_array(np.array(1, np.int64), "one")])
    # ScatterND with indices given at run time: repeated tuples combined in order, a whole
    # [4, 6, 8] input rewritten into its output (no KV cache), element tuples.
    for reduction, dtype in (("add", np.float32), ("mul", np.float32), ("max", np.int64),
                             ("min", np.float16), ("none", np.float32)):
        data = (rng.random((5, 4, 6)) * 4 - 2).astype(dtype)
        indices = np.array([[[1], [3]], [[1], [-1]], [[0], [3]]], np.int64)  # 1 and 3 twice
        updates = (rng.random((3, 2, 4, 6)) * 4 - 2).astype(dtype)
        if reduction == "none":  # repeated tuples' order is unspecified without a reduction
            indices = np.array([[[1], [3]], [[4], [0]], [[2], [-2]]], np.int64)
        expected = data.astype(np.float64) if dtype != np.int64 else data.copy()
        for t in np.ndindex(indices.shape[:-1]):
            row = int(indices[t][0]) % data.shape[0]
            u = updates[t]
            expected[row] = {"add": lambda a: a + u, "mul": lambda a: a * u,
                             "max": lambda a: np.maximum(a, u), "min": lambda a: np.minimum(a, u),
                             "none": lambda a: u}[reduction](expected[row])
        write(root, f"test_sinter_scatternd_runtime_indices_{reduction}",
              [helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"],
                                reduction=reduction)],
              [("data", data), ("indices", indices), ("updates", updates)],
              [("y", expected.astype(dtype))])
    data = uniform(3, 4)
    indices = np.array([[0, 1], [2, 3], [0, 1]], np.int64)
    updates = np.array([5, 7, 11], np.float32)
    expected = data.copy()
    for (r, c), u in zip(indices, updates):
        expected[r, c] *= u
    write(root, "test_sinter_scatternd_element_tuples_mul",
          [helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction="mul")],
          [("data", data), ("indices", indices), ("updates", updates)], [("y", expected)])
    quantized_cases(root, rng)
    transpose_cases(root, rng)
    rounded_function_cases(root, rng)
    conv_cases(root, rng)
    conv_transpose_cases(root, rng)
    einsum_cases(root, rng)
    topk_cases(root, rng)
    recurrent_cases(root, rng)
    control_flow_cases(root, rng)
    maxpool_indices_cases(root, rng)
    pool_overhang_cases(root, rng)
    moe_routing_cases(root, rng)
    dynamic_quantization_cases(root, rng)
    spectral_cases(root, rng)
    grid_sample_cases(root, rng)
    quantized_conv_cases(root, rng)
    print(f"wrote Sinter's node tests under {root}/node")


if __name__ == "__main__":
    main()
