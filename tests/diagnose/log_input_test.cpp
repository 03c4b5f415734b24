// The diagnoser fails closed on what is not a training log (docs/diagnose.md,
// "What is refused"): not a regular file, not text, over the size cap; and
// every line is bounded whatever the bytes are. Each test is milliseconds.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attune/diagnose/diagnosis.h"
#include "attune/diagnose/log_pass.h"
#include "attune/diagnose/log_reader.h"
#include "attune/util/error.h"

namespace attune::diagnose {
namespace {

namespace fs = std::filesystem;

class LogInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attune_log_input_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

  fs::path dir_;
};

// The InputError diagnose_logs throws for `path` ("" when it throws none).
std::string refusal(const std::string& path) {
  try {
    diagnose_logs({path}, DiagnoseOptions{});
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, path);  // the message names the file
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::string megatron_lines(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) {
    out += "[rank7]:  [2026-01-01 00:00:00] iteration " + std::to_string(i) +
           "/100 | elapsed time per iteration (ms): 2000.0 | lm loss: 2.5E+00 |\n";
  }
  return out;
}

// Bytes 1..255 only, so that it is the share of non-text that refuses it.
std::string random_bytes(std::size_t n) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(1, 255);
  std::string out(n, ' ');
  for (char& c : out) c = static_cast<char>(byte(rng));
  return out;
}

// ---------------------------------------------------------------- not text

TEST_F(LogInput, NulByteIsRefusedWithItsOffset) {
  std::string bytes = megatron_lines(3);
  const std::size_t at = bytes.size();
  bytes += std::string("ELF\0\1\2", 6) + megatron_lines(2);
  const std::string why = refusal(write("binary.log", bytes));
  EXPECT_TRUE(has(why, "not a text log (NUL byte at offset " + std::to_string(at + 3) + ")")) << why;
}

TEST_F(LogInput, RandomBytesAreRefused) {
  const std::string why = refusal(write("random.bin", random_bytes(4096)));
  EXPECT_TRUE(has(why, "not a text log")) << why;
  EXPECT_TRUE(has(why, "of its first 4096 bytes")) << why;
}

TEST_F(LogInput, Utf16IsNamed) {
  const std::string why = refusal(write("utf16.log", std::string("\xFF\xFEi\0t\0", 6)));
  EXPECT_TRUE(has(why, "UTF-16")) << why;
}

TEST_F(LogInput, GzipIsJudgedOnItsText) {
  const std::string path = (dir_ / "zeros.log.gz").string();
  const std::string zeros(1 << 20, '\0');
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, zeros.data(), static_cast<unsigned>(zeros.size())), static_cast<int>(zeros.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  EXPECT_TRUE(has(refusal(path), "NUL byte at offset 0"));
}

// Colours, CR progress bars, tabs, bells, UTF-8 bars and a few stray bytes (a
// cut multi-byte character, one Latin-1 byte) are what real logs carry.
TEST_F(LogInput, RealLogNoiseIsText) {
  std::string bytes = "\x1b[32mINFO\x1b[0m\tstarting \xE2\x9C\x93 caf\xC3\xA9\a\n";
  bytes += "Epoch 0:  10%|\xE2\x96\x88         | 1/10 [00:01<00:09]\rEpoch 0:  20%|\xE2\x96\x88\xE2\x96\x88\n";
  bytes += "caf\xE9 truncated \xE2\x96\n";  // Latin-1 e-acute, then a cut 3-byte character
  bytes += megatron_lines(10);
  EXPECT_EQ(not_text_reason(bytes), "");
  const std::string path = write("noisy.log", bytes);
  const Diagnosis d = diagnose_logs({path}, DiagnoseOptions{});
  EXPECT_EQ(d.steps, 10);
}

TEST(LogText, Rule) {
  EXPECT_EQ(not_text_reason(""), "");
  // Overlong forms and surrogates are not UTF-8.
  std::string overlong;
  for (int i = 0; i < 100; ++i) overlong += "\xC0\xAF\xED\xA0\x80 ";
  EXPECT_TRUE(has(not_text_reason(overlong), "not a text log"));
  // Control bytes other than the terminal's own.
  EXPECT_TRUE(has(not_text_reason(std::string(20, '\x01') + "abc"), "the first at offset 0"));
  // 10% is the line: 10 of 100 passes, 11 does not.
  EXPECT_EQ(not_text_reason(std::string(10, '\x7F') + std::string(90, 'a')), "");
  EXPECT_NE(not_text_reason(std::string(11, '\x7F') + std::string(89, 'a')), "");
  // ... once there are more than 8: a few lines with a cut character are a log.
  EXPECT_EQ(not_text_reason("a\xE2\x96\nstep\n"), "");
  EXPECT_EQ(not_text_reason(std::string(8, '\x01')), "");
  EXPECT_NE(not_text_reason(std::string(9, '\x01')), "");
  // A character cut by the end of what is judged is text.
  EXPECT_EQ(not_text_reason("abc\xF0\x9F\x98"), "");
}

// ---------------------------------------------------------------- not a regular file

TEST_F(LogInput, CharacterDeviceIsRefusedByType) {
  const std::string why = refusal("/dev/null");
  EXPECT_TRUE(has(why, "/dev/null: log file is a character device, not a regular file")) << why;
}

TEST_F(LogInput, DirectoryIsRefusedByType) {
  EXPECT_TRUE(has(refusal(dir_.string()), "log file is a directory, not a regular file"));
}

// A FIFO nobody writes would block open(2) forever. A writer comes after a
// while, so that code which opens it anyway ends (and fails) instead of hanging.
TEST_F(LogInput, FifoIsRefusedBeforeItIsOpened) {
  const std::string fifo = (dir_ / "pipe.log").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = (dir_ / "link.log").string();
  fs::create_symlink(fifo, link);
  std::atomic<bool> done{false};
  std::thread guard([&] {
    const auto start = std::chrono::steady_clock::now();
    while (!done) {
      // After 3 s a reader is blocked in open(): a writer that closes at once ends its read.
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(3)) {
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0) ::close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const std::string why = refusal(fifo);
  const std::string why_link = refusal(link);  // symlinks are followed to what they name
  done = true;
  guard.join();
  EXPECT_TRUE(has(why, "log file is a named pipe (FIFO), not a regular file")) << why;
  EXPECT_TRUE(has(why_link, "named pipe (FIFO)")) << why_link;
}

// ---------------------------------------------------------------- bounded

TEST_F(LogInput, SizeCapRefusesBeforeReading) {
  const std::string path = write("big.log", megatron_lines(100));
  LogReader reader([](const LogLine&) { ADD_FAILURE() << "no line of a refused file is delivered"; },
                   LogReader::Limits{1000, LogReader::kMaxLineBytes});
  try {
    reader.read_file(path);
    FAIL() << "expected the size cap";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "over the 1000 bytes attune reads from one log")) << e.what();
  }
}

TEST_F(LogInput, SizeCapCountsDecompressedBytes) {
  const std::string path = (dir_ / "bomb.log.gz").string();
  const std::string text = megatron_lines(2000);  // ~190 KB, a few KB compressed
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  LogReader reader([](const LogLine&) {}, LogReader::Limits{100000, LogReader::kMaxLineBytes});
  try {
    reader.read_file(path);
    FAIL() << "expected the size cap";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "decompresses to more than")) << e.what();
  }
}

// An endless line (no newline ever, like /dev/zero) holds at most the cap.
TEST(LogBounds, EndlessLineIsCut) {
  std::size_t longest = 0, lines = 0;
  LogReader reader([&](const LogLine& l) {
    longest = std::max(longest, l.text.size());
    ++lines;
  });
  const std::string chunk(std::size_t{1} << 20, 'a');
  for (int i = 0; i < 8; ++i) reader.feed(chunk);
  reader.feed("\nnext\n");
  reader.finish();
  EXPECT_EQ(lines, 2u);
  EXPECT_LE(longest, std::size_t{1} << 20);
  EXPECT_EQ(reader.truncated_lines(), 1u);
}

TEST(LogBounds, LongCompleteLineIsCutToWholeCharacters) {
  std::vector<std::string> got;
  std::string text;
  while (text.size() < (std::size_t{3} << 20)) text += "\xE2\x96\x88";  // █
  LogReader::read_text(text + "\n", [&](const LogLine& l) { got.emplace_back(l.text); });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(got[0].size(), std::size_t{1} << 20);
  EXPECT_EQ(got[0].size() % 3, 0u);
}

// A progress bar updated by CR for a whole run, then the record after it: the
// parts the normaliser reads (the rank prefix, the last update) survive.
TEST(LogBounds, LongProgressBarKeepsItsEnds) {
  std::string line = "[rank3]: Epoch 0:   0%|          | 0/100000 [00:00<?, ?it/s]";
  for (int i = 1; i <= 30000; ++i) line += "\rEpoch 0:  50%|#####     | " + std::to_string(i) + "/100000 [00:01<00:01]";
  line += "\rEpoch 0: 100%|##########| 100000/100000 [09:59<00:00] loss=1.25";
  ASSERT_GT(line.size(), std::size_t{1} << 20);
  for (std::size_t piece : {std::size_t{1} << 16, line.size() + 1}) {  // split and whole
    std::vector<std::string> got;
    std::vector<int> ranks;
    LogReader reader([&](const LogLine& l) {
      got.emplace_back(l.text);
      ranks.push_back(l.rank);
    });
    const std::string all = line + "\n";
    for (std::size_t at = 0; at < all.size(); at += piece) reader.feed(std::string_view(all).substr(at, piece));
    reader.finish();
    // Past the cap only the ends are kept: the first refresh and the last.
    ASSERT_EQ(got.size(), 2u) << piece;
    EXPECT_EQ(got[0], "Epoch 0:   0%|          | 0/100000 [00:00<?, ?it/s]") << piece;
    EXPECT_EQ(got[1], "Epoch 0: 100%|##########| 100000/100000 [09:59<00:00] loss=1.25") << piece;
    EXPECT_EQ(ranks[0], 3);
    EXPECT_EQ(ranks[1], 3);
    EXPECT_EQ(reader.truncated_lines(), 0u);
  }
}

// 80-column lines are joined as hard wraps; a wall of them is cut into
// logical lines of at most the cap.
TEST(LogBounds, WallOfEightyColumnLinesIsBounded) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::string(80, '=') + "\n";
  std::size_t longest = 0, bytes = 0;
  LogReader::read_text(text, [&](const LogLine& l) {
    longest = std::max(longest, l.text.size());
    bytes += l.text.size();
  });
  EXPECT_LE(longest, std::size_t{1} << 20);
  EXPECT_EQ(bytes, 20000u * 80u);  // nothing lost
}

// Lines held for framework detection are bounded in bytes, not only in number.
TEST(LogBounds, DetectionHoldsBoundedBytes) {
  LogPass pass("");
  const std::string big(std::size_t{1} << 20, 'x');
  for (long i = 1; i <= 16; ++i) pass.feed(LogLine{big, i, -1});
  EXPECT_FALSE(pass.framework().empty());  // decided, the held lines let go
}

}  // namespace
}  // namespace attune::diagnose
