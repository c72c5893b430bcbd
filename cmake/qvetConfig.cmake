# find_package(qvet): the imported targets qvet::qvet (libqvet.so and include/qvet/qvet.h) and
# qvet::static (libqvet.a, with Z3 and the C++ runtime it needs).
include("${CMAKE_CURRENT_LIST_DIR}/qvetTargets.cmake")
if(NOT TARGET qvet::static)
  get_filename_component(_qvet_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(qvet_Z3 REQUIRED IMPORTED_TARGET z3)
  find_package(Threads REQUIRED)
  add_library(qvet::static STATIC IMPORTED)
  set_target_properties(qvet::static PROPERTIES
    IMPORTED_LOCATION "${_qvet_prefix}/lib/libqvet.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_qvet_prefix}/include"
    INTERFACE_LINK_LIBRARIES "PkgConfig::qvet_Z3;stdc++;m;Threads::Threads")
  unset(_qvet_prefix)
endif()
