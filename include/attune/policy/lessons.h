// Lessons: what finished campaigns learnt, kept across campaigns — for each
// measured lever move, the GPU, the model's class, the framework, the lever
// and its new value, the measured effect on throughput and the layout it was
// measured at. A campaign appends its lessons when it ends (the store is
// locked while written, so two campaigns never interleave); the rules policy
// orders its candidates by them next time. The store is JSON Lines at
// ~/.local/share/attune/lessons.jsonl ($XDG_DATA_HOME/attune when set) or a
// file the user names.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/policy/observation.h"

#include "attune/recipe/model_spec.h"

namespace attune::policy {

struct Lesson {
  std::string gpu;            // h100 | h200 | b200
  std::string model_class;    // "dense-70b", "moe-235b"
  std::string framework;
  std::string lever;          // a dimension ("tp", "cuda_graphs")
  std::string value;          // its new value
  double effect = 0;          // measured throughput / the incumbent's - 1 (a failure: -1)
  std::string outcome;        // accepted | rejected | failed
  nlohmann::json context;     // layout it was measured at: {tp, pp, cp, ep, mbs, nodes}
  std::string campaign;       // the campaign directory it came from
};

// "dense-8b", "moe-30b": the size class lessons are matched by.
std::string model_class(const recipe::ModelSpec& m);

std::string default_lessons_path();

// Every lesson in the store (none when it does not exist). InputError naming
// the file and line for a record that is not a lesson.
std::vector<Lesson> read_lessons(const std::string& path);
// Appends under the store's lock, each record fsynced.
void append_lessons(const std::string& path, const std::vector<Lesson>& lessons);

nlohmann::json to_json(const Lesson& l);

// What a campaign teaches: each measured one-lever move, against the trial it
// was proposed from (`trials` indexed by trial number, the baseline first).
std::vector<Lesson> lessons_from(const std::vector<Observation>& trials, const std::string& framework,
                                 const std::string& campaign_dir);

// The mean effect of the lessons that match (same GPU, model class and
// framework, lever and value); 0 and `count` 0 when none do.
double lesson_effect(const std::vector<Lesson>& lessons, const std::string& gpu, const std::string& model_class,
                     const std::string& framework, const std::string& lever, const std::string& value, int* count = nullptr);

}  // namespace attune::policy
