#pragma once
// The compile stage: CompileRequest -> CUBIN with its log, lowered names and ptxas resources, or an Error
// carrying the whole NVRTC log and the offending source line. NVRTC programs are independent, so compile()
// may run on many threads at once (the tuner's compile pool does).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/compile_request.hpp"
#include "runtime/ptxas_report.hpp"
#include "runtime/result.hpp"

namespace fl::runtime {

struct CompiledProgram {
  std::string program_name;
  TargetArch arch = TargetArch::sm_80;
  std::vector<char> cubin;  // real-architecture SASS (nvrtcGetCUBIN): loads without a JIT step
  std::string log;          // NVRTC's full log, ptxas' verbose report included
  std::map<std::string, std::string> lowered_names;  // name expression -> mangled kernel name
  PtxasReport resources;
  double compile_ms = 0.0;  // wall time of nvrtcCompileProgram
  std::string nvrtc_version;
  std::vector<std::string> options;  // exactly what NVRTC was given

  // The mangled name of `name_expression`, or "" when it was not requested.
  std::string lowered_name(std::string_view name_expression) const;
  // Resources of the kernel behind `name_expression` (or of a mangled name), nullptr when unknown.
  KernelResources const* resources_of(std::string_view name_expression) const;
};

// Compiles one program. Fails with stage "compile": the message is NVRTC's first error line (e.g.
// "smoke.cu(12): error: expected a \";\""), the log is the full NVRTC log followed by the offending source
// line; invalid define names and NVRTC API failures are reported the same way.
Result<CompiledProgram> compile(CompileRequest const& request);

}  // namespace fl::runtime
