#include "tools/fa_mutate/mutant_sources.hpp"

#include "runtime/kernel_source.hpp"

namespace fl::tools::fa_mutate {

using namespace fl::device;

namespace {

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

Problem representative_problem(Direction direction) {
  Problem p;
  p.dtype = common::Precision::bf16;
  p.direction = direction;
  return p;
}

runtime::Result<FamilySource> load_family_source(std::unique_ptr<Family> family, Direction direction,
                                                 std::filesystem::path const& kernels_dir) {
  auto source =
      runtime::load_kernel_source(family->source_file(representative_problem(direction)), kernels_dir);
  if (!source) return source.error();
  FamilySource out{std::move(family), source->main.text, source->main.path};
  for (auto const& header : source->includes) out.text += "\n" + header.text;
  if (!source->includes.empty())
    out.files += " and the " + std::to_string(source->includes.size()) + " kernels_src headers it includes";
  return out;
}

bool source_has_switch(std::string_view text, std::string_view switch_name) {
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view const line = text.substr(line_start, line_end - line_start);
    std::size_t const first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] == '#') {
      std::string_view const directive =
          line.substr(0, line.find("//"));  // a trailing comment does not count
      for (std::size_t at = directive.find(switch_name); at != std::string_view::npos;
           at = directive.find(switch_name, at + 1)) {
        std::size_t const after = at + switch_name.size();
        bool const starts = at == 0 || !is_identifier_char(directive[at - 1]);
        bool const ends = after == directive.size() || !is_identifier_char(directive[after]);
        if (starts && ends) return true;
      }
    }
    line_start = line_end + 1;
  }
  return false;
}

}  // namespace fl::tools::fa_mutate
