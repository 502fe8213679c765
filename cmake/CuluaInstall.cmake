# `cmake --install`: the culua program, the embedding library with its header, a CMake package
# (find_package(culua), target culua::culua), a pkg-config file, and the Lua side (the embedded
# modules' sources and the Lua Language Server annotations) where stock Lua looks for modules.
include(CMakePackageConfigHelpers)

# Run paths of the installed tree, relative to each binary: culua finds the engine in ../lib, the
# embedding library in its own folder, cu.so (lib/lua/5.4) two folders up; beside the CUDA
# toolkit's library folder, from which the engine loads cuBLAS, cuFFT, NVRTC and NCCL.
function(culua_install_rpath target from)  # from: the target's install folder
  if(IS_ABSOLUTE ${from})
    set(origin ${CMAKE_INSTALL_FULL_LIBDIR})
  else()
    file(RELATIVE_PATH rel /${from} /${CMAKE_INSTALL_LIBDIR})
    set(origin "$ORIGIN")
    if(rel)
      string(APPEND origin "/${rel}")
    endif()
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${origin};${CULUA_CUDA_RPATH}")
endfunction()
culua_install_rpath(culua ${CMAKE_INSTALL_BINDIR})
culua_install_rpath(culua_shared ${CMAKE_INSTALL_LIBDIR})
culua_install_rpath(culua_module ${CULUA_LUA_CMOD_DIR})

install(TARGETS culua RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The engine (libculua_engine.so) is internal: no headers; culua, libculua.so and cu.so load it.
set(_installed culua_shared)
if(CULUA_ENGINE_SHARED)  # (a static engine is inside culua, libculua.so and cu.so)
  list(APPEND _installed culua_engine)
endif()
install(TARGETS ${_installed} EXPORT culuaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/culua/culua.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/culua)

set(CULUA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/culua)
install(EXPORT culuaTargets NAMESPACE culua:: DESTINATION ${CULUA_CMAKE_DIR})
configure_package_config_file(cmake/culuaConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/culuaConfig.cmake
  INSTALL_DESTINATION ${CULUA_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/culuaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/culuaConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/culuaConfigVersion.cmake
  DESTINATION ${CULUA_CMAKE_DIR})

# Relocatable: the prefix is found from the .pc file's own folder.
file(RELATIVE_PATH CULUA_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" CULUA_PC_TO_PREFIX "${CULUA_PC_TO_PREFIX}")
configure_file(cmake/culua.pc.in ${CMAKE_CURRENT_BINARY_DIR}/culua.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/culua.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Lua modules: stock Lua's default package.path has <prefix>/share/lua/5.4/?.lua.
install(DIRECTORY lua/cu DESTINATION ${CMAKE_INSTALL_DATADIR}/lua/5.4 FILES_MATCHING PATTERN "*.lua")
if(EXISTS ${PROJECT_SOURCE_DIR}/lua/meta/cu.lua)
  install(FILES lua/meta/cu.lua DESTINATION ${CMAKE_INSTALL_DATADIR}/lua/5.4/cu/meta)
endif()

# The module for stock Lua: its default package.cpath has <prefix>/lib/lua/5.4/?.so.
install(TARGETS culua_module LIBRARY DESTINATION ${CULUA_LUA_CMOD_DIR})
