// Writes the probe kernels embedded in qvet (devices/probe_code.h) to a folder, so that the tests
// check what qvet carries: probe.ptx, and one <target>.co per AMD target.
//
//   qvet_probe_dump DIR
#include <filesystem>
#include <fstream>
#include <iostream>

#include "devices/probe_code.h"

int main(int argc, char** argv) {
  if (argc != 2) return std::cerr << "usage: qvet_probe_dump DIR\n", 2;
  std::filesystem::create_directories(argv[1]);
  auto write = [&](const std::string& name, const unsigned char* data, size_t size) {
    std::ofstream f(std::string(argv[1]) + "/" + name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    return bool(f);
  };
  // The PTX without its terminating NUL.
  if (qvet::kCudaProbe.size && !write("probe.ptx", qvet::kCudaProbe.data, qvet::kCudaProbe.size - 1)) return 1;
  for (size_t i = 0; i < qvet::kHipProbeCount; ++i)
    if (!write(std::string(qvet::kHipProbes[i].target) + ".co", qvet::kHipProbes[i].data, qvet::kHipProbes[i].size)) return 1;
  std::cout << (qvet::kCudaProbe.size ? "probe.ptx, " : "no PTX, ") << qvet::kHipProbeCount << " AMD code object(s)\n";
  return 0;
}
