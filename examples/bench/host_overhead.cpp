// host_overhead: host microseconds per sinter_run call, direct and graph mode.
//
//   host_overhead model.so [--calls N] [--batches N] [--json]
//
// Measures the CPU side only: each batch times (steady_clock) the issue of `calls` back-to-back
// sinter_run calls on fixed I/O buffers without synchronizing, then waits for the stream outside
// the timed region. Batches are kept short enough (calls x launches <= ~400) that the launch
// queue never fills, so a call never waits for the GPU. Reports the median and the minimum over
// the batches, per call and per launch. Built by examples/cpp/CMakeLists.txt.
#include "example_util.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace {

struct Stats {
  double median_us, min_us;
};

Stats measure(sinter::Model &model, int mode, std::vector<DLTensor> &in, std::vector<DLTensor> &out,
              int calls, int batches) {
  sinter::Context ctx(model, mode);
  cudaStream_t stream = nullptr;
  example::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (int i = 0; i < 50; ++i) ctx.run(in, out, stream); // graph built, pointers checked
  example::cuda_check(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> per_call;
  const sinter::Api &api = model.api();
  sinter_context *c = ctx.get();
  const uint32_t ni = uint32_t(in.size()), no = uint32_t(out.size());
  for (int b = 0; b < batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      if (api.run(c, in.data(), ni, out.data(), no, stream) != SINTER_OK)
        throw sinter::Error(SINTER_CUDA_ERROR, api.last_error());
    const auto t1 = std::chrono::steady_clock::now();
    example::cuda_check(cudaStreamSynchronize(stream), "batch");
    per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  cudaStreamDestroy(stream);
  std::sort(per_call.begin(), per_call.end());
  return {per_call[per_call.size() / 2], per_call.front()};
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " model.so [--calls N] [--batches N] [--json]\n";
    return 2;
  }
  int calls = 0, batches = 200;
  bool json = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (a == "--batches" && i + 1 < argc) batches = std::atoi(argv[++i]);
    else if (a == "--json") json = true;
    else { std::cerr << "unknown option " << a << "\n"; return 2; }
  }
  try {
    sinter::Library lib(argv[1]);
    sinter::Model model = sinter::Model::load(lib.api());
    const int device = example::current_device();
    std::vector<std::unique_ptr<example::DeviceTensor>> buffers;
    std::vector<DLTensor> in, out;
    for (uint32_t i = 0; i < model.num_inputs(); ++i) {
      buffers.push_back(std::make_unique<example::DeviceTensor>(model.input(i), device));
      buffers.back()->upload(example::pattern(model.input(i), i));
      in.push_back(buffers.back()->dl());
    }
    for (uint32_t i = 0; i < model.num_outputs(); ++i) {
      buffers.push_back(std::make_unique<example::DeviceTensor>(model.output(i), device));
      out.push_back(buffers.back()->dl());
    }
    const uint32_t launches = model.num_launches();
    if (calls <= 0) calls = std::max(1, std::min(50, int(400 / std::max(1u, launches))));
    const Stats direct = measure(model, SINTER_MODE_DIRECT, in, out, calls, batches);
    const Stats graph = measure(model, SINTER_MODE_GRAPH, in, out, calls, batches);
    if (json) {
      std::printf("{\"model\": \"%s\", \"launches\": %u, \"calls_per_batch\": %d, \"batches\": %d, "
                  "\"direct_us_per_call\": %.3f, \"direct_us_per_call_min\": %.3f, "
                  "\"direct_us_per_launch\": %.3f, \"graph_us_per_call\": %.3f, "
                  "\"graph_us_per_call_min\": %.3f}\n",
                  argv[1], launches, calls, batches, direct.median_us, direct.min_us,
                  direct.median_us / launches, graph.median_us, graph.min_us);
    } else {
      std::printf("model %s: %u launches; host time per sinter_run call (median of %d batches of "
                  "%d calls, min in parentheses)\n",
                  argv[1], launches, batches, calls);
      std::printf("  direct: %8.3f us per call (%.3f)  = %.3f us per launch\n", direct.median_us,
                  direct.min_us, direct.median_us / launches);
      std::printf("  graph:  %8.3f us per call (%.3f)\n", graph.median_us, graph.min_us);
    }
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
