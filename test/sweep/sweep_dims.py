"""The symbolic-dimension bindings of the sweeps: batch 1, sequences of 8, images of 32x32,
audio of 400 samples; any other symbolic dimension 4. A dimension the exporter wrote as an
expression (`past_sequence_length + sequence_length`) is left to the compiler, which evaluates
it from the others."""
import re

import onnx

CACHE_LENGTH = 16

DIMS = {"batch_size": 1, "sequence_length": 8, "encoder_sequence_length": 8,
        "decoder_sequence_length": 4, "num_channels": 3, "height": 32, "width": 32,
        "feature_size": 16, "text_batch_size": 1, "image_batch_size": 1}
OTHER = 4


def bindings(path):
    """{symbolic dimension: value} for every symbolic dimension of the model's inputs."""
    model = onnx.load(path, load_external_data=False)
    values = dict(DIMS)
    if "wav2vec2" in path or "hubert" in path or "wavlm" in path or "sew" in path \
            or "unispeech" in path or "data2vec-audio" in path:
        # audio samples: the feature encoder's first kernel is 10; SEW pools its frames by 2
        values["sequence_length"] = 1600 if "sew" in path else 400
    names = sorted({d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim
                    if re.fullmatch(r"[A-Za-z_][\w.]*", d.dim_param)})
    return {n: values.get(n, OTHER) for n in names}


def fixed_inputs(path):
    """{input: value} of the inputs the sweep fixes at compile time (--input-value): optimum's
    merged decoders take their with-past branch (the two branches give different shapes)."""
    model = onnx.load(path, load_external_data=False)
    return {i.name: True for i in model.graph.input if i.name == "use_cache_branch"}


def compile_args(path):
    """The sweep's compile options: a past/present export compiles with --cache-length (its
    prefill and decode entries), everything else with each symbolic dimension bound, and the
    fixed inputs as --input-value."""
    model = onnx.load(path, load_external_data=False)
    dims = bindings(path)
    past = any(i.name.startswith("past_key_values") for i in model.graph.input)
    present = any(o.name.startswith("present") for o in model.graph.output)
    args = []
    if past and present and "past_sequence_length" in dims:
        del dims["past_sequence_length"]
        args += ["--cache-length", str(CACHE_LENGTH)]
    for name, value in fixed_inputs(path).items():
        args += ["--input-value", f"{name}={str(value).lower()}"]
    return args + [a for n, v in dims.items() for a in ("--dim", f"{n}={v}")]


if __name__ == "__main__":
    import sys
    print(" ".join(compile_args(sys.argv[1])))
