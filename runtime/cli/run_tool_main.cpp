// sinter-run: `sinter run` without the compiler (the runtime-only build and GPU machines that
// carry only runtime pieces). Same output as `sinter run`; the options mirror its flags.
//
//   sinter-run model.so [--iterations N] [--warmup N] [--mode direct|graph] [--profile]
//              [--weights file.safetensors] [--allow-new-values] [--pdl on|off]
//              [--entry NAME]
#include "RunCommand.h"

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char **argv) {
  SinterRunOptions o;
  std::string so;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::cerr << "error: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--iterations") o.iterations = std::atoi(value());
    else if (a == "--warmup") o.warmup = std::atoi(value());
    else if (a == "--mode") o.mode = value();
    else if (a == "--profile") o.profile = true;
    else if (a == "--weights") o.weights = value();
    else if (a == "--allow-new-values") o.allow_new_values = true;
    else if (a == "--pdl") o.pdl = value();
    else if (a == "--entry") o.entry = value();
    else if (!a.empty() && a[0] != '-' && so.empty()) so = a;
    else {
      std::cerr << "usage: " << argv[0]
                << " model.so [--iterations N] [--warmup N] [--mode direct|graph] [--profile]"
                   " [--weights F] [--allow-new-values] [--pdl on|off] [--entry NAME]\n";
      return 2;
    }
  }
  if (so.empty()) {
    std::cerr << "error: no model .so given\n";
    return 2;
  }
  return sinterRunCommand(so, o, std::cout, std::cerr);
}
