#pragma once
// Files appear whole or not at all: a regular file (or a name that does not exist yet) is written to
// "<name>.tmp<pid>" in the same folder, then renamed over it. A symlink is followed and its target is
// written the same way, so the link survives. A device, FIFO or socket (/dev/null, /dev/stdout) is
// written in place: renaming over it would replace the device with a regular file. A folder is refused.
// The temporary file never outlives the call, whatever ends it (an error, SIGINT, SIGTERM: see
// common/temporary_files.hpp).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fl::common {

// Throws std::runtime_error, one line naming the path, when the file cannot be written.
void write_file_atomically(std::filesystem::path const& path, std::string_view content);

// A temporary name beside `path` (same folder, so rename is atomic).
std::filesystem::path temporary_name_for(std::filesystem::path const& path);

// Why `path` cannot take an output file ("is a folder", "folder /x does not exist", "folder /x is not
// writable", "folder /proc does not take new files"), or nullopt when it can: asked before the work, so
// that hours of computation never end in an unwritable --json. The folder is probed with a file created
// and removed at once (permission bits alone say yes to root under /proc).
std::optional<std::string> output_file_problem(std::filesystem::path const& path);

// Likewise for an output folder (created with its parents when missing): nullopt when it can be used.
std::optional<std::string> output_folder_problem(std::filesystem::path const& dir);

// Why one of `files` (names inside the output folder `dir`) cannot be written, naming it ("report.md is a
// folder, not a file"), or nullopt: a command that writes several files into a folder asks this with
// output_folder_problem, so that a file that is a folder fails before the work, not after it. A folder that
// does not exist yet holds none of them.
std::optional<std::string> output_files_problem(std::filesystem::path const& dir,
                                                std::vector<std::string> const& files);

}  // namespace fl::common
