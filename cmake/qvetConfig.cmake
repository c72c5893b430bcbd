# find_package(qvet): the imported target qvet::qvet (libqvet and include/qvet/qvet.h).
include("${CMAKE_CURRENT_LIST_DIR}/qvetTargets.cmake")
