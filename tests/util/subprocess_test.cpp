#include "attune/util/subprocess.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace attune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(SubprocessTest, CapturesBothStreamsAndTheExitCode) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.ok());
}

TEST(SubprocessTest, ZeroExitIsOk) {
  const ProcessResult r = run_process({"true"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "");
}

TEST(SubprocessTest, CapturesLargeOutputOnBothStreamsWithoutDeadlock) {
  // More than a pipe buffer on each stream, interleaved.
  const ProcessResult r =
      run_process({"/bin/sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo 0123456789012345678901234567890123456789; "
                                    "echo abcdefghijabcdefghijabcdefghijabcdefghij >&2; i=$((i+1)); done"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), 2000u * 41);
  EXPECT_EQ(r.err.size(), 2000u * 41);
}

TEST(SubprocessTest, EnvAddsAndOverrides) {
  ::setenv("ATTUNE_SUBPROCESS_TEST_KEEP", "kept", 1);
  ::setenv("ATTUNE_SUBPROCESS_TEST_OVERRIDE", "old", 1);
  ProcessOptions o;
  o.env["ATTUNE_SUBPROCESS_TEST_OVERRIDE"] = "new";
  o.env["ATTUNE_SUBPROCESS_TEST_ADDED"] = "a b $(x)";
  const ProcessResult r = run_process(
      {"/bin/sh", "-c",
       "printf '%s|%s|%s\\n' \"$ATTUNE_SUBPROCESS_TEST_KEEP\" \"$ATTUNE_SUBPROCESS_TEST_OVERRIDE\" "
       "\"$ATTUNE_SUBPROCESS_TEST_ADDED\""},
      o);
  ::unsetenv("ATTUNE_SUBPROCESS_TEST_KEEP");
  ::unsetenv("ATTUNE_SUBPROCESS_TEST_OVERRIDE");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "kept|new|a b $(x)\n");
}

TEST(SubprocessTest, ProgramIsLookedUpOnTheChildsPath) {
  const auto dir = std::filesystem::temp_directory_path() / ("attune-subprocess-path-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto tool = dir / "attune-test-tool";
  {
    FILE* f = std::fopen(tool.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("#!/bin/sh\necho from-path\n", f);
    std::fclose(f);
  }
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  ProcessOptions o;
  o.env["PATH"] = dir.string() + ":/usr/bin:/bin";
  const ProcessResult r = run_process({"attune-test-tool"}, o);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.error;
  EXPECT_EQ(r.out, "from-path\n");
}

TEST(SubprocessTest, StdinFromText) {
  ProcessOptions o;
  o.stdin_text = "line one\nline 'two'\n";
  const ProcessResult r = run_process({"cat"}, o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, o.stdin_text);
}

TEST(SubprocessTest, StdinIsDevNullWithoutText) {
  const ProcessResult r = run_process({"cat"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
}

TEST(SubprocessTest, ChildThatIgnoresStdinDoesNotHangOrKillUs) {
  ProcessOptions o;
  o.stdin_text = std::string(1 << 20, 'x');  // more than a pipe holds
  o.timeout_s = 5;
  const auto t0 = Clock::now();
  const ProcessResult r = run_process({"true"}, o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(seconds_since(t0), 2.0);
}

TEST(SubprocessTest, TimeoutKillsTheProcessGroup) {
  ProcessOptions o;
  o.timeout_s = 0.2;
  const auto t0 = Clock::now();
  const ProcessResult r = run_process({"sleep", "5"}, o);
  EXPECT_LT(seconds_since(t0), 2.0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_NE(r.error.find("timed out"), std::string::npos) << r.error;
}

TEST(SubprocessTest, TimeoutKillsGrandchildrenHoldingThePipes) {
  ProcessOptions o;
  o.timeout_s = 0.2;
  const auto t0 = Clock::now();
  // The shell waits for a grandchild that holds stdout open.
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo started; sleep 5; echo never"}, o);
  EXPECT_LT(seconds_since(t0), 2.0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.out, "started\n");
}

TEST(SubprocessTest, BackgroundGrandchildDoesNotHoldUsUntilTheTimeout) {
  ProcessOptions o;
  o.timeout_s = 10;
  const auto t0 = Clock::now();
  const ProcessResult r = run_process({"/bin/sh", "-c", "sleep 3 & echo done"}, o);
  EXPECT_LT(seconds_since(t0), 2.0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "done\n");
}

TEST(SubprocessTest, KilledBySignal) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "kill -9 $$"});
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.error, "killed by signal 9");
}

TEST(SubprocessTest, ProgramNotFound) {
  const ProcessResult r = run_process({"attune-no-such-program-xyz", "arg"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.error, "program 'attune-no-such-program-xyz' not found");
  EXPECT_FALSE(r.timed_out);
}

TEST(SubprocessTest, ProgramNotFoundByPath) {
  const ProcessResult r = run_process({"/nonexistent/dir/prog"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.error, "program '/nonexistent/dir/prog' not found");
}

TEST(SubprocessTest, NotExecutable) {
  const ProcessResult r = run_process({"/etc/passwd"});
  EXPECT_EQ(r.exit_code, 126);
  EXPECT_NE(r.error.find("cannot execute '/etc/passwd'"), std::string::npos) << r.error;
}

TEST(SubprocessTest, EmptyArgv) {
  EXPECT_EQ(run_process({}).exit_code, 127);
  EXPECT_EQ(run_process({""}).exit_code, 127);
}

TEST(SubprocessTest, ArgumentsArePassedVerbatim) {
  const std::vector<std::string> values = {
      "with space", "single'quote", "double\"quote", "$(touch /tmp/attune-never)", "`id`", "a;b", "$HOME",
      "new\nline", "*", "", "back\\slash", "--flag"};
  std::vector<std::string> argv = {"printf", "%s\\n"};
  argv.insert(argv.end(), values.begin(), values.end());
  const ProcessResult r = run_process(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string expected;
  for (const auto& v : values) expected += v + "\n";
  EXPECT_EQ(r.out, expected);
  EXPECT_FALSE(std::filesystem::exists("/tmp/attune-never"));
}

TEST(SubprocessTest, ChildRunsInItsOwnProcessGroup) {
  // /proc/PID/stat: "pid (comm) state ppid pgrp ...": the shell leads its own group.
  const ProcessResult r = run_process({"/bin/sh", "-c", "cut -d' ' -f1,5 /proc/$$/stat"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto space = r.out.find(' ');
  ASSERT_NE(space, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(0, space) + "\n", r.out.substr(space + 1));
}

}  // namespace
}  // namespace attune
