#include "common/atomic_file.hpp"

#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string>

namespace fl::common {

std::filesystem::path temporary_name_for(std::filesystem::path const& path) {
  return path.string() + ".tmp" + std::to_string(::getpid());
}

void write_file_atomically(std::filesystem::path const& path, std::string_view content) {
  std::filesystem::path const temp = temporary_name_for(path);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
    out.write(content.data(), std::streamsize(content.size()));
    if (!out) throw std::runtime_error(path.string() + ": write failed");
  }
  std::filesystem::rename(temp, path);
}

}  // namespace fl::common
