/* Compiled as C99: sinter.h must stay valid C. Called from abi_test.cpp. */
#include "sinter/sinter.h"

int sinter_test_c_header_check(void) {
  sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
  sinter_tensor_desc desc;
  sinter_status status = SINTER_OK;
  desc.ndim = 0;
  (void)desc;
  return (int)opts.struct_size == (int)sizeof(sinter_context_options) && status == SINTER_OK &&
         SINTER_ABI_VERSION == ((1u << 16) | 0u);
}
