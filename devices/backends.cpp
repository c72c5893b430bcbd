#include "devices/backend.h"
#include "devices/cuda/cuda_backend.h"
#include "devices/hip/hip_backend.h"
#include "devices/sim/backend.h"

namespace qvet {

std::unique_ptr<Backend> make_backend(const std::string& name, std::string& error) {
  if (name == "sim") return std::make_unique<SimBackend>();
  // A GPU back end is built where its API's headers were found (cmake/probe.cmake).
#ifdef QVET_HAVE_CUDA_HEADERS
  if (name == "cuda") return make_cuda_backend();
#else
  if (name == "cuda") return error = "cuda: qvet was built without the CUDA headers (cuda.h)", nullptr;
#endif
#ifdef QVET_HAVE_HIP_HEADERS
  if (name == "hip") return make_hip_backend();
#else
  if (name == "hip") return error = "hip: qvet was built without the HIP headers (libamdhip64-dev)", nullptr;
#endif
  error = "unknown back end '" + name + "' (cuda, hip or sim)";
  return nullptr;
}

}  // namespace qvet
