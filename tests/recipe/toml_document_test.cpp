#include "attune/recipe/toml_document.h"

#include <gtest/gtest.h>

#include <string>

namespace attune::recipe {
namespace {

// A small torchtitan-style recipe: comments, a compact `key=value` table,
// nested and dotted tables, an inline table, literal strings.
const char* const kRecipe =
    "# preset for 8 GPUs\n"
    "\n"
    "[job]\n"
    "dump_folder = \"./outputs\"\n"
    "\n"
    "[optimizer]\n"
    "name = \"AdamW\"\n"
    "lr = 3e-4\n"
    "\n"
    "[lr_scheduler]\n"
    "warmup_steps = 200  # lr scheduler warm up\n"
    "\n"
    "[training]\n"
    "local_batch_size = 1\n"
    "steps = 1_000\n"
    "dataset = 'c4'\n"
    "\n"
    "# parallelism follows\n"
    "[parallelism]\n"
    "data_parallel_shard_degree = -1\n"
    "tensor_parallel_degree = 1\n"
    "\n"
    "[compile]\n"
    "enable=false\n"
    "components=[\"model\", \"loss\"]\n"
    "\n"
    "[quantize.linear.float8]\n"
    "filter_fqns = [\"output\"]\n"
    "mesh = {dp = 2, name = \"x\"}\n"
    "act.mode = \"full\"\n";

std::unique_ptr<TomlDocument> doc(const std::string& text) { return TomlDocument::parse("r.toml", text); }

// `text` with `from` replaced by `to` exactly once (for expected outputs).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(TomlDocument, RoundTripIsByteIdentical) {
  for (std::string text : {std::string(kRecipe), std::string("a = 1\r\n# c\r\n[t]\r\nb = \"x\""),
                           std::string("\xEF\xBB\xBF" "a = 'caf\xC3\xA9'  # \xE2\x9C\x93\n"), std::string("")}) {
    auto d = doc(text);
    EXPECT_EQ(d->text(), text);
    EXPECT_EQ(d->format(), Format::Toml);
    EXPECT_EQ(d->name(), "r.toml");
  }
}

TEST(TomlDocument, EntriesInFileOrderWithPathsKindsAndLines) {
  auto d = doc(kRecipe);
  auto e = d->entries();
  std::vector<std::string> paths;
  for (const auto& x : e) paths.push_back(x.path);
  std::vector<std::string> expected = {
      "job.dump_folder", "optimizer.name", "optimizer.lr", "lr_scheduler.warmup_steps",
      "training.local_batch_size", "training.steps", "training.dataset",
      "parallelism.data_parallel_shard_degree", "parallelism.tensor_parallel_degree", "compile.enable",
      "compile.components", "quantize.linear.float8.filter_fqns", "quantize.linear.float8.mesh.dp",
      "quantize.linear.float8.mesh.name", "quantize.linear.float8.act.mode"};
  EXPECT_EQ(paths, expected);

  auto lr = d->find("optimizer.lr");
  ASSERT_TRUE(lr);
  EXPECT_EQ(lr->value.kind, ValueKind::Float);
  EXPECT_EQ(lr->value.text, "3e-4");
  EXPECT_EQ(lr->line, 8);

  auto steps = d->find("training.steps");
  ASSERT_TRUE(steps);
  EXPECT_EQ(steps->value.kind, ValueKind::Int);
  EXPECT_EQ(steps->value.text, "1_000");
  EXPECT_EQ(steps->raw, "1_000");

  auto shard = d->find("parallelism.data_parallel_shard_degree");
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->value.text, "-1");
  EXPECT_EQ(shard->line, 20);

  auto dataset = d->find("training.dataset");
  ASSERT_TRUE(dataset);
  EXPECT_EQ(dataset->value.kind, ValueKind::String);
  EXPECT_EQ(dataset->value.text, "c4");
  EXPECT_EQ(dataset->raw, "'c4'");

  auto enable = d->find("compile.enable");
  ASSERT_TRUE(enable);
  EXPECT_EQ(enable->value.kind, ValueKind::Bool);
  EXPECT_EQ(enable->value.text, "false");

  auto comps = d->find("compile.components");
  ASSERT_TRUE(comps);
  EXPECT_EQ(comps->value.kind, ValueKind::List);
  ASSERT_EQ(comps->value.items.size(), 2u);
  EXPECT_EQ(comps->value.items[1].text, "loss");
  EXPECT_EQ(comps->raw, "[\"model\", \"loss\"]");

  auto dp = d->find("quantize.linear.float8.mesh.dp");
  ASSERT_TRUE(dp);
  EXPECT_EQ(dp->raw, "2");
  EXPECT_EQ(dp->line, 29);
  EXPECT_FALSE(d->find("quantize.linear.float8.mesh"));  // a table, not a leaf
  EXPECT_FALSE(d->find("training.missing"));
}

TEST(TomlDocument, ArraysOfTablesAreIndexedAndOtherValueKinds) {
  auto d = doc(
      "when = 1979-05-27T07:32:00Z\n"
      "\"odd.key\" = \"v\"\n"
      "[[layer]]\n"
      "dim = 8\n"
      "[[layer]]\n"
      "dim = 16\n"
      "tags = [[1, 2], [3]]\n");
  auto e = d->entries();
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].path, "when");
  EXPECT_EQ(e[0].value.kind, ValueKind::String);
  EXPECT_EQ(e[0].value.text, "1979-05-27T07:32:00Z");
  EXPECT_EQ(e[1].path, "\"odd.key\"");
  EXPECT_EQ(e[2].path, "layer[0].dim");
  EXPECT_EQ(e[3].path, "layer[1].dim");
  EXPECT_EQ(e[3].value.text, "16");
  EXPECT_EQ(e[3].line, 6);
  EXPECT_EQ(e[4].path, "layer[1].tags");
  EXPECT_EQ(e[4].value.str(), "[[1, 2], [3]]");
}

TEST(TomlDocument, MultiByteCharactersDoNotShiftOffsets) {
  std::string text = "# h\xC3\xA9 \xF0\x9F\x98\x80\nname = \"\xC3\xA9t\xC3\xA9\" # \xC3\xA9\nn = 1\n";
  auto d = doc(text);
  auto name = d->find("name");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->raw, "\"\xC3\xA9t\xC3\xA9\"");
  EXPECT_EQ(name->value.text, "\xC3\xA9t\xC3\xA9");
  d->set("name", Value::string("\xF0\x9F\x98\x80"));
  EXPECT_EQ(d->text(), "# h\xC3\xA9 \xF0\x9F\x98\x80\nname = \"\xF0\x9F\x98\x80\" # \xC3\xA9\nn = 1\n");
}

TEST(TomlDocument, SetIntegerKeepsCommentAndEverythingElse) {
  auto d = doc(kRecipe);
  d->set("lr_scheduler.warmup_steps", Value::parse("500"));
  EXPECT_EQ(d->text(), replaced(kRecipe, "warmup_steps = 200  #", "warmup_steps = 500  #"));
  EXPECT_EQ(d->find("lr_scheduler.warmup_steps")->value.text, "500");
}

TEST(TomlDocument, SetFloatBoolAndList) {
  auto d = doc(kRecipe);
  d->set("optimizer.lr", Value::parse("1e-4"));
  d->set("compile.enable", Value::parse("true"));
  d->set("compile.components", Value::list({Value::parse("model")}));
  std::string want = replaced(kRecipe, "lr = 3e-4", "lr = 1e-4");
  want = replaced(want, "enable=false", "enable=true");
  want = replaced(want, "components=[\"model\", \"loss\"]", "components=[\"model\"]");
  EXPECT_EQ(d->text(), want);
  EXPECT_EQ(d->find("compile.components")->value.items.size(), 1u);
}

TEST(TomlDocument, SetStringKeepsQuoteStyle) {
  auto d = doc(kRecipe);
  d->set("training.dataset", Value::parse("c4_test"));         // 'literal' stays literal
  d->set("optimizer.name", Value::parse("Adam \"W\""));        // "basic" escapes quotes
  d->set("job.dump_folder", Value::parse("8"));                // numeric text, but a string field
  std::string want = replaced(kRecipe, "dataset = 'c4'", "dataset = 'c4_test'");
  want = replaced(want, "name = \"AdamW\"", "name = \"Adam \\\"W\\\"\"");
  want = replaced(want, "dump_folder = \"./outputs\"", "dump_folder = \"8\"");
  EXPECT_EQ(d->text(), want);
  EXPECT_EQ(d->find("optimizer.name")->value.text, "Adam \"W\"");

  // A literal string cannot hold a quote: fall back to a basic string.
  d->set("training.dataset", Value::parse("it's"));
  EXPECT_NE(d->text().find("dataset = \"it's\"\n"), std::string::npos);
}

TEST(TomlDocument, SetWritesNumbersAndBoolsInTomlSyntax) {
  auto d = doc("a = 1\nb = 2.0\nc = true\nd = [1, 2]\n");
  d->set("a", Value::parse(".5"));     // not TOML: written canonically
  d->set("b", Value::parse("inf"));
  d->set("c", Value::parse("False"));  // TOML booleans are lower case
  d->set("d", Value::list({Value::parse("3"), Value::parse("x")}));
  EXPECT_EQ(d->text(), "a = 0.5\nb = inf\nc = false\nd = [3, \"x\"]\n");
}

TEST(TomlDocument, SetInlineTableMemberAndListItem) {
  auto d = doc(kRecipe);
  d->set("quantize.linear.float8.mesh.dp", Value::parse("4"));
  d->set("quantize.linear.float8.filter_fqns[0]", Value::parse("head"));
  std::string want = replaced(kRecipe, "{dp = 2,", "{dp = 4,");
  want = replaced(want, "[\"output\"]", "[\"head\"]");
  EXPECT_EQ(d->text(), want);
}

TEST(TomlDocument, InsertsIntoExistingTableAfterItsLastKey) {
  auto d = doc(kRecipe);
  d->set("training.global_batch_size", Value::parse("64"));
  EXPECT_EQ(d->text(), replaced(kRecipe, "dataset = 'c4'\n", "dataset = 'c4'\nglobal_batch_size = 64\n"));
}

TEST(TomlDocument, InsertKeepsCompactStyleAndIndentation) {
  auto d = doc(kRecipe);
  d->set("compile.fullgraph", Value::parse("true"));
  EXPECT_EQ(d->text(), replaced(kRecipe, "\"loss\"]\n", "\"loss\"]\nfullgraph=true\n"));

  auto indented = doc("[a]\n  x = 1\n  y = [\n    1,\n  ]  # c\n\n[b]\n");
  indented->set("a.z", Value::parse("s"));
  EXPECT_EQ(indented->text(), "[a]\n  x = 1\n  y = [\n    1,\n  ]  # c\n  z = \"s\"\n\n[b]\n");
}

TEST(TomlDocument, InsertIntoDottedAndInlineTables) {
  auto d = doc(kRecipe);
  d->set("quantize.linear.float8.act.layers", Value::parse("2"));
  d->set("quantize.linear.float8.mesh.tp", Value::parse("8"));
  std::string want = replaced(kRecipe, "name = \"x\"}", "name = \"x\", tp = 8}");
  want += "act.layers = 2\n";
  EXPECT_EQ(d->text(), want);
}

TEST(TomlDocument, InsertIntoEmptyInlineTable) {
  auto d = doc("[t]\na = { }\nb = {x=1}\n");
  d->set("t.a.k", Value::parse("1"));
  d->set("t.b.y", Value::parse("2"));
  EXPECT_EQ(d->text(), "[t]\na = {k = 1}\nb = {x=1, y=2}\n");
}

TEST(TomlDocument, InsertIntoTableWithoutKeysAndAtTopLevel) {
  auto d = doc("# top\n\n[a]\n\n[b]\nx = 1\n");
  d->set("a.k", Value::parse("1"));
  d->set("top", Value::parse("2"));
  EXPECT_EQ(d->text(), "# top\n\ntop = 2\n\n[a]\nk = 1\n\n[b]\nx = 1\n");
}

TEST(TomlDocument, MissingTableIsAppended) {
  auto d = doc("[a]\nx=1");  // no final newline, compact style
  d->set("new.sub.key", Value::parse("v"));
  EXPECT_EQ(d->text(), "[a]\nx=1\n\n[new.sub]\nkey=\"v\"\n");
  EXPECT_EQ(d->find("new.sub.key")->value.text, "v");
}

TEST(TomlDocument, ImplicitSuperTableGetsItsOwnHeader) {
  auto d = doc("[q.linear]\nx = 1\n");
  d->set("q.enable", Value::parse("true"));
  EXPECT_EQ(d->text(), "[q.linear]\nx = 1\n\n[q]\nenable = true\n");
}

TEST(TomlDocument, CrlfFilesGetCrlfLines) {
  auto d = doc("[a]\r\nx = 1\r\n");
  d->set("a.y", Value::parse("2"));
  d->set("b.z", Value::parse("3"));
  EXPECT_EQ(d->text(), "[a]\r\nx = 1\r\ny = 2\r\n\r\n[b]\r\nz = 3\r\n");
}

TEST(TomlDocument, ArrayOfTablesElementsTakeDottedKeys) {
  auto d = doc("[[l]]\nd = 1\n[[l]]\nd = 2\n");
  d->set("l[0].e", Value::parse("3"));
  d->set("l[0].sub.f", Value::parse("4"));
  EXPECT_EQ(d->text(), "[[l]]\nd = 1\ne = 3\nsub.f = 4\n[[l]]\nd = 2\n");
  EXPECT_THROW(d->set("l[5].d", Value::parse("1")), InputError);
  EXPECT_THROW(d->set("l.d", Value::parse("1")), InputError);
}

TEST(TomlDocument, Remove) {
  auto d = doc(kRecipe);
  EXPECT_TRUE(d->remove("lr_scheduler.warmup_steps"));
  EXPECT_TRUE(d->remove("quantize.linear.float8.mesh.dp"));
  EXPECT_FALSE(d->remove("training.nope"));
  std::string want = replaced(kRecipe, "warmup_steps = 200  # lr scheduler warm up\n", "");
  want = replaced(want, "{dp = 2, name", "{name");
  EXPECT_EQ(d->text(), want);
  EXPECT_FALSE(d->find("lr_scheduler.warmup_steps"));
  EXPECT_THROW(d->remove("training"), InputError);  // a whole table
}

TEST(TomlDocument, RemoveListItems) {
  auto d = doc("a = [1, 2, 3]\nb = [\n  \"x\",\n  \"y\",\n]\nc = {p = 1, q = 2}\n");
  EXPECT_TRUE(d->remove("a[2]"));
  EXPECT_TRUE(d->remove("a[0]"));
  EXPECT_TRUE(d->remove("b[0]"));
  EXPECT_TRUE(d->remove("c.q"));
  EXPECT_EQ(d->text(), "a = [2]\nb = [\n  \"y\",\n]\nc = {p = 1}\n");
}

TEST(TomlDocument, CrossingAScalarNamesTheKey) {
  auto d = doc(kRecipe);
  try {
    d->set("training.local_batch_size.x", Value::parse("1"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "training.local_batch_size.x");
    EXPECT_NE(e.message().find("'training.local_batch_size'"), std::string::npos) << e.message();
    EXPECT_EQ(e.where().line, 14);
  }
  EXPECT_THROW(d->set("compile.components.x", Value::parse("1")), InputError);
  EXPECT_THROW(d->set("training", Value::parse("1")), InputError);  // a table
  EXPECT_EQ(d->text(), kRecipe);
}

TEST(TomlDocument, NullIsRejected) {
  auto d = doc(kRecipe);
  try {
    d->set("training.steps", Value::null());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("TOML has no null"), std::string::npos);
  }
  EXPECT_THROW(d->set("x", Value::list({Value::null()})), InputError);
  EXPECT_EQ(d->text(), kRecipe);
}

TEST(TomlDocument, MalformedInputReportsLineAndColumn) {
  try {
    doc("[a]\nx = 1\ny = \n");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "r.toml");
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 5);
  }
  try {
    doc("[a]\nsteps = 1\nsteps = 2\n");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_NE(e.message().find("steps"), std::string::npos) << e.message();
  }
}

TEST(TomlDocument, InvalidEditIsRolledBack) {
  auto d = doc("a = {x = 1}\n");
  // `a` is an inline table: a [a] header may not extend it, and a key with
  // a bad index is refused before anything is written.
  EXPECT_THROW(d->set("a[0]", Value::parse("1")), InputError);
  EXPECT_THROW(d->set("a..b", Value::parse("1")), InputError);
  EXPECT_EQ(d->text(), "a = {x = 1}\n");
  ASSERT_TRUE(d->find("a.x"));
}

TEST(TomlDocument, CloneIsIndependent) {
  auto d = doc(kRecipe);
  auto c = d->clone();
  c->set("training.steps", Value::parse("5"));
  EXPECT_EQ(d->text(), kRecipe);
  EXPECT_EQ(c->find("training.steps")->value.text, "5");
  EXPECT_EQ(c->format(), Format::Toml);
}

}  // namespace
}  // namespace attune::recipe
