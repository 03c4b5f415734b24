#include "attune/util/jsonl_file.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attune/util/error.h"

namespace attune {
namespace {

using json = nlohmann::json;

class JsonlFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attune_jsonl_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    path_ = (dir_ / "a" / "b" / "records.jsonl").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write_raw(const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
  }
  std::string text() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(JsonlFileTest, MissingFileHasNoRecordsAndTheFirstAppendCreatesIt) {
  JsonlFile f(path_);
  EXPECT_EQ(f.path(), path_);
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "a" / "b"));  // parent directories made up front
  EXPECT_FALSE(std::filesystem::exists(path_));
  EXPECT_TRUE(f.read().empty());
  f.append(json{{"n", 1}, {"s", "x"}});
  f.append(json{{"n", 2}});
  EXPECT_EQ(text(), "{\"n\":1,\"s\":\"x\"}\n{\"n\":2}\n");  // one compact line each
  const auto records = JsonlFile(path_).read();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["s"], "x");
  EXPECT_EQ(records[1]["n"], 2);
}

TEST_F(JsonlFileTest, TornLastLineIsLeftOutAndCutOffBeforeTheNextAppend) {
  write_raw("{\"n\":1}\n\n{\"n\":2}\n{\"n\":3,\"s\":\"unfini");
  JsonlFile f(path_);
  const auto lines = f.read_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].number, 1);
  EXPECT_EQ(lines[1].number, 3);  // the blank line counts
  EXPECT_EQ(lines[1].record["n"], 2);
  EXPECT_EQ(text().size(), 35u);  // reading changes nothing
  f.append(json{{"n", 4}});
  EXPECT_EQ(text(), "{\"n\":1}\n\n{\"n\":2}\n{\"n\":4}\n");
  const auto again = JsonlFile(path_).read();
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[2]["n"], 4);
}

TEST_F(JsonlFileTest, ALastLineThatEndsButIsNoObjectIsTornToo) {
  for (const std::string last : {"{\"n\":", "[1,2]", "not json", "42"}) {
    write_raw("{\"n\":1}\n" + last + "\n\n");
    JsonlFile f(path_);
    EXPECT_EQ(f.read().size(), 1u) << last;
    f.append(json{{"n", 2}});
    EXPECT_EQ(text(), "{\"n\":1}\n{\"n\":2}\n") << last;
  }
}

TEST_F(JsonlFileTest, ABadLineElsewhereNamesTheFileAndTheLine) {
  write_raw("{\"n\":1}\n\nnot json\n{\"n\":2}\n");
  try {
    JsonlFile(path_).read();
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, path_);
    EXPECT_EQ(e.where().line, 3);
    EXPECT_NE(std::string(e.what()).find(path_ + ":3:"), std::string::npos) << e.what();
  }
  write_raw("{\"n\":1}\n[1]\n{\"n\":2}\n");
  try {
    JsonlFile(path_).read();
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(std::string(e.what()).find("not an object"), std::string::npos) << e.what();
  }
}

TEST_F(JsonlFileTest, ATornTailIsKeptWhenAnotherWriterAppendedSinceTheRead) {
  write_raw("{\"n\":1}\n{\"n\":");
  JsonlFile mine(path_);
  ASSERT_EQ(mine.read().size(), 1u);
  {
    std::ofstream other(path_, std::ios::binary | std::ios::app);  // appended after our read
    other << "2}\n";
  }
  mine.append(json{{"n", 3}});
  EXPECT_EQ(text(), "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
}

TEST_F(JsonlFileTest, AppendingAfterARepairKeepsAppending) {
  write_raw("{\"n\":1}\n{\"n\":");
  JsonlFile f(path_);
  f.read();
  f.append(json{{"n", 2}});
  f.append(json{{"n", 3}});  // no second cut: the repair was done once
  f.read();                  // nothing torn now
  f.append(json{{"n", 4}});
  EXPECT_EQ(text(), "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n");
}

TEST_F(JsonlFileTest, InvalidUtf8IsReplacedNotThrown) {
  JsonlFile f(path_);
  f.append(json{{"s", std::string("a\xff" "b")}});
  const auto records = JsonlFile(path_).read();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["s"], "a\xEF\xBF\xBD" "b");
}

TEST_F(JsonlFileTest, AppendThatCannotOpenNamesTheFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  ::chmod(std::filesystem::path(path_).parent_path().c_str(), 0500);
  JsonlFile f(path_);
  try {
    f.append(json{{"n", 1}});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, path_);
  }
  ::chmod(std::filesystem::path(path_).parent_path().c_str(), 0700);
}

TEST_F(JsonlFileTest, ADirectoryThatCannotBeMadeNamesTheFile) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "plain") << "x";
  const std::string bad = (dir_ / "plain" / "records.jsonl").string();
  try {
    JsonlFile f(bad);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, bad);
  }
}

}  // namespace
}  // namespace attune
