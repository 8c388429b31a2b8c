// The schema's history: one migration per version, in order. Never edit a migration that has reached
// main; add the next one instead (the golden files in tests/db/data enforce this).
//
// Conventions: STRICT tables (SQLite checks every column's type on write, so a wrong type cannot be
// stored by our code); times are ISO 8601 UTC text 'YYYY-MM-DDTHH:MM:SS.SSSZ'; hashes are lowercase hex
// SHA-256 (64 characters); sizes in bytes; times in milliseconds; booleans are 0/1 with a CHECK.
#include "db/schema.hpp"

namespace fl::db {
namespace {

// Version 1: the compile cache (db/compile_cache.hpp). The key is a SHA-256 that runtime/ computes from
// everything that can change the CUBIN; the other descriptive columns are for humans reading the table.
constexpr std::string_view kCompileCache = R"sql(
CREATE TABLE compile_cache (
  cache_key     TEXT PRIMARY KEY NOT NULL CHECK (length(cache_key) = 64),
  program_name  TEXT NOT NULL,
  arch          TEXT NOT NULL,                      -- e.g. sm_90a
  nvrtc_version TEXT NOT NULL,                      -- e.g. 13.0
  options       TEXT NOT NULL,                      -- NVRTC options, one per line
  source_hashes TEXT NOT NULL,                      -- "<sha256> <kernels_src file>" lines
  cubin         BLOB NOT NULL,
  cubin_bytes   INTEGER NOT NULL CHECK (cubin_bytes >= 0),
  cubin_sha256  TEXT NOT NULL CHECK (length(cubin_sha256) = 64),  -- detects a corrupt or truncated blob
  compile_log   TEXT NOT NULL,
  compile_ms    REAL NOT NULL CHECK (compile_ms >= 0),
  created_at    TEXT NOT NULL
) STRICT;

-- ptxas resources of each kernel in the CUBIN, by lowered (mangled) name.
CREATE TABLE compile_cache_kernels (
  cache_key    TEXT NOT NULL REFERENCES compile_cache (cache_key) ON DELETE CASCADE,
  lowered_name TEXT NOT NULL,
  registers    INTEGER NOT NULL CHECK (registers >= 0),
  shared_bytes INTEGER NOT NULL CHECK (shared_bytes >= 0),
  spill_stores INTEGER NOT NULL CHECK (spill_stores >= 0),
  spill_loads  INTEGER NOT NULL CHECK (spill_loads >= 0),
  stack_bytes  INTEGER NOT NULL CHECK (stack_bytes >= 0),
  PRIMARY KEY (cache_key, lowered_name)
) STRICT, WITHOUT ROWID;

-- NVRTC name expressions (e.g. "fa2_fwd<128, 64, 4>") and the lowered names they resolved to.
CREATE TABLE compile_cache_names (
  cache_key       TEXT NOT NULL REFERENCES compile_cache (cache_key) ON DELETE CASCADE,
  name_expression TEXT NOT NULL,
  lowered_name    TEXT NOT NULL CHECK (length(lowered_name) > 0),
  PRIMARY KEY (cache_key, name_expression)
) STRICT, WITHOUT ROWID;
)sql";

// Version 2: tuning (issue 6). A measurement is keyed by everything that can change it: the GPU and its
// driver, the NVRTC version, the hash of the family's kernels_src files, the family, the config and the
// problem. Editing one kernels_src file changes source_hash, so only what depends on it is re-tuned.
constexpr std::string_view kTuning = R"sql(
CREATE TABLE gpus (
  gpu_id         INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,                     -- e.g. NVIDIA H200
  cc_major       INTEGER NOT NULL CHECK (cc_major > 0),
  cc_minor       INTEGER NOT NULL CHECK (cc_minor >= 0),
  sm_count       INTEGER NOT NULL CHECK (sm_count > 0),
  driver_version TEXT NOT NULL,                     -- e.g. 580.65.06
  UNIQUE (name, cc_major, cc_minor, sm_count, driver_version)
) STRICT;

CREATE TABLE problems (
  problem_id INTEGER PRIMARY KEY,
  batch      INTEGER NOT NULL CHECK (batch > 0),
  heads_q    INTEGER NOT NULL CHECK (heads_q > 0),
  heads_kv   INTEGER NOT NULL CHECK (heads_kv > 0 AND heads_q % heads_kv = 0),
  seqlen_q   INTEGER NOT NULL CHECK (seqlen_q > 0),
  seqlen_k   INTEGER NOT NULL CHECK (seqlen_k > 0),
  head_dim   INTEGER NOT NULL CHECK (head_dim > 0),
  dtype      TEXT NOT NULL,                         -- numerics::name(Precision): fp16, bf16, fp8_e4m3, ...
  causal     INTEGER NOT NULL CHECK (causal IN (0, 1)),
  direction  TEXT NOT NULL CHECK (direction IN ('fwd', 'bwd')),
  UNIQUE (batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, dtype, causal, direction)
) STRICT;

CREATE TABLE measurements (
  measurement_id    INTEGER PRIMARY KEY,
  gpu_id            INTEGER NOT NULL REFERENCES gpus (gpu_id),
  nvrtc_version     TEXT NOT NULL,
  source_hash       TEXT NOT NULL CHECK (length(source_hash) = 64),
  family            TEXT NOT NULL,                  -- e.g. fa2_sm80
  config            TEXT NOT NULL,                  -- tuner::to_string(Config): "kBlockM=128,kBlockN=64,..."
  problem_id        INTEGER NOT NULL REFERENCES problems (problem_id),
  -- ok: verified and timed; wrong: failed verification (diagnosis: mutant ids, or no known signature);
  -- pruned: rejected on constraints or ptxas resources (diagnosis: the reason);
  -- failed: compile or launch error (diagnosis: the first line of the error).
  verdict           TEXT NOT NULL CHECK (verdict IN ('ok', 'wrong', 'pruned', 'failed')),
  diagnosis         TEXT NOT NULL DEFAULT '',
  median_ms         REAL CHECK (median_ms > 0),
  p20_ms            REAL CHECK (p20_ms > 0),
  p80_ms            REAL CHECK (p80_ms > 0),
  min_ms            REAL CHECK (min_ms > 0),
  max_ms            REAL CHECK (max_ms > 0),
  runs              INTEGER CHECK (runs > 0),
  tflops            REAL CHECK (tflops >= 0),
  clock_mhz         REAL,                           -- SM clock beside the measurement
  temperature_c     REAL,
  compile_cache_key TEXT,                           -- the CUBIN measured (no FK: the cache may be cleared)
  measured_at       TEXT NOT NULL,
  CHECK (verdict <> 'ok' OR (median_ms IS NOT NULL AND p20_ms IS NOT NULL AND p80_ms IS NOT NULL
                             AND runs IS NOT NULL AND tflops IS NOT NULL)),
  CHECK (p20_ms IS NULL OR median_ms IS NULL OR p80_ms IS NULL OR (p20_ms <= median_ms AND median_ms <= p80_ms)),
  UNIQUE (gpu_id, nvrtc_version, source_hash, family, config, problem_id)
) STRICT;

CREATE INDEX measurements_by_problem ON measurements (problem_id, gpu_id, verdict);

-- The best config per GPU, problem and family; source 'seed' rows come from the configs shipped in
-- the repository (measured on a real GPU, see recorded_at and the GPU row), 'measured' from this
-- machine's own tuning.
CREATE TABLE best_configs (
  gpu_id         INTEGER NOT NULL REFERENCES gpus (gpu_id),
  problem_id     INTEGER NOT NULL REFERENCES problems (problem_id),
  family         TEXT NOT NULL,
  config         TEXT NOT NULL,
  median_ms      REAL NOT NULL CHECK (median_ms > 0),
  tflops         REAL NOT NULL CHECK (tflops >= 0),
  source         TEXT NOT NULL CHECK (source IN ('measured', 'seed')),
  nvrtc_version  TEXT NOT NULL,
  source_hash    TEXT,                              -- kernels_src hash measured with (NULL if unknown)
  measurement_id INTEGER REFERENCES measurements (measurement_id) ON DELETE SET NULL,
  recorded_at    TEXT NOT NULL,
  PRIMARY KEY (gpu_id, problem_id, family)
) STRICT;
)sql";

// Version 3: verifier runs (issues 3 and 4). Key columns for queries; the full JSON report as text, so
// new metrics need no migration.
constexpr std::string_view kVerifierRuns = R"sql(
CREATE TABLE numerics_runs (
  run_id         INTEGER PRIMARY KEY,
  started_at     TEXT NOT NULL,
  command        TEXT NOT NULL,
  implementation TEXT NOT NULL,                     -- "files" for .npy inputs, else family and config
  dtype          TEXT NOT NULL,
  direction      TEXT NOT NULL CHECK (direction IN ('fwd', 'bwd', 'fwd+bwd')),
  batch          INTEGER NOT NULL CHECK (batch > 0),
  heads_q        INTEGER NOT NULL CHECK (heads_q > 0),
  heads_kv       INTEGER NOT NULL CHECK (heads_kv > 0),
  seqlen_q       INTEGER NOT NULL CHECK (seqlen_q > 0),
  seqlen_k       INTEGER NOT NULL CHECK (seqlen_k > 0),
  head_dim       INTEGER NOT NULL CHECK (head_dim > 0),
  causal         INTEGER NOT NULL CHECK (causal IN (0, 1)),
  verdict        TEXT NOT NULL CHECK (verdict IN ('pass', 'fail')),
  diagnosis      TEXT NOT NULL DEFAULT '',          -- matching mutant ids, best first, comma-separated
  report_json    TEXT NOT NULL
) STRICT;

CREATE TABLE mutation_runs (
  run_id         INTEGER PRIMARY KEY,
  started_at     TEXT NOT NULL,
  command        TEXT NOT NULL,
  target         TEXT NOT NULL CHECK (target IN ('cpu', 'gpu')),
  family         TEXT NOT NULL,
  dtype          TEXT NOT NULL,
  gpu_id         INTEGER REFERENCES gpus (gpu_id),   -- NULL for --target cpu
  mutation_score REAL CHECK (mutation_score BETWEEN 0 AND 100),  -- Stryker: detected / valid x 100
  passed         INTEGER CHECK (passed IN (0, 1))    -- NULL while the run is in progress
) STRICT;

CREATE TABLE mutation_results (
  run_id               INTEGER NOT NULL REFERENCES mutation_runs (run_id) ON DELETE CASCADE,
  mutant_id            TEXT NOT NULL,               -- catalogue id, e.g. unrescaled-o
  outcome              TEXT NOT NULL CHECK (outcome IN ('killed', 'survived', 'equivalent')),
  killing_input_family TEXT,                        -- NULL unless killed
  diagnosis            TEXT NOT NULL DEFAULT '',    -- mutant ids the diagnosis named, best first
  named_correctly      INTEGER CHECK (named_correctly IN (0, 1)),
  match_error          REAL,                        -- the diagnosis' match score for the named mutant
  note                 TEXT NOT NULL DEFAULT '',    -- e.g. the argument for an equivalent mutant
  PRIMARY KEY (run_id, mutant_id),
  CHECK (outcome = 'killed' OR killing_input_family IS NULL)
) STRICT, WITHOUT ROWID;
)sql";

// Version 4: a mutant that cannot apply to a target or precision (bwd-race on the CPU, the fp8 mutants at
// bf16) is stored with its reason rather than left out, so a run's rows account for the whole catalogue.
// SQLite cannot alter a CHECK constraint, so the table is rebuilt and its rows copied.
constexpr std::string_view kNotApplicableMutants = R"sql(
CREATE TABLE mutation_results_v4 (
  run_id               INTEGER NOT NULL REFERENCES mutation_runs (run_id) ON DELETE CASCADE,
  mutant_id            TEXT NOT NULL,
  outcome              TEXT NOT NULL CHECK (outcome IN ('killed', 'survived', 'equivalent', 'not_applicable')),
  killing_input_family TEXT,
  diagnosis            TEXT NOT NULL DEFAULT '',
  named_correctly      INTEGER CHECK (named_correctly IN (0, 1)),
  match_error          REAL,
  note                 TEXT NOT NULL DEFAULT '',    -- the equivalence argument, or why not applicable
  PRIMARY KEY (run_id, mutant_id),
  CHECK (outcome = 'killed' OR killing_input_family IS NULL)
) STRICT, WITHOUT ROWID;
INSERT INTO mutation_results_v4 SELECT * FROM mutation_results;
DROP TABLE mutation_results;
ALTER TABLE mutation_results_v4 RENAME TO mutation_results;
)sql";

// Version 5: tuning runs (issue 6). A run of fa-tune gets an id; the stored measurement names the run that
// measured it (NULL: before version 5). `--noise-runs N` repeats a run N times, re-measuring every candidate:
// a repeat never replaces the stored answer (resume and the best config keep the first run's), it is kept
// beside it in remeasurements, one row per (run, measurement), for the noise report. gpus gains the CUDA
// driver API version (cuDriverGetVersion, e.g. 13000) beside driver_version, which holds the driver release
// as nvidia-smi prints it (580.159.04) where nvidia-smi answered.
constexpr std::string_view kTuningRuns = R"sql(
CREATE TABLE tuning_runs (
  run_id       INTEGER PRIMARY KEY,
  started_at   TEXT NOT NULL,
  command      TEXT NOT NULL,                     -- the fa-tune command line
  repeat_of    INTEGER REFERENCES tuning_runs (run_id),  -- NULL for a first run; else the series' first run
  repeat_index INTEGER NOT NULL DEFAULT 1 CHECK (repeat_index >= 1),
  CHECK ((repeat_of IS NULL) = (repeat_index = 1))
) STRICT;

ALTER TABLE measurements ADD COLUMN run_id INTEGER REFERENCES tuning_runs (run_id);

CREATE TABLE remeasurements (
  run_id         INTEGER NOT NULL REFERENCES tuning_runs (run_id) ON DELETE CASCADE,
  measurement_id INTEGER NOT NULL REFERENCES measurements (measurement_id) ON DELETE CASCADE,
  verdict        TEXT NOT NULL CHECK (verdict IN ('ok', 'wrong', 'pruned', 'failed')),
  diagnosis      TEXT NOT NULL DEFAULT '',
  median_ms      REAL CHECK (median_ms > 0),
  p20_ms         REAL CHECK (p20_ms > 0),
  p80_ms         REAL CHECK (p80_ms > 0),
  min_ms         REAL CHECK (min_ms > 0),
  max_ms         REAL CHECK (max_ms > 0),
  runs           INTEGER CHECK (runs > 0),
  tflops         REAL CHECK (tflops >= 0),
  clock_mhz      REAL,
  temperature_c  REAL,
  measured_at    TEXT NOT NULL,
  CHECK (verdict <> 'ok' OR (median_ms IS NOT NULL AND p20_ms IS NOT NULL AND p80_ms IS NOT NULL
                             AND runs IS NOT NULL AND tflops IS NOT NULL)),
  CHECK (p20_ms IS NULL OR median_ms IS NULL OR p80_ms IS NULL OR (p20_ms <= median_ms AND median_ms <= p80_ms)),
  PRIMARY KEY (run_id, measurement_id)
) STRICT, WITHOUT ROWID;

ALTER TABLE gpus ADD COLUMN cuda_driver_api INTEGER CHECK (cuda_driver_api > 0);  -- NULL: unknown
)sql";

// Version 6: compiles that crashed or hung NVRTC (its worker process died by a signal or was killed after
// the timeout), keyed like the compile cache by the request's SHA-256: the same source, options and NVRTC
// are never compiled again (issue 14: NVRTC 13.0 segfaults on some inline PTX, every time).
constexpr std::string_view kCompileFailures = R"sql(
CREATE TABLE compile_failures (
  cache_key   TEXT PRIMARY KEY CHECK (length(cache_key) = 64),  -- the compile cache's key of the request
  message     TEXT NOT NULL,                                    -- e.g. NVRTC crashed ...: signal 11 (SIGSEGV)
  recorded_at TEXT NOT NULL
) STRICT;
)sql";

// Version 7: numerics_runs (version 3) was created for fa-check and never written: fa-check's record is its
// JSON report. Dropped rather than kept empty, so that every table in the schema has a writer in db/.
constexpr std::string_view kDropNumericsRuns = R"sql(
DROP TABLE numerics_runs;
)sql";

// Version 8: best_configs.recorded_at is when the best was measured. Until now a resumed tuning run
// rewrote it with its own time whenever it stored the same best again (2026-12-07: 100 of the H200's
// shipped rows changed only that column in one grid call). Each measured row takes back the time of its
// measurement: the one of the same GPU, NVRTC, source, family, config and problem, with the same median
// (the best row copies it; the key makes it one at most). A row whose measurement is gone keeps its time.
constexpr std::string_view kBestMeasuredAt = R"sql(
UPDATE best_configs SET recorded_at = coalesce((
  SELECT m.measured_at FROM measurements m
  WHERE m.gpu_id = best_configs.gpu_id AND m.problem_id = best_configs.problem_id
    AND m.family = best_configs.family AND m.config = best_configs.config
    AND m.nvrtc_version = best_configs.nvrtc_version AND m.source_hash = best_configs.source_hash
    AND m.median_ms = best_configs.median_ms), recorded_at)
WHERE source = 'measured';
)sql";

// Version 9: how each measurement was timed, so that a resumed run reuses only rows timed as it times
// (tuner/tune/stored_rows.hpp) and a reader can tell a boost-clock timing from a settled one: warmup_runs
// untimed launches, then settle_ms of untimed launches by wall time (tuner/run/timing.hpp). On the H100 a
// 0.85 ms kernel ran 13-15% faster after 5 warm-up runs than settled for 200 ms (the power cap's first clock
// step comes 16-67 ms into sustained load; experiments/card_transfer/README.md). NULL: not timed. Every row
// timed before this version was fa-tune's: 5 warm-up runs and no settle (TimingOptions' default from the
// first, kTuningWarmupRuns since 1ca28b3).
constexpr std::string_view kTimingProtocol = R"sql(
ALTER TABLE measurements ADD COLUMN warmup_runs INTEGER CHECK (warmup_runs >= 0);
ALTER TABLE measurements ADD COLUMN settle_ms INTEGER CHECK (settle_ms >= 0);
ALTER TABLE remeasurements ADD COLUMN warmup_runs INTEGER CHECK (warmup_runs >= 0);
ALTER TABLE remeasurements ADD COLUMN settle_ms INTEGER CHECK (settle_ms >= 0);
UPDATE measurements SET warmup_runs = 5, settle_ms = 0 WHERE median_ms IS NOT NULL;
UPDATE remeasurements SET warmup_runs = 5, settle_ms = 0 WHERE median_ms IS NOT NULL;
)sql";

constexpr Migration kMigrations[] = {
    {1, "compile cache", kCompileCache},
    {2, "tuning: gpus, problems, measurements, best configs", kTuning},
    {3, "verifier runs: numerics and mutation", kVerifierRuns},
    {4, "mutation results may be not_applicable", kNotApplicableMutants},
    {5, "tuning runs, re-measurements, CUDA driver API version", kTuningRuns},
    {6, "compiles that crashed or hung NVRTC", kCompileFailures},
    {7, "drop numerics_runs (never written)", kDropNumericsRuns},
    {8, "best configs keep the time they were measured", kBestMeasuredAt},
    {9, "how each measurement was timed (warm-up runs, settle ms)", kTimingProtocol},
};

}  // namespace

std::span<Migration const> migrations() {
  return kMigrations;
}

}  // namespace fl::db
