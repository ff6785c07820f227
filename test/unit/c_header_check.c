/* Compiled as C99: sinter.h must stay valid C. Called from abi_test.cpp. */
#include "sinter/program.h"
#include "sinter/sinter.h"

int sinter_test_c_header_check(void) {
  sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
  sinter_model_load_options load = SINTER_MODEL_LOAD_OPTIONS_INIT;
  sinter_launch_info launch;
  sinter_tensor_desc desc;
  sinter_status status = SINTER_OK;
  /* ABI 1.2 declarations and the program tables they read (program.h must stay valid C). */
  sinter_status (*run_entry)(sinter_context *, uint32_t, const DLTensor *, uint32_t,
                             const DLTensor *, uint32_t, void *) = sinter_run_entry;
  sinter_status (*reset_state)(sinter_context *, void *) = sinter_context_reset_state;
  /* ABI 1.3: state region queries. */
  sinter_status (*state_info)(const sinter_model *, uint32_t, sinter_tensor_desc *) =
      sinter_model_state_info;
  /* ABI 1.4: sampling in the program. */
  sinter_sampling_params sampling = SINTER_SAMPLING_PARAMS_INIT;
  sinter_status (*set_sampling)(sinter_context *, const sinter_sampling_params *, void *) =
      sinter_context_set_sampling;
  int (*has_sampler)(const sinter_model *) = sinter_model_has_sampler;
  sinter_entry entry = {0};
  sinter_state_info state = {0};
  sinter_program program = {0};
  desc.ndim = 0;
  (void)desc;
  launch.kind = 0;
  (void)launch;
  return (int)opts.struct_size == (int)sizeof(sinter_context_options) && status == SINTER_OK &&
         SINTER_ABI_VERSION == ((1u << 16) | 4u) && run_entry != NULL && reset_state != NULL &&
         state_info != NULL && set_sampling != NULL && has_sampler != NULL &&
         (int)sampling.struct_size == (int)sizeof(sinter_sampling_params) &&
         sampling.top_p == 1.0f && sampling.temperature == 0.0f &&
         entry.name == NULL && state.bytes == 0 && program.num_entries == 0 &&
         SINTER_BUFFER_STATE == 5 &&
         (int)load.struct_size == (int)sizeof(sinter_model_load_options) &&
         load.weights_path == NULL && load.allow_new_values == 0;
}
