#pragma once
// The fuzz harness's mutations: of a .npy file's bytes and header, and of a command line's tokens. Each
// draws from a seeded generator, so a run is reproducible from its seed.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace fl::fuzz {

using Rng = std::mt19937_64;

inline std::size_t pick(Rng& rng, std::size_t n) {
  return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

// Values that broke or could break a parser: signs, wraps of 32 and 64 bits, empty and odd lists, paths
// that are folders, devices, missing or inside a file. No path a command could really write outside the
// run's folder (the tests run as root): "." is the run's folder, /proc refuses every write.
inline std::vector<std::string> const& hostile_values() {
  static std::vector<std::string> const values = {"-1",
                                                  "0",
                                                  "1",
                                                  "7",
                                                  "33",
                                                  "4294967295",
                                                  "4294967296",
                                                  "18446744073709551615",
                                                  "18446744073709551616",
                                                  "99999999999999999999999",
                                                  "1e3",
                                                  "0x10",
                                                  "-0",
                                                  "+5",
                                                  " ",
                                                  "",
                                                  "nan",
                                                  "inf",
                                                  "-inf",
                                                  "x",
                                                  "64,",
                                                  "64,,128",
                                                  ",",
                                                  ",64",
                                                  "a,b",
                                                  "/dev/zero",
                                                  "/dev/null",
                                                  "/dev/full",
                                                  "/",
                                                  "/tmp",
                                                  "/dev/null/x",  // never creatable, not even by root
                                                  "/etc/passwd/sub",
                                                  std::string(300, 'a'),
                                                  "--",
                                                  "-",
                                                  "FA_MUTANT_NOSUCH",
                                                  "kBlockM=7",
                                                  "kNoSuch=1",
                                                  "fp4",
                                                  "sm75",
                                                  "both",
                                                  "yes",
                                                  "bwd",
                                                  "all",
                                                  "a\nb",  // a control byte: the complaint must stay one line
                                                  "2147483648",
                                                  "1e400",
                                                  "0.5",
                                                  "64,64"};
  return values;
}

inline std::vector<std::string> const& hostile_options() {
  static std::vector<std::string> const options = {"--threads",
                                                   "--jobs",
                                                   "--sample-rows",
                                                   "--sample-key-rows",
                                                   "--seed",
                                                   "--batch",
                                                   "--heads",
                                                   "--seqlen",
                                                   "--head-dim",
                                                   "--tokens",
                                                   "--json",
                                                   "--report",
                                                   "--csv",
                                                   "--out",
                                                   "--db",
                                                   "--config",
                                                   "--mutant",
                                                   "--fp8-block-rows",
                                                   "--scale",
                                                   "--dtype",
                                                   "--causal",
                                                   "--budget",
                                                   "--runs",
                                                   "--arch",
                                                   "--export-best",
                                                   "--noise-runs",
                                                   "--time-limit",
                                                   "--direction",
                                                   "--keys",
                                                   "--block",
                                                   "--row",
                                                   "--show-dims",
                                                   "--softmax-scale",
                                                   "--warmup",
                                                   "--heads-kv",
                                                   "--seqlen-q",
                                                   "--block-m",
                                                   "--block-n",
                                                   "--warps-n",
                                                   "--full-rows-up-to",
                                                   "--gpus",
                                                   "--replay",
                                                   "--merge",
                                                   "--export-measurements",
                                                   "--dump-dir",
                                                   "--compile-db",
                                                   "--kernels-dir",
                                                   "--target",
                                                   "--race-seqlen",
                                                   "--racecheck-timeout",
                                                   "--compute-sanitizer",
                                                   "--causal-align",
                                                   "--strategy",
                                                   "--error-study",
                                                   "--stability-study",
                                                   "--no-such-option",
                                                   "stray"};
  return options;
}

// A mutated copy of `tokens` (tokens[0], the program, and tokens marked protected stay). Insertions and
// duplicates go after the last protected token: one placed before it could make it an option's value
// ("fa-mutate --db --list" ran the whole campaign).
inline std::vector<std::string> mutate_tokens(std::vector<std::string> tokens, std::vector<bool> const& fixed,
                                              Rng& rng, std::string& what) {
  std::vector<bool> frozen = fixed;
  std::size_t const steps = 1 + pick(rng, 3);
  for (std::size_t step = 0; step < steps; ++step) {
    std::vector<std::size_t> free, free_after;
    std::size_t last_frozen = 0;
    for (std::size_t i = 1; i < tokens.size(); ++i)
      if (frozen[i]) last_frozen = i;
    for (std::size_t i = 1; i < tokens.size(); ++i) {
      if (!frozen[i]) free.push_back(i);
      if (i > last_frozen) free_after.push_back(i);
    }
    std::size_t const kind = pick(rng, 5);
    if (kind == 0 && !free.empty()) {  // replace a token by a hostile value
      std::size_t const at = free[pick(rng, free.size())];
      tokens[at] = hostile_values()[pick(rng, hostile_values().size())];
      what += " value";
    } else if (kind == 1 && !free.empty()) {  // delete a token
      std::size_t const at = free[pick(rng, free.size())];
      tokens.erase(tokens.begin() + std::ptrdiff_t(at));
      frozen.erase(frozen.begin() + std::ptrdiff_t(at));
      what += " delete";
    } else if (kind == 2 && !free_after.empty()) {  // duplicate a token
      std::size_t const at = free_after[pick(rng, free_after.size())];
      tokens.insert(tokens.begin() + std::ptrdiff_t(at), tokens[at]);
      frozen.insert(frozen.begin() + std::ptrdiff_t(at), false);
      what += " duplicate";
    } else {  // insert an option with a hostile value
      std::size_t const at = last_frozen + 1 + pick(rng, tokens.size() - last_frozen);
      std::string const option = hostile_options()[pick(rng, hostile_options().size())];
      std::string const value = hostile_values()[pick(rng, hostile_values().size())];
      tokens.insert(tokens.begin() + std::ptrdiff_t(std::min(at, tokens.size())), {option, value});
      frozen.insert(frozen.begin() + std::ptrdiff_t(std::min(at, frozen.size())), {false, false});
      what += " insert";
    }
  }
  return tokens;
}

inline std::string read_bytes(std::filesystem::path const& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Header rewrites that reach the dict parser and the element count (byte flips rarely do).
inline std::vector<std::string> const& hostile_shapes() {
  static std::vector<std::string> const shapes = {"(4294967296, 4294967296, 1, 16)",
                                                  "(1, -1, 8, 16)",
                                                  "(0, 2, 8, 16)",
                                                  "(1, 2, 576460752303423504, 16)",
                                                  "()",
                                                  "(1, 2, 8, 16, 1)",
                                                  "(99999999999999999999, 16)",
                                                  "(1, 2, 8)",
                                                  "(16,)",
                                                  "(1,2,8,16",
                                                  "(a, b)",
                                                  "(1, 2, 8, 16), 'extra': 1"};
  return shapes;
}

// Mutates the .npy bytes: byte flips, interesting bytes, truncation, garbage appended, the header length
// field, the dtype or the shape rewritten.
inline std::string mutate_npy(std::string bytes, Rng& rng, std::string& what) {
  std::size_t const steps = 1 + pick(rng, 2);
  for (std::size_t step = 0; step < steps && !bytes.empty(); ++step) {
    switch (pick(rng, 7)) {
      case 0:
        bytes[pick(rng, bytes.size())] ^= char(1u << pick(rng, 8));
        what += " flip";
        break;
      case 1: {
        static char const interesting[] = {'\0', '\xff', '-', '9', ',', '(', ')', '\n', '\x80', '\''};
        bytes[pick(rng, std::min<std::size_t>(bytes.size(), 128))] =
            interesting[pick(rng, sizeof interesting)];
        what += " header-byte";
        break;
      }
      case 2:
        bytes.resize(pick(rng, bytes.size()));
        what += " truncate";
        break;
      case 3:
        bytes += std::string(1 + pick(rng, 64), char(pick(rng, 256)));
        what += " append";
        break;
      case 4:
        if (bytes.size() > 9) {
          bytes[8] = char(pick(rng, 256));
          bytes[9] = char(pick(rng, 256));
        }
        what += " header-length";
        break;
      case 5:
        if (auto at = bytes.find("<f4"); at != std::string::npos) {
          static char const* const dtypes[] = {"<f2", "<f8", ">f4", "<i4", "|b1", "<c8", "<f3"};
          bytes.replace(at, 3, dtypes[pick(rng, std::size(dtypes))]);
        }
        what += " dtype";
        break;
      default:
        if (auto open = bytes.find("'shape': ("); open != std::string::npos) {
          auto const close = bytes.find(')', open);
          if (close != std::string::npos)
            bytes.replace(open + 9, close - open - 8, hostile_shapes()[pick(rng, hostile_shapes().size())]);
          // The length field follows, so that the reader gets past it to the dict.
          if (auto newline = bytes.find('\n', 10); newline != std::string::npos && newline - 9 < 65536) {
            bytes[8] = char((newline - 9) & 0xff);
            bytes[9] = char((newline - 9) >> 8);
          }
        }
        what += " shape";
    }
  }
  return bytes;
}

}  // namespace fl::fuzz
