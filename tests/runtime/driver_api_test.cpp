#include "runtime/driver_api.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <string>

#include "common/exit_codes.hpp"

namespace {

bool is_one_line(std::string const& text) {
  return !text.empty() && text.find('\n') == std::string::npos;
}

}  // namespace

TEST_CASE("a missing driver library is one line starting 'no CUDA driver:'", "[driver]") {
  auto api = fl::runtime::load_driver_api("libcuda-that-does-not-exist.so.1");
  REQUIRE_FALSE(api.ok());
  std::string const& message = api.error().message;
  CHECK(message.starts_with("no CUDA driver: "));
  CHECK(message.find("libcuda-that-does-not-exist.so.1") != std::string::npos);  // dlerror names it
  CHECK(is_one_line(message));
  CHECK(api.error().stage == "driver");
}

TEST_CASE("a library without the driver's entry points is not a driver", "[driver]") {
  // libm loads fine but has no cuInit: that must read as a missing driver, not crash on a null pointer.
  auto api = fl::runtime::load_driver_api("libm.so.6");
  REQUIRE_FALSE(api.ok());
  CHECK(api.error().message.starts_with("no CUDA driver: libm.so.6 lacks cuInit"));
  CHECK(is_one_line(api.error().message));
}

TEST_CASE("the process-wide driver is usable or explains itself in one line", "[driver]") {
  auto api = fl::runtime::driver_api();
  if (api.ok()) {
    CHECK(api.value()->device_count > 0);
    CHECK(api.value()->driver_version > 0);
  } else {
    std::string const& message = api.error().message;
    CHECK((message.starts_with("no CUDA driver: ") || message.starts_with("no CUDA device: ")));
    CHECK(is_one_line(message));
  }
  // Asked again, the same answer (loaded once).
  CHECK(fl::runtime::driver_api().ok() == api.ok());
}

TEST_CASE("exit_no_gpu prints the one line on stderr and exits with code 3", "[driver]") {
  std::array<int, 2> pipe_fds{};
  REQUIRE(pipe(pipe_fds.data()) == 0);
  pid_t const child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    fl::runtime::exit_no_gpu(fl::runtime::Error{"driver", "no CUDA driver: libcuda.so.1: cannot open", ""});
  }
  close(pipe_fds[1]);
  std::string printed;
  std::array<char, 256> chunk{};
  for (ssize_t n; (n = read(pipe_fds[0], chunk.data(), chunk.size())) > 0;) {
    printed.append(chunk.data(), static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == fl::common::kExitNoGpu);
  CHECK(fl::common::kExitNoGpu == 3);
  CHECK(printed == "no CUDA driver: libcuda.so.1: cannot open\n");
}
