// Where a Bedrock request's authority comes from: a Bedrock API key
// (AWS_BEARER_TOKEN_BEDROCK, sent as a bearer token), else AWS access keys
// from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN), else the AWS_PROFILE (default "default") profile of
// ~/.aws/credentials; and the region from AWS_REGION, else AWS_DEFAULT_REGION.
// What is missing is an LlmError(config) naming the variables and files that
// were looked at, never a value found in them.
#pragma once

#include <optional>
#include <string>

#include "attune/llm/llm_client.h"

namespace attune::llm {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;           // "" for long-term keys
};

struct BedrockAuth {
  std::string region;
  std::string bearer_token;            // a Bedrock API key; when set, `keys` is unused
  AwsCredentials keys;                 // SigV4 signing keys
};

// The keys of `profile` in the text of an AWS credentials file (INI);
// nullopt when the profile is absent or lacks either key.
std::optional<AwsCredentials> aws_credentials_from_ini(const std::string& ini_text, const std::string& profile);

// The region requests go to. Throws LlmError(config) when none is set or it
// is not a region name (it becomes part of a host name).
std::string aws_region(const Environment& environment);

// The region and the bearer token or signing keys. Throws LlmError(config).
BedrockAuth bedrock_auth(const Environment& environment);

}  // namespace attune::llm
