# Dependencies, all from Debian packages (tools/setup installs them).
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

# Lua 5.4 built as C++ (liblua5.4-dev), linked statically: a Lua error unwinds C++ frames, and
# the binary runs where no Lua is installed.
find_path(LUA_INCLUDE_DIR lua.hpp PATH_SUFFIXES lua5.4 REQUIRED)
find_library(LUA_CXX_STATIC NAMES liblua5.4-c++.a REQUIRED)
add_library(culua::lua STATIC IMPORTED)
set_target_properties(culua::lua PROPERTIES
  IMPORTED_LOCATION ${LUA_CXX_STATIC}
  INTERFACE_INCLUDE_DIRECTORIES ${LUA_INCLUDE_DIR}
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${LUA_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "m;${CMAKE_DL_LIBS}")
# The headers alone, for the stock-Lua module (cu.so), which links no Lua library.
add_library(culua::lua_headers INTERFACE IMPORTED)
set_target_properties(culua::lua_headers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${LUA_INCLUDE_DIR}
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${LUA_INCLUDE_DIR})
# The shared C++ build (liblua5.4-c++.so.0, package liblua5.4-0) for the embedding library.
find_library(LUA_CXX_SHARED NAMES liblua5.4-c++.so REQUIRED)
add_library(culua::lua_shared SHARED IMPORTED)
set_target_properties(culua::lua_shared PROPERTIES
  IMPORTED_LOCATION ${LUA_CXX_SHARED}
  INTERFACE_INCLUDE_DIRECTORIES ${LUA_INCLUDE_DIR}
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${LUA_INCLUDE_DIR})

# libedit for the REPL, linked statically (with libbsd and libmd) so the binary carries it.
find_path(EDIT_INCLUDE_DIR editline/readline.h REQUIRED)
find_library(EDIT_STATIC NAMES libedit.a REQUIRED)
find_library(BSD_STATIC NAMES libbsd.a REQUIRED)
find_library(MD_STATIC NAMES libmd.a REQUIRED)
find_library(TINFO_LIBRARY NAMES tinfo ncurses REQUIRED)
add_library(culua::edit INTERFACE IMPORTED)
set_target_properties(culua::edit PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${EDIT_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "${EDIT_STATIC};${BSD_STATIC};${MD_STATIC};${TINFO_LIBRARY}")

# OpenBLAS for the host backend's matmul and dot, linked statically so the binary runs where
# OpenBLAS is not installed. The pthread variant (libopenblas-pthread-dev): a product runs on
# OpenBLAS's own threads, one product at a time (src/host/host_blas.cpp). Not the serial variant:
# Debian builds it without USE_LOCKING, so its buffer table is unlocked and concurrent calls gave
# wrong bytes; the pthread build takes its buffers under a lock. Its static constructor would start
# a thread per core in every culua process (60 ms of start-up on a 16-core machine, even on the CUDA
# backend): host_blas.cpp runs OpenBLAS's set-up itself with one thread, and starts the others at
# the first product large enough to use them. Only CBLAS symbols are used, so none of the library's
# Fortran (LAPACK) objects, nor libgfortran, are pulled in. (The cache names differ from the serial
# variant's, so that an existing build directory finds this one.)
find_path(CULUA_OPENBLAS_INCLUDE_DIR cblas.h NO_DEFAULT_PATH
  PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread /usr/include/openblas-pthread)
find_library(CULUA_OPENBLAS_STATIC NAMES libopenblas.a NO_DEFAULT_PATH
  PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread /usr/lib/openblas-pthread)
if(NOT CULUA_OPENBLAS_INCLUDE_DIR OR NOT CULUA_OPENBLAS_STATIC)
  message(FATAL_ERROR "OpenBLAS not found (openblas-pthread/cblas.h and libopenblas.a): the host "
                      "backend's matmul and dot need it. Install libopenblas-pthread-dev (tools/dev setup).")
endif()
add_library(culua::openblas STATIC IMPORTED)
set_target_properties(culua::openblas PROPERTIES
  IMPORTED_LOCATION ${CULUA_OPENBLAS_STATIC}
  INTERFACE_INCLUDE_DIRECTORIES ${CULUA_OPENBLAS_INCLUDE_DIR}
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${CULUA_OPENBLAS_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "Threads::Threads;m")

# kissfft (BSD-3-Clause; libkissfft-dev) for the host backend's cu.fft: its C++ header kissfft.hh
# is a template for any precision (Debian builds only the float variant of the C library, so
# neither library is linked). Optional: without it the host backend's FFTs raise at run time,
# naming the package. Never FFTW (GPL).
find_path(KISSFFT_INCLUDE_DIR kissfft.hh PATHS /usr/include/kissfft /usr/local/include/kissfft)
if(KISSFFT_INCLUDE_DIR)
  add_library(culua::kissfft INTERFACE IMPORTED)
  set_target_properties(culua::kissfft PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${KISSFFT_INCLUDE_DIR}
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${KISSFFT_INCLUDE_DIR}
    INTERFACE_COMPILE_DEFINITIONS CULUA_HAVE_KISSFFT=1)
  message(STATUS "kissfft: ${KISSFFT_INCLUDE_DIR}/kissfft.hh (host FFTs)")
else()
  add_library(culua::kissfft INTERFACE IMPORTED)
  message(STATUS "kissfft not found (libkissfft-dev): the host backend's cu.fft will raise")
endif()
