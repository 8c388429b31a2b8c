#include "runtime/kernel_source.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "common/sha256.hpp"

namespace fl::runtime {
namespace fs = std::filesystem;
namespace {

Error source_error(std::string message) {
  return Error{"source", std::move(message), ""};
}

std::optional<fs::path> executable_dir() {
  std::array<char, 4096> buffer{};
  ssize_t const length = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (length <= 0) return std::nullopt;
  return fs::path(std::string(buffer.data(), static_cast<std::size_t>(length))).parent_path();
}

bool is_existing_directory(fs::path const& path) {
  std::error_code ignored;
  return fs::is_directory(path, ignored);
}

std::optional<std::string> read_text(fs::path const& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

// The quoted #include names of `text`, in order. Angle-bracket includes are the CUDA headers' business.
// Lines commented out with // are skipped; includes inside #if 0 are still followed (hashing a file too
// many is harmless, one too few is not).
std::vector<std::string> quoted_includes(std::string const& text) {
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    auto pos = line.find_first_not_of(" \t");
    if (pos == std::string::npos || line[pos] != '#') continue;
    pos = line.find_first_not_of(" \t", pos + 1);
    if (pos == std::string::npos || line.compare(pos, 7, "include") != 0) continue;
    auto const open = line.find_first_not_of(" \t", pos + 7);
    if (open == std::string::npos || line[open] != '"') continue;
    auto const close = line.find('"', open + 1);
    if (close == std::string::npos) continue;
    names.push_back(line.substr(open + 1, close - open - 1));
  }
  return names;
}

bool inside(fs::path const& root, fs::path const& candidate) {
  auto const relative = candidate.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

Result<fs::path> resolve_kernels_dir(std::optional<fs::path> const& explicit_dir) {
  if (explicit_dir) {
    if (!is_existing_directory(*explicit_dir))
      return source_error("kernels directory '" + explicit_dir->string() + "' does not exist");
    return fs::absolute(*explicit_dir).lexically_normal();
  }
  if (char const* env = std::getenv(kKernelsDirEnv); env != nullptr && *env != '\0') {
    if (!is_existing_directory(env)) {
      return source_error(std::string(kKernelsDirEnv) + "='" + env + "' is not a directory");
    }
    return fs::absolute(env).lexically_normal();
  }
  std::vector<fs::path> candidates;
  if (auto const exe = executable_dir()) {
    candidates.push_back(*exe / ".." / "kernels_src");
    candidates.push_back(*exe / "kernels_src");
  }
#ifdef FA_SOURCE_KERNELS_DIR
  candidates.emplace_back(FA_SOURCE_KERNELS_DIR);
#endif
  for (auto const& candidate : candidates) {
    if (is_existing_directory(candidate)) return fs::absolute(candidate).lexically_normal();
  }
  return source_error("kernels_src not found: pass --kernels-dir or set " + std::string(kKernelsDirEnv));
}

Result<KernelSource> load_kernel_source(std::string const& name, fs::path const& kernels_dir) {
  fs::path const root = fs::absolute(kernels_dir).lexically_normal();
  fs::path const main_path = (root / name).lexically_normal();
  if (!inside(root, main_path))
    return source_error("kernel source '" + name + "' is outside " + root.string());
  auto main_text = read_text(main_path);
  if (!main_text) return source_error("cannot read kernel source '" + main_path.string() + "'");

  KernelSource source;
  source.kernels_dir = root;
  std::string const main_relative = main_path.lexically_relative(root).generic_string();
  source.main = SourceFile{main_relative, {}, *main_text, common::sha256_hex(*main_text)};

  std::map<std::string, SourceFile> by_path;            // every included file once
  std::map<std::string, std::string> path_of_spelling;  // NVRTC matches headers by spelling
  std::vector<std::pair<fs::path, std::string>> pending = {{main_path, *main_text}};
  while (!pending.empty()) {
    auto [including, text] = std::move(pending.back());
    pending.pop_back();
    for (auto const& spelled : quoted_includes(text)) {
      std::optional<fs::path> found;
      for (auto const& base : {including.parent_path(), root}) {
        fs::path const candidate = (base / spelled).lexically_normal();
        std::error_code ignored;
        if (fs::is_regular_file(candidate, ignored)) {
          found = candidate;
          break;
        }
      }
      if (!found) continue;  // not ours: a CUDA header, found by NVRTC through -I
      if (!inside(root, *found)) {
        return source_error("#include \"" + spelled + "\" in " + including.string() + " leaves " +
                            root.string());
      }
      std::string const relative = found->lexically_relative(root).generic_string();
      if (auto const [it, added] = path_of_spelling.emplace(spelled, relative);
          !added && it->second != relative) {
        return source_error("#include \"" + spelled + "\" names both " + it->second + " and " + relative +
                            "; spell them differently");
      }
      if (auto const known = by_path.find(relative); known != by_path.end()) {
        auto& spellings = known->second.spellings;
        if (std::find(spellings.begin(), spellings.end(), spelled) == spellings.end())
          spellings.push_back(spelled);
        continue;
      }
      auto included_text = read_text(*found);
      if (!included_text) return source_error("cannot read included file '" + found->string() + "'");
      by_path.emplace(relative,
                      SourceFile{relative, {spelled}, *included_text, common::sha256_hex(*included_text)});
      pending.emplace_back(*found, *included_text);
    }
  }
  for (auto& [path, file] : by_path) source.includes.push_back(std::move(file));
  return source;
}

}  // namespace fl::runtime
