#include "tuner/tune/reference_cache.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "common/parallel_for.hpp"
#include "numerics/gpu/kernel_inputs.hpp"
#include "tuner/run/benchmark.hpp"

namespace fl::tuner {

namespace {
// Lowest priority (nice 19) for the work done ahead (a backward's forward, a forward's set): it takes only
// the cycles nothing else wants.
constexpr int kAheadNice = 19;
constexpr char kNormalInputs[] = "make_normal_inputs";  // normal_set's inputs, in its key

// A set's key ends with its sample size; what comes before names the inputs alone, which is the key of a
// backward's forward (forward_key_of): the forward does not depend on the sample.
constexpr char kSampleTag[] = "|rows ";

std::string key_of(device::Problem const& problem, std::string const& inputs, std::uint64_t seed,
                   std::size_t sample_rows) {
  // describe() names the shape (b, h_q/h_kv, n_q x n_k, d), dtype, mask and direction.
  return device::describe(problem) + "|" + inputs + "|seed " + std::to_string(seed) + kSampleTag +
         std::to_string(sample_rows);
}

std::string forward_key_of(std::string const& set_key) {
  return set_key.substr(0, set_key.rfind(kSampleTag));
}

// The inputs' 16-bit encodings, made once for every candidate's uploads (FP8 inputs are quantised instead).
void encode_once(device::HostInputs& inputs, device::Problem const& problem) {
  if (!common::is_fp8(problem.dtype))
    inputs.encoded =
        std::make_shared<device::EncodedInputs const>(device::encode_inputs(inputs, problem.dtype));
}

// An FP8 set's operands as the kernel reads them, quantised once (or why numerics refuses them).
void quantise_once(VerificationSet& set, device::Problem const& problem) {
  if (!common::is_fp8(problem.dtype)) return;
  auto operands = fp8_operands_of(problem, set.check.inputs());
  if (!operands)
    set.fp8_refused = operands.error().one_line();
  else if (operands.value())
    set.fp8 = std::make_shared<device::Fp8Operands const>(std::move(*operands.value()));
}

}  // namespace

std::unique_ptr<VerificationSet> ReferenceCache::build(std::string const& key, device::Problem const& problem,
                                                       device::HostInputs inputs, std::uint64_t seed,
                                                       std::size_t sample_rows, bool stored) {
  if (problem.direction != device::Direction::backward)
    return std::make_unique<VerificationSet>(
        VerificationSet{PreparedCheck(problem, std::move(inputs), sample_rows, seed), {}});
  std::string const forward_key = forward_key_of(key);
  if (auto it = forwards_.find(forward_key); it != forwards_.end()) {  // computed by this process before
    ++forwards_kept_;
    return std::make_unique<VerificationSet>(
        VerificationSet{PreparedCheck(problem, std::move(inputs), sample_rows, seed, it->second.statistics),
                        it->second.forward});
  }
  bool const use_store = store_ && stored;
  if (use_store)
    if (auto forward = store_->load(problem, seed)) {
      // The inputs are kept for a recomputation: a stored file is checked before it is used, O and LSE on
      // the check's sampled query rows (its statistics are checked by numerics' reference, which throws).
      try {
        auto set = std::make_unique<VerificationSet>(
            VerificationSet{PreparedCheck(problem, inputs, sample_rows, seed, forward->statistics),
                            std::move(forward->forward)});
        if (numerics::gpu::is_reference_forward_on(problem, set->check.attention_inputs(),
                                                   set->check.sample().query_rows, set->forward)) {
          ++forwards_loaded_;
          keep(forward_key, {set->forward, forward->statistics});
          return set;
        }
      } catch (std::invalid_argument const&) {  // statistics that are not the reference's
      }
      std::fprintf(stderr, "fa-tune: %s is not the reference's forward of %s: computed again\n",
                   store_->path_of(problem, seed).string().c_str(), device::describe(problem).c_str());
    }
  // A backward's forward and, from the same pass, every row's statistics, which its check's dK/dV need:
  // computed ahead while the previous problem searched, or now.
  auto ahead = take_ahead(forward_key);
  auto forward =
      ahead ? std::move(*ahead) : numerics::gpu::reference_forward_with_statistics(problem, inputs);
  if (use_store)
    if (auto why = store_->save(problem, seed, forward))
      std::fprintf(stderr, "fa-tune: forward store: %s (going on without it)\n", why->c_str());
  keep(forward_key, forward);
  return std::make_unique<VerificationSet>(
      VerificationSet{PreparedCheck(problem, std::move(inputs), sample_rows, seed, forward.statistics),
                      std::move(forward.forward)});
}

ReferenceCache::ReferenceCache(bool encode_once, std::optional<ForwardStore> store,
                               std::optional<std::size_t> large_set_bytes)
    : encode_once_(encode_once), store_(std::move(store)) {
  auto const pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGE_SIZE);
  double const memory = pages > 0 && page_bytes > 0 ? double(pages) * double(page_bytes) : 0.0;
  large_budget_ = large_set_bytes.value_or(std::size_t(kLargeSetMemoryShare * memory));
}

std::size_t ReferenceCache::bytes_of(VerificationSet const& set) {
  auto const& in = set.check.inputs();
  std::size_t const input_elements = in.q.size() + in.k.size() + in.v.size() + in.d_o.size();
  // Outputs the judge holds in float64: O, and dQ, dK, dV for a backward (the size of Q, K, V).
  std::size_t const output_elements = in.d_o.empty() ? in.q.size() : in.q.size() + in.k.size() + in.v.size();
  std::size_t bytes = (sizeof(float) + sizeof(double)) * input_elements + sizeof(double) * output_elements +
                      sizeof(float) * (set.forward.o.size() + set.forward.lse.size());
  if (in.encoded)
    bytes += sizeof(std::uint16_t) *
             (in.encoded->q.size() + in.encoded->k.size() + in.encoded->v.size() + in.encoded->d_o.size());
  if (set.fp8)
    bytes += set.fp8->q.size() + set.fp8->k.size() + set.fp8->v.size() + 2 * set.fp8->v_bf16.size();
  return bytes;
}

ReferenceCache::~ReferenceCache() {
  for (auto& ahead : ahead_) ahead.cancel->store(true);
  ahead_.clear();  // each future's destructor waits for its thread
}

void ReferenceCache::forward_ahead(device::Problem const& problem, std::uint64_t seed) {
  if (problem.direction != device::Direction::backward) return;
  // normal_set's key with any sample size: the forward key does not depend on it.
  std::string forward_key = forward_key_of(key_of(problem, kNormalInputs, seed, 0));
  if (forwards_.contains(forward_key)) return;
  if (store_ && std::filesystem::exists(store_->path_of(problem, seed))) return;  // loaded, and checked
  if (std::ranges::any_of(ahead_, [&](Ahead const& a) { return a.forward_key == forward_key; })) return;
  if (ahead_.size() == kAheadForwards) {  // the oldest's problem was passed without a verification
    auto oldest = std::move(ahead_.front());
    ahead_.pop_front();
    if (oldest.result.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      try {  // ended: kept, as if taken, for when its problem comes back (the next pass of the run)
        keep(oldest.forward_key, oldest.result.get());
      } catch (std::exception const&) {
      }
    } else {
      oldest.cancel->store(true);  // its destructor waits for the thread: one block of rows
    }
  }
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  auto ended = std::make_shared<std::promise<void>>();
  std::shared_future<void> before = ahead_.empty() ? std::shared_future<void>() : ahead_.back().ended;
  std::shared_future<void> this_ended = ended->get_future().share();
  auto result = std::async(std::launch::async, [problem, seed, cancel, ended, before] {
    struct SignalEnd {  // whatever the outcome: the next forward waits for it
      std::shared_ptr<std::promise<void>> promise;
      ~SignalEnd() { promise->set_value(); }
    } const signal_end{ended};
    if (before.valid()) before.wait();  // one at a time: each pass uses all cores but one
    if (cancel->load()) throw numerics::ReferenceCancelled();
    // Linux: the nice value is the thread's, and the reference's worker threads inherit it.
    (void)setpriority(PRIO_PROCESS, 0, kAheadNice);
    auto const inputs = numerics::gpu::make_normal_inputs(problem, seed);
    numerics::ReferenceOptions options;
    options.threads = common::all_cores_but_one();  // one for the thread launching the timed runs
    options.cancel = cancel.get();
    return numerics::gpu::reference_forward_with_statistics(problem, inputs, options);
  });
  ahead_.push_back(
      Ahead{std::move(forward_key), std::move(cancel), std::move(result), std::move(this_ended)});
}

std::optional<numerics::gpu::ForwardWithStatistics> ReferenceCache::take_ahead(
    std::string const& forward_key) {
  auto const it = std::ranges::find_if(ahead_, [&](Ahead const& a) { return a.forward_key == forward_key; });
  if (it == ahead_.end()) return std::nullopt;
  auto ahead = std::move(*it);
  ahead_.erase(it);
  try {
    auto forward = ahead.result.get();
    ++forwards_ahead_;
    return forward;
  } catch (std::exception const& e) {  // e.g. out of memory: computed here instead
    std::fprintf(stderr, "fa-tune: the forward computed ahead failed (%s): computed again\n", e.what());
    return std::nullopt;
  }
}

void ReferenceCache::keep(std::string const& key, numerics::gpu::ForwardWithStatistics const& forward) {
  auto const& f = forward.forward;
  std::size_t const bytes =
      sizeof(float) * (f.o.size() + f.lse.size()) +
      sizeof(double) * (forward.statistics->lse.size() + forward.statistics->delta.size());
  if (forward_bytes_ + bytes > kKeptForwardBytes)
    return;  // never evicts: a line's problems come back in order
  forward_bytes_ += bytes;
  forwards_.emplace(key, forward);
}

VerificationSet const& ReferenceCache::insert(std::string key, device::Problem const& problem,
                                              device::HostInputs inputs, std::uint64_t seed,
                                              std::size_t sample_rows, bool stored) {
  auto const start = std::chrono::steady_clock::now();
  if (encode_once_) encode_once(inputs, problem);
  auto set = build(key, problem, std::move(inputs), seed, sample_rows, stored);
  if (encode_once_) quantise_once(*set, problem);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return emplace(std::move(key), std::move(set));
}

VerificationSet const& ReferenceCache::emplace(std::string key, std::unique_ptr<VerificationSet> set) {
  if (std::size_t const bytes = bytes_of(*set); bytes >= kLargeSetBytes) {
    large_.push_back({key, bytes});
    auto const held = [&] {
      std::size_t total = 0;
      for (auto const& kept : large_) total += kept.bytes;
      return total;
    };
    // The newest but the one inserted now (callers hold references to it) go first: see the class comment.
    while (held() > large_budget_ && large_.size() > 1) {
      sets_.erase((large_.end() - 2)->key);
      large_.erase(large_.end() - 2);
      ++large_dropped_;
    }
  }
  return *sets_.emplace(std::move(key), std::move(set)).first->second;
}

VerificationSet const& ReferenceCache::family_set(device::Problem const& problem,
                                                  numerics::InputFamily family, std::uint64_t seed,
                                                  std::size_t sample_rows) {
  auto key = key_of(problem, std::string(numerics::name(family)), seed, sample_rows);
  if (auto it = sets_.find(key); it != sets_.end()) return *it->second;
  auto const start = std::chrono::steady_clock::now();
  device::Problem shaped = problem;  // some families adjust the shape (fully masked rows, ragged tails)
  auto inputs = numerics::gpu::family_inputs(shaped, family, seed);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return insert(std::move(key), shaped, std::move(inputs), seed, sample_rows, false);
}

VerificationSet const& ReferenceCache::normal_set(device::Problem const& problem, std::uint64_t seed,
                                                  std::size_t sample_rows) {
  auto key = key_of(problem, kNormalInputs, seed, sample_rows);
  if (auto it = sets_.find(key); it != sets_.end()) return *it->second;
  auto const start = std::chrono::steady_clock::now();
  if (auto it = std::ranges::find_if(set_ahead_, [&](SetAhead const& a) { return a.key == key; });
      it != set_ahead_.end()) {
    auto ahead = std::move(*it);
    set_ahead_.erase(it);
    try {
      auto set = ahead.result.get();  // waits for the rest of its build, if any
      ++sets_ahead_;
      seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return emplace(std::move(key), std::move(set));
    } catch (std::exception const& e) {  // e.g. out of memory: built here instead
      std::fprintf(stderr, "fa-tune: the set built ahead failed (%s): built again\n", e.what());
    }
  }
  auto inputs = numerics::gpu::make_normal_inputs(problem, seed);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return insert(std::move(key), problem, std::move(inputs), seed, sample_rows, true);
}

void ReferenceCache::normal_set_ahead(device::Problem const& problem, std::uint64_t seed,
                                      std::size_t sample_rows) {
  if (problem.direction != device::Direction::forward) return;
  auto key = key_of(problem, kNormalInputs, seed, sample_rows);
  if (sets_.contains(key)) return;
  if (std::ranges::any_of(set_ahead_, [&](SetAhead const& a) { return a.key == key; })) return;
  if (set_ahead_.size() == kAheadSets) {
    if (set_ahead_.front().result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    set_ahead_.pop_front();  // built, and its problem passed without a verification
  }
  auto ended = std::make_shared<std::promise<void>>();
  std::shared_future<void> before = set_ahead_.empty() ? std::shared_future<void>() : set_ahead_.back().ended;
  std::shared_future<void> this_ended = ended->get_future().share();
  bool const encode = encode_once_;
  auto result = std::async(std::launch::async, [problem, seed, sample_rows, encode, ended, before] {
    struct SignalEnd {  // whatever the outcome: the next set waits for it
      std::shared_ptr<std::promise<void>> promise;
      ~SignalEnd() { promise->set_value(); }
    } const signal_end{ended};
    if (before.valid()) before.wait();
    // Linux: the nice value is the thread's, and the threads it starts inherit it.
    (void)setpriority(PRIO_PROCESS, 0, kAheadNice);
    auto inputs = numerics::gpu::make_normal_inputs(problem, seed);
    if (encode) encode_once(inputs, problem);
    auto set = std::make_unique<VerificationSet>(
        VerificationSet{PreparedCheck(problem, std::move(inputs), sample_rows, seed), {}});
    if (encode) quantise_once(*set, problem);
    return set;
  });
  set_ahead_.push_back(SetAhead{std::move(key), std::move(result), std::move(this_ended)});
}

}  // namespace fl::tuner
