#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "common/temporary_files.hpp"

namespace fl::common {

namespace {

namespace fs = std::filesystem;
constexpr int kMaxSymlinkHops = 40;  // Linux's own limit (ELOOP)

// `path` with every symlink in its last component followed, even a dangling one (its target gets written).
fs::path follow_symlinks(fs::path path) {
  std::error_code error;
  for (int hop = 0; hop < kMaxSymlinkHops && fs::is_symlink(fs::symlink_status(path, error)); ++hop) {
    fs::path const target = fs::read_symlink(path, error);
    if (error) break;
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  return path;
}

fs::path folder_of(fs::path const& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

std::string system_error_text() {
  return std::strerror(errno);
}

void write_in_place(fs::path const& shown, fs::path const& target, std::string_view content) {
  std::ofstream out(target, std::ios::binary);
  if (!out) throw std::runtime_error(shown.string() + ": cannot write (" + system_error_text() + ")");
  out.write(content.data(), std::streamsize(content.size()));
  if (!out.flush()) throw std::runtime_error(shown.string() + ": write failed (" + system_error_text() + ")");
}

// Whether a file can be created in `folder`: access() answers from the permission bits, and for root it
// says yes where every create fails (/proc, /sys, a folder whose filesystem refuses new names), so the
// folder is asked the real question with a probe file, created exclusively and removed at once.
std::optional<std::string> create_problem(fs::path const& folder) {
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    return "folder " + folder.string() + " is not writable (" + system_error_text() + ")";
  fs::path const probe = folder / (".fl-probe" + std::to_string(::getpid()));
  int const fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return std::nullopt;  // a probe of ours already there: the folder takes files
    return "folder " + folder.string() + " does not take new files (" + system_error_text() + ")";
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

}  // namespace

fs::path temporary_name_for(fs::path const& path) {
  return path.string() + ".tmp" + std::to_string(::getpid());
}

std::optional<std::string> output_file_problem(fs::path const& path) {
  if (path.empty()) return "is an empty path";
  fs::path const target = follow_symlinks(path);
  std::error_code error;
  auto const status = fs::status(target, error);
  if (status.type() == fs::file_type::directory) return "is a folder, not a file";
  if (fs::exists(status) && status.type() != fs::file_type::regular) {
    if (::access(target.c_str(), W_OK) != 0) return "cannot be written (" + system_error_text() + ")";
    return std::nullopt;  // a device or FIFO, written in place
  }
  fs::path const folder = folder_of(target);
  auto const folder_status = fs::status(folder, error);
  if (!fs::exists(folder_status)) return "folder " + folder.string() + " does not exist";
  if (folder_status.type() != fs::file_type::directory) return folder.string() + " is not a folder";
  return create_problem(folder);
}

std::optional<std::string> output_folder_problem(fs::path const& dir) {
  if (dir.empty()) return "is an empty path";
  std::error_code error;
  // The nearest part of the path that exists must be a writable folder (the rest is created).
  fs::path existing = dir;
  while (!fs::exists(fs::status(existing, error)) && existing.has_parent_path() &&
         existing.parent_path() != existing)
    existing = existing.parent_path();
  if (!fs::exists(fs::status(existing, error))) existing = ".";
  if (!fs::is_directory(fs::status(existing, error)))
    return existing == dir ? "is not a folder" : existing.string() + " is not a folder";
  return create_problem(existing);
}

std::optional<std::string> output_files_problem(fs::path const& dir, std::vector<std::string> const& files) {
  std::error_code error;
  if (!fs::is_directory(fs::status(dir, error))) return std::nullopt;
  for (std::string const& file : files)
    if (auto problem = output_file_problem(dir / file)) return file + " " + *problem;
  return std::nullopt;
}

void write_file_atomically(fs::path const& path, std::string_view content) {
  if (auto problem = output_file_problem(path)) throw std::runtime_error(path.string() + ": " + *problem);
  fs::path const target = follow_symlinks(path);
  std::error_code error;
  auto const status = fs::status(target, error);
  if (fs::exists(status) && status.type() != fs::file_type::regular) {
    write_in_place(path, target, content);
    return;
  }
  common::TemporaryFile temp(temporary_name_for(target).string());
  {
    std::ofstream out(temp.path(), std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path.string() + ": cannot write (" + system_error_text() + ")");
    out.write(content.data(), std::streamsize(content.size()));
    if (!out.flush())
      throw std::runtime_error(path.string() + ": write failed (" + system_error_text() + ")");
  }
  fs::rename(temp.path(), target, error);
  if (error) throw std::runtime_error(path.string() + ": cannot replace it (" + error.message() + ")");
  temp.release();
}

}  // namespace fl::common
