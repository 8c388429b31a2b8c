#pragma once
// What fa-tune answers for a problem nobody tuned (issue 14 item 7): a user without a GPU, or planning a run,
// asks for d64 causal n2048 and the shipped table has d128 full n4096. Per family, the answer is the config
// tuned for exactly that problem when there is one; else the config of the nearest tuned shape that is valid
// for this problem (the family's own violates() says so), named with its shape; else the family's default.
//
// Nearness, in the order that moves the best config most (the H200 tuning of 2026-11-29 and the family
// declarations: head dim sets the tile's registers and shared memory, the mask halves the work and changes
// the best kBlockN, n and the batch mostly move occupancy): a head-dim step (x2) costs 4, another mask 2, a
// dtype of the same width (fp16 <-> bf16, same instructions) 1, a factor 2 in n 1, a factor 2 in
// batch x heads 0.5. Another direction or a different family is never near: their configs mean other
// kernels.
#include <optional>
#include <string>
#include <vector>

#include "db/tuning_store.hpp"
#include "device/family.hpp"

namespace fl::tuner {

enum class AnswerKind { tuned, nearest, family_default };

struct TunedAnswer {
  AnswerKind kind = AnswerKind::family_default;
  std::string config;
  std::optional<db::BestConfig> from;  // the tuned row answered with (tuned, nearest)
  double distance = 0.0;               // shape_distance to `from`'s problem
  int considered = 0;                  // tuned rows of this family near at all (same direction, same width)
};

// Infinity when the two are never near (another direction); 0 for the same problem.
double shape_distance(device::Problem const& wanted, device::Problem const& tuned);

// The answer for `family` at `problem` from the best configs known (any GPU; the caller filters by target).
TunedAnswer nearest_tuned(device::Family const& family, device::Problem const& problem,
                          std::vector<db::BestConfig> const& known);

// --warm-start: the configs of `family` tuned at other shapes (by the same nearness) that are points of
// `problem`'s space (family_space: valid there, every parameter named), nearest first, each once, at most
// `limit`: what a small budget with bayes or anneal then refines. Ties go to the faster row, then to the
// shape's name.
std::vector<device::Config> warm_start_configs(device::Family const& family, device::Problem const& problem,
                                               std::vector<db::BestConfig> const& known, std::size_t limit);

// What --warm-start draws on: `measured` (a database's best configs for one GPU) and the shipped `seeds`
// measured on a GPU named `gpu_name` for the (family, problem) pairs `measured` has no row of (a database's
// own measurement wins). A grid's database that started afresh (2026-12-03) lacked fa3_sm90's bf16 d64 and
// d128 winners, which db/seed kept: fp16's search at those shapes then never tried them (d128 causal n4096
// fp16 536.2 TFLOP/s against bf16's 567.8 with a config fp16 never measured, 2026-12-04).
std::vector<db::BestConfig> with_seeds(std::vector<db::BestConfig> measured,
                                       std::vector<db::BestConfig> const& seeds, std::string const& gpu_name);

}  // namespace fl::tuner
