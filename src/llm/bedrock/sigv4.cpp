#include "attune/llm/bedrock/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace attune::llm {

namespace {

const char* const kAlgorithm = "AWS4-HMAC-SHA256";

std::string hex(const unsigned char* data, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 0xf];
  }
  return out;
}

std::string hex(const std::string& bytes) {
  return hex(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// Raw HMAC-SHA256 of `data` under `key`.
std::string hmac(const std::string& key, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
           data.size(), out, &size) == nullptr)
    throw std::runtime_error("HMAC-SHA256 failed");
  return std::string(reinterpret_cast<const char*>(out), size);
}

std::string signing_key(const std::string& secret, const std::string& date, const std::string& region,
                        const std::string& service) {
  return hmac(hmac(hmac(hmac("AWS4" + secret, date), region), service), "aws4_request");
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Query names and values may arrive encoded in any style; decoding first
// lets them be encoded the one way SigV4 wants.
std::string uri_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Every segment of the path as sent, encoded once more: for every service but
// S3 the canonical URI is the double-encoded path.
std::string canonical_uri(const std::string& path) {
  if (path.empty()) return "/";
  return sigv4_uri_encode(path, true);
}

std::string canonical_query(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> params;
  std::istringstream in(query);
  std::string part;
  while (std::getline(in, part, '&')) {
    if (part.empty()) continue;
    const auto eq = part.find('=');
    const std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
    params.emplace_back(sigv4_uri_encode(uri_decode(part.substr(0, eq)), false),
                        sigv4_uri_encode(uri_decode(value), false));
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) out += (out.empty() ? "" : "&") + name + "=" + value;
  return out;
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Leading and trailing blanks dropped, inner runs of blanks made one space.
std::string trim_all(const std::string& value) {
  std::string out;
  bool blank = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      blank = !out.empty();
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

// Lowercased names, sorted; a repeated header's values joined by ','.
std::map<std::string, std::string> canonical_headers(const HttpHeaders& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : headers) {
    auto [it, fresh] = out.emplace(lowercase(trim_all(name)), trim_all(value));
    if (!fresh) it->second += "," + trim_all(value);
  }
  return out;
}

void check_amz_date(const std::string& amz_date) {
  const bool ok = amz_date.size() == 16 && amz_date[8] == 'T' && amz_date[15] == 'Z' &&
                  std::all_of(amz_date.begin(), amz_date.begin() + 8, [](unsigned char c) { return std::isdigit(c); });
  if (!ok) throw std::invalid_argument("SigV4: amz_date must look like 20150830T123600Z, got '" + amz_date + "'");
}

// The headers signed and sent: the request's own, Host, X-Amz-Date, and the
// token and payload hash when they apply.
HttpHeaders headers_to_sign(const SigV4Request& request, const AwsCredentials& credentials, const SigV4Scope& scope,
                            const std::string& payload_hash, HttpHeaders& added) {
  added.emplace_back("X-Amz-Date", scope.amz_date);
  if (!credentials.session_token.empty()) added.emplace_back("X-Amz-Security-Token", credentials.session_token);
  if (scope.sign_payload_header) added.emplace_back("x-amz-content-sha256", payload_hash);
  HttpHeaders all = request.headers;
  all.emplace_back("host", request.host);
  all.insert(all.end(), added.begin(), added.end());
  return all;
}

}  // namespace

std::string sha256_hex(const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), out, &size, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed");
  return hex(out, size);
}

std::string sigv4_signing_key_hex(const std::string& secret, const std::string& date, const std::string& region,
                                  const std::string& service) {
  return hex(signing_key(secret, date, region, service));
}

std::string sigv4_uri_encode(const std::string& s, bool keep_slash) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 0xf];
    }
  }
  return out;
}

std::string amz_date(std::chrono::system_clock::time_point time) {
  const std::time_t t = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char out[17];
  std::strftime(out, sizeof out, "%Y%m%dT%H%M%SZ", &utc);
  return out;
}

SigV4Signature sigv4_sign(const SigV4Request& request, const AwsCredentials& credentials, const SigV4Scope& scope) {
  check_amz_date(scope.amz_date);
  SigV4Signature s;
  const std::string payload_hash = sha256_hex(request.body);
  const auto headers = canonical_headers(headers_to_sign(request, credentials, scope, payload_hash, s.headers));

  std::string header_lines;
  for (const auto& [name, value] : headers) {
    header_lines += name + ":" + value + "\n";
    s.signed_headers += (s.signed_headers.empty() ? "" : ";") + name;
  }
  s.canonical_request = request.method + "\n" + canonical_uri(request.path) + "\n" + canonical_query(request.query) +
                        "\n" + header_lines + "\n" + s.signed_headers + "\n" + payload_hash;

  const std::string date = scope.amz_date.substr(0, 8);
  const std::string credential_scope = date + "/" + scope.region + "/" + scope.service + "/aws4_request";
  s.string_to_sign = std::string(kAlgorithm) + "\n" + scope.amz_date + "\n" + credential_scope + "\n" +
                     sha256_hex(s.canonical_request);
  s.signature = hex(hmac(signing_key(credentials.secret_access_key, date, scope.region, scope.service),
                         s.string_to_sign));
  s.headers.emplace_back("Authorization", std::string(kAlgorithm) + " Credential=" + credentials.access_key_id + "/" +
                                              credential_scope + ", SignedHeaders=" + s.signed_headers +
                                              ", Signature=" + s.signature);
  return s;
}

}  // namespace attune::llm
