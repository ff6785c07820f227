// Entry tables (entries.h) and the ABI 1.2 model queries about entries and state.
#include "entries.h"

#include "error.h"
#include "model.h"

#include <cstdio>
#include <cstring>

namespace sinter::rt {

uint32_t entry_count(const sinter_program &p) { return p.num_entries > 0 ? p.num_entries : 1; }

sinter_entry legacy_entry(const sinter_program &p) {
  sinter_entry e{};
  e.name = kLegacyEntryName;
  e.num_inputs = p.num_inputs;
  e.num_outputs = p.num_outputs;
  e.inputs = p.inputs;
  e.outputs = p.outputs;
  e.num_launches = p.num_launches;
  e.launches = p.launches;
  return e;
}

sinter_entry entry_at(const sinter_program &p, uint32_t index) {
  return p.num_entries > 0 ? p.entries[index] : legacy_entry(p);
}

std::string launch_name(const sinter_program &program, uint32_t entry, uint32_t index,
                        const char *fallback) {
  const sinter_entry e = entry_at(program, entry);
  const char *label = index < e.num_launches && e.launches[index].label
                          ? e.launches[index].label
                          : fallback;
  std::string name;
  if (entry_count(program) > 1)
    name = std::string("entry '") + (e.name ? e.name : "?") + "' ";
  return name + "launch " + std::to_string(index) + " (" + label + ")";
}

const char *entry_names(const sinter_program &p, char *buf, size_t size) {
  if (size == 0)
    return buf;
  buf[0] = '\0';
  size_t used = 0;
  for (uint32_t i = 0; i < entry_count(p); ++i) {
    const char *name = entry_at(p, i).name;
    const int n = std::snprintf(buf + used, size - used, "%s'%s'", i ? ", " : "", name ? name : "");
    if (n < 0 || size_t(n) >= size - used) {
      // Did not fit: end with "..." (the buffer is at least that long in practice).
      if (size >= 4)
        std::strcpy(buf + size - 4, "...");
      break;
    }
    used += size_t(n);
  }
  return buf;
}

} // namespace sinter::rt

namespace {

using sinter::rt::entry_at;
using sinter::rt::entry_count;
using sinter::rt::fail;

// Entry `entry` of a non-null model, or false with the last error set ("<fn>: ...").
bool find(const sinter_model *model, uint32_t entry, const char *fn, sinter_entry *out) {
  if (!model) {
    fail(SINTER_INVALID_ARGUMENT, "%s: model is null", fn);
    return false;
  }
  const sinter_program &p = *model->program;
  if (entry >= entry_count(p)) {
    char names[sinter::rt::kEntryNamesBytes];
    fail(SINTER_INVALID_ARGUMENT, "%s: entry %u out of range: the model has %u entries (%s)", fn,
         entry, entry_count(p), sinter::rt::entry_names(p, names, sizeof names));
    return false;
  }
  *out = entry_at(p, entry);
  return true;
}

sinter_status entry_tensor(const sinter_model *model, uint32_t entry, uint32_t index,
                           sinter_tensor_desc *out, bool input, const char *fn) {
  sinter_entry e;
  if (!find(model, entry, fn, &e))
    return SINTER_INVALID_ARGUMENT;
  if (!out)
    return fail(SINTER_INVALID_ARGUMENT, "%s: out is null", fn);
  const char *role = input ? "input" : "output";
  const uint32_t count = input ? e.num_inputs : e.num_outputs;
  if (index >= count)
    return fail(SINTER_INVALID_ARGUMENT, "%s index %u out of range: entry '%s' has %u %ss", role,
                index, e.name, count, role);
  const sinter_tensor_info &t = input ? e.inputs[index] : e.outputs[index];
  sinter::rt::fill_tensor_desc(t, out);
  return SINTER_OK;
}

} // namespace

extern "C" {

SINTER_API uint32_t sinter_model_num_entries(const sinter_model *model) {
  if (!model) {
    fail(SINTER_INVALID_ARGUMENT, "sinter_model_num_entries: model is null");
    return 0;
  }
  return entry_count(*model->program);
}

SINTER_API const char *sinter_model_entry_name(const sinter_model *model, uint32_t entry) {
  sinter_entry e;
  return find(model, entry, "sinter_model_entry_name", &e) ? e.name : nullptr;
}

SINTER_API sinter_status sinter_model_find_entry(const sinter_model *model, const char *name,
                                                 uint32_t *out) {
  if (!model)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_find_entry: model is null");
  if (!name)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_find_entry: name is null");
  if (!out)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_find_entry: out is null");
  const sinter_program &p = *model->program;
  for (uint32_t i = 0; i < entry_count(p); ++i)
    if (std::strcmp(entry_at(p, i).name, name) == 0) {
      *out = i;
      return SINTER_OK;
    }
  char names[sinter::rt::kEntryNamesBytes];
  return fail(SINTER_INVALID_ARGUMENT,
              "sinter_model_find_entry: no entry '%s': the model's entries are %s", name,
              sinter::rt::entry_names(p, names, sizeof names));
}

SINTER_API uint32_t sinter_model_entry_num_inputs(const sinter_model *model, uint32_t entry) {
  sinter_entry e;
  return find(model, entry, "sinter_model_entry_num_inputs", &e) ? e.num_inputs : 0;
}

SINTER_API uint32_t sinter_model_entry_num_outputs(const sinter_model *model, uint32_t entry) {
  sinter_entry e;
  return find(model, entry, "sinter_model_entry_num_outputs", &e) ? e.num_outputs : 0;
}

SINTER_API uint32_t sinter_model_entry_num_launches(const sinter_model *model, uint32_t entry) {
  sinter_entry e;
  return find(model, entry, "sinter_model_entry_num_launches", &e) ? e.num_launches : 0;
}

SINTER_API sinter_status sinter_model_entry_launch_info(const sinter_model *model, uint32_t entry,
                                                        uint32_t index, sinter_launch_info *out) {
  sinter_entry e;
  if (!find(model, entry, "sinter_model_entry_launch_info", &e))
    return SINTER_INVALID_ARGUMENT;
  if (!out)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_entry_launch_info: out is null");
  if (index >= e.num_launches)
    return fail(SINTER_INVALID_ARGUMENT,
                "launch index %u out of range: entry '%s' has %u launches", index, e.name,
                e.num_launches);
  sinter::rt::fill_launch_info(e.launches[index], out);
  return SINTER_OK;
}

SINTER_API sinter_status sinter_model_entry_input_info(const sinter_model *model, uint32_t entry,
                                                       uint32_t index, sinter_tensor_desc *out) {
  return entry_tensor(model, entry, index, out, true, "sinter_model_entry_input_info");
}

SINTER_API sinter_status sinter_model_entry_output_info(const sinter_model *model, uint32_t entry,
                                                        uint32_t index, sinter_tensor_desc *out) {
  return entry_tensor(model, entry, index, out, false, "sinter_model_entry_output_info");
}

SINTER_API uint64_t sinter_model_state_bytes(const sinter_model *model) {
  if (!model) {
    fail(SINTER_INVALID_ARGUMENT, "sinter_model_state_bytes: model is null");
    return 0;
  }
  return model->program->state_bytes;
}

SINTER_API uint32_t sinter_model_num_states(const sinter_model *model) {
  if (!model) {
    fail(SINTER_INVALID_ARGUMENT, "sinter_model_num_states: model is null");
    return 0;
  }
  return model->program->num_states;
}

SINTER_API sinter_status sinter_model_state_info(const sinter_model *model, uint32_t index,
                                                 sinter_tensor_desc *out) {
  if (!model)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_state_info: model is null");
  if (!out)
    return fail(SINTER_INVALID_ARGUMENT, "sinter_model_state_info: out is null");
  const sinter_program &p = *model->program;
  if (index >= p.num_states)
    return fail(SINTER_INVALID_ARGUMENT, "state index %u out of range: the model has %u",
                index, p.num_states);
  const sinter_state_info &st = p.states[index];
  sinter_tensor_info t{};
  t.name = st.name;
  t.dtype = st.dtype;
  t.rank = st.rank;
  for (int32_t d = 0; d < st.rank && d < SINTER_MAX_RANK; ++d)
    t.shape[d] = st.shape[d];
  sinter::rt::fill_tensor_desc(t, out);
  return SINTER_OK;
}

} // extern "C"
