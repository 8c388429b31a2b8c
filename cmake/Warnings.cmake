# Warnings for our own targets: fl_enable_warnings(target).
function(fl_enable_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                                           -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual)
  # GCC 12 at -O3 reports std::string assignments as overlapping memcpy (-Wrestrict, GCC bug 105329):
  # a false positive in libstdc++'s own code that breaks the portable (Release) build under -Werror.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(FA_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
