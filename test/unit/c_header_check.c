/* Compiled as C99: sinter.h must stay valid C. Called from abi_test.cpp. */
#include "sinter/program.h"
#include "sinter/sinter.h"

int sinter_test_c_header_check(void) {
  sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
  sinter_model_load_options load = SINTER_MODEL_LOAD_OPTIONS_INIT;
  sinter_launch_info launch;
  sinter_tensor_desc desc;
  sinter_status status = SINTER_OK;
  desc.ndim = 0;
  (void)desc;
  launch.kind = 0;
  (void)launch;
  return (int)opts.struct_size == (int)sizeof(sinter_context_options) && status == SINTER_OK &&
         SINTER_ABI_VERSION == ((1u << 16) | 1u) &&
         (int)load.struct_size == (int)sizeof(sinter_model_load_options) &&
         load.weights_path == NULL && load.allow_new_values == 0;
}
