#include "attune/recipe/yaml_document.h"

#include <gtest/gtest.h>

#include <string>

namespace attune::recipe {
namespace {

std::unique_ptr<YamlDocument> doc(const std::string& text) { return YamlDocument::parse("r.yaml", text); }

Entry get(const Document& d, const std::string& path) {
  auto e = d.find(path);
  EXPECT_TRUE(e.has_value()) << "missing " << path;
  return e.value_or(Entry{});
}

std::vector<std::string> paths(const Document& d) {
  std::vector<std::string> out;
  for (const auto& e : d.entries()) out.push_back(e.path);
  return out;
}

// Runs `edit` and returns the InputError it throws.
template <typename F>
InputError error_of(F edit) {
  try {
    edit();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError({}, "", "none");
}

// ---------------------------------------------------------------- reading

TEST(YamlDocumentTest, RoundTripIsByteIdentical) {
  const std::string texts[] = {
      "a: 1\n",
      "a: 1\r\nb:\r\n  c: 'x' # note\r\n",
      "a: 1\nb: 2",  // no trailing newline
      "# \u00a9 Someone\t(tab)\nmodel:\n  lr: 1e-4\t# tab before comment\n\n\n",
      "\xEF\xBB\xBFkey: value\n",
      "---\na: [1, 2]  \n...\n",
  };
  for (const auto& t : texts) {
    auto d = doc(t);
    EXPECT_EQ(d->text(), t);
    EXPECT_EQ(d->format(), Format::Yaml);
    EXPECT_EQ(d->name(), "r.yaml");
  }
}

TEST(YamlDocumentTest, EntriesHavePathsKindsRawAndLines) {
  auto d = doc(
      "# header\n"
      "model:\n"
      "  optim:\n"
      "    lr: 1e-5 # peak\n"
      "    betas: [0.9, 0.95]\n"
      "  fp8: True\n"
      "  name: 'llama'\n"
      "  path: \"/data/x\"\n"
      "  empty:\n"
      "  tilde: ~\n"
      "  none: {}\n"
      "  nothing: []\n"
      "steps: 100\n");
  std::vector<std::string> want = {"model.optim.lr", "model.optim.betas", "model.fp8",   "model.name",
                                   "model.path",     "model.empty",       "model.tilde", "model.none",
                                   "model.nothing",  "steps"};
  EXPECT_EQ(paths(*d), want);

  Entry lr = get(*d, "model.optim.lr");
  EXPECT_EQ(lr.value.kind, ValueKind::Float);
  EXPECT_EQ(lr.raw, "1e-5");
  EXPECT_EQ(lr.line, 4);

  Entry betas = get(*d, "model.optim.betas");
  ASSERT_EQ(betas.value.kind, ValueKind::List);
  ASSERT_EQ(betas.value.items.size(), 2u);
  EXPECT_EQ(betas.value.items[1].kind, ValueKind::Float);
  EXPECT_EQ(betas.raw, "[0.9, 0.95]");

  EXPECT_EQ(get(*d, "model.fp8").value.kind, ValueKind::Bool);
  Entry name = get(*d, "model.name");
  EXPECT_EQ(name.value.kind, ValueKind::String);
  EXPECT_EQ(name.value.text, "llama");
  EXPECT_EQ(name.raw, "'llama'");
  EXPECT_EQ(get(*d, "model.path").raw, "\"/data/x\"");

  Entry empty = get(*d, "model.empty");
  EXPECT_TRUE(empty.value.is_null());
  EXPECT_EQ(empty.raw, "");
  EXPECT_EQ(empty.line, 9);
  EXPECT_TRUE(get(*d, "model.tilde").value.is_null());
  EXPECT_EQ(get(*d, "model.none").raw, "{}");
  EXPECT_EQ(get(*d, "model.nothing").value.kind, ValueKind::List);
  EXPECT_EQ(get(*d, "steps").line, 13);
  EXPECT_FALSE(d->find("model.optim").has_value());  // a mapping, not a setting
  EXPECT_FALSE(d->find("nope").has_value());
}

TEST(YamlDocumentTest, QuotedNumbersAndBooleansStayStrings) {
  auto d = doc("a: \"1\"\nb: 'true'\nc: \"it''s \\\"x\\\"\"\nd: 'it''s'\n");
  EXPECT_EQ(get(*d, "a").value.kind, ValueKind::String);
  EXPECT_EQ(get(*d, "b").value.kind, ValueKind::String);
  EXPECT_EQ(get(*d, "c").value.text, "it''s \"x\"");
  EXPECT_EQ(get(*d, "d").value.text, "it's");
  EXPECT_EQ(get(*d, "d").raw, "'it''s'");
}

TEST(YamlDocumentTest, SequencesOfScalarsAreOneListSequencesOfMapsAreIndexed) {
  auto d = doc(
      "instance_types:\n"
      "- ml.p5.48xlarge\n"
      "- 'ml.p4d'\n"
      "callbacks:\n"
      "  - _target_: Timing\n"
      "  - _target_: CommOverlap\n"
      "    tp_comm_overlap: false\n"
      "    ranks:\n"
      "      - 8\n"
      "      - 9\n");
  Entry types = get(*d, "instance_types");
  ASSERT_EQ(types.value.items.size(), 2u);
  EXPECT_EQ(types.value.items[1].text, "ml.p4d");
  EXPECT_EQ(types.line, 2);
  EXPECT_EQ(types.raw, "- ml.p5.48xlarge\n- 'ml.p4d'");
  std::vector<std::string> want = {"instance_types", "callbacks[0]._target_", "callbacks[1]._target_",
                                   "callbacks[1].tp_comm_overlap", "callbacks[1].ranks"};
  EXPECT_EQ(paths(*d), want);
  EXPECT_EQ(get(*d, "callbacks[1].tp_comm_overlap").line, 7);
  EXPECT_EQ(get(*d, "callbacks[1].ranks").value.str(), "[8, 9]");
}

TEST(YamlDocumentTest, FlagKeysAndNumericKeysArePathSegments) {
  auto d = doc(
      "MODEL_ARGS:\n"
      "  --tensor-model-parallel-size: 8\n"
      "  --step-batch-size-schedule: \"0:384 200B:768\"\n"
      "scale_config:\n"
      "  1:\n"
      "    trainer:\n"
      "      num_nodes: 1\n");
  EXPECT_EQ(get(*d, "MODEL_ARGS.--tensor-model-parallel-size").value.text, "8");
  EXPECT_EQ(get(*d, "MODEL_ARGS.--step-batch-size-schedule").value.text, "0:384 200B:768");
  EXPECT_EQ(get(*d, "scale_config.1.trainer.num_nodes").line, 7);
}

TEST(YamlDocumentTest, FlowMapsAreIndexedByKey) {
  auto d = doc("kw: {\"save_dir\" : \"/x\", n: 2}\n");
  EXPECT_EQ(get(*d, "kw.save_dir").value.text, "/x");
  EXPECT_EQ(get(*d, "kw.n").value.kind, ValueKind::Int);
}

TEST(YamlDocumentTest, MultiLinePlainAndBlockScalars) {
  auto d = doc("title: one two\n  three\nscript: |\n  echo hi\n  echo there\n\nnext: 1\n");
  EXPECT_EQ(get(*d, "title").value.text, "one two three");
  EXPECT_EQ(get(*d, "title").raw, "one two\n  three");
  EXPECT_EQ(get(*d, "script").value.text, "echo hi\necho there\n");
  EXPECT_EQ(get(*d, "script").raw, "|\n  echo hi\n  echo there");
  EXPECT_EQ(get(*d, "next").line, 7);
}

TEST(YamlDocumentTest, InterpolationsAreResolved) {
  auto d = doc(
      "trainer:\n"
      "  max_steps: 50\n"
      "  precision: bf16\n"
      "model:\n"
      "  max_context_width: 8192\n"
      "  max_position_embeddings: ${.max_context_width}\n"
      "  lr_decay_iters: ${recipes.trainer.max_steps}\n"
      "  precision: \"${trainer.precision}\"\n"
      "  chain: ${model.lr_decay_iters}\n"
      "  nested:\n"
      "    up: ${..max_context_width}\n"
      "  missing: ${nowhere.at_all}\n"
      "  loop_a: ${.loop_b}\n"
      "  loop_b: ${.loop_a}\n"
      "  mixed: ${.max_context_width}/x\n");
  Entry mpe = get(*d, "model.max_position_embeddings");
  EXPECT_EQ(mpe.value.kind, ValueKind::Int);
  EXPECT_EQ(mpe.value.text, "8192");
  EXPECT_EQ(mpe.raw, "${.max_context_width}");
  EXPECT_EQ(get(*d, "model.lr_decay_iters").value.text, "50");  // without the `recipes.` prefix
  EXPECT_EQ(get(*d, "model.precision").value.text, "bf16");
  EXPECT_EQ(get(*d, "model.chain").value.text, "50");  // transitive
  EXPECT_EQ(get(*d, "model.nested.up").value.text, "8192");
  Entry missing = get(*d, "model.missing");
  EXPECT_EQ(missing.value.kind, ValueKind::String);
  EXPECT_EQ(missing.value.text, "${nowhere.at_all}");
  EXPECT_EQ(get(*d, "model.loop_a").value.text, "${.loop_b}");  // cycle: left as written
  EXPECT_EQ(get(*d, "model.mixed").value.text, "${.max_context_width}/x");
}

const char* const kAnchors =
    "base: &base\n"
    "  lr: 0.1\n"
    "  wd: 0.01\n"
    "size: &sz 8\n"
    "run:\n"
    "  <<: *base\n"
    "  wd: 0.02\n"
    "  tp: *sz\n"
    "copy: *base\n"
    "multi:\n"
    "  <<: [*base, {extra: 1}]\n";

TEST(YamlDocumentTest, AliasesAndMergeKeysGiveTheAnchoredValues) {
  auto d = doc(kAnchors);
  std::vector<std::string> want = {"base.lr", "base.wd", "size", "run.lr", "run.wd", "run.tp",
                                   "copy.lr", "copy.wd", "multi.lr", "multi.wd", "multi.extra"};
  EXPECT_EQ(paths(*d), want);
  Entry merged = get(*d, "run.lr");
  EXPECT_EQ(merged.value.text, "0.1");
  EXPECT_EQ(merged.line, 2);  // where the value is written: the anchor
  EXPECT_EQ(get(*d, "run.wd").value.text, "0.02");  // the map's own key wins
  EXPECT_EQ(get(*d, "run.wd").line, 7);
  EXPECT_EQ(get(*d, "run.tp").value.text, "8");
  EXPECT_EQ(get(*d, "copy.wd").value.text, "0.01");
  EXPECT_EQ(get(*d, "multi.extra").value.text, "1");
}

TEST(YamlDocumentTest, DuplicateKeyIsAnErrorWithBothLines) {
  InputError e = error_of([] { doc("model:\n  lr: 1\n  tp: 2\n  lr: 3\n"); });
  EXPECT_EQ(e.where().file, "r.yaml");
  EXPECT_EQ(e.where().line, 4);
  EXPECT_EQ(e.where().column, 3);
  EXPECT_EQ(e.key(), "model.lr");
  EXPECT_EQ(e.message(), "duplicate key (first defined at line 2)");
}

TEST(YamlDocumentTest, MalformedYamlReportsLineAndColumn) {
  InputError e = error_of([] { doc("a: 1\nb: [1, 2\nc: 3\n"); });
  EXPECT_EQ(e.where().line, 3);
  EXPECT_EQ(e.where().column, 2);
  EXPECT_NE(e.message().find("end of sequence flow not found"), std::string::npos);
}

TEST(YamlDocumentTest, TopLevelMustBeAMapping) {
  for (const char* t : {"", "# only a comment\n", "- 1\n- 2\n", "just text\n"}) {
    InputError e = error_of([&] { doc(t); });
    EXPECT_EQ(e.message(), "expected a mapping of settings at the top level") << t;
  }
}

// ---------------------------------------------------------------- set: existing values

TEST(YamlDocumentTest, SetPlainScalarChangesOnlyItsBytes) {
  auto d = doc("model:\n  lr: 1e-4   # peak lr\n  tp: 2\n");
  d->set("model.lr", Value::parse("3e-4"));
  EXPECT_EQ(d->text(), "model:\n  lr: 3e-4   # peak lr\n  tp: 2\n");
  EXPECT_EQ(get(*d, "model.lr").value.text, "3e-4");
}

TEST(YamlDocumentTest, SetKeepsQuoteStyle) {
  auto d = doc("a: 'bf16'\nb: \"x\"\n");
  d->set("a", Value::string("it's"));
  d->set("b", Value::integer(5));
  EXPECT_EQ(d->text(), "a: 'it''s'\nb: \"5\"\n");
  EXPECT_EQ(get(*d, "a").value.text, "it's");
}

TEST(YamlDocumentTest, SetQuotesPlainStringsThatWouldBreakOrChangeType) {
  auto d = doc("a: x\nb: y\nc: z\nd: w\ne: v\n");
  d->set("a", Value::string("true"));
  d->set("b", Value::string("key: value"));
  d->set("c", Value::string("*star"));
  d->set("d", Value::string("plain/${x}"));
  d->set("e", Value::string("yes"));
  EXPECT_EQ(d->text(), "a: \"true\"\nb: \"key: value\"\nc: \"*star\"\nd: plain/${x}\ne: \"yes\"\n");
  EXPECT_EQ(get(*d, "a").value.kind, ValueKind::String);
}

TEST(YamlDocumentTest, SetBoolKeepsTheFileCapitalisation) {
  auto d = doc("a: True\nb: false\nc: TRUE\nd: 1\n");
  d->set("a", Value::boolean(false));
  d->set("b", Value::boolean(true));
  d->set("c", Value::boolean(false));
  d->set("new_flag", Value::boolean(true));  // new key: the file's majority style
  EXPECT_EQ(d->text(), "a: False\nb: true\nc: FALSE\nd: 1\nnew_flag: True\n");
}

TEST(YamlDocumentTest, SetFlowListStaysFlow) {
  auto d = doc("optim:\n  betas: [0.9, 0.95] # adam\n");
  d->set("optim.betas", Value::list({Value::parse("0.8"), Value::parse("0.99"), Value::string("a, b")}));
  EXPECT_EQ(d->text(), "optim:\n  betas: [0.8, 0.99, \"a, b\"] # adam\n");
  EXPECT_EQ(get(*d, "optim.betas").value.items.size(), 3u);
}

TEST(YamlDocumentTest, SetBlockListRewritesItemsInBlockStyle) {
  auto d = doc("optim:\n  betas:\n    - 0.9\n    - 0.95\n  lr: 1\n");
  d->set("optim.betas", Value::list({Value::parse("0.8"), Value::parse("0.9"), Value::parse("0.99")}));
  EXPECT_EQ(d->text(), "optim:\n  betas:\n    - 0.8\n    - 0.9\n    - 0.99\n  lr: 1\n");
  d->set("optim.betas", Value::list({}));
  EXPECT_EQ(d->text(), "optim:\n  betas: []\n  lr: 1\n");
}

TEST(YamlDocumentTest, SetScalarToListAndNullToValue) {
  auto d = doc("a: 3\nb:\nc: null # none yet\n");
  d->set("a", Value::list({Value::integer(1), Value::integer(2)}));
  d->set("b", Value::string("x"));
  d->set("c", Value::integer(4));
  EXPECT_EQ(d->text(), "a: [1, 2]\nb: x\nc: 4 # none yet\n");
}

TEST(YamlDocumentTest, SetInterpolationReplacesItWithTheLiteral) {
  auto d = doc("m:\n  w: 8192\n  mpe: ${.w}\n");
  EXPECT_EQ(get(*d, "m.mpe").value.text, "8192");
  d->set("m.mpe", Value::integer(4096));
  EXPECT_EQ(d->text(), "m:\n  w: 8192\n  mpe: 4096\n");

  // Quotes around an interpolation are not kept: they would make 7 a string.
  auto q = doc("w: 1\nx: \"${w}\"\n");
  q->set("x", Value::integer(7));
  EXPECT_EQ(q->text(), "w: 1\nx: 7\n");
  EXPECT_EQ(get(*q, "x").value.kind, ValueKind::Int);
}

TEST(YamlDocumentTest, SetAfterAByteOrderMark) {
  auto d = doc("\xEF\xBB\xBF" "a: 1\nb: 'two'\n");
  d->set("b", Value::string("three"));
  EXPECT_EQ(d->text(), "\xEF\xBB\xBF" "a: 1\nb: 'three'\n");
  EXPECT_EQ(get(*d, "b").line, 2);
}

TEST(YamlDocumentTest, SetInsideFlowMapQuotesFlowIndicators) {
  auto d = doc("kw: {dir: /x, n: 2}\n");
  d->set("kw.dir", Value::string("a,b"));
  EXPECT_EQ(d->text(), "kw: {dir: \"a,b\", n: 2}\n");
}

TEST(YamlDocumentTest, SetKeepsCrlf) {
  auto d = doc("a: 1\r\nb:\r\n  c: 2\r\n");
  d->set("b.c", Value::integer(3));
  d->set("b.d", Value::integer(4));
  EXPECT_EQ(d->text(), "a: 1\r\nb:\r\n  c: 3\r\n  d: 4\r\n");
}

// ---------------------------------------------------------------- set: adding keys

TEST(YamlDocumentTest, SetMissingKeyGoesAfterTheSectionsLastChild) {
  auto d = doc(
      "model:\n"
      "    lr: 1\n"
      "    optim:\n"
      "        name: adam\n"
      "\n"
      "# Trainer section\n"
      "trainer:\n"
      "    steps: 5\n");
  d->set("model.seed", Value::integer(42));
  EXPECT_EQ(d->text(),
            "model:\n"
            "    lr: 1\n"
            "    optim:\n"
            "        name: adam\n"
            "    seed: 42\n"
            "\n"
            "# Trainer section\n"
            "trainer:\n"
            "    steps: 5\n");
}

TEST(YamlDocumentTest, SetMissingKeyCreatesIntermediateMapsWithTheFilesIndent) {
  auto d = doc("model:\n    lr: 1\n# trailing comment\n");
  d->set("model.optim.sched.name", Value::string("cosine"));
  EXPECT_EQ(d->text(),
            "model:\n"
            "    lr: 1\n"
            "    optim:\n"
            "        sched:\n"
            "            name: cosine\n"
            "# trailing comment\n");
  EXPECT_EQ(get(*d, "model.optim.sched.name").line, 5);
}

TEST(YamlDocumentTest, SetMissingRootKeyAppendsAtTheEnd) {
  auto d = doc("a: 1\nb:\n  c: 2\n");
  d->set("z", Value::integer(9));
  EXPECT_EQ(d->text(), "a: 1\nb:\n  c: 2\nz: 9\n");

  auto no_newline = doc("a: 1");
  no_newline->set("b.c", Value::string("x y"));
  EXPECT_EQ(no_newline->text(), "a: 1\nb:\n  c: x y");
}

TEST(YamlDocumentTest, SetMissingKeyInFlowMapAndEmptyMapAndNull) {
  auto d = doc("kw: {a: 1}\nempty: {}\nholder:\nlist_item:\n  - name: x\n");
  d->set("kw.b", Value::integer(2));
  d->set("empty.c", Value::integer(3));
  d->set("holder.d.e", Value::integer(4));
  d->set("list_item[0].f", Value::integer(5));
  EXPECT_EQ(d->text(),
            "kw: {a: 1, b: 2}\n"
            "empty: {c: 3}\n"
            "holder:\n"
            "  d:\n"
            "    e: 4\n"
            "list_item:\n"
            "  - name: x\n"
            "    f: 5\n");
}

TEST(YamlDocumentTest, SetCrossingAScalarIsAnError) {
  auto d = doc("a: 3\nb: |\n  text\nc: [1, 2]\n");
  InputError e = error_of([&] { d->set("a.b", Value::integer(1)); });
  EXPECT_EQ(e.key(), "a.b");
  EXPECT_EQ(e.where().line, 1);
  EXPECT_NE(e.message().find("'a' is a scalar"), std::string::npos) << e.message();
  InputError block = error_of([&] { d->set("b.x", Value::integer(1)); });
  EXPECT_NE(block.message().find("block scalar"), std::string::npos);
  EXPECT_EQ(block.where().line, 2);
  error_of([&] { d->set("c[5]", Value::integer(1)); });
  EXPECT_EQ(d->text(), "a: 3\nb: |\n  text\nc: [1, 2]\n");  // unchanged after errors
}

TEST(YamlDocumentTest, SetOnAMappingIsAnError) {
  auto d = doc("model:\n  lr: 1\n");
  InputError e = error_of([&] { d->set("model", Value::integer(1)); });
  EXPECT_NE(e.message().find("mapping"), std::string::npos);
}

// ---------------------------------------------------------------- set: anchors

TEST(YamlDocumentTest, SetThroughAMergeKeyAddsAnOverride) {
  auto d = doc(kAnchors);
  d->set("run.lr", Value::parse("0.5"));
  std::string want = kAnchors;
  want.replace(want.find("  tp: *sz\n"), 10, "  tp: *sz\n  lr: 0.5\n");
  EXPECT_EQ(d->text(), want);
  EXPECT_EQ(get(*d, "run.lr").value.text, "0.5");
  EXPECT_EQ(get(*d, "base.lr").value.text, "0.1");  // the anchor is untouched
  EXPECT_EQ(get(*d, "copy.lr").value.text, "0.1");
}

TEST(YamlDocumentTest, SetThroughAnAliasLeavesTheAnchorAlone) {
  auto d = doc(kAnchors);
  d->set("copy.wd", Value::parse("0.3"));
  d->set("run.tp", Value::integer(4));
  std::string want = kAnchors;
  want.replace(want.find("copy: *base"), 11, "copy: {<<: *base, wd: 0.3}");
  want.replace(want.find("tp: *sz"), 7, "tp: 4");
  EXPECT_EQ(d->text(), want);
  EXPECT_EQ(get(*d, "copy.wd").value.text, "0.3");
  EXPECT_EQ(get(*d, "copy.lr").value.text, "0.1");
  EXPECT_EQ(get(*d, "size").value.text, "8");
}

TEST(YamlDocumentTest, SetDeepInsideMergedContentIsRefused) {
  auto d = doc("base: &b\n  opt:\n    lr: 1\nrun:\n  <<: *b\nl: &l\n  - a: 1\nm: *l\n");
  InputError e = error_of([&] { d->set("run.opt.lr", Value::integer(2)); });
  EXPECT_NE(e.message().find("anchor"), std::string::npos);
  InputError list = error_of([&] { d->set("m[0].a", Value::integer(2)); });
  EXPECT_NE(list.message().find("anchor"), std::string::npos) << list.message();
}

TEST(YamlDocumentTest, SetTheAnchoredValueItselfEditsItInPlace) {
  auto d = doc("size: &sz 8\ntp: *sz\n");
  d->set("size", Value::integer(4));
  EXPECT_EQ(d->text(), "size: &sz 4\ntp: *sz\n");
  EXPECT_EQ(get(*d, "tp").value.text, "4");  // aliases follow their anchor
}

// ---------------------------------------------------------------- remove

TEST(YamlDocumentTest, RemoveDeletesTheKeyAndItsSubtree) {
  auto d = doc("a: 1 # one\nb:\n  c: 2\n  d:\n    e: 3\n\nf: 4\n");
  EXPECT_TRUE(d->remove("b.d"));
  EXPECT_EQ(d->text(), "a: 1 # one\nb:\n  c: 2\n\nf: 4\n");
  EXPECT_TRUE(d->remove("a"));
  EXPECT_EQ(d->text(), "b:\n  c: 2\n\nf: 4\n");
  EXPECT_FALSE(d->remove("a"));
  EXPECT_FALSE(d->remove("b.zz"));
  EXPECT_FALSE(d->find("a").has_value());
}

TEST(YamlDocumentTest, RemoveInFlowMapsAndListItems) {
  auto d = doc("kw: {a: 1, b: 2, c: 3}\ncb:\n  - name: x\n    keep: 1\n  - name: y\n");
  EXPECT_TRUE(d->remove("kw.b"));
  EXPECT_TRUE(d->remove("kw.c"));
  EXPECT_TRUE(d->remove("cb[0].name"));  // first key on the `- ` line
  EXPECT_EQ(d->text(), "kw: {a: 1}\ncb:\n  - keep: 1\n  - name: y\n");
  EXPECT_TRUE(d->remove("cb[1]"));
  EXPECT_EQ(d->text(), "kw: {a: 1}\ncb:\n  - keep: 1\n");
}

TEST(YamlDocumentTest, RemoveOfAMergedKeyIsRefused) {
  auto d = doc(kAnchors);
  error_of([&] { d->remove("run.lr"); });
  EXPECT_EQ(d->text(), kAnchors);
}

TEST(YamlDocumentTest, CloneIsIndependent) {
  auto d = doc("a: 1\n");
  auto c = d->clone();
  c->set("a", Value::integer(2));
  EXPECT_EQ(d->text(), "a: 1\n");
  EXPECT_EQ(c->text(), "a: 2\n");
  EXPECT_EQ(get(*c, "a").value.text, "2");
}

TEST(YamlDocumentTest, MalformedPathIsAnInputError) {
  auto d = doc("a: 1\n");
  error_of([&] { d->set("a..b", Value::integer(1)); });
  EXPECT_FALSE(d->find("a[").has_value());
}

}  // namespace
}  // namespace attune::recipe
