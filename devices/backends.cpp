#include "devices/backend.h"
#include "devices/cuda/cuda_backend.h"
#include "devices/hip/hip_backend.h"
#include "devices/sim/backend.h"

namespace qvet {

std::unique_ptr<Backend> make_backend(const std::string& name, std::string& error) {
  std::unique_ptr<Backend> b;
  if (name == "sim") return std::make_unique<SimBackend>();
  if (name == "cuda" && !(b = make_cuda_backend())) error = "cuda: qvet was built without the CUDA headers (cuda.h)";
  else if (name == "hip" && !(b = make_hip_backend())) error = "hip: qvet was built without the HIP headers (libamdhip64-dev)";
  else if (name != "cuda" && name != "hip") error = "unknown back end '" + name + "' (cuda, hip or sim)";
  return b;
}

}  // namespace qvet
