// The window geometry Conv and the pooling ops share: ONNX's kernel_shape, strides, dilations,
// pads / auto_pad and ceil_mode read against an input [N, C, D...], and the compile-time table
// of the input entries each output position reads (what the imports gather).
#ifndef SINTER_COMPILER_IMPORT_SLIDINGWINDOW_H
#define SINTER_COMPILER_IMPORT_SLIDINGWINDOW_H

#include "NodeImporter.h"

namespace sinter::import {

/// The index table may hold at most this many entries (an int64 each, stored as a weight:
/// 128 MiB).
constexpr int64_t kMaxWindowEntries = int64_t(1) << 24;

struct SlidingWindow {
  llvm::SmallVector<int64_t> inputSize, kernel, strides, dilations, padBefore, padAfter,
      outputSize;

  int64_t kernelVolume() const;
  int64_t outputVolume() const;
  int64_t inputVolume() const;
};

/// Reads the window attributes against `input` [N, C, D...] for a kernel of `kernel` (Conv: the
/// weight's spatial dimensions; pooling: kernel_shape); fails naming the attribute. With
/// `ceilMode` the output size rounds up as PyTorch's and onnxruntime's pooling do (the last
/// window may reach past the padded input, but starts inside the input or its leading pad),
/// and fails past kMaxWindowEntries table entries.
/// The int list attribute `name` of `size` entries, `fill` each when absent; fails naming it
/// when its length is not `size` (`rank` spatial dimensions).
mlir::FailureOr<llvm::SmallVector<int64_t>> spatialAttribute(NodeImporter &n, llvm::StringRef name,
                                                             int64_t fill, size_t size,
                                                             size_t rank);

mlir::FailureOr<SlidingWindow> readSlidingWindow(NodeImporter &n, llvm::ArrayRef<int64_t> input,
                                                 llvm::ArrayRef<int64_t> kernel, bool ceilMode);

struct WindowTable {
  /// int64 [kernels, outputs] (or [outputs, kernels] when output-major): the flat input
  /// position each (window offset, output position) reads, inputVolume() where it reads
  /// outside the input.
  mlir::DenseElementsAttr indices;
  bool readsOutside = false;
  /// Per output position: the window entries inside the input, and those inside the padded
  /// input (explicit or auto pads, not the ceil_mode overhang).
  std::vector<int64_t> insideInput, insidePadded;
};

WindowTable windowTable(mlir::MLIRContext *context, const SlidingWindow &window, bool outputMajor);

} // namespace sinter::import

#endif
