#include "attune/llm/llm_client.h"

#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "attune/llm/anthropic/anthropic_client.h"
#include "attune/llm/bedrock/bedrock_client.h"
#include "attune/llm/openai/openai_client.h"

namespace attune::llm {

namespace {

using Factory = std::unique_ptr<LlmClient> (*)(const LlmSettings&, HttpTransport&, const Environment&, Sleeper&);

struct Backend {
  const char* name;
  Factory make;
};

// The one registry of providers.
const std::vector<Backend>& backends() {
  static const std::vector<Backend> all = {
      {"openai", make_openai_client},
      {"anthropic", make_anthropic_client},
      {"bedrock", make_bedrock_client},
  };
  return all;
}

std::string known_providers() {
  std::string out;
  for (const auto& b : backends()) out += (out.empty() ? "" : ", ") + std::string(b.name);
  return out;
}

}  // namespace

std::optional<std::string> ProcessEnvironment::get(const std::string& name) const {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> ProcessEnvironment::read_home_file(const std::string& relative_path) const {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return std::nullopt;
  std::ifstream in(std::string(home) + "/" + relative_path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::vector<std::string>& llm_provider_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& b : backends()) out.emplace_back(b.name);
    return out;
  }();
  return names;
}

LlmSettings parse_llm_flag(const std::string& value, const std::string& flag) {
  const auto colon = value.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == value.size())
    throw LlmError(LlmErrorKind::config,
                   flag + ": expected PROVIDER:MODEL (providers: " + known_providers() + "), got '" + value + "'");
  LlmSettings s;
  s.provider = value.substr(0, colon);
  s.model = value.substr(colon + 1);  // Bedrock ids carry ':' of their own
  bool known = false;
  for (const auto& b : backends()) known = known || s.provider == b.name;
  if (!known)
    throw LlmError(LlmErrorKind::config,
                   flag + ": unknown provider '" + s.provider + "' (providers: " + known_providers() + ")");
  return s;
}

// A client holds a key, a token or a secret in memory from here on, and a
// core file would write it to disk: none is written for the rest of the run.
void no_core_files() {
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
}

std::unique_ptr<LlmClient> make_llm_client(const LlmSettings& settings, HttpTransport& transport,
                                           const Environment& environment, Sleeper& sleeper) {
  no_core_files();
  for (const auto& b : backends())
    if (settings.provider == b.name) return b.make(settings, transport, environment, sleeper);
  throw LlmError(LlmErrorKind::config,
                 "unknown LLM provider '" + settings.provider + "' (providers: " + known_providers() + ")");
}

}  // namespace attune::llm
