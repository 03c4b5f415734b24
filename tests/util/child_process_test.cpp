#include "attune/util/child_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace attune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(ChildProcessTest, AnEchoChildAnswersEachLineAndExitsAtEndOfInput) {
  ChildProcess child({"cat"});
  ASSERT_TRUE(child.running()) << child.error();
  for (const std::string line : {"{\"op\":\"ask\"}", "", "second line with spaces"}) {
    ASSERT_TRUE(child.write_line(line, 2)) << child.error();
    const auto answer = child.read_line(2);
    ASSERT_TRUE(answer) << child.error();
    EXPECT_EQ(*answer, line);
  }
  child.close(2);
  EXPECT_EQ(child.exit_code(), 0);
  EXPECT_FALSE(child.running());
}

TEST(ChildProcessTest, ALineWrittenInPiecesIsReadWhole) {
  ChildProcess child({"/bin/sh", "-c", "printf 'ab'; sleep 0.05; printf 'c\\nd\\n'"});
  EXPECT_EQ(child.read_line(2).value_or("?"), "abc");
  EXPECT_EQ(child.read_line(2).value_or("?"), "d");
}

TEST(ChildProcessTest, AnAnswerThatDoesNotComeTimesOutAndCloseKillsTheChild) {
  ChildProcess child({"/bin/sh", "-c", "sleep 30"});
  const auto start = Clock::now();
  EXPECT_FALSE(child.read_line(0.2));
  EXPECT_EQ(child.error(), "no line within 0.2 s");
  EXPECT_GE(seconds_since(start), 0.19);
  EXPECT_LT(seconds_since(start), 2);
  EXPECT_TRUE(child.running());  // a timeout does not end it: the caller decides
  const auto closing = Clock::now();
  child.close(0.1);  // sleep ignores the end of its input: killed after the grace
  EXPECT_LT(seconds_since(closing), 2);
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.exit_code(), -1);
}

TEST(ChildProcessTest, AChildThatExitsEarlyIsReportedWithItsStatusAndStderr) {
  ChildProcess child({"/bin/sh", "-c", "echo first; echo 'Traceback: oops' >&2; exit 3"});
  EXPECT_EQ(child.read_line(2).value_or("?"), "first");
  const auto start = Clock::now();
  EXPECT_FALSE(child.read_line(10));
  EXPECT_LT(seconds_since(start), 2);  // its end is seen at once, not at the timeout
  EXPECT_EQ(child.error(), "exited with status 3");
  EXPECT_EQ(child.exit_code(), 3);
  EXPECT_NE(child.stderr_tail().find("Traceback: oops"), std::string::npos);
  EXPECT_FALSE(child.write_line("more", 1));
  EXPECT_FALSE(child.running());
}

TEST(ChildProcessTest, AChildThatStopsReadingFailsTheWriteWithoutSigpipe) {
  ChildProcess child({"/bin/sh", "-c", "exec 0<&-; echo closed; sleep 30"});
  ASSERT_EQ(child.read_line(2).value_or("?"), "closed");
  EXPECT_FALSE(child.write_line(std::string(1 << 20, 'x'), 2));  // more than a pipe holds
  EXPECT_NE(child.error().find("stopped reading its input"), std::string::npos) << child.error();
  child.close(0.1);
}

TEST(ChildProcessTest, AProgramThatIsNotThereIsReportedNotThrown) {
  ChildProcess child({"/nonexistent/attune-child"});
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.error(), "program '/nonexistent/attune-child' not found");
  EXPECT_EQ(child.exit_code(), 127);
  EXPECT_FALSE(child.write_line("x", 1));
  EXPECT_FALSE(child.read_line(1));
}

TEST(ChildProcessTest, AChattyStderrNeverBlocksTheAnswersAndOnlyItsTailIsKept) {
  ChildOptions o;
  o.stderr_keep = 1000;
  // Far more than a pipe buffer on stderr before the answer.
  ChildProcess child({"/bin/sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' e >&2; echo answer"}, o);
  EXPECT_EQ(child.read_line(5).value_or("?"), "answer") << child.error();
  child.close(2);
  EXPECT_EQ(child.stderr_tail(), std::string(1000, 'e'));
}

TEST(ChildProcessTest, TheEnvironmentIsAddedTo) {
  ChildOptions o;
  o.env["ATTUNE_CHILD_TEST"] = "a b $(x)";
  ChildProcess child({"/bin/sh", "-c", "printf '%s\\n' \"$ATTUNE_CHILD_TEST\""}, o);
  EXPECT_EQ(child.read_line(2).value_or("?"), "a b $(x)");
}

}  // namespace
}  // namespace attune
