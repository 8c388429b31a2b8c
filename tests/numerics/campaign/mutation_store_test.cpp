// fa-mutate's SQLite rows.
#include "numerics/campaign/mutation_store.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>

#include "db/schema.hpp"

namespace mut = fl::numerics::mutants;
using fl::common::Precision;

namespace {

mut::CampaignResult small_result() {
  mut::CampaignResult r;
  r.target = "cpu";
  r.family = "fa2";
  r.baseline.push_back({Precision::bf16, 19, {}});
  mut::MutantOutcome killed;
  killed.id = mut::MutantId::unrescaled_o;
  killed.precision = Precision::bf16;
  killed.status = mut::MutantStatus::killed;
  killed.killed_by = mut::InputCase{fl::numerics::InputFamily::normal, false, 1};
  killed.diagnosis = {"unrescaled-o", "stale-max"};
  killed.named_correctly = true;
  killed.match_error = 1e-3;
  killed.evidence = "reproduces the observation";
  mut::MutantOutcome gpu_only;
  gpu_only.id = mut::MutantId::bwd_race;
  gpu_only.precision = Precision::bf16;
  gpu_only.status = mut::MutantStatus::not_applicable;
  gpu_only.reason = "GPU only";
  r.outcomes = {killed, gpu_only};
  return r;
}

}  // namespace

TEST_CASE("fa-mutate runs are stored in one transaction, one row per catalogued mutant", "[mutants][db]") {
  auto const path = std::filesystem::temp_directory_path() /
                    ("fl_mutation_store_" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(path);
  auto const ids = mut::store_mutation_runs(path, "fa-mutate --dtype bf16", {small_result()});
  REQUIRE(ids.size() == 1);
  fl::db::Database db = fl::db::open_database(path);
  auto run =
      db.prepare("SELECT target, family, dtype, mutation_score, passed FROM mutation_runs WHERE run_id = ?");
  run.bind_int64(1, ids[0]);
  REQUIRE(run.step());
  CHECK(run.column_text(0) == "cpu");
  CHECK(run.column_text(2) == "bf16");
  CHECK(run.column_double(3) == 100.0);
  CHECK(run.column_int64(4) == 1);
  auto rows = db.prepare(
      "SELECT mutant_id, outcome, diagnosis, named_correctly, note FROM mutation_results WHERE run_id = ? "
      "ORDER BY outcome = 'not_applicable', mutant_id");
  rows.bind_int64(1, ids[0]);
  REQUIRE(rows.step());
  CHECK(rows.column_text(0) == "unrescaled-o");
  CHECK(rows.column_text(2) == "unrescaled-o,stale-max");
  REQUIRE(rows.step());  // bwd-race is stored as not applicable, with its reason
  CHECK(rows.column_text(0) == "bwd-race");
  CHECK(rows.column_text(1) == "not_applicable");
  CHECK_FALSE(rows.column_text(4).empty());
  CHECK_FALSE(rows.step());
  std::filesystem::remove(path);
}

TEST_CASE("a GPU campaign's rows name the GPU it ran on, a CPU campaign's name none", "[mutants][db]") {
  auto const path = std::filesystem::temp_directory_path() /
                    ("fl_mutation_store_gpu_" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(path);
  mut::CampaignResult on_gpu = small_result();
  on_gpu.target = "gpu";
  on_gpu.family = "fa2_sm80";
  fl::db::GpuKey const h200{"NVIDIA H200", 9, 0, 132, "580.159.04", 13000};
  auto const ids = mut::store_mutation_runs(path, "fa-mutate --target gpu", {on_gpu, small_result()}, h200);
  REQUIRE(ids.size() == 2);
  fl::db::Database db = fl::db::open_database(path);
  auto gpu = db.prepare(
      "SELECT g.name, g.sm_count, g.driver_version FROM mutation_runs r JOIN gpus g USING (gpu_id) "
      "WHERE r.run_id = ?");
  gpu.bind_int64(1, ids[0]);
  REQUIRE(gpu.step());
  CHECK(gpu.column_text(0) == "NVIDIA H200");
  CHECK(gpu.column_int64(1) == 132);
  CHECK(gpu.column_text(2) == "580.159.04");
  auto cpu = db.prepare("SELECT target, gpu_id IS NULL FROM mutation_runs WHERE run_id = ?");
  cpu.bind_int64(1, ids[1]);
  REQUIRE(cpu.step());
  CHECK(cpu.column_text(0) == "cpu");
  CHECK(cpu.column_int64(1) == 1);
  std::filesystem::remove(path);
}
