# ctest helper: configure and build examples/cpp as its own project (cmake -P script).
# Inputs: SRC, BIN, INCLUDE (runtime/include), CUDA_INCLUDE, GENERATOR.
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -G ${GENERATOR}
          -DSINTER_INCLUDE_DIR=${INCLUDE} -DCUDA_INCLUDE_DIR=${CUDA_INCLUDE}
  RESULT_VARIABLE configure_rc)
if(NOT configure_rc EQUAL 0)
  message(FATAL_ERROR "configuring examples/cpp failed (${configure_rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN} -j 2 RESULT_VARIABLE build_rc)
if(NOT build_rc EQUAL 0)
  message(FATAL_ERROR "building examples/cpp failed (${build_rc})")
endif()
