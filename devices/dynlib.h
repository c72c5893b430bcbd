// A shared library loaded at run time (dlopen), so that qvet needs no GPU library to build or run.
// Owns the handle; closing is left to process exit (drivers do not like being unloaded).
#pragma once
#include <string>
#include <vector>

namespace qvet {

class DynamicLibrary {
 public:
  // Tries each name in turn; false with `error` ("libcuda.so.1: cannot open shared object file...").
  // When the environment variable `override` is set (QVET_CUDA_LIBRARY, QVET_HIP_LIBRARY: how tests
  // load the stand-in drivers), only the library it names is tried.
  bool open(const char* override, const std::vector<std::string>& names, std::string& error);
  void* symbol(const char* name) const;  // null when missing
  const std::string& name() const { return name_; }

 private:
  void* handle_ = nullptr;
  std::string name_;
};

}  // namespace qvet
