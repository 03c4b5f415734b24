// SigV4 against the published AWS signature test suite (get-vanilla,
// post-vanilla, get-vanilla-with-session-token, get-utf8,
// post-x-www-form-urlencoded) and a Bedrock Converse request whose model id
// carries ':', which must be signed double-encoded.
#include "attune/llm/bedrock/sigv4.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace attune::llm {
namespace {

const AwsCredentials kSuiteKeys{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const char* const kSuiteDate = "20150830T123600Z";
const char* const kSuiteHost = "example.amazonaws.com";

SigV4Scope suite_scope() { return {"us-east-1", "service", kSuiteDate}; }

SigV4Request suite_request(const std::string& method, const std::string& path = "/") {
  SigV4Request r;
  r.method = method;
  r.host = kSuiteHost;
  r.path = path;
  return r;
}

// The hash a string to sign ends with: that of the canonical request.
std::string last_line(const std::string& text) { return text.substr(text.rfind('\n') + 1); }

std::string header(const SigV4Signature& s, const std::string& name) {
  for (const auto& [k, v] : s.headers)
    if (k == name) return v;
  return "<absent>";
}

TEST(SigV4, GetVanillaCanonicalRequestAndStringToSign) {
  const auto s = sigv4_sign(suite_request("GET"), kSuiteKeys, suite_scope());
  EXPECT_EQ(s.canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(s.string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
}

TEST(SigV4, GetVanillaSignatureAndAuthorization) {
  const auto s = sigv4_sign(suite_request("GET"), kSuiteKeys, suite_scope());
  EXPECT_EQ(s.signature, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(s.signed_headers, "host;x-amz-date");
  EXPECT_EQ(header(s, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(header(s, "X-Amz-Date"), kSuiteDate);
  EXPECT_EQ(header(s, "X-Amz-Security-Token"), "<absent>");
  EXPECT_EQ(header(s, "x-amz-content-sha256"), "<absent>");
  EXPECT_EQ(s.headers.size(), 2u);
}

TEST(SigV4, SigningKeyDerivation) {
  EXPECT_EQ(sigv4_signing_key_hex(kSuiteKeys.secret_access_key, "20150830", "us-east-1", "service"),
            "938127b5336810ddb6a5d6af445fcac9e371f9ed418ed386b022aed82901be75");
}

TEST(SigV4, PostVanilla) {
  const auto s = sigv4_sign(suite_request("POST"), kSuiteKeys, suite_scope());
  EXPECT_EQ(last_line(s.string_to_sign), "553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87");
  EXPECT_EQ(s.signature, "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
}

TEST(SigV4, GetVanillaWithSessionToken) {
  AwsCredentials keys = kSuiteKeys;
  keys.session_token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
  const auto s = sigv4_sign(suite_request("GET"), keys, suite_scope());
  EXPECT_EQ(s.signed_headers, "host;x-amz-date;x-amz-security-token");
  EXPECT_EQ(last_line(s.string_to_sign), "067b36aa60031588cea4a4cde1f21215227a047690c72247f1d70b32fbbfad2b");
  EXPECT_EQ(s.signature, "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8");
  EXPECT_EQ(header(s, "X-Amz-Security-Token"), keys.session_token);
}

TEST(SigV4, GetUtf8PathIsEncoded) {
  const auto s = sigv4_sign(suite_request("GET", "/\xE1\x88\xB4"), kSuiteKeys, suite_scope());
  EXPECT_EQ(s.canonical_request.substr(0, s.canonical_request.find('\n', 4)), "GET\n/%E1%88%B4");
  EXPECT_EQ(last_line(s.string_to_sign), "2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102");
  EXPECT_EQ(s.signature, "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
}

TEST(SigV4, PostFormUrlencodedSignsPayloadHeader) {
  SigV4Request r = suite_request("POST");
  r.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Content-Length", "13"}};
  r.body = "Param1=value1";
  SigV4Scope scope = suite_scope();
  scope.sign_payload_header = true;
  const auto s = sigv4_sign(r, kSuiteKeys, scope);
  EXPECT_EQ(last_line(s.canonical_request), "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  EXPECT_EQ(s.signed_headers, "content-length;content-type;host;x-amz-content-sha256;x-amz-date");
  EXPECT_EQ(last_line(s.string_to_sign), "b1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb");
  EXPECT_EQ(s.signature, "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b");
  EXPECT_EQ(header(s, "x-amz-content-sha256"), "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
}

SigV4Request bedrock_request() {
  SigV4Request r;
  r.method = "POST";
  r.host = "bedrock-runtime.us-east-1.amazonaws.com";
  r.path = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse";
  r.headers = {{"Content-Type", "application/json"}};
  r.body = R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})";
  return r;
}

TEST(SigV4, BedrockModelIdWithColonIsSignedDoubleEncoded) {
  const SigV4Request r = bedrock_request();
  ASSERT_EQ(r.body.size(), 56u);
  const auto s = sigv4_sign(r, kSuiteKeys, {"us-east-1", "bedrock", kSuiteDate});
  EXPECT_EQ(s.canonical_request,
            "POST\n/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse\n\n"
            "content-type:application/json\nhost:bedrock-runtime.us-east-1.amazonaws.com\n"
            "x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n"
            "c3335e07d6e89650bf94cb98664be69f8774dbc3198df221f113db0a59ea14f0");
  EXPECT_EQ(last_line(s.string_to_sign), "70063920c38a0ff3e5f2d03983179e180c93a3c260cbe8f3e4d844bf97c892a0");
  EXPECT_EQ(sigv4_signing_key_hex(kSuiteKeys.secret_access_key, "20150830", "us-east-1", "bedrock"),
            "90e694a0eeb93605dc6a1e798b98fe0e790776a911d2494317b06246c599ba53");
  EXPECT_EQ(s.signature, "b2d89376425920647b8197be6560da5f53c4d9cc5ac66b56efafa43ba66c9022");
  // What signing the path as sent gives, and AWS refuses.
  EXPECT_NE(s.signature, "81a602e88508442c4cef48bb53081990c53fb0e804f67717db07fe09990b3b9e");
}

TEST(SigV4, HeadersAreLowercasedTrimmedSortedAndJoined) {
  SigV4Request r = suite_request("GET");
  r.headers = {{"My-Header2", "  \"a   b   c\"  "}, {"My-Header1", "value1"}, {"my-header1", "value2"}};
  const auto s = sigv4_sign(r, kSuiteKeys, suite_scope());
  EXPECT_EQ(s.signed_headers, "host;my-header1;my-header2;x-amz-date");
  EXPECT_NE(s.canonical_request.find("\nmy-header1:value1,value2\nmy-header2:\"a b c\"\n"), std::string::npos)
      << s.canonical_request;
}

TEST(SigV4, QueryIsEncodedAndSorted) {
  SigV4Request r = suite_request("GET");
  r.query = "Param2=value2&Param1=value%201&b=a:b";
  const auto s = sigv4_sign(r, kSuiteKeys, suite_scope());
  EXPECT_EQ(s.canonical_request.substr(0, s.canonical_request.find("\nhost:")),
            "GET\n/\nParam1=value%201&Param2=value2&b=a%3Ab");
}

TEST(SigV4, UriEncoding) {
  EXPECT_EQ(sigv4_uri_encode("aZ09-_.~ :/%", false), "aZ09-_.~%20%3A%2F%25");
  EXPECT_EQ(sigv4_uri_encode("/a b/c", true), "/a%20b/c");
}

TEST(SigV4, AmzDateIsUtc) {
  using namespace std::chrono;
  const auto t = sys_days{year{2015} / 8 / 30} + hours{12} + minutes{36};
  EXPECT_EQ(amz_date(t), "20150830T123600Z");
}

TEST(SigV4, MalformedAmzDateIsRefused) {
  EXPECT_THROW(sigv4_sign(suite_request("GET"), kSuiteKeys, {"us-east-1", "service", "2015-08-30T12:36:00Z"}),
               std::invalid_argument);
}

TEST(SigV4, SecretNeverInOutput) {
  AwsCredentials keys = kSuiteKeys;
  keys.session_token = "token";
  const auto s = sigv4_sign(bedrock_request(), keys, {"us-east-1", "bedrock", kSuiteDate});
  for (const auto& [k, v] : s.headers) EXPECT_EQ(v.find(keys.secret_access_key), std::string::npos) << k;
  EXPECT_EQ(s.canonical_request.find(keys.secret_access_key), std::string::npos);
  EXPECT_EQ(s.string_to_sign.find(keys.secret_access_key), std::string::npos);
}

}  // namespace
}  // namespace attune::llm
