#include "attune/diagnose/log_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attune/util/error.h"

namespace attune::diagnose {
namespace {

struct Got {
  std::string text;
  long line;
  int rank;
};

std::vector<Got> read(std::string_view text) {
  std::vector<Got> out;
  LogReader::read_text(text, [&](const LogLine& l) { out.push_back({std::string(l.text), l.line, l.rank}); });
  return out;
}

std::vector<Got> read_path(const std::string& path) {
  std::vector<Got> out;
  LogReader reader([&](const LogLine& l) { out.push_back({std::string(l.text), l.line, l.rank}); });
  reader.read_file(path);
  return out;
}

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("attune_log_reader_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
              "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(LogReader, PlainLinesAreNumberedFromOne) {
  auto got = read("alpha\nbeta\ngamma");  // last line without newline still counts
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].text, "alpha");
  EXPECT_EQ(got[2].text, "gamma");
  EXPECT_EQ(got[0].line, 1);
  EXPECT_EQ(got[2].line, 3);
  EXPECT_EQ(got[1].rank, -1);
}

TEST(LogReader, EmptyTextGivesNoLines) { EXPECT_TRUE(read("").empty()); }

// On a file a bar keeps one physical line until a newline: each refresh is a
// step's position and rate, read as its own line; a tqdm.write() clears the
// bar first (`\r`, blanks, `\r`), and its message is the line's last part.
TEST(LogReader, EveryRefreshOfABarIsItsOwnLine) {
  const auto got = read("  0%|          | 0/30 [00:00<?, ?it/s]\r  3%|3         | 1/30 [00:03<01:37,  3.36s/it]\r"
                        "                    \r{'loss': '10.98'}\n"
                        " 10%|#         | 3/30 [00:05<00:44,  1.65s/it]\r 13%|#3        | 4/30 [00:06<00:40,  1.5s/it]\n");
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].text, "  0%|          | 0/30 [00:00<?, ?it/s]");
  EXPECT_EQ(got[1].text, "  3%|3         | 1/30 [00:03<01:37,  3.36s/it]");
  EXPECT_EQ(got[2].text, "{'loss': '10.98'}");
  EXPECT_EQ(got[1].line, 1);
  EXPECT_EQ(got[2].line, 1);
  EXPECT_EQ(got[3].text, " 10%|#         | 3/30 [00:05<00:44,  1.65s/it]");
  EXPECT_EQ(got[4].text, " 13%|#3        | 4/30 [00:06<00:40,  1.5s/it]");
  EXPECT_EQ(got[4].line, 2);
}

// A bar that follows the first half of an 80-column wrapped line ends that
// line: the wrapped text leaves first, then the bar's refreshes, in order.
TEST(LogReader, ABarAfterAWrappedLineComesAfterIt) {
  const std::string wrapped(80, 'w');
  const auto got = read(wrapped + "\n 10%|#         | 3/30 [00:05<00:44,  1.65s/it]\r 13%|#3   | 4/30 [00:06<00:40,  1.5s/it]\n");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].text, wrapped);
  EXPECT_EQ(got[0].line, 1);
  EXPECT_EQ(got[1].text, " 10%|#         | 3/30 [00:05<00:44,  1.65s/it]");
  EXPECT_EQ(got[1].line, 2);
  EXPECT_EQ(got[2].text, " 13%|#3   | 4/30 [00:06<00:40,  1.5s/it]");
}

TEST(LogReader, EmptyLinesKeepNumbering) {
  auto got = read("a\n\nb\n");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].text, "");
  EXPECT_EQ(got[2].line, 3);
}

TEST(LogReader, CrlfIsFolded) {
  auto got = read("one\r\ntwo\r\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].text, "one");
  EXPECT_EQ(got[1].text, "two");
  EXPECT_EQ(got[1].line, 2);
}

TEST(LogReader, AnsiEscapesAreStripped) {
  auto got = read("\x1b[32mINFO\x1b[0m training \x1b[1;31mstarted\x1b[0m\n");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].text, "INFO training started");
}

TEST(LogReader, CarriageReturnUpdatesKeepTheLastNonEmptyPart) {
  auto got = read(" 10%|#    | 1/10\r 50%|#####     | 5/10\r100%|##########| 10/10\r\nnext\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].text, "100%|##########| 10/10");
  EXPECT_EQ(got[1].text, "next");
  EXPECT_EQ(got[1].line, 2);
}

TEST(LogReader, CarriageReturnAfterRankPrefixKeepsRank) {
  auto got = read("[rank2]: 10%|#  | 1/10\r 90%|#########| 9/10\n");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].text, " 90%|#########| 9/10");
  EXPECT_EQ(got[0].rank, 2);
}

TEST(LogReader, RankPrefixesOfEveryStyleAreStripped) {
  auto got = read(
      "[rank3]:hello a\n"
      "[rank4]: hello b\n"
      "5: hello c\n"
      "[default6]: hello d\n"
      "task/0 [default7]: hello e\n"
      "stdout: hello f\n"
      "stderr: hello g\n"
      "[80746] hello h\n"
      "[80747] 12: [rank12]: hello i\n");
  ASSERT_EQ(got.size(), 9u);
  const char* texts[] = {"hello a", "hello b", "hello c", "hello d", "hello e",
                         "hello f", "hello g", "hello h", "hello i"};
  const int ranks[] = {3, 4, 5, 6, 7, -1, -1, -1, 12};
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].text, texts[i]) << i;
    EXPECT_EQ(got[i].rank, ranks[i]) << i;
    EXPECT_EQ(got[i].line, static_cast<long>(i + 1));
  }
}

TEST(LogReader, TextThatOnlyLooksLikeAPrefixIsKept) {
  auto got = read("12:30:45 started\n [2024-05-01 12:00:00] iteration 1/10 |\n[rank]: x\n");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].text, "12:30:45 started");
  EXPECT_EQ(got[0].rank, -1);
  EXPECT_EQ(got[1].text, " [2024-05-01 12:00:00] iteration 1/10 |");
  EXPECT_EQ(got[2].text, "[rank]: x");
}

TEST(LogReader, LineFromEightRanksIsDeliveredOnce) {
  std::string text;
  for (int r = 0; r < 8; ++r) text += "[rank" + std::to_string(r) + "]: Traceback (most recent call last):\n";
  text += "[rank5]: done\n";
  auto got = read(text);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].rank, 0);
  EXPECT_EQ(got[0].line, 1);
  EXPECT_EQ(got[1].text, "done");
  EXPECT_EQ(got[1].line, 9);
}

TEST(LogReader, RepeatsFromOneRankAreAllDelivered) {
  std::string text;
  for (int round = 0; round < 3; ++round) {
    for (int r = 0; r < 4; ++r) text += std::to_string(r) + ": heartbeat\n";
  }
  text += "heartbeat\nheartbeat\n";  // no rank: cannot be told apart, all kept
  auto got = read(text);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].line, 1);
  EXPECT_EQ(got[1].line, 5);
  EXPECT_EQ(got[2].line, 9);
  EXPECT_EQ(got[3].rank, -1);
}

TEST(LogReader, DedupWindowIsShort) {
  std::string text = "[rank0]: same\n";
  for (int i = 0; i < 100; ++i) text += "[rank0]: distinct " + std::to_string(i) + "\n";
  text += "[rank1]: same\n";
  auto got = read(text);
  ASSERT_EQ(got.size(), 102u);
  EXPECT_EQ(got.back().text, "same");
  EXPECT_EQ(got.back().rank, 1);
}

TEST(LogReader, EightyColumnLinesAreJoined) {
  const std::string first(80, 'a');
  const std::string second(80, 'b');
  auto got = read(first + "\n" + second + "\ntail\n" + std::string(79, 'c') + "\nafter\n");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].text, first + second + "tail");
  EXPECT_EQ(got[0].line, 1);
  EXPECT_EQ(got[1].text, std::string(79, 'c'));
  EXPECT_EQ(got[1].line, 4);
  EXPECT_EQ(got[2].line, 5);
}

TEST(LogReader, EightyColumnsCountAfterPrefixAndInCodePoints) {
  std::string bar;
  for (int i = 0; i < 80; ++i) bar += "\xe2\x96\x88";  // U+2588 full block, 3 bytes
  auto got = read("[rank1]: " + std::string(80, 'x') + "\n[rank1]: yz\n" + bar + "\nend\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].text, std::string(80, 'x') + "yz");
  EXPECT_EQ(got[0].rank, 1);
  EXPECT_EQ(got[1].text, bar + "end");
  EXPECT_EQ(got[1].line, 3);
}

TEST(LogReader, WrappedLineAtEndOfFileIsFlushed) {
  auto got = read(std::string(80, 'q'));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].text, std::string(80, 'q'));
}

TEST(LogReader, RecordGluedToProgressBarIsSplit) {
  auto got = read(
      "Epoch 0: 12%| | 96/800 [00:10<01:10, consumed_samples=2.56e+7][E ProcessGroupNCCL.cpp:458] "
      "[Rank 3] Watchdog caught collective operation timeout\n"
      "100%|####| 50/50 [00:10<00:00]{'loss': 1.2}\n");
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].text, "Epoch 0: 12%| | 96/800 [00:10<01:10, consumed_samples=2.56e+7]");
  EXPECT_EQ(got[1].text,
            "[E ProcessGroupNCCL.cpp:458] [Rank 3] Watchdog caught collective operation timeout");
  EXPECT_EQ(got[1].line, 1);
  EXPECT_EQ(got[2].text, "100%|####| 50/50 [00:10<00:00]");
  EXPECT_EQ(got[3].text, "{'loss': 1.2}");
  EXPECT_EQ(got[3].line, 2);
}

TEST(LogReader, GluedRankRecordAndNewGlogFormatAreSplit) {
  auto got = read(
      " 50%|##   | 5/10 [rank2]: Traceback (most recent call last):\n"
      "step 7 sample=3[E1130 12:00:00.123456 ProcessGroupNCCL.cpp:1575] timeout\n");
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].text, " 50%|##   | 5/10");
  EXPECT_EQ(got[1].text, "Traceback (most recent call last):");
  EXPECT_EQ(got[1].rank, 2);
  EXPECT_EQ(got[3].text, "[E1130 12:00:00.123456 ProcessGroupNCCL.cpp:1575] timeout");
  EXPECT_EQ(got[3].line, 2);
}

TEST(LogReader, RecordsThatStartTheLineAreNotSplit) {
  auto got = read(
      "[rank0]:[E1130 12:00:00.1 ProcessGroupNCCL.cpp:1575] [PG 0 Rank 0] Exception\n"
      "axolotl [INFO] {'loss': 1.5}\n"
      "[2024-05-01 12:00:00,001] [INFO] [logging.py:96:log_dist] [Rank 0] step=10\n");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].text, "[E1130 12:00:00.1 ProcessGroupNCCL.cpp:1575] [PG 0 Rank 0] Exception");
  EXPECT_EQ(got[0].rank, 0);
  EXPECT_EQ(got[1].text, "axolotl [INFO] {'loss': 1.5}");
}

TEST(LogReader, FeedInAnySplitMatchesWholeText) {
  const std::string text =
      "[rank0]: a\r\n" + std::string(80, 'w') + "\nrest\n\x1b[1mbold\x1b[0m\nlast";
  auto whole = read(text);
  std::vector<Got> pieces;
  LogReader reader([&](const LogLine& l) { pieces.push_back({std::string(l.text), l.line, l.rank}); });
  for (char c : text) reader.feed(std::string_view(&c, 1));
  reader.finish();
  ASSERT_EQ(whole.size(), 4u);
  ASSERT_EQ(pieces.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(pieces[i].text, whole[i].text);
    EXPECT_EQ(pieces[i].line, whole[i].line);
  }
}

std::string many_lines(int n) {
  std::string text;
  for (int i = 1; i <= n; ++i) {
    text += " [2024-05-01 12:00:00] iteration " + std::to_string(i) +
            "/1000000 | consumed samples: 1024 | elapsed time per iteration (ms): 1234.5 |\n";
  }
  return text;
}

TEST(LogReader, PlainFileAcrossChunkBoundaries) {
  const auto path = temp_dir() / "plain.log";
  const int n = 20000;  // ~2.3 MB: several 1 MiB chunks
  { std::ofstream(path, std::ios::binary) << many_lines(n); }
  auto got = read_path(path.string());
  ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
  long count = 0;
  LogReader::read_file(path.string(), [&](const LogLine&) { ++count; });  // one-shot form
  EXPECT_EQ(count, n);
  EXPECT_EQ(got.back().line, n);
  EXPECT_NE(got.back().text.find("iteration 20000/"), std::string::npos);
  EXPECT_NE(got[9999].text.find("iteration 10000/"), std::string::npos);
  std::filesystem::remove_all(path.parent_path());
}

TEST(LogReader, GzipFileIsDecompressed) {
  const auto path = temp_dir() / "train.log.gz";
  const int n = 20000;
  const std::string text = "[rank0]: first\r\n" + many_lines(n);
  gzFile gz = gzopen(path.string().c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  auto got = read_path(path.string());
  ASSERT_EQ(got.size(), static_cast<std::size_t>(n + 1));
  EXPECT_EQ(got[0].text, "first");
  EXPECT_EQ(got[0].rank, 0);
  EXPECT_EQ(got.back().line, n + 1);
  std::filesystem::remove_all(path.parent_path());
}

TEST(LogReader, EmptyFileGivesNoLines) {
  const auto path = temp_dir() / "empty.log";
  { std::ofstream(path, std::ios::binary); }
  EXPECT_TRUE(read_path(path.string()).empty());
  std::filesystem::remove_all(path.parent_path());
}

TEST(LogReader, MissingFileIsAnInputErrorNamingIt) {
  const std::string path = "/nonexistent/dir/train.log";
  try {
    read_path(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, path);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
}

TEST(LogReader, DirectoryIsAnInputError) {
  const auto dir = temp_dir();
  EXPECT_THROW(read_path(dir.string()), InputError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attune::diagnose
