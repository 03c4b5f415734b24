#include "attune/llm/bedrock/aws_credentials.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace attune::llm {

namespace {

const char* const kCredentialsFile = ".aws/credentials";

[[noreturn]] void config_error(const std::string& what) { throw LlmError(LlmErrorKind::config, "bedrock: " + what); }

// A variable set to "" counts as unset, as in the AWS SDKs.
std::optional<std::string> non_empty(const Environment& environment, const char* name) {
  auto value = environment.get(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The `key = value` lines of one [section]; keys lowercased, as the AWS
// tools read them. Comments start with '#' or ';'.
std::map<std::string, std::string> ini_section(const std::string& text, const std::string& section, bool& found) {
  std::map<std::string, std::string> values;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  found = false;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      inside = trim(line.substr(1, line.size() - 2)) == section;
      found = found || inside;
      continue;
    }
    const auto eq = line.find('=');
    if (inside && eq != std::string::npos) values[lowercase(trim(line.substr(0, eq)))] = trim(line.substr(eq + 1));
  }
  return values;
}

// Region names are lowercase letters, digits and dashes ("us-east-1"); the
// check keeps anything else out of the host name the request goes to.
bool region_name(const std::string& region) {
  return std::all_of(region.begin(), region.end(),
                     [](unsigned char c) { return std::islower(c) || std::isdigit(c) || c == '-'; });
}

std::optional<AwsCredentials> keys_from_environment(const Environment& environment) {
  auto id = non_empty(environment, "AWS_ACCESS_KEY_ID");
  auto secret = non_empty(environment, "AWS_SECRET_ACCESS_KEY");
  if (!id && !secret) return std::nullopt;
  // Half a key pair is a mistake to report, not a reason to try the file.
  if (!id) config_error("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
  if (!secret) config_error("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
  return AwsCredentials{*id, *secret, non_empty(environment, "AWS_SESSION_TOKEN").value_or("")};
}

AwsCredentials keys_from_file(const Environment& environment) {
  const std::string profile = non_empty(environment, "AWS_PROFILE").value_or("default");
  const auto text = environment.read_home_file(kCredentialsFile);
  if (!text)
    config_error("no AWS credentials: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or AWS_ACCESS_KEY_ID and "
                 "AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary keys), or put profile '" + profile +
                 "' (AWS_PROFILE) in ~/" + kCredentialsFile);
  auto keys = aws_credentials_from_ini(*text, profile);
  if (!keys)
    config_error("no AWS credentials: AWS_BEARER_TOKEN_BEDROCK and AWS_ACCESS_KEY_ID are unset and profile '" +
                 profile + "' (AWS_PROFILE) in ~/" + kCredentialsFile +
                 " is missing or lacks aws_access_key_id / aws_secret_access_key");
  return *keys;
}

}  // namespace

std::optional<AwsCredentials> aws_credentials_from_ini(const std::string& ini_text, const std::string& profile) {
  bool found = false;
  auto values = ini_section(ini_text, profile, found);
  if (!found || values["aws_access_key_id"].empty() || values["aws_secret_access_key"].empty()) return std::nullopt;
  return AwsCredentials{values["aws_access_key_id"], values["aws_secret_access_key"], values["aws_session_token"]};
}

std::string aws_region(const Environment& environment) {
  auto region = non_empty(environment, "AWS_REGION");
  if (!region) region = non_empty(environment, "AWS_DEFAULT_REGION");
  if (!region) config_error("no AWS region: set AWS_REGION or AWS_DEFAULT_REGION (e.g. us-east-1)");
  if (!region_name(*region)) config_error("AWS region '" + *region + "' is not a region name (e.g. us-east-1)");
  return *region;
}

BedrockAuth bedrock_auth(const Environment& environment) {
  BedrockAuth auth;
  auth.region = aws_region(environment);
  if (auto token = non_empty(environment, "AWS_BEARER_TOKEN_BEDROCK")) {
    auth.bearer_token = *token;
    return auth;
  }
  if (auto keys = keys_from_environment(environment)) {
    auth.keys = *keys;
    return auth;
  }
  auth.keys = keys_from_file(environment);
  return auth;
}

}  // namespace attune::llm
