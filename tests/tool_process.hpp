#pragma once
// Tests that run the project's command-line tools as a user would: the binary next to the test binary
// (build/bin), its exit code through the shell, its output read back, and the first id of fa-check's
// JSON "diagnosis". One copy for every CLI test.
#include <sys/wait.h>
#include <unistd.h>

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

struct ToolOutcome {
  int exit_code = -1;  // -1 when the command did not exit normally (a signal killed it)
  std::string out, err;
  // The lines of stderr that are not empty.
  int error_lines() const {
    int lines = 0;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) lines += line.empty() ? 0 : 1;
    return lines;
  }
};

// Runs `command` through the shell with stdout and stderr captured (in files beside the test's temp dir).
inline ToolOutcome run_tool(std::string const& command) {
  static int serial = 0;
  auto const base = std::filesystem::temp_directory_path() /
                    ("fl_tool_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
  ToolOutcome outcome;
  outcome.exit_code = shell_exit_code(command + " > " + base.string() + ".out 2> " + base.string() + ".err");
  outcome.out = read_text(base.string() + ".out");
  outcome.err = read_text(base.string() + ".err");
  std::filesystem::remove(base.string() + ".out");
  std::filesystem::remove(base.string() + ".err");
  return outcome;
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
