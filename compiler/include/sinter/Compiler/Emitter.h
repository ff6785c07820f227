#ifndef SINTER_COMPILER_EMITTER_H
#define SINTER_COMPILER_EMITTER_H

#include "sinter/Compiler/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace sinter {

/// The emit phase's products: CUDA source, the weight blob it embeds, and the description
/// `sinter inspect` prints (also embedded, in the ELF section `.sinter_meta`).
struct EmittedProgram {
  std::string source;
  std::string weights;
  std::string inspectJson;
  /// One entry per weight tensor, in blob order (what --weights=external writes).
  struct Tensor {
    std::string name;
    int32_t dtype; // sinter_dtype
    std::vector<int64_t> shape;
    uint64_t offset, bytes;
    /// The ONNX initializers and nodes the tensor was computed from (its locations), in
    /// first-seen order over every entry point that uses it.
    std::vector<std::string> sources;
  };
  std::vector<Tensor> tensors;
  bool externalWeights = false;
};

/// Name of the weight blob file the source embeds with `.incbin`, relative to the folder
/// nvcc runs in; fixed so the same model always gives the same source.
constexpr const char *kWeightsFileName = "sinter_weights.bin";
constexpr const char *kMetaSectionName = ".sinter_meta";

/// Writes the launch module as C++/CUDA source against runtime/include/sinter/program.h.
/// With `externalWeights` the blob is not embedded: the library loads it from a
/// safetensors file written beside it (see weightsPathFor).
mlir::LogicalResult emitProgram(mlir::ModuleOp module, const Target &target,
                                const std::string &modelName, bool externalWeights,
                                EmittedProgram &out);

/// `model.so` -> `model.safetensors`: where --weights=external puts the weights.
std::string weightsPathFor(const std::string &soPath);

/// Where the toolchain and the runtime pieces live.
struct Toolchain {
  std::string nvcc;
  std::string includeDir; // holds sinter/program.h
  std::string kernelsDir; // holds the kernel templates (*.cuh, launch_params.h)
  std::string libDir;     // holds libsinter_runtime.a
  std::string cudaLibDir; // holds libcublasLt.so (also the .so's rpath)
  std::string exportMap;  // linker version script keeping exports to the sinter_ ABI
};

/// Compiles the emitted program with nvcc into one shared object at `outPath`.
bool buildSharedObject(const EmittedProgram &program, const Toolchain &toolchain,
                       const Target &target, const std::string &outPath, std::string &error);

} // namespace sinter

#endif
