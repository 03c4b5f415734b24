// The Amazon Bedrock Converse backend of LlmClient, signed with attune's own SigV4
// or sent with a Bedrock API key; found through make_llm_client only.
#pragma once

#include <memory>

#include "attune/llm/llm_client.h"

namespace attune::llm {

std::unique_ptr<LlmClient> make_bedrock_client(const LlmSettings& settings, HttpTransport& transport,
                                          const Environment& environment, Sleeper& sleeper);

}  // namespace attune::llm
