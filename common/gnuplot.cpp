#include "common/gnuplot.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/atomic_file.hpp"

namespace fl::common {

namespace {

std::string shell_quote(std::string const& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string gnuplot_quote(std::string const& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

bool gnuplot_available(std::string const& gnuplot) {
  if (gnuplot.empty()) return false;
  // Asked what it is, a program must say "gnuplot ...": --gnuplot yes ran coreutils' yes, which
  // answers --version too and then prints forever (the fuzz harness found the hang).
  std::string const command = "timeout -k 2 " + std::to_string(kGnuplotVersionSeconds) + " " +
                              shell_quote(gnuplot) + " --version 2> /dev/null";
  FILE* const pipe = ::popen(command.c_str(), "r");
  if (!pipe) return false;
  char line[64] = {};
  bool const answered = std::fgets(line, sizeof line, pipe) != nullptr;
  for (char rest[256]; std::fgets(rest, sizeof rest, pipe);) {  // drained, so that it can exit
  }
  int const rc = ::pclose(pipe);
  return answered && rc == 0 && std::string_view(line).starts_with("gnuplot ");
}

bool render_svg(std::string const& gnuplot, std::string const& script, std::filesystem::path const& svg) {
  std::filesystem::path const temp_svg = temporary_name_for(svg);
  std::filesystem::path const script_file = svg.string() + ".gp.tmp";
  std::string const full = "set terminal svg size 900,560 dynamic enhanced font 'sans,12'\nset output " +
                           gnuplot_quote(temp_svg.string()) + "\n" + script + "\nunset output\n";
  write_file_atomically(script_file, full);
  std::string const command = "timeout -k 5 " + std::to_string(kGnuplotRenderSeconds) + " " +
                              shell_quote(gnuplot) + " " + shell_quote(script_file.string()) +
                              " > /dev/null 2>&1";
  int const rc = std::system(command.c_str());
  std::error_code ec;
  std::filesystem::remove(script_file, ec);
  if (rc != 0 || !std::filesystem::exists(temp_svg) || std::filesystem::file_size(temp_svg) == 0) {
    std::filesystem::remove(temp_svg, ec);
    return false;
  }
  std::filesystem::rename(temp_svg, svg);
  return true;
}

}  // namespace fl::common
