#pragma once
// The header of a .npy file (common/npy.hpp), parsed strictly: internal to common/npy.cpp, apart so that the
// parser of untrusted text can be read (and fuzzed) on its own.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fl::common::npy_detail {

// Throws NpyError "<path>: <what>".
[[noreturn]] void fail(std::filesystem::path const& path, std::string const& what);

// The header dict as NumPy writes it: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// followed by spaces and '\n'. Parsed strictly: exactly these three keys, each once, printable ASCII only,
// the shape a tuple of non-negative decimal integers. Anything else is a file NumPy did not write.
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
};

// The header dict of `path` (the text between the length field and the data), or NpyError naming the fault.
Header parse_header(std::string_view text, std::filesystem::path const& path);

}  // namespace fl::common::npy_detail
