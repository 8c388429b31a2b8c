#pragma once
// A --gpus worker's share of a run (TuneOptions::shard, K of N). The (problem, family) pairs are dealt out in
// turn (pair i to worker i mod N), so each pair's strategy runs whole on one GPU, exactly as it would on a
// single GPU. When there are fewer pairs than workers and the strategy's order is fixed (exhaustive,
// random), every worker takes every pair but only its turn of the candidates (the i-th valid config of the
// space to worker i mod N), so one large problem is spread over every GPU; bayes and anneal choose each
// candidate from the costs of all before it, so their pairs are always dealt whole.
//
// Budgets: a dealt pair keeps the share it has on one GPU (a worker gets the sum of its pairs' shares);
// with candidates split, each worker gets 1/N. --time-limit is each worker's own: they run side by side.
#include <cstddef>
#include <optional>

#include "tuner/strategy/parameter_space.hpp"

namespace fl::tuner {

struct Shard {
  int index = 0;  // 0-based: worker K of N has index K - 1
  int count = 1;
};

enum class ShardMode { whole, pairs, candidates };

ShardMode shard_mode(std::optional<Shard> shard, std::size_t pairs, bool fixed_order);
bool takes_pair(Shard shard, std::size_t pair_index);
// The candidates of `space` that are this worker's: every count-th valid point, from the index-th.
ParameterSpace candidates_of(ParameterSpace const& space, Shard shard);
// This worker's part of --budget (nullopt: no budget).
std::optional<int> worker_budget(std::optional<int> budget, ShardMode mode, Shard shard,
                                 std::size_t pairs_total, std::size_t pairs_taken);

}  // namespace fl::tuner
