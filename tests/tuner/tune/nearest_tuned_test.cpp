// The answer for a problem nobody tuned (tuner/tune/nearest_tuned.hpp): the tuned config when the problem
// itself was tuned, else the nearest tuned shape whose config the family accepts for this problem, named,
// else the family default; never another direction's config.
#include <catch2/catch.hpp>

#include <algorithm>

#include "device/families/registry.hpp"
#include "tuner/tune/db_rows.hpp"
#include "tuner/tune/nearest_tuned.hpp"
#include "tuner/tune/tune_loop.hpp"

using namespace fl;
using namespace fl::device;
using namespace fl::tuner;
using common::Precision;

namespace {
Problem headline(int n, int d, bool causal, Precision dtype = Precision::bf16,
                 Direction dir = Direction::forward) {
  return headline_problem(n, d, causal, dtype, dir);
}
db::BestConfig tuned(Family const& family, Problem const& problem, Config const& config, double tflops) {
  db::BestConfig row;
  row.gpu = {"NVIDIA H200", 9, 0, 132, "580.159.04", 13000};
  row.problem = problem_key(problem);
  row.family = std::string(family.name());
  row.config = to_string(config);
  row.tflops = tflops;
  row.source = "seed";
  return row;
}
}  // namespace

TEST_CASE("shape distance: head dim, then mask, then dtype, then n", "[tuner][tune]") {
  auto const d128 = headline(4096, 128, false);
  CHECK(shape_distance(d128, d128) == 0.0);
  CHECK(shape_distance(headline(4096, 64, false), d128) == Approx(4.5));  // a head-dim step; h 32 vs 16
  CHECK(shape_distance(headline(4096, 128, true), d128) == Approx(2.0));
  CHECK(shape_distance(headline(4096, 128, false, Precision::fp16), d128) == Approx(1.0));
  CHECK(shape_distance(headline(8192, 128, false), d128) < shape_distance(headline(4096, 128, true), d128));
  CHECK_FALSE(
      std::isfinite(shape_distance(headline(4096, 128, false, Precision::bf16, Direction::backward), d128)));
  CHECK_FALSE(std::isfinite(shape_distance(headline(4096, 128, false, Precision::fp8_e4m3), d128)));
}

TEST_CASE("a problem not tuned answers with the nearest tuned shape, and says which", "[tuner][tune]") {
  auto const family = find_family("fa2_sm80");
  auto const full_d128 = headline(4096, 128, false);
  auto const causal_d64 = headline(1024, 64, true);
  Config const a = family->default_config(full_d128);
  Config const b = family->default_config(causal_d64);
  std::vector<db::BestConfig> const known{tuned(*family, full_d128, a, 300.0),
                                          tuned(*family, causal_d64, b, 200.0)};

  auto const same = nearest_tuned(*family, full_d128, known);
  CHECK(same.kind == AnswerKind::tuned);
  CHECK(same.config == to_string(a));

  auto const near_d64 = nearest_tuned(*family, headline(2048, 64, true), known);
  CHECK(near_d64.kind == AnswerKind::nearest);
  CHECK(near_d64.config == to_string(b));
  REQUIRE(near_d64.from);
  CHECK(describe(problem_from_key(near_d64.from->problem)) == describe(causal_d64));

  auto const near_d128 = nearest_tuned(*family, headline(8192, 128, true), known);  // mask + n beat head dim
  CHECK(near_d128.kind == AnswerKind::nearest);
  CHECK(near_d128.config == to_string(a));

  // Another direction is never near: the backward gets its family's default, not a forward config.
  auto const bwd_family = find_family("fa2_sm80_bwd");
  auto const bwd =
      nearest_tuned(*bwd_family, headline(4096, 128, false, Precision::bf16, Direction::backward), known);
  CHECK(bwd.kind == AnswerKind::family_default);
  CHECK(bwd.considered == 0);
}

TEST_CASE("a nearest config the family rejects for this problem is skipped", "[tuner][tune]") {
  auto const family = find_family("fa2_sm80");
  auto const d64 = headline(4096, 64, false);
  auto const d256 = headline(4096, 256, false);
  // A d64 config that fa2_sm80 forbids at d256 (its shared memory or registers), tuned at d64 only.
  std::optional<Config> rejected_at_d256;
  for (auto const& config : enumerate_space(*family, d64))
    if (family->violates(config, d256)) {
      rejected_at_d256 = config;
      break;
    }
  REQUIRE(rejected_at_d256);
  std::vector<db::BestConfig> const known{tuned(*family, d64, *rejected_at_d256, 250.0)};
  auto const answer = nearest_tuned(*family, d256, known);
  CHECK(answer.kind == AnswerKind::family_default);
  CHECK(answer.config == to_string(family->default_config(d256)));
  CHECK(answer.considered == 1);
  CHECK(nearest_tuned(*family, headline(2048, 64, false), known).kind == AnswerKind::nearest);
}

TEST_CASE("warm start: the nearest other shapes' configs that are valid here, nearest first, each once",
          "[tuner][tune]") {
  auto const family = find_family("fa2_sm80");
  auto const wanted = headline(4096, 128, false, Precision::fp16);
  auto with = [&](Problem const& p, std::string const& key, int value) {
    Config c = family->default_config(wanted);
    c[key] = value;
    if (family->violates(c, p)) c = family->default_config(p);
    return c;
  };
  Config const from_bf16 = with(wanted, "kStages", 2);  // same shape in bf16: distance 1
  Config const from_n8192 = with(headline(8192, 128, false), "kBlockN", 64);  // bf16 and n: 1 + 1 + 0.5
  Config const from_causal = with(headline(4096, 128, true), "kQInRegs", 1);  // mask + dtype: 3
  auto const d256 = headline(4096, 256, false, Precision::fp16);
  Config const from_d256 = family->default_config(d256);  // head dim: 4
  std::vector<db::BestConfig> const known{
      tuned(*family, headline(4096, 128, true), from_causal, 250.0),
      tuned(*family, d256, from_d256, 200.0),
      tuned(*family, headline(8192, 128, false), from_n8192, 310.0),
      tuned(*family, headline(4096, 128, false), from_bf16, 300.0),
      tuned(*family, headline(2048, 128, false), from_bf16, 290.0),   // the same config again: listed once
      tuned(*family, wanted, family->default_config(wanted), 305.0),  // the problem itself: not a warm start
      tuned(*find_family("fa2_sm80_bwd"), headline(4096, 128, false, Precision::fp16, Direction::backward),
            find_family("fa2_sm80_bwd")
                ->default_config(headline(4096, 128, false, Precision::fp16, Direction::backward)),
            100.0)};
  auto const configs = warm_start_configs(*family, wanted, known, 8);
  REQUIRE(from_bf16 != from_n8192);  // four different configs (the family's rules left each change standing)
  REQUIRE(from_n8192 != from_causal);
  REQUIRE(from_bf16 != from_causal);
  REQUIRE(from_d256 != from_causal);
  std::vector<Config> const expected_order{from_bf16, from_n8192, from_causal};
  REQUIRE(configs.size() >= 3);
  for (std::size_t i = 0; i < expected_order.size(); ++i) {
    INFO("position " << i << ": " << to_string(configs[i]) << " expected " << to_string(expected_order[i]));
    CHECK(configs[i] == expected_order[i]);
  }
  CHECK(std::count(configs.begin(), configs.end(), from_bf16) == 1);
  for (auto const& c : configs) CHECK_FALSE(family->violates(c, wanted));
  // A d256 config is valid at d128 only if the family says so; either way it is the farthest.
  if (!family->violates(from_d256, wanted)) CHECK(configs.back() == from_d256);
  CHECK(warm_start_configs(*family, wanted, known, 2).size() == 2);
}

TEST_CASE("warm start leaves out a row that is no point of the space (tuned before a parameter was added)",
          "[tuner][tune]") {
  auto const family = find_family("fa3_sm90");
  auto const wanted = headline(16384, 64, true, Precision::fp16);
  auto const neighbour = headline(8192, 64, true, Precision::fp16);
  Config complete = family->default_config(neighbour);
  REQUIRE(complete.contains("kTransposeV"));
  Config older = complete;  // the same kernel, spelled before kTransposeV existed
  older.erase("kTransposeV");
  older["kStages"] = complete["kStages"] == 2 ? 3 : 2;  // a different config, so the two rows are told apart
  REQUIRE_FALSE(family->violates(older, wanted));       // valid here: only its spelling is incomplete
  auto const configs = warm_start_configs(
      *family, wanted, {tuned(*family, neighbour, older, 600.0), tuned(*family, neighbour, complete, 500.0)},
      4);
  REQUIRE(configs.size() == 1);
  CHECK(configs.front() == complete);
}

TEST_CASE("warm start draws on the shipped seeds of this GPU where the database has no row of its own",
          "[tuner][tune]") {
  auto const family = find_family("fa2_sm80");
  auto const wanted = headline(4096, 128, true, Precision::fp16);
  auto const bf16 = headline(4096, 128, true);
  Config seeded = family->default_config(bf16);
  seeded["kStages"] = seeded["kStages"] == 2 ? 1 : 2;
  REQUIRE_FALSE(family->violates(seeded, wanted));
  Config measured = family->default_config(headline(2048, 128, true, Precision::fp16));
  // The database measured fp16 at n 2048 (distance 1); the seed file has bf16 at this very n (distance 1,
  // faster), and a row of another GPU.
  std::vector<db::BestConfig> const own{
      tuned(*family, headline(2048, 128, true, Precision::fp16), measured, 250.0)};
  auto other_gpu = tuned(*family, headline(8192, 128, true, Precision::fp16), seeded, 400.0);
  other_gpu.gpu.name = "NVIDIA H100 80GB HBM3";
  std::vector<db::BestConfig> const seeds{tuned(*family, bf16, seeded, 300.0), other_gpu};
  // Without the seeds, the bf16 winner is not a candidate: the 2026-12-04 grid's fp16 lines.
  auto const alone = warm_start_configs(*family, wanted, own, 4);
  CHECK(std::find(alone.begin(), alone.end(), seeded) == alone.end());
  auto const known = with_seeds(own, seeds, "NVIDIA H200");
  CHECK(known.size() == 2);  // the H100's row is not this GPU's
  auto const configs = warm_start_configs(*family, wanted, known, 4);
  REQUIRE_FALSE(configs.empty());
  CHECK(configs.front() == seeded);  // the same distance as the database's row, and faster
  // The database's own row of a problem wins over the seed of that problem.
  auto mine = tuned(*family, bf16, measured, 280.0);
  mine.source = "measured";
  auto const kept = with_seeds({mine}, seeds, "NVIDIA H200");
  REQUIRE(kept.size() == 1);
  CHECK(kept.front().config == to_string(measured));
}
