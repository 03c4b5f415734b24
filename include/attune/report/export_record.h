// The export record (`attune export DIR`): one JSON document describing a
// campaign's tuned and verified recipe for a leaderboard of tuned recipes —
// framework, model, hardware, the original and tuned files and their diff,
// throughput before and after with intervals, GPU-hours spent, the loss
// parity evidence, and the SHA-256 of every log the claim rests on (the
// baseline's runs and the best trial's). Its schema is docs/export-schema.json.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace attune::report {

inline constexpr const char* kExportFormat = "attune-tuned-recipe/1";

// InputError when `campaign_dir` is no campaign directory or the campaign has
// not finished (no summary).
nlohmann::json export_record(const std::string& campaign_dir);

// The record as indented JSON text with a final newline; bytes that are not
// UTF-8 (text from logs) become U+FFFD.
std::string export_text(const nlohmann::json& record);

}  // namespace attune::report
