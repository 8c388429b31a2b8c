# Dependencies: Debian packages (scripts/setup.sh installs them) and the CUDA 13 toolkit.
# libcuda is never linked: runtime/ loads libcuda.so.1 with dlopen on first use.

set(CUDA_HOME "$ENV{CUDA_HOME}")
if(NOT CUDA_HOME)
  set(CUDA_HOME "/usr/local/cuda")
endif()
set(CUDA_HOME "${CUDA_HOME}" CACHE PATH "CUDA toolkit root (NVRTC, cuda.h)")
if(NOT EXISTS "${CUDA_HOME}/include/nvrtc.h")
  message(FATAL_ERROR "CUDA toolkit not found at ${CUDA_HOME}: set CUDA_HOME (need NVRTC and cuda.h, CUDA 13)")
endif()

add_library(fl_cuda_headers INTERFACE)
target_include_directories(fl_cuda_headers SYSTEM INTERFACE "${CUDA_HOME}/include")
target_compile_definitions(fl_cuda_headers INTERFACE FA_CUDA_HOME="${CUDA_HOME}")

find_library(NVRTC_LIBRARY nvrtc HINTS "${CUDA_HOME}/lib64" "${CUDA_HOME}/lib" REQUIRED)
add_library(fl_nvrtc INTERFACE)
target_link_libraries(fl_nvrtc INTERFACE "${NVRTC_LIBRARY}" fl_cuda_headers)

find_package(Threads REQUIRED)

if(FA_PORTABLE)
  set(Boost_USE_STATIC_LIBS ON)
endif()
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)

if(FA_PORTABLE)
  find_library(SQLITE3_STATIC libsqlite3.a REQUIRED)
  add_library(fl_sqlite INTERFACE)
  target_link_libraries(fl_sqlite INTERFACE "${SQLITE3_STATIC}" ${CMAKE_DL_LIBS} Threads::Threads m)
  # The GPU machine has glibc 2.39 (we build against 2.36) but no Boost or SQLite libraries.
  add_link_options(-static-libstdc++ -static-libgcc)
else()
  find_package(SQLite3 REQUIRED)
  add_library(fl_sqlite INTERFACE)
  target_link_libraries(fl_sqlite INTERFACE SQLite::SQLite3)
endif()
