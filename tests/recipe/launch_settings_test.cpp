// The attune wrapper's `launch:` and `measure:` sections: every key parsed
// through parse_wrapper_file, each kind of bad input named by file, line and
// key, Slurm's time formats both ways, and the sections written back as YAML
// parsing to the same settings.
#include "attune/recipe/launch_settings.h"

#include <gtest/gtest.h>

#include <string>

#include <yaml-cpp/yaml.h>

#include "attune/recipe/wrapper_file.h"
#include "attune/util/error.h"

namespace attune::recipe {
namespace {

constexpr const char* kFile = "w.attune.yaml";
// Two lines of header: the body's first line is line 3 of the file.
constexpr const char* kHeader = "framework: megatron\nconfig: train.sh\n";

WrapperFile parse(const std::string& body) { return parse_wrapper_file(kFile, kHeader + body); }

// The InputError parsing `body` throws (a failed expectation when none).
InputError error_of(const std::string& body) {
  try {
    parse(body);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for:\n" << body;
  return InputError({}, "", "");
}

// The error names the file, the line and the key, in the message too.
void expect_error(const std::string& body, const std::string& key, int line) {
  SCOPED_TRACE(body);
  const InputError e = error_of(body);
  EXPECT_EQ(e.key(), key);
  EXPECT_EQ(e.where().file, kFile);
  EXPECT_EQ(e.where().line, line);
  const std::string what = e.what();
  EXPECT_NE(what.find(std::string(kFile) + ":" + std::to_string(line) + ":"), std::string::npos) << what;
  EXPECT_NE(what.find("key '" + key + "'"), std::string::npos) << what;
}

// ---------------------------------------------------------------- parsing

TEST(LaunchSettings, EveryLaunchAndMeasureKey) {
  const WrapperFile w = parse(R"y(launch:
  command: [torchrun, pretrain_gpt.py, --yaml-cfg, "{config}"]
  workdir: /opt/megatron-lm
  env: {CUDA_DEVICE_MAX_CONNECTIONS: "1", NCCL_DEBUG: WARN, _UNDER_1: "a b; $(c)"}
  container: {image: nvcr.io/nvidia/nemo:25.09, mounts: ["/lustre:/lustre", "/data:/data:ro"]}
  slurm: {partition: gpu, account: llm, qos: high, constraint: h100, exclusive: false, time_limit: 40m}
measure: {steps: 60, skip_first: 10}
)y");
  const LaunchSettings& l = w.launch;
  EXPECT_EQ(l.command, (std::vector<std::string>{"torchrun", "pretrain_gpt.py", "--yaml-cfg", "{config}"}));
  EXPECT_EQ(l.workdir, "/opt/megatron-lm");
  EXPECT_EQ(l.env, (std::map<std::string, std::string>{
                       {"CUDA_DEVICE_MAX_CONNECTIONS", "1"}, {"NCCL_DEBUG", "WARN"}, {"_UNDER_1", "a b; $(c)"}}));
  EXPECT_EQ(l.container_image, "nvcr.io/nvidia/nemo:25.09");
  EXPECT_EQ(l.container_mounts, (std::vector<std::string>{"/lustre:/lustre", "/data:/data:ro"}));
  EXPECT_EQ(l.partition, "gpu");
  EXPECT_EQ(l.account, "llm");
  EXPECT_EQ(l.qos, "high");
  EXPECT_EQ(l.constraint, "h100");
  EXPECT_FALSE(l.exclusive);
  EXPECT_DOUBLE_EQ(l.time_limit_s, 2400);
  EXPECT_EQ(w.measure.steps, 60);
  EXPECT_EQ(w.measure.skip_first, 10);
}

TEST(LaunchSettings, BlockStyleAndUnquotedScalars) {
  const WrapperFile w = parse(R"y(launch:
  command:
    - /bin/sh
    - -c
    - |
      echo one
      echo two
  env:
    CUDA_DEVICE_MAX_CONNECTIONS: 1
  slurm:
    exclusive: yes
    time_limit: 1:30:00
measure:
  steps: 5
)y");
  ASSERT_EQ(w.launch.command.size(), 3u);
  EXPECT_EQ(w.launch.command[2], "echo one\necho two\n");
  EXPECT_EQ(w.launch.env.at("CUDA_DEVICE_MAX_CONNECTIONS"), "1");
  EXPECT_TRUE(w.launch.exclusive);
  EXPECT_DOUBLE_EQ(w.launch.time_limit_s, 5400);
  EXPECT_EQ(w.measure.steps, 5);
  EXPECT_EQ(w.measure.skip_first, 0);
}

TEST(LaunchSettings, AbsentOrEmptySectionsAreDefaults) {
  for (const char* body : {"", "launch:\nmeasure:\n", "launch: {}\nmeasure: {}\n"}) {
    SCOPED_TRACE(body);
    const WrapperFile w = parse(body);
    EXPECT_TRUE(w.launch.command.empty());
    EXPECT_TRUE(w.launch.workdir.empty());
    EXPECT_TRUE(w.launch.env.empty());
    EXPECT_TRUE(w.launch.container_image.empty());
    EXPECT_TRUE(w.launch.container_mounts.empty());
    EXPECT_TRUE(w.launch.partition.empty());
    EXPECT_TRUE(w.launch.exclusive);  // training runs want whole nodes
    EXPECT_EQ(w.launch.time_limit_s, 0);
    EXPECT_EQ(w.measure.steps, 0);
    EXPECT_EQ(w.measure.skip_first, 0);
  }
}

TEST(LaunchSettings, BooleanSpellings) {
  for (const char* yes : {"true", "yes", "on"}) {
    EXPECT_TRUE(parse(std::string("launch: {slurm: {exclusive: ") + yes + "}}\n").launch.exclusive) << yes;
  }
  for (const char* no : {"false", "no", "off"}) {
    EXPECT_FALSE(parse(std::string("launch: {slurm: {exclusive: ") + no + "}}\n").launch.exclusive) << no;
  }
}

TEST(LaunchSettings, BadLaunchInputNamesFileLineAndKey) {
  // Lines: the header takes 2, so "launch:" is line 3.
  expect_error("launch:\n  slurm: {time_limit: forever}\n", "launch.slurm.time_limit", 4);
  expect_error("launch:\n  slurm:\n    partition: gpu\n    time_limit: 0\n", "launch.slurm.time_limit", 6);
  expect_error("launch:\n  slurm: {time_limit: -5}\n", "launch.slurm.time_limit", 4);
  expect_error("launch:\n  slurm: {exclusive: maybe}\n", "launch.slurm.exclusive", 4);
  expect_error("launch:\n  slurm: {partion: gpu}\n", "launch.slurm.partion", 4);
  expect_error("launch:\n  slurm: [gpu]\n", "launch.slurm", 4);
  expect_error("launch:\n  slurm: {partition: [a, b]}\n", "launch.slurm.partition", 4);
  expect_error("launch:\n  env:\n    GOOD: 1\n    1BAD: x\n", "launch.env.1BAD", 6);
  expect_error("launch:\n  env: {A-B: x}\n", "launch.env.A-B", 4);
  expect_error("launch:\n  env: {\"\": x}\n", "launch.env.", 4);
  expect_error("launch:\n  env: {A: [1, 2]}\n", "launch.env.A", 4);
  expect_error("launch:\n  env: [A=1]\n", "launch.env", 4);
  expect_error("launch:\n  container:\n    imag: nvcr.io/x\n", "launch.container.imag", 5);
  expect_error("launch:\n  container: nvcr.io/x\n", "launch.container", 4);
  expect_error("launch:\n  container: {mounts: /a:/a}\n", "launch.container.mounts", 4);
  expect_error("launch:\n  container: {image: {a: b}}\n", "launch.container.image", 4);
  expect_error("launch:\n  command: []\n", "launch.command", 4);
  expect_error("launch:\n  command: [\"\", x]\n", "launch.command", 4);
  expect_error("launch:\n  command: bash train.sh\n", "launch.command", 4);
  expect_error("launch:\n  command: [bash, [x]]\n", "launch.command", 4);
  expect_error("launch:\n  workdir: [a]\n", "launch.workdir", 4);
  expect_error("launch:\n  cmd: [bash]\n", "launch.cmd", 4);
  expect_error("launch: [bash]\n", "launch", 3);
}

TEST(LaunchSettings, BadMeasureInputNamesFileLineAndKey) {
  expect_error("measure:\n  steps: -1\n", "measure.steps", 4);
  expect_error("measure: {steps: 60, skip_first: -3}\n", "measure.skip_first", 3);
  expect_error("measure:\n  steps: many\n", "measure.steps", 4);
  expect_error("measure:\n  steps: 1.5\n", "measure.steps", 4);
  expect_error("measure:\n  step: 5\n", "measure.step", 4);
  expect_error("measure: 60\n", "measure", 3);
}

// A mapping key that is not a scalar is bad input like any other (exit 2 with
// file, line and key), not a yaml-cpp conversion error (exit 3).
TEST(LaunchSettings, NonScalarKeysAreInputErrors) {
  for (const char* body : {"launch:\n  env: {[a]: b}\n", "launch:\n  slurm: {[a]: b}\n", "launch:\n  container: {[a]: b}\n",
                           "launch: {[a]: b}\n", "measure: {[a]: 1}\n", "[x]: 1\n"}) {
    EXPECT_THROW(parse(body), InputError) << body;
  }
}

TEST(LaunchSettings, ParseFunctionsTakeNodesDirectly) {
  const YAML::Node n = YAML::Load("{command: [a, b], slurm: {time_limit: 2h}}");
  const LaunchSettings l = parse_launch_settings("x.yaml", n);
  EXPECT_EQ(l.command, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(l.time_limit_s, 7200);
  const MeasureSettings m = parse_measure_settings("x.yaml", YAML::Load("{steps: 7}"));
  EXPECT_EQ(m.steps, 7);
  EXPECT_EQ(parse_launch_settings("x.yaml", YAML::Node()).command.size(), 0u);
  EXPECT_EQ(parse_measure_settings("x.yaml", YAML::Node()).steps, 0);
}

// ---------------------------------------------------------------- time limits

TEST(LaunchTimeLimit, ParsesEverySlurmForm) {
  struct Case {
    const char* text;
    double seconds;
  } cases[] = {
      {"40m", 2400},
      {"2h", 7200},
      {"90s", 90},
      {"1d", 86400},
      {"90", 5400},           // Slurm: bare minutes
      {"1:30", 90},           // minutes:seconds
      {"1:30:00", 5400},      // hours:minutes:seconds
      {"00:00:30", 30},
      {"1-00:00:00", 86400},  // days-hours:minutes:seconds
      {"2-12", 2 * 86400 + 12 * 3600},               // days-hours
      {"2-12:30", 2 * 86400 + 12 * 3600 + 30 * 60},  // days-hours:minutes
      {"1-0", 86400},
      {"0m", 0},
  };
  for (const auto& c : cases) EXPECT_DOUBLE_EQ(parse_time_limit_s(c.text), c.seconds) << c.text;
}

TEST(LaunchTimeLimit, RejectsWhatIsNoDuration) {
  for (const char* bad : {"abc", "", "1:2:3:4", "-5", "m", "5x", "40M", " 40m", "40m ", "1.5h", "5m30s", "1::2",
                          "1:30:", ":30", "1-", "-1-00:00:00", "x-1:00", "1234567890", "1e3"}) {
    EXPECT_LT(parse_time_limit_s(bad), 0) << "'" << bad << "'";
  }
}

// Slurm reads "D-H" as days-hours at any day count, 0 included: "0-5" is
// five hours, not five minutes.
TEST(LaunchTimeLimit, ZeroDaysKeepsTheDaysHoursForm) {
  EXPECT_DOUBLE_EQ(parse_time_limit_s("0-5"), 5 * 3600);
  EXPECT_DOUBLE_EQ(parse_time_limit_s("0-1:30"), 3600 + 30 * 60);
}

TEST(LaunchTimeLimit, FormatsRoundingUpToAMinute) {
  EXPECT_EQ(format_time_limit(0), "00:01:00");  // Slurm's least: one minute
  EXPECT_EQ(format_time_limit(-10), "00:01:00");
  EXPECT_EQ(format_time_limit(1), "00:01:00");
  EXPECT_EQ(format_time_limit(60), "00:01:00");
  EXPECT_EQ(format_time_limit(60.5), "00:02:00");
  EXPECT_EQ(format_time_limit(61), "00:02:00");
  EXPECT_EQ(format_time_limit(2400), "00:40:00");
  EXPECT_EQ(format_time_limit(5400), "01:30:00");
  EXPECT_EQ(format_time_limit(3599), "01:00:00");
  EXPECT_EQ(format_time_limit(86399), "1-00:00:00");
  EXPECT_EQ(format_time_limit(86400), "1-00:00:00");
  EXPECT_EQ(format_time_limit(90061), "1-01:02:00");  // 1 d 1 h 1 min 1 s
  EXPECT_EQ(format_time_limit(2 * 86400 + 12 * 3600 + 30 * 60), "2-12:30:00");
  EXPECT_EQ(format_time_limit(10 * 86400), "10-00:00:00");
  // Just over a whole minute from floating-point arithmetic stays that minute.
  EXPECT_EQ(format_time_limit(0.1 * 3 * 1000), "00:05:00");
}

TEST(LaunchTimeLimit, FormatReadsBack) {
  for (double s : {60.0, 2400.0, 5400.0, 86400.0, 90060.0, 217800.0}) {
    EXPECT_DOUBLE_EQ(parse_time_limit_s(format_time_limit(s)), s) << s;
  }
}

// ---------------------------------------------------------------- written back

void expect_same(const LaunchSettings& a, const LaunchSettings& b) {
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.workdir, b.workdir);
  EXPECT_EQ(a.env, b.env);
  EXPECT_EQ(a.container_image, b.container_image);
  EXPECT_EQ(a.container_mounts, b.container_mounts);
  EXPECT_EQ(a.partition, b.partition);
  EXPECT_EQ(a.account, b.account);
  EXPECT_EQ(a.qos, b.qos);
  EXPECT_EQ(a.constraint, b.constraint);
  EXPECT_EQ(a.exclusive, b.exclusive);
  EXPECT_DOUBLE_EQ(a.time_limit_s, b.time_limit_s);
}

// The YAML as text, parsed back the way a written wrapper is read.
LaunchSettings launch_round_trip(const LaunchSettings& s) {
  const std::string text = YAML::Dump(launch_settings_yaml(s));
  return parse_launch_settings("rt.yaml", YAML::Load(text));
}

MeasureSettings measure_round_trip(const MeasureSettings& m) {
  return parse_measure_settings("rt.yaml", YAML::Load(YAML::Dump(measure_settings_yaml(m))));
}

TEST(LaunchSettingsYaml, FullSettingsRoundTrip) {
  LaunchSettings s;
  s.command = {"torchrun", "--nproc_per_node", "8", "pretrain_gpt.py", "--yaml-cfg", "{config}", "--flag=a: b",
               "it's \"quoted\"", "#not a comment", "multi\nline", "- dash", "yes", "1:30"};
  s.workdir = "/opt/megatron lm";
  s.env = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}, {"NCCL_DEBUG", "WARN"}, {"EMPTY", ""}, {"ODD", "a: {b}, [c] & *d"}};
  s.container_image = "nvcr.io/nvidia/nemo:25.09";
  s.container_mounts = {"/lustre:/lustre", "/data:/data:ro"};
  s.partition = "gpu";
  s.account = "llm";
  s.qos = "high";
  s.constraint = "h100&ib";
  s.exclusive = false;
  s.time_limit_s = 2400;
  expect_same(launch_round_trip(s), s);
}

TEST(LaunchSettingsYaml, DefaultsWriteNothingAndReadBack) {
  const LaunchSettings d;
  EXPECT_EQ(launch_settings_yaml(d).size(), 0u);
  expect_same(launch_round_trip(d), d);
  EXPECT_EQ(measure_settings_yaml(MeasureSettings{}).size(), 0u);
  const MeasureSettings m = measure_round_trip(MeasureSettings{});
  EXPECT_EQ(m.steps, 0);
  EXPECT_EQ(m.skip_first, 0);
}

TEST(LaunchSettingsYaml, PartialSettingsRoundTrip) {
  LaunchSettings only_slurm;
  only_slurm.qos = "low";
  expect_same(launch_round_trip(only_slurm), only_slurm);
  EXPECT_FALSE(launch_settings_yaml(only_slurm)["command"]);
  EXPECT_FALSE(launch_settings_yaml(only_slurm)["slurm"]["exclusive"]);  // the default is not written

  LaunchSettings mounts_only;
  mounts_only.container_mounts = {"/a:/a"};
  expect_same(launch_round_trip(mounts_only), mounts_only);

  LaunchSettings not_exclusive;
  not_exclusive.exclusive = false;
  expect_same(launch_round_trip(not_exclusive), not_exclusive);
}

TEST(LaunchSettingsYaml, TimeLimitIsWrittenInWholeSecondsRoundedUp) {
  for (double t : {1.0, 90.0, 2400.0, 86400.0, 3 * 86400.0 + 1}) {
    LaunchSettings s;
    s.time_limit_s = t;
    EXPECT_DOUBLE_EQ(launch_round_trip(s).time_limit_s, t) << t;
  }
  LaunchSettings frac;
  frac.time_limit_s = 90.2;
  EXPECT_DOUBLE_EQ(launch_round_trip(frac).time_limit_s, 91);
}

TEST(LaunchSettingsYaml, MeasureRoundTrip) {
  MeasureSettings m;
  m.steps = 60;
  m.skip_first = 10;
  const MeasureSettings back = measure_round_trip(m);
  EXPECT_EQ(back.steps, 60);
  EXPECT_EQ(back.skip_first, 10);
  MeasureSettings skip_only;
  skip_only.skip_first = 3;
  EXPECT_EQ(measure_round_trip(skip_only).skip_first, 3);
  EXPECT_EQ(measure_round_trip(skip_only).steps, 0);
}

TEST(LaunchSettingsYaml, WrittenSectionsParseInsideAWrapper) {
  const WrapperFile w = parse(R"y(launch:
  command: [bash, "{config}"]
  env: {A: "1"}
  slurm: {partition: gpu, time_limit: 1-00:00:00, exclusive: off}
measure: {steps: 60, skip_first: 10}
)y");
  YAML::Node root;
  root["framework"] = "megatron";
  root["config"] = "train.sh";
  root["launch"] = launch_settings_yaml(w.launch);
  root["measure"] = measure_settings_yaml(w.measure);
  const WrapperFile back = parse_wrapper_file(kFile, YAML::Dump(root));
  expect_same(back.launch, w.launch);
  EXPECT_EQ(back.measure.steps, 60);
  EXPECT_EQ(back.measure.skip_first, 10);
}

}  // namespace
}  // namespace attune::recipe
