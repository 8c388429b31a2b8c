#pragma once
// Tests that run the project's command-line tools as a user would: the binary next to the test binary
// (build/bin), its exit code through the shell, its output read back, and the first id of fa-check's
// JSON "diagnosis". One copy for every CLI test.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace fl::test {

inline std::filesystem::path sibling_binary(std::string_view name) {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / std::string(name);
}

// std::system's status as the exit code, -1 when the command did not exit normally.
inline int shell_exit_code(std::string const& command) {
  int const status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string read_text(std::filesystem::path const& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first id of a JSON "diagnosis" array, "" when it is empty, "<no diagnosis key>" without one.
inline std::string first_diagnosis_id(std::string const& json) {
  auto const at = json.find("\"diagnosis\"");
  if (at == std::string::npos) return "<no diagnosis key>";
  auto const close = json.find(']', at);
  auto const id = json.find("\"id\"", at);
  if (id == std::string::npos || id > close) return "";
  auto const open_quote = json.find('"', json.find(':', id) + 1);
  return json.substr(open_quote + 1, json.find('"', open_quote + 1) - open_quote - 1);
}

}  // namespace fl::test
