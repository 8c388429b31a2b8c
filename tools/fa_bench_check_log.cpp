#include "tools/fa_bench_check_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/sha256.hpp"

namespace fl::tools::fa_bench {

namespace {

std::string read_all(std::filesystem::path const& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CheckLog CheckLog::open(std::filesystem::path path) {
  // Created if absent, and proven appendable now rather than after the first check.
  int const fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0)
    throw std::runtime_error(std::string(kCheckLogEnv) + "=" + path.string() +
                             ": cannot open it for appending (a writable file path, or unset)");
  ::close(fd);
  CheckLog log;
  log.path_ = std::move(path);
  std::string const text = read_all(log.path_);
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string_view const line(text.data() + start, end - start);
    std::size_t const tab = line.find('\t');
    if (tab == std::string_view::npos || tab == 0) continue;  // not a line this log wrote
    log.passed_[std::string(line.substr(0, tab))] = std::string(line.substr(tab + 1));
  }
  return log;
}

std::optional<CheckLog> CheckLog::from_environment() {
  char const* value = std::getenv(kCheckLogEnv);
  if (!value || !*value) return std::nullopt;
  return open(value);
}

std::optional<std::string> CheckLog::passed(std::string const& key) const {
  auto const it = passed_.find(key);
  if (it == passed_.end()) return std::nullopt;
  return it->second;
}

void CheckLog::record(std::string const& key, std::string const& summary) {
  std::string one_line = summary;  // one check, one line
  for (char& c : one_line)
    if (c == '\n') c = ' ';
  std::string const line = key + "\t" + one_line + "\n";
  int const fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) throw std::runtime_error("cannot append to " + path_.string());
  ssize_t const written = ::write(fd, line.data(), line.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size()))
    throw std::runtime_error("cannot append to " + path_.string());
  passed_[key] = one_line;
}

std::string executable_sha256() {
  return common::sha256_hex(read_all("/proc/self/exe"));
}

std::string check_key(std::string_view executable_sha256, std::string_view cubin_sha256,
                      std::string_view device_identity, std::string_view what) {
  common::Sha256 h;
  for (std::string_view part : {executable_sha256, cubin_sha256, device_identity, what}) {
    h.update(part);
    h.update(std::string_view("\0", 1));  // a separator no part contains: parts cannot slide into each other
  }
  return common::to_hex(h.finish());
}

}  // namespace fl::tools::fa_bench
