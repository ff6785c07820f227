// sinter_example: open a compiled model with dlopen, print its inputs, outputs and launches, run
// it on deterministic inputs and print a checksum of every output.
//
//   sinter_example model.so [--weights model.safetensors [--allow-new-values]]
//                  [--mode direct|graph] [--runs N]
//
// Everything goes through the C++ RAII header (sinter/sinter.hpp): sinter::Library resolves the
// C ABI from the .so, sinter::Model and sinter::Context own the handles, failures throw
// sinter::Error with the status and the library's message.
#include "example_util.h"

#include <cstdlib>
#include <iostream>
#include <memory>

namespace {

[[noreturn]] void usage(const char *argv0) {
  std::cerr << "usage: " << argv0
            << " model.so [--weights file.safetensors [--allow-new-values]] [--mode direct|graph]"
               " [--runs N]\n";
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) usage(argv[0]);
  std::string so = argv[1], weights, mode = "direct";
  bool allow_new_values = false;
  int runs = 3;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--weights" && i + 1 < argc) weights = argv[++i];
    else if (a == "--allow-new-values") allow_new_values = true;
    else if (a == "--mode" && i + 1 < argc) mode = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
    else usage(argv[0]);
  }
  if ((mode != "direct" && mode != "graph") || runs < 1) usage(argv[0]);

  try {
    sinter::Library lib(so);
    std::cout << "library: " << so << "\n  " << lib.build_info() << "\n  weights: "
              << (lib.weights_external() ? "external" : "embedded") << "\n";
    sinter::Model model = weights.empty() ? sinter::Model::load(lib.api())
                                          : sinter::Model::load(lib.api(), weights, allow_new_values);
    const int device = example::current_device();
    std::vector<std::unique_ptr<example::DeviceTensor>> in, out;
    std::vector<DLTensor> in_dl, out_dl;
    for (uint32_t i = 0; i < model.num_inputs(); ++i) {
      const sinter_tensor_desc d = model.input(i);
      std::cout << "  input  " << example::describe(d) << "\n";
      in.push_back(std::make_unique<example::DeviceTensor>(d, device));
      in.back()->upload(example::pattern(d, i));
      in_dl.push_back(in.back()->dl());
    }
    for (uint32_t i = 0; i < model.num_outputs(); ++i) {
      const sinter_tensor_desc d = model.output(i);
      std::cout << "  output " << example::describe(d) << "\n";
      out.push_back(std::make_unique<example::DeviceTensor>(d, device));
      out_dl.push_back(out.back()->dl());
    }
    std::cout << "  launches: " << model.num_launches() << "\n";
    if (lib.api().model_launch_info)
      for (uint32_t i = 0; i < model.num_launches(); ++i) {
        const sinter_launch_info l = model.launch(i);
        std::cout << "    " << i << ": " << l.kind << " " << l.label << " <- " << l.sources << "\n";
      }

    sinter::Context ctx(model, mode == "graph" ? SINTER_MODE_GRAPH : SINTER_MODE_DIRECT);
    cudaStream_t stream = nullptr;
    example::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    for (int r = 0; r < runs; ++r) ctx.run(in_dl, out_dl, stream);
    example::cuda_check(cudaStreamSynchronize(stream), "running the model");
    cudaStreamDestroy(stream);

    std::cout << "mode " << mode << ", " << runs << " runs; outputs:\n";
    for (const auto &t : out) {
      const std::vector<unsigned char> host = t->download();
      char line[160];
      std::snprintf(line, sizeof line, "  %s: fnv1a64 %016llx", t->desc().name,
                    static_cast<unsigned long long>(example::fnv1a64(host.data(), host.size())));
      std::cout << line;
      if (t->desc().dtype.code == kDLFloat && t->desc().dtype.bits == 32) {
        const float *f = reinterpret_cast<const float *>(host.data());
        const size_t n = host.size() / 4;
        double sum = 0;
        for (size_t i = 0; i < n; ++i) sum += f[i];
        std::snprintf(line, sizeof line, "  sum %.6f  first [%.6f, %.6f, %.6f]", sum,
                      n > 0 ? f[0] : 0.f, n > 1 ? f[1] : 0.f, n > 2 ? f[2] : 0.f);
        std::cout << line;
      }
      std::cout << "\n";
    }
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
