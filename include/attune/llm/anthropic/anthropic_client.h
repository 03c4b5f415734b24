// The Anthropic Messages backend of LlmClient; found through make_llm_client only.
#pragma once

#include <memory>

#include "attune/llm/llm_client.h"

namespace attune::llm {

std::unique_ptr<LlmClient> make_anthropic_client(const LlmSettings& settings, HttpTransport& transport,
                                          const Environment& environment, Sleeper& sleeper);

}  // namespace attune::llm
