#pragma once
// A folder of stand-in executables (a fake compute-sanitizer, a hanging tool) for the racecheck and
// timed-child tests, removed at the end of the test.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fl::test {

class ScriptDir {
 public:
  ScriptDir()
      : path_(std::filesystem::temp_directory_path() / ("fl_racecheck_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScriptDir() { std::filesystem::remove_all(path_); }
  std::filesystem::path write(std::string const& name, std::string const& body) const {
    std::filesystem::path const p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p;
  }
  std::filesystem::path const& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace fl::test
