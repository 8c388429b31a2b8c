#include "runtime/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <memory>
#include <optional>
#include <sstream>

namespace fl::runtime {
namespace {

Error compile_error(std::string message, std::string log = {}) {
  return Error{"compile", std::move(message), std::move(log)};
}

Error nvrtc_error(nvrtcResult code, std::string_view call) {
  return compile_error(std::string(call) + ": " + nvrtcGetErrorString(code));
}

bool is_identifier(std::string const& name) {
  auto const word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  return !name.empty() && std::isdigit(static_cast<unsigned char>(name.front())) == 0 &&
         std::all_of(name.begin(), name.end(), word);
}

struct ProgramDeleter {
  void operator()(nvrtcProgram program) const { nvrtcDestroyProgram(&program); }
};
using ProgramHandle = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  if (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// NVRTC's diagnostics read "<file>(<line>): error: <text>". The first error line, and its location.
struct Diagnostic {
  std::string line;
  std::string file;
  std::size_t source_line = 0;
};

std::optional<Diagnostic> first_error(std::string const& log) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("error:") == std::string::npos && line.find(": error") == std::string::npos) continue;
    Diagnostic diagnostic{line, {}, 0};
    auto const open = line.find('(');
    auto const close = line.find("): ", open == std::string::npos ? 0 : open);
    if (open != std::string::npos && close != std::string::npos) {
      std::size_t number = 0;
      auto const [end, ec] = std::from_chars(line.data() + open + 1, line.data() + close, number);
      if (ec == std::errc{} && end == line.data() + close) {
        diagnostic.file = line.substr(0, open);
        diagnostic.source_line = number;
      }
    }
    return diagnostic;
  }
  return std::nullopt;
}

std::optional<std::string> line_of(std::string const& text, std::size_t number) {
  std::istringstream lines(text);
  std::size_t current = 0;
  for (std::string line; std::getline(lines, line);) {
    if (++current == number) return line;
  }
  return std::nullopt;
}

// The text NVRTC calls `file`: the program itself or a header under one of its spellings.
std::string const* text_named(CompileRequest const& request, std::string const& file) {
  if (file == request.program_name) return &request.source;
  for (auto const& header : request.headers) {
    if (header.path == file || std::find(header.spellings.begin(), header.spellings.end(), file) !=
                                   header.spellings.end()) {
      return &header.text;
    }
  }
  return nullptr;
}

Error failed_compilation(CompileRequest const& request, std::string const& log) {
  auto const diagnostic = first_error(log);
  std::string message = diagnostic ? diagnostic->line : "NVRTC failed without an error line";
  std::string full_log = log;
  if (diagnostic && diagnostic->source_line > 0) {
    if (auto const* text = text_named(request, diagnostic->file)) {
      if (auto const offending = line_of(*text, diagnostic->source_line)) {
        full_log += "\noffending line " + diagnostic->file + ":" + std::to_string(diagnostic->source_line) +
                    ": " + *offending + "\n";
      }
    }
  }
  return compile_error(std::move(message), std::move(full_log));
}

Result<std::vector<char>> cubin_of(nvrtcProgram program) {
  std::size_t size = 0;
  if (auto rc = nvrtcGetCUBINSize(program, &size); rc != NVRTC_SUCCESS) return nvrtc_error(rc, "nvrtcGetCUBINSize");
  if (size == 0) return compile_error("NVRTC produced no CUBIN (was a virtual compute_XX arch requested?)");
  std::vector<char> cubin(size);
  if (auto rc = nvrtcGetCUBIN(program, cubin.data()); rc != NVRTC_SUCCESS) return nvrtc_error(rc, "nvrtcGetCUBIN");
  return cubin;
}

}  // namespace

Result<CompiledProgram> compile(CompileRequest const& request) {
  for (auto const& [name, value] : request.defines) {
    if (!is_identifier(name)) return compile_error("define name '" + name + "' is not a C identifier");
  }

  std::vector<char const*> header_texts;
  std::vector<char const*> header_names;
  for (auto const& header : request.headers) {
    for (auto const& spelling : header.spellings) {
      header_texts.push_back(header.text.c_str());
      header_names.push_back(spelling.c_str());
    }
  }
  nvrtcProgram raw = nullptr;
  if (auto rc = nvrtcCreateProgram(&raw, request.source.c_str(), request.program_name.c_str(),
                                   static_cast<int>(header_texts.size()), header_texts.data(), header_names.data());
      rc != NVRTC_SUCCESS) {
    return nvrtc_error(rc, "nvrtcCreateProgram");
  }
  ProgramHandle program(raw);
  for (auto const& expression : request.name_expressions) {
    if (auto rc = nvrtcAddNameExpression(raw, expression.c_str()); rc != NVRTC_SUCCESS) {
      return nvrtc_error(rc, "nvrtcAddNameExpression(" + expression + ")");
    }
  }

  CompiledProgram compiled;
  compiled.program_name = request.program_name;
  compiled.arch = request.arch;
  compiled.options = compile_options(request);
  compiled.nvrtc_version = nvrtc_version();
  std::vector<char const*> option_pointers;
  for (auto const& option : compiled.options) option_pointers.push_back(option.c_str());

  auto const start = std::chrono::steady_clock::now();
  nvrtcResult const rc = nvrtcCompileProgram(raw, static_cast<int>(option_pointers.size()), option_pointers.data());
  compiled.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  compiled.log = program_log(raw);
  if (rc != NVRTC_SUCCESS) return failed_compilation(request, compiled.log);

  auto cubin = cubin_of(raw);
  if (!cubin.ok()) return cubin.error();
  compiled.cubin = std::move(cubin).value();
  for (auto const& expression : request.name_expressions) {
    char const* lowered = nullptr;
    if (auto lrc = nvrtcGetLoweredName(raw, expression.c_str(), &lowered); lrc != NVRTC_SUCCESS || !lowered) {
      return nvrtc_error(lrc, "nvrtcGetLoweredName(" + expression + ")");
    }
    compiled.lowered_names.emplace(expression, lowered);
  }
  compiled.resources = parse_ptxas_report(compiled.log);
  return compiled;
}

std::string CompiledProgram::lowered_name(std::string_view name_expression) const {
  auto const it = lowered_names.find(std::string(name_expression));
  return it == lowered_names.end() ? std::string() : it->second;
}

KernelResources const* CompiledProgram::resources_of(std::string_view name_expression) const {
  std::string const lowered = lowered_name(name_expression);
  return resources.find(lowered.empty() ? name_expression : std::string_view(lowered));
}

}  // namespace fl::runtime
