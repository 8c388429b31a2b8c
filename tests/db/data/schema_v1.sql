-- table compile_cache on compile_cache
CREATE TABLE compile_cache (cache_key TEXT PRIMARY KEY NOT NULL CHECK (length(cache_key) = 64), program_name TEXT NOT NULL, arch TEXT NOT NULL, nvrtc_version TEXT NOT NULL, options TEXT NOT NULL, source_hashes TEXT NOT NULL, cubin BLOB NOT NULL, cubin_bytes INTEGER NOT NULL CHECK (cubin_bytes >= 0), cubin_sha256 TEXT NOT NULL CHECK (length(cubin_sha256) = 64), compile_log TEXT NOT NULL, compile_ms REAL NOT NULL CHECK (compile_ms >= 0), created_at TEXT NOT NULL) STRICT;
-- table compile_cache_kernels on compile_cache_kernels
CREATE TABLE compile_cache_kernels (cache_key TEXT NOT NULL REFERENCES compile_cache (cache_key) ON DELETE CASCADE, lowered_name TEXT NOT NULL, registers INTEGER NOT NULL CHECK (registers >= 0), shared_bytes INTEGER NOT NULL CHECK (shared_bytes >= 0), spill_stores INTEGER NOT NULL CHECK (spill_stores >= 0), spill_loads INTEGER NOT NULL CHECK (spill_loads >= 0), stack_bytes INTEGER NOT NULL CHECK (stack_bytes >= 0), PRIMARY KEY (cache_key, lowered_name)) STRICT, WITHOUT ROWID;
-- table compile_cache_names on compile_cache_names
CREATE TABLE compile_cache_names (cache_key TEXT NOT NULL REFERENCES compile_cache (cache_key) ON DELETE CASCADE, name_expression TEXT NOT NULL, lowered_name TEXT NOT NULL CHECK (length(lowered_name) > 0), PRIMARY KEY (cache_key, name_expression)) STRICT, WITHOUT ROWID;
PRAGMA user_version = 1;
