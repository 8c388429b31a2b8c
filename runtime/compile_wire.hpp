#pragma once
// The compile worker's wire format (runtime/compile_worker.hpp): the request the parent writes to the
// worker's stdin and the result it reads back. Length-prefixed fields under a format version, nothing that
// depends on the host's layout beyond byte order (both ends are the same binary's build). Apart from the
// process handling so that each can be read (and tested) alone.
#include <string>

#include "runtime/compile_request.hpp"
#include "runtime/nvrtc_compiler.hpp"

namespace fl::runtime {

std::string encode_request(CompileRequest const& request);
Result<CompileRequest> decode_request(std::string const& bytes);
std::string encode_result(Result<CompiledProgram> const& result);
Result<CompiledProgram> decode_result(std::string const& bytes);

}  // namespace fl::runtime
