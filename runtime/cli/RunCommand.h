// `sinter run`: load a compiled model .so, run it on random inputs and time it.
#pragma once

#include <iosfwd>
#include <string>

// Returns the process exit code (0 on success, 1 on any error, reported on `err`). Prints the
// model's I/O, the median milliseconds per call over 5 repeats of `iterations` back-to-back calls
// (after `warmup` calls) and the launch count on `out`. `mode` is "direct" or "graph".
// `profile` (per-launch GPU times) is not implemented yet: it prints a note and times calls.
int sinterRunCommand(const std::string &soPath, int iterations, int warmup,
                     const std::string &mode, bool profile, std::ostream &out,
                     std::ostream &err);
