// test_model.cu compiled with external weights: a weight table and no embedded blob, as
// `sinter compile --weights=external` emits; the tests write its safetensors file themselves.
#define SINTER_TEST_MODEL_EXTERNAL 1
#include "test_model.cu"
