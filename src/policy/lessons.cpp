#include "attune/policy/lessons.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "attune/util/error.h"
#include "attune/util/file_lock.h"
#include "attune/util/jsonl_file.h"

namespace attune::policy {

namespace {

double parameters(const recipe::ModelSpec& m) {
  const double h = m.hidden, hd = m.attention_head_dim();
  const double attention = h * (m.heads * hd + 2.0 * std::max(1, m.kv_heads) * hd) + m.heads * hd * h;
  const double dense_mlp = m.mlp_matrices() * h * m.ffn;
  double mlp = dense_mlp;
  if (m.is_moe()) mlp = m.mlp_matrices() * h * m.moe_ffn * (m.experts + m.shared_experts);
  const double embeddings = static_cast<double>(m.vocab) * h * (m.tied_embeddings ? 1 : 2);
  return m.layers * (attention + mlp) + embeddings;
}

}  // namespace

std::string model_class(const recipe::ModelSpec& m) {
  const double b = parameters(m) / 1e9;
  // One significant figure below 10B, two above: 8b, 70b, 240b.
  double rounded = b;
  if (b >= 10) {
    const double scale = std::pow(10.0, std::floor(std::log10(b)) - 1);
    rounded = std::round(b / scale) * scale;
  } else if (b >= 1) {
    rounded = std::round(b);
  } else {
    rounded = std::round(b * 10) / 10;
  }
  return fmt::format("{}-{}b", m.is_moe() ? "moe" : "dense", rounded);
}

std::string default_lessons_path() {
  namespace fs = std::filesystem;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return (fs::path(xdg) / "attune" / "lessons.jsonl").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".local" / "share" / "attune" / "lessons.jsonl").string();
}

nlohmann::json to_json(const Lesson& l) {
  return {{"gpu", l.gpu},       {"model_class", l.model_class}, {"framework", l.framework}, {"lever", l.lever},
          {"value", l.value},   {"effect", l.effect},           {"outcome", l.outcome},     {"context", l.context},
          {"campaign", l.campaign}};
}

std::vector<Lesson> read_lessons(const std::string& path) {
  std::vector<Lesson> out;
  if (!std::filesystem::exists(path)) return out;
  JsonlFile file(path);
  int line = 0;
  for (const nlohmann::json& j : file.read()) {
    ++line;
    try {
      Lesson l;
      l.gpu = j.at("gpu").get<std::string>();
      l.model_class = j.at("model_class").get<std::string>();
      l.framework = j.at("framework").get<std::string>();
      l.lever = j.at("lever").get<std::string>();
      l.value = j.at("value").get<std::string>();
      l.effect = j.at("effect").get<double>();
      l.outcome = j.value("outcome", "");
      l.context = j.value("context", nlohmann::json::object());
      l.campaign = j.value("campaign", "");
      out.push_back(std::move(l));
    } catch (const nlohmann::json::exception& e) {
      throw InputError({path, line, 0}, "lesson", std::string("not a lesson: ") + e.what());
    }
  }
  return out;
}

void append_lessons(const std::string& path, const std::vector<Lesson>& lessons) {
  if (lessons.empty()) return;
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  const FileLock lock = FileLock::lock(path + ".lock");
  JsonlFile file(path);
  for (const Lesson& l : lessons) file.append(to_json(l));
}

double lesson_effect(const std::vector<Lesson>& lessons, const std::string& gpu, const std::string& model_class,
                     const std::string& framework, const std::string& lever, const std::string& value, int* count) {
  double sum = 0;
  int n = 0;
  for (const Lesson& l : lessons) {
    if (l.gpu == gpu && l.model_class == model_class && l.framework == framework && l.lever == lever && l.value == value) {
      sum += l.effect;
      ++n;
    }
  }
  if (count) *count = n;
  return n ? sum / n : 0;
}

std::vector<Lesson> lessons_from(const std::vector<Observation>& trials, const std::string& framework,
                                 const std::string& campaign_dir) {
  std::vector<Lesson> lessons;
  for (const Observation& t : trials) {
    if (t.trial == 0 || t.proposal.changes.size() != 1 || t.runs == 0) continue;
    if (t.parent < 0 || t.parent >= static_cast<int>(trials.size())) continue;
    const Observation& from = trials[static_cast<std::size_t>(t.parent)];
    if (!from.tokens_per_s_per_gpu || !from.workload) continue;
    Lesson l;
    l.gpu = from.workload->plan.gpu;
    l.model_class = model_class(from.workload->model);
    l.framework = framework;
    l.lever = t.proposal.changes[0].dimension;
    l.value = t.proposal.changes[0].to;
    l.outcome = to_string(t.outcome);
    l.effect = t.tokens_per_s_per_gpu ? *t.tokens_per_s_per_gpu / *from.tokens_per_s_per_gpu - 1 : -1;
    const auto& p = from.workload->plan;
    l.context = {{"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"ep", p.ep}, {"mbs", p.mbs}, {"nodes", p.nodes}};
    l.campaign = std::filesystem::absolute(campaign_dir).string();
    lessons.push_back(std::move(l));
  }
  return lessons;
}

}  // namespace attune::policy
