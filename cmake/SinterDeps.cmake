# Toolchain: Debian's LLVM/MLIR 22, protobuf (onnx.proto compiled here), yaml-cpp, CLI11, CUDA.
if(NOT MLIR_DIR)
  set(MLIR_DIR /usr/lib/llvm-22/lib/cmake/mlir)
endif()
find_package(MLIR REQUIRED CONFIG PATHS ${MLIR_DIR})
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
if(SINTER_STATIC_TOOLS)
  # Our own add_mlir_library targets would otherwise link libLLVM.so too.
  set(LLVM_LINK_LLVM_DYLIB OFF)
endif()
include(TableGen)
include(AddLLVM)
include(AddMLIR)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
add_definitions(${LLVM_DEFINITIONS})
link_directories(${LLVM_BUILD_LIBRARY_DIR})

set(SINTER_SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
set(SINTER_BINARY_DIR ${CMAKE_CURRENT_BINARY_DIR})

if(SINTER_STATIC_TOOLS)
  set(Protobuf_USE_STATIC_LIBS ON)
endif()
find_package(Protobuf REQUIRED)
find_package(yaml-cpp REQUIRED)
if(SINTER_STATIC_TOOLS)
  find_library(SINTER_YAML_CPP_LIBRARY NAMES libyaml-cpp.a REQUIRED)
else()
  set(SINTER_YAML_CPP_LIBRARY yaml-cpp)
endif()
find_package(CLI11 CONFIG REQUIRED)
find_package(GTest REQUIRED)
# Header-only, compiled into the runtime archive (so into every model .so, hidden): nlohmann-json
# reads the safetensors header, xxHash (XXH_INLINE_ALL) is the weight checksum.
find_package(nlohmann_json 3.11 REQUIRED)
find_path(SINTER_XXHASH_INCLUDE xxhash.h REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

if(NOT SINTER_CUDA_HOME)
  set(SINTER_CUDA_HOME /usr/local/cuda)
endif()
set(SINTER_CUDA_INCLUDE ${SINTER_CUDA_HOME}/include)
find_library(SINTER_CUDART_STATIC cudart_static PATHS ${SINTER_CUDA_HOME}/lib64 NO_DEFAULT_PATH REQUIRED)
find_library(SINTER_CUBLASLT cublasLt PATHS ${SINTER_CUDA_HOME}/lib64 NO_DEFAULT_PATH REQUIRED)
# CUTLASS / CuTe headers for the runtime's split-TF32 GEMM (scripts/cutlass-headers.sh fetches
# them from PyPI's nvidia-cutlass wheel; scripts/install-deps.sh runs it).
set(SINTER_CUTLASS_INCLUDE ${CMAKE_CURRENT_SOURCE_DIR}/.deps/cutlass-4.2.0.0/include
    CACHE PATH "CUTLASS include directory (cutlass/gemm/device/gemm.h)")
if(NOT EXISTS ${SINTER_CUTLASS_INCLUDE}/cutlass/gemm/device/gemm.h)
  message(FATAL_ERROR "CUTLASS headers not found at ${SINTER_CUTLASS_INCLUDE}: run "
                      "scripts/cutlass-headers.sh or set SINTER_CUTLASS_INCLUDE")
endif()

# ASan + UBSan for everything built here (compiler, tools, runtime archive, tests). Debian's
# LLVM/MLIR static libraries stay uninstrumented. Model .so files built by nvcc link the
# instrumented runtime archive, so they load only into sanitized processes (sinter run, the
# unit tests), which is where a sanitized build loads them. UBSan stops at the first report.
# SINTER_FUZZ_SANITIZERS=OFF builds the fuzzers with coverage only: several times the executions
# per second, for long campaigns by hand (crashes and verifier failures are still caught).
if(SINTER_ENABLE_SANITIZERS OR (SINTER_ENABLE_FUZZERS AND SINTER_FUZZ_SANITIZERS))
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
# libFuzzer: coverage instrumentation everywhere, the fuzzer main only in fuzz/ targets.
if(SINTER_ENABLE_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SINTER_ENABLE_FUZZERS needs clang with libFuzzer, e.g. "
                        "-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 "
                        "(Debian: clang-22 libclang-rt-22-dev)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# Portable tools: Debian's MLIR libraries link libLLVM.so; swap that for the static LLVM
# component libraries and link libstdc++ statically so `sinter` runs on the GPU machine,
# which has no LLVM.
if(SINTER_STATIC_TOOLS)
  add_library(sinter_llvm_static INTERFACE)
  target_link_libraries(sinter_llvm_static INTERFACE
    LLVMCore LLVMBinaryFormat LLVMTargetParser LLVMRemarks LLVMBitstreamReader LLVMSupport LLVMDemangle)
  get_property(_sinter_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(_t IN LISTS _sinter_imported)
    if(_t MATCHES "^(MLIR|LLVM)")
      get_target_property(_libs ${_t} INTERFACE_LINK_LIBRARIES)
      if(_libs)
        list(TRANSFORM _libs REPLACE "^LLVM$" "sinter_llvm_static")
        set_target_properties(${_t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_libs}")
      endif()
    endif()
  endforeach()
endif()

function(sinter_portable_link target)
  if(SINTER_STATIC_TOOLS)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc -Wl,--as-needed)
  endif()
endfunction()
