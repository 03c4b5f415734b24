// The OpenAI Chat Completions backend of LlmClient (also OpenAI-compatible servers:
// vLLM, SGLang, Ollama, llama.cpp); found through make_llm_client only.
#pragma once

#include <memory>

#include "attune/llm/llm_client.h"

namespace attune::llm {

std::unique_ptr<LlmClient> make_openai_client(const LlmSettings& settings, HttpTransport& transport,
                                          const Environment& environment, Sleeper& sleeper);

}  // namespace attune::llm
