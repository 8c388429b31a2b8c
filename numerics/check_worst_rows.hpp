#pragma once
// The worst rows of a judged check (PreparedCheck::judge, check.cpp): the checked rows ranked by their
// largest error over its bound, the first CheckOptions::worst_rows_listed kept with where each row sits.
#include "numerics/check.hpp"

namespace fl::numerics {

// Fills r.worst_rows from r.judgement and r.reference's sample.
void collect_worst_rows(AttentionInputs const& in, CheckOptions const& o, CheckResult& r);

}  // namespace fl::numerics
