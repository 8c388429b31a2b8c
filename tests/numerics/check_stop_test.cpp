// A check asked to stop (fa-check under SIGINT/SIGTERM, CheckOptions::stop_requested): a forward check
// prepared slice by slice gives exactly the values of one piece, and a stop between slices leaves whole
// rows, judged, with the diagnosis skipped.
#include <catch2/catch.hpp>

#include <signal.h>

#include "numerics/check.hpp"
#include "numerics/input_families.hpp"
#include "numerics/standard_attention.hpp"
#include "tests/numerics/test_inputs.hpp"

using namespace fl::numerics;
using fl::numerics::test::make_shape;

namespace {

FamilyInputs forward_inputs() {
  FamilyRequest r;
  r.shape = make_shape(1, 2, 1, 600, 96, 16, false);  // 1200 query rows: five slices of 256
  r.seed = 3;
  r.precision = fl::common::Precision::bf16;
  r.with_backward = false;
  return generate_family(InputFamily::normal, r);
}

CheckOptions bf16_check() {
  CheckOptions o;
  o.claimed = fl::common::Precision::bf16;
  o.threads = 2;
  return o;
}

}  // namespace

TEST_CASE("a stoppable forward check that is never stopped equals the check in one piece",
          "[check][signals]") {
  FamilyInputs const in = forward_inputs();
  AttentionOutputs const out = standard_attention(in.inputs, recipe_for(fl::common::Precision::bf16));
  CheckResult const whole = run_check(in.inputs, out, bf16_check());
  CheckOptions sliced = bf16_check();
  int asked = 0;
  sliced.stop_requested = [&] { return ++asked, 0; };
  CheckResult const pieces = run_check(in.inputs, out, sliced);
  CHECK(asked >= 4);  // asked between the five slices and before the diagnosis
  CHECK_FALSE(pieces.interrupted());
  CHECK(pieces.verdict() == std::string("pass"));
  CHECK(pieces.reference.sample.query_rows == whole.reference.sample.query_rows);
  CHECK(pieces.reference.o == whole.reference.o);
  CHECK(pieces.reference.lse == whole.reference.lse);
  CHECK(pieces.bounds.o == whole.bounds.o);
  CHECK(pieces.bounds.lse == whole.bounds.lse);
  REQUIRE(pieces.baseline.metrics.size() == whole.baseline.metrics.size());
  CHECK(pieces.baseline.metrics[0].rmse == whole.baseline.metrics[0].rmse);
  CHECK(pieces.judgement.outputs[0].metrics.max_abs == whole.judgement.outputs[0].metrics.max_abs);
}

TEST_CASE("a check stopped after its first slice judges those rows only, says so, and names nothing",
          "[check][signals]") {
  FamilyInputs const in = forward_inputs();
  AttentionOutputs out = standard_attention(in.inputs, recipe_for(fl::common::Precision::bf16));
  CheckOptions stopped = bf16_check();
  stopped.stop_requested = [] { return SIGINT; };
  CheckResult const correct = run_check(in.inputs, out, stopped);
  CHECK(correct.stop_signal == SIGINT);
  CHECK(correct.rows_cut_by_stop);
  CHECK(correct.checked_query_rows == 256);  // the first slice always runs
  CHECK(correct.total_query_rows == 1200);
  CHECK(correct.reference.o.size() == 256 * 16);
  CHECK(correct.verdict() == std::string("incomplete"));  // no failure, but not every row was checked

  for (double& x : out.o) x *= 1.01;  // wrong everywhere: the rows checked fail
  bool diagnosed = false;
  Diagnoser const diagnoser = [&](DiagnosisRequest const&) {
    diagnosed = true;
    return std::vector<DiagnosisEntry>{};
  };
  CheckResult const wrong = run_check(in.inputs, out, stopped, diagnoser);
  CHECK(wrong.verdict() == std::string("fail"));
  CHECK(wrong.interrupted());
  CHECK_FALSE(diagnosed);
  bool said = false;
  for (auto const& note : wrong.notes)
    said = said || note.find("the diagnosis was not run") != std::string::npos;
  CHECK(said);
}

TEST_CASE("a backward check asked to stop finishes its rows and skips the diagnosis", "[check][signals]") {
  FamilyRequest r;
  r.shape = make_shape(1, 2, 1, 64, 80, 16, true);
  r.seed = 4;
  r.precision = fl::common::Precision::bf16;
  r.with_backward = true;
  FamilyInputs const in = generate_family(InputFamily::normal, r);
  AttentionOutputs out = standard_attention(in.inputs, recipe_for(fl::common::Precision::bf16));
  for (double& x : out.dk) x *= 1.5;
  CheckOptions stopped = bf16_check();
  stopped.stop_requested = [] { return SIGTERM; };
  bool diagnosed = false;
  CheckResult const result = run_check(in.inputs, out, stopped, [&](DiagnosisRequest const&) {
    diagnosed = true;
    return std::vector<DiagnosisEntry>{};
  });
  CHECK(result.stop_signal == SIGTERM);
  CHECK_FALSE(result.rows_cut_by_stop);
  CHECK(result.checked_query_rows == result.total_query_rows);
  CHECK(result.checked_key_rows == result.total_key_rows);
  CHECK(result.verdict() == std::string("fail"));
  CHECK_FALSE(diagnosed);
}
