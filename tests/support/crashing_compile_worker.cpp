// A compile worker for the crash-survival tests: the real one's protocol (runtime/compile_worker.hpp), but
// it raises SIGSEGV when the program's source or a define holds FL_TEST_RAISE_SIGSEGV, or a name expression
// contains $FL_TEST_CRASH_ON (e.g. "naive_scores<__nv_bfloat16, 16,": one family's configs), and never
// answers for FL_TEST_HANG: the stand-in for NVRTC 13.0's segfault on some inline PTX. Each start appends a
// line to $FL_TEST_WORKER_LOG, so a test can count how often a compile was tried.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include "runtime/compile_worker.hpp"

namespace {
std::string read_stdin() {
  std::string bytes;
  char buffer[1 << 16];
  for (ssize_t n; (n = ::read(STDIN_FILENO, buffer, sizeof buffer)) > 0;)
    bytes.append(buffer, std::size_t(n));
  return bytes;
}

bool asks_for(fl::runtime::CompileRequest const& request, std::string const& word) {
  if (request.source.find(word) != std::string::npos) return true;
  return request.defines.contains(word);
}
}  // namespace

int main() {
  auto request = fl::runtime::decode_request(read_stdin());
  if (char const* log = std::getenv("FL_TEST_WORKER_LOG"))
    std::ofstream(log, std::ios::app) << (request ? request.value().program_name : "?") << "\n";
  if (!request) return 1;
  auto const& r = request.value();
  bool crash = asks_for(r, "FL_TEST_RAISE_SIGSEGV");
  if (char const* on = std::getenv("FL_TEST_CRASH_ON"); on && *on)
    for (auto const& name : r.name_expressions) crash = crash || name.find(on) != std::string::npos;
  if (crash) {
    // Die by the signal itself: under FA_SANITIZE=ON, AddressSanitizer's SIGSEGV handler would otherwise
    // turn the crash into exit status 1 and the tests would not see the signal NVRTC's crash gives.
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
  if (asks_for(r, "FL_TEST_HANG")) pause();
  auto const answer = fl::runtime::encode_result(fl::runtime::compile(r));
  return ::write(STDOUT_FILENO, answer.data(), answer.size()) == ssize_t(answer.size()) ? 0 : 1;
}
