#!/bin/sh
# Fails if a model .so exports (defines in its dynamic symbol table) anything but sinter_*, or
# misses a function of the current ABI (1.2).
set -e
so="$1"
nm -D --defined-only "$so" > /dev/null
bad=$(nm -D --defined-only "$so" | awk '{print $NF}' | grep -v '^sinter_' || true)
if [ -n "$bad" ]; then
  echo "unexpected exports in $so:"; echo "$bad"; exit 1
fi
if nm -D --defined-only "$so" | grep -q 'sinter_generated_program'; then
  echo "sinter_generated_program must stay local"; exit 1
fi
exports=$(nm -D --defined-only "$so" | awk '{print $NF}')
for fn in sinter_abi_version sinter_last_error sinter_status_string sinter_build_info \
          sinter_model_load sinter_model_destroy sinter_model_num_inputs \
          sinter_model_num_outputs sinter_model_arena_bytes sinter_model_num_launches \
          sinter_model_input_info sinter_model_output_info sinter_context_create \
          sinter_context_destroy sinter_run \
          sinter_model_load_from_file sinter_model_load_v2 sinter_weights_external \
          sinter_model_num_weights sinter_model_launch_info sinter_context_profile \
          sinter_model_num_entries sinter_model_entry_name sinter_model_find_entry \
          sinter_model_entry_num_inputs sinter_model_entry_num_outputs \
          sinter_model_entry_input_info sinter_model_entry_output_info \
          sinter_model_entry_num_launches sinter_model_state_bytes sinter_run_entry \
          sinter_context_reset_state sinter_context_profile_entry sinter_model_entry_launch_info \
          sinter_model_num_states sinter_model_state_info; do
  if ! echo "$exports" | grep -qx "$fn"; then
    echo "$so does not export $fn"; exit 1
  fi
done
echo "$exports"
