// AWS Signature Version 4 for one HTTP request, on OpenSSL. Our own because
// the SigV4 built into libcurl before 8.14 signs the path as sent, while
// every service but S3 signs each path segment URI-encoded once more (a
// Bedrock model id's ':' travels as %3A and is signed as %253A), so
// libcurl's signature is refused for such ids. The intermediate texts are
// exposed so tests can hold them against the published test vectors.
#pragma once

#include <chrono>
#include <string>

#include "attune/llm/bedrock/aws_credentials.h"
#include "attune/llm/http_transport.h"

namespace attune::llm {

struct SigV4Request {
  std::string method = "POST";
  std::string host;                    // the Host header as sent ("example.amazonaws.com", "127.0.0.1:8080")
  std::string path = "/";              // as sent: already URI-encoded once
  std::string query;                   // as sent, without the '?'
  HttpHeaders headers;                 // further headers to sign (not Host, not X-Amz-Date)
  std::string body;
};

struct SigV4Scope {
  std::string region;                  // "us-east-1"
  std::string service;                 // the signing name: "bedrock" for bedrock-runtime
  std::string amz_date;                // "20150830T123600Z"
  bool sign_payload_header = false;    // also send and sign x-amz-content-sha256 (S3, some test vectors)
};

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;          // "content-type;host;x-amz-date"
  std::string signature;               // lowercase hex
  HttpHeaders headers;                 // to add to the request: X-Amz-Date, X-Amz-Security-Token, Authorization
};

// Signs `request`. The headers returned must be sent as given, beside the
// request's own; throws std::invalid_argument for a malformed amz_date.
SigV4Signature sigv4_sign(const SigV4Request& request, const AwsCredentials& credentials, const SigV4Scope& scope);

// `time` as X-Amz-Date wants it, in UTC: "20150830T123600Z".
std::string amz_date(std::chrono::system_clock::time_point time);

// The building blocks, for the tests.
std::string sha256_hex(const std::string& data);
std::string sigv4_signing_key_hex(const std::string& secret, const std::string& date, const std::string& region,
                                  const std::string& service);
// URI-encodes `s` as SigV4 does: A-Z a-z 0-9 - _ . ~ kept, the rest %XX in
// uppercase hex; '/' kept only when `keep_slash`.
std::string sigv4_uri_encode(const std::string& s, bool keep_slash);

}  // namespace attune::llm
