# The probe kernel (devices/probe_kernel.h), built for the GPUs and embedded in qvet_devices
# (devices/probe_code.h): PTX through nvcc for CUDA, AMD code objects through clang for HIP.
# Without a tool the matching table is empty and that back end says so at run time. The headers
# of the vendors' APIs (types and constants only: nothing is linked) come from the same places.
set(gen ${CMAKE_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${gen})
set(probe_src ${CMAKE_SOURCE_DIR}/devices/probe_kernel.h)

find_package(CUDAToolkit QUIET)
set(ptx "")
if(CUDAToolkit_FOUND AND CUDAToolkit_NVCC_EXECUTABLE)
  target_include_directories(qvet_devices PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(qvet_devices PRIVATE QVET_HAVE_CUDA_HEADERS)
  set(ptx ${gen}/probe.ptx)
  add_custom_command(OUTPUT ${ptx}
    COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -ptx -arch=compute_80 -I${CMAKE_SOURCE_DIR}
            ${CMAKE_SOURCE_DIR}/devices/cuda/probe.cu -o ${ptx}
    DEPENDS ${CMAKE_SOURCE_DIR}/devices/cuda/probe.cu ${probe_src}
    COMMENT "probe kernel: PTX")
else()
  message(STATUS "qvet: no CUDA toolkit found; the cuda back end will report that it is not built in")
endif()

if(EXISTS /usr/include/hip/hip_runtime_api.h)
  target_compile_definitions(qvet_devices PRIVATE QVET_HAVE_HIP_HEADERS __HIP_PLATFORM_AMD__)
else()
  message(STATUS "qvet: no HIP headers (libamdhip64-dev); the hip back end will report that it is not built in")
endif()
set(QVET_HIP_TARGETS gfx908 gfx90a gfx942 gfx1030 gfx1100 CACHE STRING "AMD targets the HIP probe kernel is built for (those the compiler supports)")
find_program(QVET_AMDGCN_CLANG NAMES clang clang-16 clang-15 clang-14)
set(code_objects "")
set(code_object_files "")
# Code object version 4: what every ROCm from 5.0 loads (clang 19 and later default to 5).
set(hip_flags -x hip --cuda-device-only --no-gpu-bundle-output -nogpulib -nogpuinc -mcode-object-version=4 -O2
    -I${CMAKE_SOURCE_DIR})
if(QVET_AMDGCN_CLANG)
  foreach(t IN LISTS QVET_HIP_TARGETS)
    # A target this clang does not know, or one without s_memrealtime (gfx11), is left out.
    execute_process(COMMAND ${QVET_AMDGCN_CLANG} ${hip_flags} --offload-arch=${t} ${CMAKE_SOURCE_DIR}/devices/hip/probe.hip
                    -o ${gen}/probe_try_${t}.co RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    file(REMOVE ${gen}/probe_try_${t}.co)
    if(NOT rc EQUAL 0)
      message(STATUS "qvet: the HIP probe kernel cannot be built for ${t} with ${QVET_AMDGCN_CLANG}; left out")
      continue()
    endif()
    set(co ${gen}/probe_${t}.co)
    add_custom_command(OUTPUT ${co}
      COMMAND ${QVET_AMDGCN_CLANG} ${hip_flags} --offload-arch=${t} ${CMAKE_SOURCE_DIR}/devices/hip/probe.hip -o ${co}
      DEPENDS ${CMAKE_SOURCE_DIR}/devices/hip/probe.hip ${probe_src}
      COMMENT "probe kernel: AMD code object for ${t}")
    list(APPEND code_objects "${t}=${co}")
    list(APPEND code_object_files ${co})
  endforeach()
endif()
if(NOT code_objects)
  message(STATUS "qvet: no clang with the amdgcn target; the hip back end will carry no probe kernel")
endif()

string(REPLACE ";" "\\;" code_objects_arg "${code_objects}")
add_custom_command(OUTPUT ${gen}/probe_code.cpp
  COMMAND ${CMAKE_COMMAND} -DPTX=${ptx} "-DCODE_OBJECTS=${code_objects_arg}" -DOUT=${gen}/probe_code.cpp
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_probe.cmake
  DEPENDS ${ptx} ${code_object_files} ${CMAKE_SOURCE_DIR}/cmake/embed_probe.cmake
  COMMENT "probe kernel: embedding")
