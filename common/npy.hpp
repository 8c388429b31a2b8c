#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0), the exchange format of fa-check: anyone's kernel
// output can be written with numpy.save. Read: little- or big-endian float16, float32, float64, C order
// (Fortran order is refused: fa-check expects row-major (B, H, N, D)). Written: little-endian float32 or
// float64, version 1.0, to a temporary name and renamed, so a reader never sees half a file.
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace fl::common {

// A bad or unreadable .npy file; what() names the file and the problem in one line.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  std::vector<std::size_t> shape;
  std::string dtype;  // as stored: "float16", "float32" or "float64"
  std::vector<double> values;
};

NpyArray read_npy(std::filesystem::path const& path);

enum class NpyDtype { float16, float32, float64 };

// Values are converted to the dtype (rounded to nearest for float16/float32).
void write_npy(std::filesystem::path const& path, std::vector<std::size_t> const& shape,
               std::vector<double> const& values, NpyDtype dtype = NpyDtype::float32);

}  // namespace fl::common
