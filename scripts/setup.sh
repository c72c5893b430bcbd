#!/usr/bin/env bash
# Installs qvet's build dependencies from Debian packages. Idempotent: installs only what is missing.
set -euo pipefail
# clang and lld build the HIP probe kernel (AMD code objects); libamdhip64-dev gives the HIP API
# headers (types only: the runtime is dlopen'ed). The CUDA toolkit (nvcc, ptxas, cuda.h) is not a
# Debian package here: CMake finds it under /usr/local/cuda, or builds qvet without the cuda back end.
# python3 and python3-pytest run the Python package's tests (python/qvet, CTest api/python).
# ninja-build: README's first command builds with Ninja (a tenth faster on two cores than make).
pkgs=(cmake ninja-build g++ pkg-config libboost-graph-dev libz3-dev doctest-dev nlohmann-json3-dev clang lld libamdhip64-dev python3 python3-pytest)
[ "${QVET_FUZZ:-0}" = 1 ] && pkgs+=(libclang-rt-dev)
# --peers: what bench/peers/run.sh needs (the Vulkan loader and headers, lavapipe, the Khronos
# validation layer with syncval, glslang to compile the dispatches' shaders). Optional.
[ "${1:-}" = "--peers" ] && pkgs+=(libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers glslang-tools)
missing=()
for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
