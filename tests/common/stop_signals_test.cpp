#include <catch2/catch.hpp>

#include <signal.h>

#include "common/stop_signals.hpp"

using namespace fl;

TEST_CASE("StopOnSignals turns SIGINT and SIGTERM into a request and restores the old handlers", "[common]") {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  {
    common::StopOnSignals const handlers;
    CHECK(common::StopOnSignals::received() == 0);
    raise(SIGTERM);
    CHECK(common::StopOnSignals::received() == SIGTERM);
    raise(SIGINT);  // the first signal is the one reported
    CHECK(common::StopOnSignals::received() == SIGTERM);
  }
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  CHECK(now.sa_handler == before.sa_handler);
}
