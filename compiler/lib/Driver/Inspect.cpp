#include "sinter/Compiler/Inspect.h"

#include "sinter/Compiler/Emitter.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <elf.h>
#include <cstring>
#include <optional>

namespace sinter {

bool readInspectJson(const std::string &soPath, std::string &json, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(soPath, false, false);
  if (!buffer) {
    error = "cannot read '" + soPath + "': " + buffer.getError().message();
    return false;
  }
  llvm::StringRef data = (*buffer)->getBuffer();
  auto bad = [&](const char *why) {
    error = "'" + soPath + "' is not a Sinter model: " + why;
    return false;
  };
  Elf64_Ehdr eh;
  if (data.size() < sizeof eh || memcmp(data.data(), ELFMAG, SELFMAG) != 0)
    return bad("not an ELF file");
  memcpy(&eh, data.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
    return bad("not a 64-bit ELF file");
  uint64_t tableEnd = eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr);
  if (eh.e_shoff > data.size() || tableEnd > data.size() || eh.e_shstrndx >= eh.e_shnum)
    return bad("truncated section table");
  auto section = [&](unsigned i) {
    Elf64_Shdr sh;
    memcpy(&sh, data.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  Elf64_Shdr names = section(eh.e_shstrndx);
  if (names.sh_offset > data.size() || names.sh_size > data.size() - names.sh_offset)
    return bad("truncated section names");
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = section(i);
    if (sh.sh_name >= names.sh_size)
      continue;
    const char *name = data.data() + names.sh_offset + sh.sh_name;
    size_t maxLen = names.sh_size - sh.sh_name;
    if (strnlen(name, maxLen) == maxLen || strcmp(name, kMetaSectionName) != 0)
      continue;
    if (sh.sh_offset > data.size() || sh.sh_size > data.size() - sh.sh_offset)
      return bad("truncated metadata section");
    json.assign(data.data() + sh.sh_offset, strnlen(data.data() + sh.sh_offset, sh.sh_size));
    return true;
  }
  return bad("no .sinter_meta section");
}

static std::string str(const llvm::json::Value *v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (v)
    os << *v;
  return s;
}

bool describesExternalWeights(const std::string &text) {
  auto parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return false;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  return root && root->getString("weights") == llvm::StringRef("external");
}

/// The names in a JSON array of strings, quoted and separated by commas.
static std::string nameList(const llvm::json::Array &names) {
  std::string text;
  for (const auto &name : names)
    text += (text.empty() ? "" : ", ") + str(&name);
  return text;
}

/// One weight tensor; an fp8 weight names its scales (one fp32 per output row) and they it; an
/// int4 weight (two 4-bit values a byte) its scales per output row and group of k, with the
/// group size.
static void formatWeight(const llvm::json::Object &weight, llvm::raw_ostream &os) {
  os << "weight " << str(weight.get("name")) << " " << str(weight.get("dtype")) << " "
     << str(weight.get("shape")) << " from " << str(weight.get("sources"));
  const std::optional<int64_t> group = weight.getInteger("group_size");
  if (const auto *scales = weight.getArray("row_scales"))
    os << " scale " << nameList(*scales) << " per output row";
  if (const auto *scales = weight.getArray("group_scales")) {
    os << " int4 two per byte, symmetric (q - 8), scale " << nameList(*scales)
       << " per output row and group of " << (group ? *group : 0) << " k";
  }
  if (const auto *scaled = weight.getArray("scale_of")) {
    if (group)
      os << " group scales (" << *group << " k) of " << nameList(*scaled);
    else
      os << " row scales of " << nameList(*scaled);
  }
  os << "\n";
}

/// Inputs, outputs and launches of one entry point.
static void formatEntry(const llvm::json::Object &entry, llvm::raw_ostream &os) {
  for (const char *kind : {"inputs", "outputs"})
    if (const auto *list = entry.getArray(kind))
      for (const auto &t : *list)
        if (const auto *o = t.getAsObject())
          os << (kind[0] == 'i' ? "input  " : "output ") << str(o->get("name")) << " "
             << str(o->get("dtype")) << " " << str(o->get("shape")) << "\n";
  const auto *launches = entry.getArray("launches");
  if (!launches)
    return;
  os << "launches: " << launches->size() << "\n";
  int i = 0;
  for (const auto &l : *launches) {
    const auto *o = l.getAsObject();
    if (!o)
      continue;
    if (o->getString("kind") == llvm::StringRef("kernel")) {
      // Generated kernels (the generic tier) name their function; pattern kernels their
      // template instance.
      os << "  #" << i++ << " kernel " << o->getString("kernel").value_or("?");
      if (auto function = o->getString("function"))
        os << " " << *function;
      os << " grid " << str(o->get("grid")) << " block " << str(o->get("block")) << " smem "
         << str(o->get("shared_bytes")) << "\n"
         << "     args " << str(o->get("args")) << "\n"
         << "     from " << str(o->get("sources")) << "\n";
      continue;
    }
    os << "  #" << i++ << " " << str(o->get("kind")) << " (" << str(o->get("library"))
       << ") m=" << str(o->get("m")) << " n=" << str(o->get("n")) << " k=" << str(o->get("k"))
       << " " << str(o->get("dtype")) << " precision=" << str(o->get("precision"))
       << " epilogue=" << str(o->get("epilogue"));
    if (auto batch = o->getInteger("batch"); batch && *batch > 1)
      os << " batch=" << *batch;
    os << "\n"
       << "     out=" << str(o->get("output")) << "\n"
       << "     from " << str(o->get("sources")) << "\n";
  }
}

bool formatInspectReport(const std::string &text, std::string &report, std::string &error) {
  auto parsed = llvm::json::parse(text);
  if (!parsed) {
    error = "corrupt model description: " + llvm::toString(parsed.takeError());
    return false;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root) {
    error = "corrupt model description";
    return false;
  }
  llvm::raw_string_ostream os(report);
  os << "model: " << str(root->get("model")) << "  target: " << str(root->get("target")) << " ("
     << str(root->get("arch")) << ")  ABI: " << str(root->get("abi_version")) << "\n";
  // A description without "entries" (older libraries) is one entry at the top level.
  const llvm::json::Array *entries = root->getArray("entries");
  llvm::json::Array single;
  if (!entries || entries->empty()) {
    single.push_back(llvm::json::Object{{"name", "main"},
                                        {"inputs", root->get("inputs") ? *root->get("inputs") : nullptr},
                                        {"outputs", root->get("outputs") ? *root->get("outputs") : nullptr},
                                        {"launches", root->get("launches") ? *root->get("launches") : nullptr}});
    entries = &single;
  }
  os << "weights: " << str(root->get("weights")) << "  arena bytes: " << str(root->get("arena_bytes"))
     << "  weight bytes: " << str(root->get("weight_bytes"));
  if (root->get("state_bytes"))
    os << "  state bytes: " << str(root->get("state_bytes"));
  if (root->get("activations")) // absent in libraries built before --activations
    os << "  activations: " << str(root->get("activations"));
  if (auto conversion = root->getString("dtype_conversion"); conversion && *conversion != "none")
    os << "  dtype: " << *conversion << " (--dtype)";
  if (auto weightDtype = root->getString("weight_dtype"); weightDtype && *weightDtype != "model")
    os << "  weight dtype: " << *weightDtype << " (--weight-dtype)";
  os << "\n";
  if (const auto *states = root->getArray("states"))
    for (const auto &st : *states)
      if (const auto *o = st.getAsObject())
        os << "state  " << str(o->get("name")) << " " << str(o->get("dtype")) << " "
           << str(o->get("shape")) << " at " << str(o->get("offset")) << "\n";
  // Absent in libraries built before weight sources were recorded.
  if (const auto *weights = root->getArray("weight_tensors"))
    for (const auto &w : *weights)
      if (const auto *o = w.getAsObject())
        formatWeight(*o, os);
  for (const auto &e : *entries) {
    const auto *entry = e.getAsObject();
    if (!entry)
      continue;
    if (entries != &single)
      os << "entry " << str(entry->get("name")) << ":\n";
    formatEntry(*entry, os);
  }
  return true;
}

} // namespace sinter
