#pragma once
// A throw-away kernels_src for tests: files written on demand, the directory removed afterwards.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace fl::test {

class TempKernelsDir {
 public:
  TempKernelsDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fl_kernels_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
  }
  TempKernelsDir(TempKernelsDir const&) = delete;
  TempKernelsDir& operator=(TempKernelsDir const&) = delete;
  ~TempKernelsDir() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }

  std::filesystem::path const& path() const { return root_; }

  void write(std::string const& relative, std::string const& text) const {
    auto const file = root_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
  }

 private:
  std::filesystem::path root_;
};

}  // namespace fl::test
