#include "devices/dynlib.h"

#include <dlfcn.h>

#include <cstdlib>

namespace qvet {

bool DynamicLibrary::open(const char* override, const std::vector<std::string>& names, std::string& error) {
  const char* chosen = std::getenv(override);
  for (const std::string& n : chosen && *chosen ? std::vector<std::string>{chosen} : names) {
    dlerror();
    if ((handle_ = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      name_ = n;
      return true;
    }
    const char* e = dlerror();
    if (error.empty()) error = e ? e : n + ": cannot be loaded";
  }
  return false;
}

void* DynamicLibrary::symbol(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }

}  // namespace qvet
