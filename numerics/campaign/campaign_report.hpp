#pragma once
// fa-mutate's outputs: the table on stdout and the JSON document (one object per campaign).
#include <string>
#include <vector>

#include "numerics/campaign/mutation_campaign.hpp"

namespace fl::numerics::mutants {

// Fixed-width table, one line per (precision, mutant), then the score line and any baseline failure.
std::string campaign_table(CampaignResult const& result);

// JSON object of one campaign: target, family, baseline, mutants (id, switch, kind, dtype, status,
// killed_by, verdict, diagnosis, named_correctly, evidence, reason), detected, valid, score, ok.
std::string campaign_json(CampaignResult const& result);

std::string json_string(std::string const& text);  // quoted and escaped

}  // namespace fl::numerics::mutants
