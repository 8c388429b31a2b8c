#include "tuner/families/registry.hpp"

#include "tuner/families/fa1.hpp"
#include "tuner/families/fa1_bwd.hpp"
#include "tuner/families/fa2_fp8.hpp"
#include "tuner/families/fa2_sm80.hpp"
#include "tuner/families/fa2_sm80_bwd.hpp"
#include "tuner/families/fa3_sm90.hpp"
#include "tuner/families/fa3_sm90_bwd.hpp"
#include "tuner/families/flash_decode.hpp"
#include "tuner/families/naive.hpp"

namespace fl::tuner {

std::vector<std::unique_ptr<Family>> all_families() {
  std::vector<std::unique_ptr<Family>> out;
  out.push_back(std::make_unique<NaiveFamily>());
  out.push_back(std::make_unique<Fa1Family>());
  out.push_back(std::make_unique<Fa2Sm80Family>());
  out.push_back(std::make_unique<Fa2Sm80BwdFamily>());
  out.push_back(std::make_unique<Fa2Fp8Family>());
  out.push_back(std::make_unique<Fa1BwdFamily>());
  out.push_back(std::make_unique<Fa3Sm90Family>());
  out.push_back(std::make_unique<Fa3Sm90BwdFamily>());
  out.push_back(std::make_unique<FlashDecodeFamily>());
  return out;
}

std::unique_ptr<Family> find_family(std::string_view name) {
  for (auto& f : all_families())
    if (f->name() == name) return std::move(f);
  return nullptr;
}

std::string family_names() {
  std::string out;
  for (auto const& f : all_families()) out += (out.empty() ? "" : ", ") + std::string(f->name());
  return out;
}

}  // namespace fl::tuner
