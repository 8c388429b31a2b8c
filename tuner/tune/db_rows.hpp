#pragma once
// The tuner's problem and evaluation as db/'s rows (db/tuning_store.hpp): the key every measurement and
// best config is stored under, the row an evaluation is stored as, and the problem a stored row names.
#include "db/tuning_store.hpp"
#include "device/problem.hpp"
#include "tuner/tune/evaluator.hpp"

namespace fl::tuner {

db::ProblemKey problem_key(device::Problem const& problem);
// The row an evaluation is stored as.
db::Measurement measurement_of(Evaluation const& evaluation);
// The inverse: the problem a stored row was measured on (scale and FP8 options at their defaults).
device::Problem problem_from_key(db::ProblemKey const& key);

}  // namespace fl::tuner
