#!/usr/bin/env python3
"""ONNX backend node-test conformance runner for Sinter.

Collects the ONNX backend node tests (onnx.backend.test.case.node.collect_testcases, or a
libonnx-testdata tree with --from-testdata), keeps those at default-domain opsets 13..23 whose
ops are all in SCOPE, and drives `sinter compile` on each:

  --phase source   compile to CUDA source (--compile-to=source); passed = reached source.
                   Needs only onnx + numpy: the CI mode.
  --phase binary   compile to a .so, then load it (examples/bench/sinter_ctypes.py, torch on a
                   GPU) and run every data set, comparing with the expected outputs;
                   passed = every output matched. --no-run stops after the .so (no GPU needed).
  --phase fold     make every input an initializer (data set 0's values) and compile to the
                   graph phase with --print-constants: the host folds each import, and the
                   folded outputs are compared with the expected ones (folded_outputs.py).
                   Checks imports' decompositions without a GPU; a test whose graph does not
                   fold entirely (an op without a host folder) is a SKIP with that reason.

Prints one line per test (PASS / FAIL / COMPILE-FAIL / SKIP), a summary, and a closing line
`N passed, M failed`. See test/conformance/README.md.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENV_PYTHON = REPO / "build" / "conformance-venv" / "bin" / "python"  # made by scripts/conformance.sh

try:
    import numpy as np
    import onnx
except ImportError as e:
    if VENV_PYTHON.exists() and not os.environ.get("SINTER_CONFORMANCE_REEXEC"):
        os.environ["SINTER_CONFORMANCE_REEXEC"] = "1"
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), str(Path(__file__).resolve()), *sys.argv[1:]])
    sys.exit(f"run_node_tests.py: {e}; it needs onnx and numpy (scripts/conformance.sh makes a venv with "
             f"them in build/conformance-venv, or: pip install onnx numpy)")

OPSET_MIN, OPSET_MAX = 7, 28  # the importer's default-domain range (7-12 through LegacyForms.cpp)

SCOPE = frozenset("""
    Abs Neg Exp Log Sqrt Reciprocal Sin Cos Tanh Sigmoid Erf Relu LeakyRelu Elu Softplus
    HardSigmoid HardSwish Gelu Sign Floor Ceil Round Not IsNaN IsInf
    Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Softsign Selu Celu ThresholdedRelu Mish Swish
    Add Sub Mul Div Pow Max Min Mod Equal Less LessOrEqual Greater GreaterOrEqual And Or Xor
    Where Clip Sum Mean NonZero
    ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL2 ReduceLogSumExp
    ReduceSumSquare ReduceL1 ArgMax ArgMin CumSum
    Softmax LogSoftmax LayerNormalization RMSNormalization
    Transpose Reshape Flatten Squeeze Unsqueeze Slice Concat Split Gather GatherElements
    GatherND ScatterND Expand Tile Pad Range Shape Size ConstantOfShape Trilu
    MatMul Gemm Cast CastLike Identity Dropout Attention Constant DequantizeLinear
    Conv MaxPool AveragePool GlobalMaxPool GlobalAveragePool BatchNormalization
    InstanceNormalization GroupNormalization RotaryEmbedding Resize ConvTranspose
    ReduceLogSum LpNormalization LpPool SpaceToDepth DepthToSpace OneHot Hardmax Einsum TopK
    PRelu BitwiseNot BitwiseAnd BitwiseOr BitwiseXor BitShift QuantizeLinear RNN GRU LSTM
    Shrink Scatter Upsample CumProd MatMulInteger QLinearMatMul DynamicQuantizeLinear
    DFT STFT MelWeightMatrix GridSample AffineGrid MaxUnpool Col2Im ConvInteger QLinearConv
    ScatterElements ReverseSequence CenterCropPad EyeLike HannWindow HammingWindow BlackmanWindow
    MeanVarianceNormalization LRN SwiGLU NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss If Loop Scan
    TensorScatter CausalConvWithState LinearAttention BitCast
""".split())
# Ops of onnxruntime's contrib domain the importer takes (Sinter's own node tests use them).
MICROSOFT_SCOPE = frozenset({"MatMulNBits"})

# ONNX TensorProto.DataType -> the dtype name used here (torch/numpy spelling).
DTYPE_NAMES = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
    8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
    14: "complex64", 15: "complex128", 16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz",
    19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1",
    24: "float8e8m0", 25: "uint2", 26: "int2",
}
ONNX_CODES = {name: code for code, name in DTYPE_NAMES.items()}
SUPPORTED_DTYPES = frozenset({"float32", "float16", "bfloat16", "float64", "int64", "int32",
                              "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool"})
EXACT_DTYPES = frozenset({"int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
                          "uint8", "bool"})

# Tolerances: |actual - expected| <= atol + rtol * |expected| elementwise, NaN == NaN, and
# integer/bool outputs exactly. The test's own rtol/atol apply (the ONNX node tests all say
# rtol 1e-3, atol 1e-7; DEFAULT_* when a source gives none). float16/bfloat16 outputs get at
# least the HALF_TOLERANCE bounds: the ONNX references compute in float32/float64 and round
# once, while a GPU kernel may round intermediate results or use a different (but valid)
# summation order, which at 11 (f16) or 8 (bf16) mantissa bits is worth ~1-2 ulp.
DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-7
HALF_TOLERANCE = {  # dtype: (rtol, atol), used as max(test's, these)
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
}

# Inputs that Sinter needs as compile-time values (shapes, axes, pads, repeats, bounds...):
# op_type -> input indices. A graph input consumed at one of these positions becomes an
# initializer holding the data set's value before compiling (recorded per test as
# "constified").
CONST_OPERANDS = {
    "Reshape": [1], "Slice": [1, 2, 3, 4], "Split": [1], "Tile": [1], "Expand": [1],
    "Pad": [1, 2, 3], "Range": [0, 1, 2], "ConstantOfShape": [0], "Squeeze": [1], "NonZero": [0],
    "Unsqueeze": [1], "ReduceSum": [1], "ReduceMean": [1], "ReduceMax": [1], "ReduceMin": [1],
    "ReduceProd": [1], "ReduceL1": [1], "ReduceL2": [1], "ReduceLogSum": [1],
    "ReduceLogSumExp": [1], "ReduceSumSquare": [1], "Clip": [1, 2], "CumSum": [1], "CumProd": [1], "DFT": [1, 2], "STFT": [1, 3],
    "MelWeightMatrix": [0, 1, 2, 3, 4], "AffineGrid": [1], "MaxUnpool": [2], "Col2Im": [1, 2], "Trilu": [1],
    "Dropout": [1, 2], "TopK": [1], "OneHot": [1], "Resize": [1, 2, 3], "Upsample": [1],
    "HannWindow": [0], "HammingWindow": [0], "BlackmanWindow": [0], "CenterCropPad": [1],
    "Loop": [0, 1],  # Sinter unrolls loops: the trip count and the first condition
}

PROGRESS_EVERY = 50
WORKER_TESTS_PER_PROCESS = 200  # a fresh run process after this many .so loads

# Tests whose expected outputs carry the reference's own float32 rounding beyond the suite's
# atol (1e-7): test name -> (atol used instead, why). Printed with every summary.
REFERENCE_ROUNDING = {
    # numpy 2 computes the reference's ifft of a complex64 signal in single precision: entries
    # whose exact value is ~1e-14 are expected as 1.9e-7, next to entries of magnitude 54
    # (onnxruntime 1.32 mismatches 20 entries of this test; Sinter computes DFTs in f64).
    "test_dft_inverse": (1e-5, "the reference's ifft rounds in float32"),
    "test_dft_inverse_opset19": (1e-5, "the reference's ifft rounds in float32"),
}


# ----------------------------------------------------------------------------------------
# Test sources


class Case:
    """One node test: model, data sets as lists of (name, dtype, array) and tolerances."""

    def __init__(self, name, model, data_sets, rtol, atol, problem=None):
        self.name = name
        self.model = model
        self.data_sets = data_sets  # [(inputs, outputs)], each [(dtype, array or None)]
        self.rtol = DEFAULT_RTOL if rtol is None else rtol
        self.atol = DEFAULT_ATOL if atol is None else atol
        if name in REFERENCE_ROUNDING:
            self.atol = max(self.atol, REFERENCE_ROUNDING[name][0])
        self.problem = problem  # a skip reason found while loading the data


def normalize_value(value):
    """(dtype name, numpy array) for a test value. bfloat16 arrays are uint16 bit patterns;
    the array is None for a dtype this runner does not handle (the name says which), a
    sequence ("sequence") or an absent optional ("optional")."""
    from onnx import TensorProto, numpy_helper

    if value is None:
        return "optional", None
    if isinstance(value, (list, tuple)):
        return "sequence", None
    if isinstance(value, TensorProto):
        dtype = DTYPE_NAMES.get(value.data_type, f"onnx-type-{value.data_type}")
        if dtype not in SUPPORTED_DTYPES:
            return dtype, None
        if dtype == "bfloat16":  # raw_data or int32_data, by bit pattern (any onnx version)
            if value.HasField("raw_data"):
                bits = np.frombuffer(value.raw_data, dtype="<u2").astype(np.uint16)
            else:
                bits = np.asarray(value.int32_data, dtype=np.uint32).astype(np.uint16)
            return dtype, bits.reshape(tuple(value.dims))
        return dtype, np.asarray(numpy_helper.to_array(value))
    arr = np.asarray(value)
    name = arr.dtype.name
    if name == "bfloat16":  # ml_dtypes.bfloat16
        return name, arr.view(np.uint16)
    if name == "bool":
        return name, arr
    if name in SUPPORTED_DTYPES:
        return name, arr
    if arr.dtype == object:
        return "string" if arr.size and isinstance(arr.flat[0], (str, bytes)) else "object", None
    return name, None


def load_onnx_package(name_filter):
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():  # the generators' numpy overflow warnings
        warnings.simplefilter("ignore")
        testcases = collect_testcases(None)
    cases = []
    for tc in testcases:
        if tc.model is None or tc.kind != "node" or not name_filter(tc.name):
            continue
        data_sets = [([normalize_value(v) for v in ins], [normalize_value(v) for v in outs])
                     for ins, outs in (tc.data_sets or [])]
        cases.append(Case(tc.name, tc.model, data_sets, getattr(tc, "rtol", None),
                          getattr(tc, "atol", None)))
    return cases


# Tests where onnxruntime departs from the suite's own expected outputs for a meaning that did
# not change between opsets: in the converted-down suite they keep the suite's outputs.
ONNXRUNTIME_DIFFERS = {
    # onnxruntime puts each value at its flat index within output_shape; the suite's expected
    # output (and the reference evaluator) within the unpooled shape, which is then padded.
    "test_maxunpool_export_with_output_shape",
}


def downgrade(cases, opset):
    """The cases written for a later opset than `opset`, converted down to it by onnx's
    version converter (expanded function tests left out: their bodies are the same ops). The
    converter keeps some nodes whose meaning changed (Softmax's axis before 13): where
    onnxruntime is installed, its outputs on the converted model are the expected ones, except
    for the tests of ONNXRUNTIME_DIFFERS."""
    import warnings

    from onnx import version_converter

    try:
        import onnxruntime as ort
    except ImportError:
        ort = None

    out = []
    for case in cases:
        if case.name.endswith("_expanded") or (default_opset(case.model) or 0) <= opset:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = version_converter.convert_version(case.model, opset)
                onnx.checker.check_model(model)
        except Exception:  # the converter has no adapter for some op or version
            continue
        if default_opset(model) != opset:
            continue
        data_sets = case.data_sets
        if ort is not None and case.name not in ONNXRUNTIME_DIFFERS:
            data_sets = reference_outputs(ort, model, data_sets)
            if data_sets is None:
                continue
        out.append(Case(f"{case.name}_opset{opset}", model, data_sets, case.rtol, case.atol,
                        case.problem))
    return out


def reference_outputs(ort, model, data_sets):
    """data_sets with onnxruntime's outputs of `model` (CPU, no graph optimizations); None
    when onnxruntime cannot run it or a value is bfloat16 (kept as bit patterns here)."""
    inits = {i.name for i in model.graph.initializer}
    names = [v.name for v in model.graph.input if v.name not in inits]
    try:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        session = ort.InferenceSession(model.SerializeToString(), opts,
                                       providers=["CPUExecutionProvider"])
        result = []
        for ins, outs in data_sets:
            if any(d == "bfloat16" or a is None for d, a in list(ins) + list(outs)):
                return None
            got = session.run(None, {n: a for n, (_, a) in zip(names, ins)})
            if len(got) != len(outs):
                return None
            result.append((ins, [(d, np.asarray(g).astype(a.dtype)) for (d, a), g in zip(outs, got)]))
        return result
    except Exception:
        return None


def load_testdata_dir(root, name_filter):
    """Debian libonnx-testdata layout: ROOT/node/<test>/model.onnx and
    test_data_set_N/{input,output}_K.pb (TensorProto; sequences/optionals are skipped)."""
    node_dir = Path(root) / "node"
    if not node_dir.is_dir():
        node_dir = Path(root)
    cases = []
    for test_dir in sorted(p for p in node_dir.iterdir() if (p / "model.onnx").is_file()):
        if not name_filter(test_dir.name):
            continue
        model = onnx.load(str(test_dir / "model.onnx"))
        problem = None
        data_sets = []
        for ds in sorted(test_dir.glob("test_data_set_*"), key=lambda p: int(p.name.rsplit("_", 1)[1])):
            sets = []
            for kind in ("input", "output"):
                vals = []
                files = sorted(ds.glob(f"{kind}_*.pb"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
                for f in files:
                    t = onnx.TensorProto()
                    try:
                        t.ParseFromString(f.read_bytes())
                        if not t.dims and not t.raw_data and t.data_type == 0:
                            raise ValueError("not a tensor")
                        vals.append(normalize_value(t))
                    except Exception:  # SequenceProto / OptionalProto / MapProto
                        vals.append(("sequence", None))
                sets.append(vals)
            data_sets.append(tuple(sets))
        if not data_sets:
            problem = "no test data sets"
        cases.append(Case(test_dir.name, model, data_sets, None, None, problem))
    return cases


# ----------------------------------------------------------------------------------------
# Selection


def default_opset(model):
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if versions else None


def value_type_problem(value_info):
    """None for a tensor of a supported dtype, else a reason."""
    t = value_info.type
    kind = t.WhichOneof("value")
    if kind != "tensor_type":
        return {"sequence_type": "sequence type", "optional_type": "optional type",
                "map_type": "map type", "sparse_tensor_type": "sparse tensor type"}.get(kind, f"{kind} type")
    dtype = DTYPE_NAMES.get(t.tensor_type.elem_type, f"onnx-type-{t.tensor_type.elem_type}")
    if dtype not in SUPPORTED_DTYPES:
        return f"dtype {dtype}"
    return None


def node_dtype_problem(node):
    """Dtypes a node produces inside the graph (Cast targets, Constant values)."""
    for attr in node.attribute:
        code = None
        if node.op_type in ("Cast",) and attr.name == "to":
            code = attr.i
        elif attr.name in ("value",) and attr.HasField("t"):
            code = attr.t.data_type
        if code is not None:
            dtype = DTYPE_NAMES.get(code, f"onnx-type-{code}")
            if dtype not in SUPPORTED_DTYPES:
                return f"dtype {dtype}"
    return None


def training_dropout(case):
    """Whether a Dropout node drops at random: training_mode true and a ratio that is not 0
    (from initializers or the test data; the ratio defaults to 0.5)."""
    from onnx import numpy_helper

    graph = case.model.graph
    inputs = [vi.name for vi in graph.input if vi.name not in {i.name for i in graph.initializer}]

    def value(name):
        for init in graph.initializer:
            if init.name == name:
                return numpy_helper.to_array(init)
        if name in inputs and case.data_sets:
            return case.data_sets[0][0][inputs.index(name)][1]
        return None

    for node in graph.node:
        if node.op_type != "Dropout" or len(node.input) < 3 or not node.input[2]:
            continue
        training = value(node.input[2])
        ratio = value(node.input[1]) if node.input[1] else 0.5
        if training is not None and bool(training.any()) and (
                ratio is None or bool((ratio != 0).any())):
            return True
    return False


def classify(case):
    """('out', reason) for a test outside the scope, ('skip', reason), or ('run', None)."""
    model = case.model
    opset = default_opset(model)
    if opset is None:
        return "out", "no default-domain opset"
    if not OPSET_MIN <= opset <= OPSET_MAX:
        return "out", f"opset {opset} outside {OPSET_MIN}-{OPSET_MAX}"
    graph = model.graph
    foreign = sorted({n.domain for n in graph.node if n.domain not in ("", "ai.onnx") and
                      not (n.domain == "com.microsoft" and n.op_type in MICROSOFT_SCOPE)})
    if foreign:
        return "out", "domain " + ",".join(foreign)
    outside = sorted({n.op_type for n in graph.node} - SCOPE - MICROSOFT_SCOPE)
    if outside:
        return "out", "ops " + ",".join(outside)
    if training_dropout(case):
        return "out", "Dropout in training mode (random output; the scope is inference Dropout)"
    if any(node.op_type == "BatchNormalization" and
           any(a.name == "training_mode" and a.i for a in node.attribute)
           for node in case.model.graph.node):
        return "out", "BatchNormalization in training mode (batch statistics; the scope is inference)"
    if case.problem:
        return "skip", case.problem
    for vi in list(graph.input) + list(graph.output):
        problem = value_type_problem(vi)
        if problem:
            return "skip", problem
    for node in graph.node:
        problem = node_dtype_problem(node)
        if problem:
            return "skip", problem + " inside the graph"
    if not case.data_sets:
        return "skip", "no test data sets"
    for ins, outs in case.data_sets:
        for dtype, arr in list(ins) + list(outs):
            if arr is None:
                return "skip", (f"dtype {dtype}" if dtype not in ("sequence", "optional") else f"{dtype} type")
    graph_inputs = [vi.name for vi in graph.input if vi.name not in {i.name for i in graph.initializer}]
    if any(len(ins) != len(graph_inputs) or len(outs) != len(graph.output) for ins, outs in case.data_sets):
        return "skip", "data set does not match the graph's inputs/outputs"
    shapes = {tuple(a.shape for _, a in ins) for ins, _ in case.data_sets}
    if len(shapes) > 1:
        return "skip", "data sets with different input shapes"
    return "run", None


# ----------------------------------------------------------------------------------------
# Preparing and compiling one test


def make_initializer(name, dtype, arr):
    from onnx import TensorProto, numpy_helper

    if dtype == "bfloat16":
        t = TensorProto()
        t.name = name
        t.data_type = ONNX_CODES["bfloat16"]
        t.dims.extend(arr.shape)
        t.raw_data = np.asarray(arr, dtype="<u2").tobytes()
        return t
    return numpy_helper.from_array(np.array(arr, order="C"), name)  # (np.ascontiguousarray makes scalars 1-D)


def static_dims(value_info):
    tt = value_info.type.tensor_type
    if not tt.HasField("shape"):
        return None
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(d.dim_value)
    return dims


def compile_time_values(graph):
    """Names of the values Sinter needs at compile time: the CONST_OPERANDS inputs and,
    backwards through their producers, everything they are computed from (a Shape or Size
    node needs only its input's shape, so the walk stops there)."""
    producer = {out: node for node in graph.node for out in node.output if out}
    needed, stack = set(), []
    for node in graph.node:
        for idx in CONST_OPERANDS.get(node.op_type, []):
            if idx < len(node.input) and node.input[idx]:
                stack.append(node.input[idx])
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = producer.get(name)
        if node is not None and node.op_type not in ("Shape", "Size"):
            stack.extend(i for i in node.input if i)
    return needed


def prepare(case, work_dir, phase):
    """Writes WORK/<name>/model.onnx (+ io.npz / io.json for the binary run). Returns the
    sinter command line and what was done to the model."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    graph = model.graph
    init_names = {i.name for i in graph.initializer}
    graph_inputs = [vi for vi in graph.input if vi.name not in init_names]
    inputs0 = case.data_sets[0][0]
    value_of = {vi.name: inputs0[k] for k, vi in enumerate(graph_inputs)}

    const_names = {name for name in compile_time_values(graph) if name in value_of}
    if phase == "fold":
        const_names = set(value_of)
    constified = [vi.name for vi in graph_inputs if vi.name in const_names]
    for name in constified:
        dtype, arr = value_of[name]
        graph.initializer.append(make_initializer(name, dtype, arr))
    if constified:
        kept = [vi for vi in graph.input if vi.name not in const_names]
        del graph.input[:]
        graph.input.extend(kept)
        if model.ir_version < 4:  # initializers had to be graph inputs before IR 4
            model.ir_version = 4

    test_dir = work_dir / case.name
    if test_dir.exists():
        shutil.rmtree(test_dir)
    test_dir.mkdir(parents=True)
    model_path = test_dir / "model.onnx"
    onnx.save(model, str(model_path))

    shapes = []
    for vi in graph_inputs:
        if vi.name in const_names:
            continue
        _, arr = value_of[vi.name]
        declared = static_dims(vi)
        # --shape spells rank >= 1 shapes with positive dims only; a static declared shape
        # needs none (passing it anyway is accepted when the rank matches).
        if arr.ndim >= 1 and all(d > 0 for d in arr.shape):
            shapes.append(f"{vi.name}={'x'.join(str(d) for d in arr.shape)}")
        elif declared is None:
            return None, {"skip": "input '%s' of shape %s cannot be given with --shape" % (vi.name, list(arr.shape))}

    if phase == "source":
        out_path = test_dir / "program.cu"
        cmd_tail = ["--compile-to=source", "-o", str(out_path)]
    elif phase == "fold":
        out_path = test_dir / "graph.mlir"
        cmd_tail = ["--compile-to=graph", "--print-constants", "-o", str(out_path)]
        write_io(case, test_dir, graph_inputs, const_names)
    else:
        out_path = test_dir / "model.so"
        cmd_tail = ["--compile-to=binary", "-o", str(out_path)]
        write_io(case, test_dir, graph_inputs, const_names)
    args = ["compile", str(model_path), *cmd_tail]
    for s in shapes:
        args += ["--shape", s]
    return args, {"constified": constified, "shapes": shapes, "dir": str(test_dir), "out": str(out_path)}


def write_io(case, test_dir, graph_inputs, const_names):
    arrays = {}
    desc = {"rtol": case.rtol, "atol": case.atol, "data_sets": []}
    for d, (ins, outs) in enumerate(case.data_sets):
        entry = {"inputs": [], "outputs": []}
        for k, vi in enumerate(graph_inputs):
            if vi.name in const_names:
                continue
            key = f"d{d}_i{k}"
            arrays[key] = ins[k][1]
            entry["inputs"].append([vi.name, ins[k][0], key])
        for k, vo in enumerate(case.model.graph.output):
            key = f"d{d}_o{k}"
            arrays[key] = outs[k][1]
            entry["outputs"].append([vo.name, outs[k][0], key])
        desc["data_sets"].append(entry)
    np.savez(test_dir / "io.npz", **arrays)
    (test_dir / "io.json").write_text(json.dumps(desc))


def first_error_line(text):
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln
    return lines[0] if lines else "(no output)"


def compile_one(sinter, args, timeout):
    start = time.monotonic()
    try:
        proc = subprocess.run([sinter, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return False, f"timeout after {timeout} s", time.monotonic() - start
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        msg = first_error_line(proc.stderr + "\n" + proc.stdout)
        if proc.returncode < 0:
            msg = f"killed by signal {-proc.returncode}: {msg}"
        return False, msg, seconds
    return True, None, seconds


def reason_key(message):
    """Groups compiler messages by what was refused: the op type stays, node/tensor names,
    paths and shapes are masked."""
    msg = re.sub(r"^.*?\berror:\s*", "", message)
    msg = re.sub(r"node '[^']*' \((\w+), domain '[^']*', opset \d+\):\s*", r"\1: ", msg)
    msg = re.sub(r"(graph (?:input|output)|input \d+ \(|output \d+ \() ?'[^']*'", r"\1 '<name>'", msg)
    msg = msg.replace("( '<name>'", "('<name>'")
    msg = re.sub(r"(?<![\w/])/[^\s:'\"]+", "<path>", msg)
    msg = re.sub(r"\b\d+(?:x\d+)+\b", "<shape>", msg)
    msg = re.sub(r"\(dimension \d+ is \d+\)", "(dimension N is 0)", msg)
    return msg[:160]


# ----------------------------------------------------------------------------------------
# Running the .so files (binary phase): a worker process, restarted after a crash


def bf16_bits_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def compare(actual, expected, dtype, rtol, atol):
    """None when `actual` matches, else a one-line reason."""
    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)}, expected {list(expected.shape)}"
    if dtype in EXACT_DTYPES:
        bad = actual != expected
    else:
        if dtype == "bfloat16":
            a, e = bf16_bits_to_f32(actual), bf16_bits_to_f32(expected)
        else:
            a, e = actual, expected
        a, e = a.astype(np.float64), e.astype(np.float64)
        if dtype in HALF_TOLERANCE:
            rtol, atol = max(rtol, HALF_TOLERANCE[dtype][0]), max(atol, HALF_TOLERANCE[dtype][1])
        bad = ~np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
        actual, expected = a, e
    n_bad = int(np.count_nonzero(bad))
    if n_bad == 0:
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    text = f"{n_bad}/{bad.size} mismatched, first at {list(idx)}: {actual[idx]!r} vs expected {expected[idx]!r}"
    if dtype not in EXACT_DTYPES:
        with np.errstate(invalid="ignore"):
            diff = np.abs(actual - expected)
        finite = diff[np.isfinite(diff)]
        if finite.size:
            text += f", max abs diff {finite.max():.3g} (rtol {rtol:g}, atol {atol:g})"
    return text


def check_folded(graph_path):
    """(status, detail) of a fold-phase test: its folded outputs against data set 0's."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from folded_outputs import folded_outputs

    try:
        got, why = folded_outputs(graph_path.read_text())
    except ValueError as e:
        return "FAIL", f"the folded outputs do not read back: {e}"
    if got is None:
        return "SKIP", f"does not fold on the host: {why}"
    desc = json.loads((graph_path.parent / "io.json").read_text())
    arrays = np.load(graph_path.parent / "io.npz")
    expected = desc["data_sets"][0]["outputs"]
    if len(got) != len(expected):
        return "FAIL", f"{len(got)} outputs, expected {len(expected)}"
    for (dtype, actual), (name, want_dtype, key) in zip(got, expected):
        if dtype != want_dtype:
            return "FAIL", f"output '{name}' is {dtype}, expected {want_dtype}"
        reason = compare(actual, arrays[key], dtype, desc["rtol"], desc["atol"])
        if reason:
            return "FAIL", f"output '{name}': {reason}"
    return "PASS", None


def worker_main(tasks_path, results_path):
    """Runs each task's .so on its data sets; appends JSON lines to results_path."""
    out = open(results_path, "a", buffering=1)

    def emit(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()
        os.fsync(out.fileno())

    try:
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        sys.path.insert(0, str(REPO / "examples" / "bench"))
        import sinter_ctypes
    except Exception as e:  # noqa: BLE001
        emit({"fatal": f"{type(e).__name__}: {e}"})
        return 3
    tasks = json.loads(Path(tasks_path).read_text())
    for n, task in enumerate(tasks):
        if n >= WORKER_TESTS_PER_PROCESS:
            return 0
        emit({"start": task["name"]})
        status, reason = "PASS", None
        sticky = False
        try:
            reason = run_task(task, torch, sinter_ctypes)
            status = "PASS" if reason is None else "FAIL"
        except sinter_ctypes.SinterError as e:
            status, reason = "FAIL", str(e).splitlines()[0] if str(e) else repr(e)
            sticky = e.status == 3  # a CUDA error may poison the context: start afresh
        except Exception as e:  # noqa: BLE001
            status, reason = "FAIL", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            sticky = "CUDA" in str(e)
        emit({"name": task["name"], "status": status, "reason": reason})
        if sticky:
            return 4
    return 0


def run_task(task, torch, sinter_ctypes):
    test_dir = Path(task["dir"])
    desc = json.loads((test_dir / "io.json").read_text())
    arrays = np.load(test_dir / "io.npz")
    model = sinter_ctypes.Model(task["so"])
    ctx = model.context("direct")
    try:
        for d, ds in enumerate(desc["data_sets"]):
            feeds = {}
            for name, dtype, key in ds["inputs"]:
                arr = np.array(arrays[key], order="C")  # a copy that keeps rank 0
                if dtype == "bfloat16":
                    t = torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
                else:
                    t = torch.from_numpy(arr)
                feeds[name] = t.cuda()
            missing = [i.name for i in model.inputs if i.name not in feeds]
            if missing:
                return f"the .so has inputs {missing} that the test does not give"
            outs = ctx.run(feeds)
            torch.cuda.synchronize()
            by_name = {info.name: t for info, t in zip(model.outputs, outs)}
            for name, dtype, key in ds["outputs"]:
                if name not in by_name:
                    return f"the .so has no output '{name}' (outputs: {sorted(by_name)})"
                t = by_name[name]
                got = str(t.dtype).replace("torch.", "")
                if got != dtype:
                    return f"output '{name}' is {got}, expected {dtype}"
                if dtype == "bfloat16":
                    actual = t.view(torch.int16).cpu().numpy().view(np.uint16)
                else:
                    actual = t.cpu().numpy()
                reason = compare(actual, arrays[key], dtype, desc["rtol"], desc["atol"])
                if reason:
                    prefix = f"data set {d}, " if len(desc["data_sets"]) > 1 else ""
                    return f"{prefix}output '{name}': {reason}"
        return None
    finally:
        ctx.close()
        model.close()


def run_binaries(tasks, timeout, scratch):
    """{name: (status, reason)} for every task, restarting the worker after crashes."""
    results = {}
    remaining = list(tasks)
    attempt = 0
    while remaining:
        attempt += 1
        tasks_path = scratch / f"tasks_{attempt}.json"
        results_path = scratch / f"results_{attempt}.jsonl"
        tasks_path.write_text(json.dumps(remaining))
        results_path.write_text("")
        stderr_path = scratch / f"worker_{attempt}.stderr"
        with open(stderr_path, "w") as err:
            proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker",
                                     str(tasks_path), str(results_path)], stdout=err, stderr=err)
            current, last_event, seen = None, time.monotonic(), 0
            timed_out = False
            while True:
                try:
                    rc = proc.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    rc = None
                lines = results_path.read_text().splitlines()
                if len(lines) > seen:
                    last_event, seen = time.monotonic(), len(lines)
                if rc is not None:
                    break
                if time.monotonic() - last_event > timeout:
                    proc.kill()
                    proc.wait()
                    timed_out = True
                    rc = proc.returncode
                    break
        current = None
        fatal = None
        for line in results_path.read_text().splitlines():
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "fatal" in ev:
                fatal = ev["fatal"]
            elif "start" in ev:
                current = ev["start"]
            else:
                results[ev["name"]] = (ev["status"], ev["reason"])
                current = None
        started = any('"start"' in line for line in results_path.read_text().splitlines())
        if fatal or not started:
            why = fatal or f"run process failed (exit {rc}): " + tail(stderr_path)
            for t in remaining:
                results.setdefault(t["name"], ("FAIL", why))
            break
        if current is not None:
            why = f"run timed out after {timeout} s" if timed_out else f"run process died (exit {rc}): {tail(stderr_path)}"
            results[current] = ("FAIL", why)
        remaining = [t for t in remaining if t["name"] not in results]
    return results


def tail(path):
    lines = [ln for ln in Path(path).read_text(errors="replace").splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "(no output)"


# ----------------------------------------------------------------------------------------
# Main


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        return worker_main(sys.argv[2], sys.argv[3])

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phase", choices=["source", "binary", "fold"], default="source")
    ap.add_argument("--sinter", default=str(REPO / "build" / "bin" / "sinter"))
    ap.add_argument("--work", default=str(REPO / "build" / "conformance"),
                    help="work folder: WORK/<test>/model.onnx, program.cu / model.so (default build/conformance)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per compile and per run (default 60)")
    ap.add_argument("--filter", default=None, help="only tests whose name matches this regex (re.search)")
    ap.add_argument("--from-testdata", metavar="DIR", default=None,
                    help="read DIR/node/<test>/ (libonnx-testdata layout) instead of the onnx package")
    ap.add_argument("--downgrade-to", type=int, metavar="OPSET", default=None,
                    help="convert each test written for a later opset down to OPSET with onnx's version "
                         "converter (tests it cannot convert are left out), named <test>_opsetOPSET: "
                         "the opset 7-12 import path on the suite's own cases")
    ap.add_argument("--json", default=None, help="write the summary and per-test results here")
    ap.add_argument("--skip-list", default=None, help="write the SKIP lines here (default WORK/skipped.txt)")
    ap.add_argument("--no-run", action="store_true", help="binary phase: compile the .so files only (no GPU needed)")
    ap.add_argument("--allow-failures", action="store_true", help="exit 0 even when selected tests fail")
    ap.add_argument("--min-pass", type=int, default=0, help="exit nonzero when fewer tests pass")
    ap.add_argument("--list", action="store_true", help="print the selection and exit")
    ap.add_argument("--quiet", action="store_true", help="no PASS or SKIP lines (the SKIP lines still go to the skip list)")
    args = ap.parse_args()

    sinter = str(Path(args.sinter).resolve())
    if not args.list and not os.access(sinter, os.X_OK):
        print(f"run_node_tests: no sinter binary at {sinter} (build it with scripts/build.sh, or --sinter PATH)",
              file=sys.stderr)
        return 2
    name_filter = (lambda n, r=re.compile(args.filter): r.search(n) is not None) if args.filter else (lambda n: True)
    run_on_gpu = args.phase == "binary" and not args.no_run
    if run_on_gpu and not args.list:
        try:
            import torch

            ok = torch.cuda.is_available()
        except ImportError:
            ok = False
        if not ok:
            print("run_node_tests: --phase binary runs the .so files on a GPU through torch; none here "
                  "(use --no-run to compile only)", file=sys.stderr)
            return 2

    t0 = time.monotonic()
    if args.from_testdata:
        cases = load_testdata_dir(args.from_testdata, name_filter)
        source = f"testdata {args.from_testdata}"
    else:
        cases = load_onnx_package(name_filter)
        source = f"onnx {onnx.__version__} collect_testcases"
    print(f"collected {len(cases)} node tests from {source} in {time.monotonic() - t0:.1f} s", flush=True)
    if args.downgrade_to is not None:
        cases = downgrade(cases, args.downgrade_to)
        print(f"{len(cases)} converted down to opset {args.downgrade_to}", flush=True)

    out_of_scope = collections.Counter()
    missing_ops = collections.Counter()
    skipped, selected = {}, []
    for case in cases:
        verdict, reason = classify(case)
        if verdict == "out":
            category = ("opset outside %d-%d" % (OPSET_MIN, OPSET_MAX) if reason.startswith("opset")
                        else "ops outside scope" if reason.startswith("ops ")
                        else "other domain" if reason.startswith("domain ") else reason)
            out_of_scope[category] += 1
            if reason.startswith("ops "):
                for op in reason[4:].split(","):
                    missing_ops[op] += 1
            continue
        selected.append(case)
        if verdict == "skip":
            skipped[case.name] = reason

    if args.list:
        for case in selected:
            print(("SKIP " if case.name in skipped else "") + case.name +
                  (f": {skipped[case.name]}" if case.name in skipped else ""))
        print(f"{len(selected)} selected, {len(skipped)} skipped; out of scope: " +
              ", ".join(f"{k}: {v}" for k, v in out_of_scope.most_common()))
        print("ops outside the scope (tests at opsets %d-%d using them): " % (OPSET_MIN, OPSET_MAX) +
              ", ".join(f"{k} {v}" for k, v in missing_ops.most_common()))
        return 0

    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    results = {}  # name -> dict(status, detail, ...)
    for name, reason in skipped.items():
        results[name] = {"status": "SKIP", "detail": reason}

    to_run = [c for c in selected if c.name not in skipped]
    jobs = []
    for case in to_run:
        try:
            cmd, info = prepare(case, work, args.phase)
        except Exception as e:  # noqa: BLE001
            results[case.name] = {"status": "SKIP", "detail": f"could not prepare: {type(e).__name__}: {e}"}
            skipped[case.name] = results[case.name]["detail"]
            continue
        if cmd is None:
            results[case.name] = {"status": "SKIP", "detail": info["skip"]}
            skipped[case.name] = info["skip"]
            continue
        jobs.append((case, cmd, info))

    ops_of = {c.name: sorted({n.op_type for n in c.model.graph.node}) for c in selected}
    opset_of = {c.name: default_opset(c.model) for c in selected}

    print(f"{len(selected)} selected (opset {OPSET_MIN}-{OPSET_MAX}, ops in scope), {len(skipped)} skipped, "
          f"compiling {len(jobs)} to {args.phase} with {args.jobs} jobs", flush=True)
    t1 = time.monotonic()
    done = 0
    n_ok = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(compile_one, sinter, cmd, args.timeout): (case, cmd, info) for case, cmd, info in jobs}
        for fut in concurrent.futures.as_completed(futures):
            case, cmd, info = futures[fut]
            ok, msg, seconds = fut.result()
            r = {"status": "COMPILED" if ok else "COMPILE-FAIL", "detail": msg, "compile_s": round(seconds, 3),
                 "constified": info["constified"], "shapes": info["shapes"], "out": info["out"],
                 "command": "sinter " + " ".join(cmd)}
            results[case.name] = r
            done += 1
            n_ok += ok
            if done % PROGRESS_EVERY == 0 or done == len(jobs):
                print(f"  compiled {done}/{len(jobs)}: {n_ok} reached {args.phase} ({time.monotonic() - t1:.0f} s)",
                      flush=True)

    if args.phase == "fold":
        for name, r in results.items():
            if r["status"] == "COMPILED":
                r["status"], r["detail"] = check_folded(Path(r["out"]))
                if r["status"] == "SKIP":
                    skipped[name] = r["detail"]
    elif args.phase == "source" or args.no_run:
        for name, r in results.items():
            if r["status"] == "COMPILED":
                r["status"] = "PASS"
    else:
        tasks = [{"name": name, "so": r["out"], "dir": str(Path(r["out"]).parent)}
                 for name, r in sorted(results.items()) if r["status"] == "COMPILED"]
        print(f"running {len(tasks)} .so files on the GPU", flush=True)
        t2 = time.monotonic()
        ran = run_binaries(tasks, args.timeout, Path(tempfile.mkdtemp(prefix="run_", dir=work)))
        for name, (status, reason) in ran.items():
            results[name]["status"], results[name]["detail"] = status, reason
        print(f"  ran {len(tasks)} in {time.monotonic() - t2:.0f} s", flush=True)

    # ---- report
    skip_lines = []
    for name in sorted(results):
        r = results[name]
        line = f"{r['status']} {name}" + (f": {r['detail']}" if r.get("detail") else "")
        if r["status"] == "SKIP":
            skip_lines.append(line)
        if r["status"] in ("PASS", "SKIP") and args.quiet:
            continue
        print(line)
    skip_path = Path(args.skip_list) if args.skip_list else work / "skipped.txt"
    skip_path.write_text("".join(ln + "\n" for ln in skip_lines))

    status_count = collections.Counter(r["status"] for r in results.values())
    n_run = len(selected) - len(skipped)
    compiled = sum(1 for r in results.values() if r["status"] in ("PASS", "FAIL", "COMPILED"))
    passed = status_count["PASS"]
    failed = n_run - passed
    skip_reasons = collections.Counter(re.sub(r"'[^']*'", "'<name>'", r) for r in skipped.values())
    compile_reasons = collections.Counter(reason_key(r["detail"]) for r in results.values()
                                          if r["status"] == "COMPILE-FAIL")
    run_reasons = collections.Counter(re.sub(r"\b\d[\d.e+-]*\b", "N", r["detail"])[:120]
                                      for r in results.values() if r["status"] == "FAIL")
    per_op = {}
    for name, r in results.items():
        if r["status"] == "SKIP":
            continue
        for op in ops_of[name]:
            e = per_op.setdefault(op, {"tests": 0, "passed": 0})
            e["tests"] += 1
            e["passed"] += r["status"] == "PASS"

    print()
    print(f"== ONNX node tests, phase {args.phase}" + (" (compile only)" if args.no_run else "") +
          f", {source}, sinter {sinter}")
    print(f"  node tests collected          {len(cases)}")
    print(f"  out of scope (not counted)    {sum(out_of_scope.values())}  " +
          ", ".join(f"{k}: {v}" for k, v in out_of_scope.most_common()))
    print(f"  selected                      {len(selected)}")
    print(f"  skipped                       {len(skipped)}")
    for reason, n in skip_reasons.most_common():
        print(f"      {n:5d}  {reason}")
    print(f"  run                           {n_run}")
    print(f"  compiled ({args.phase})" + " " * (21 - len(args.phase)) + f"{compiled}")
    if run_on_gpu:
        print(f"  matched                       {passed}")
    print(f"  failed                        {failed}")
    loosened = sorted(name for name in results if name in REFERENCE_ROUNDING)
    if loosened:
        print("  atol raised for the reference's own rounding: " +
              ", ".join(f"{name} ({REFERENCE_ROUNDING[name][0]:g}: {REFERENCE_ROUNDING[name][1]})"
                        for name in loosened))
    if compile_reasons:
        print("  compile refusals:")
        for reason, n in compile_reasons.most_common(40):
            print(f"      {n:5d}  {reason}")
        if len(compile_reasons) > 40:
            print(f"      ... {len(compile_reasons) - 40} more reasons (see --json)")
    if run_reasons:
        print("  run failures:")
        for reason, n in run_reasons.most_common(20):
            print(f"      {n:5d}  {reason}")
    print("  per op (tests containing it: passed/run):")
    row = []
    for op in sorted(per_op):
        row.append(f"{op} {per_op[op]['passed']}/{per_op[op]['tests']}")
    for i in range(0, len(row), 6):
        print("      " + "   ".join(row[i:i + 6]))

    summary = {
        "phase": args.phase, "no_run": args.no_run, "source": source, "sinter": sinter,
        "opsets": [OPSET_MIN, OPSET_MAX],
        "collected": len(cases), "out_of_scope": dict(out_of_scope), "ops_outside_scope": dict(missing_ops),
        "selected": len(selected), "skipped": len(skipped), "skip_reasons": dict(skip_reasons),
        "run": n_run, "compiled": compiled, "passed": passed, "failed": failed,
        "compile_refusals": dict(compile_reasons.most_common()), "run_failures": dict(run_reasons.most_common()),
        "per_op": per_op,
        "tolerance": {"default": [DEFAULT_RTOL, DEFAULT_ATOL], "half": HALF_TOLERANCE},
        "tests": {name: dict(results[name], ops=ops_of[name], opset=opset_of[name]) for name in sorted(results)},
    }
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(summary, indent=1))
    print(f"{passed} passed, {failed} failed")

    if passed < args.min_pass:
        print(f"run_node_tests: {passed} passed, fewer than --min-pass {args.min_pass}", file=sys.stderr)
        return 1
    if failed and not args.allow_failures:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
