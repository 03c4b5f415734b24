// The campaign's inputs as the journal's first event (`campaign`) and
// campaign.json keep them: the one place that writes and reads that record,
// for a resumed tune and for replay. The LLM's settings are kept without any
// key, token or secret.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "attune/campaign/tune.h"

namespace attune::campaign {

nlohmann::json tune_inputs_json(const TuneRequest& q, std::uint64_t seed, double budget_gpu_hours);
// Fills `q` from the record; nlohmann::json::exception when a field it needs
// is missing or of the wrong type.
void read_tune_inputs(const nlohmann::json& inputs, TuneRequest& q);

}  // namespace attune::campaign
