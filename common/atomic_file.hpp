#pragma once
// Files appear whole or not at all: written to "<name>.tmp<pid>" in the same folder, then renamed.
#include <filesystem>
#include <string_view>

namespace fl::common {

// Throws std::runtime_error naming the path when the file cannot be written.
void write_file_atomically(std::filesystem::path const& path, std::string_view content);

// A temporary name beside `path` (same folder, so rename is atomic).
std::filesystem::path temporary_name_for(std::filesystem::path const& path);

}  // namespace fl::common
