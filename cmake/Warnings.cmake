# Warnings for our own targets: fl_enable_warnings(target).
function(fl_enable_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                                           -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual)
  if(FA_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
