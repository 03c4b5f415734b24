#include "attune/recipe/script_document.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace attune::recipe {
namespace {

// A Llama-style launch script: argument arrays, a quoted DATA_ARGS list in an
// if/else, variables with defaults and a torchrun line with its own flags.
const std::string kArrayScript = R"(#!/bin/bash
# Fixture: a Llama-style launch script.

export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}

GPUS_PER_NODE=8
NUM_NODES=${NUM_NODES:-2}
WORLD_SIZE=$(( ($GPUS_PER_NODE * $NUM_NODES) / 2 + 1 ))
TP=${TP:-1}
MBS=2
DATA_ROOT=${DATA_ROOT:-"/data"}
CHECKPOINT=$1

MODEL_ARGS=(
    --num-layers 32
    --hidden-size 4096
    # --num-query-groups 8
    --swiglu
    --recompute-modules mlp moe layernorm
)

PARALLEL_ARGS=(
    --tensor-model-parallel-size ${TP}
    --overlap-grad-reduce
    --sequence-parallel  # always with TP
)

DATA_ARGS=()
if [[ "$DATA" == "MOCK" ]]; then
    DATA_ARGS+=(
        "--mock-data"
        "--vocab-size 128256"
        "--split '99,1,0'"
    )
else
    DATA_ARGS+=(
        "--data-path ${DATA_ROOT}/corpus"
        "--vocab-size 128256"
    )
fi

TRAINING_ARGS=(
    --micro-batch-size $MBS
    --global-batch-size 256
    --lr 1.5e-4
    --save $CHECKPOINT
    --bf16
)

torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    --log-interval 10
)";

// A script without arrays: every flag is on the launch command line.
const std::string kCommandScript = R"(#!/bin/bash
TP=2
torchrun --nproc_per_node 8 pretrain_gpt.py \
    --tensor-model-parallel-size $TP \
    --num-layers 24 \
    --bf16
echo done
)";

std::unique_ptr<ScriptDocument> parse(const std::string& text) { return ScriptDocument::parse("train.sh", text); }

// `text` with the single occurrence of `from` replaced by `to`.
std::string replaced(std::string text, std::string_view from, std::string_view to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "not unique: " << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

Value value_of(const Document& doc, std::string_view path) {
  auto e = doc.find(path);
  EXPECT_TRUE(e.has_value()) << path;
  return e ? e->value : Value::null();
}

TEST(ScriptDocument, RoundTripsByteIdentical) {
  for (const std::string& text : {kArrayScript, kCommandScript}) {
    auto doc = parse(text);
    EXPECT_EQ(doc->text(), text);
    EXPECT_EQ(doc->format(), Format::Script);
    EXPECT_EQ(doc->name(), "train.sh");
  }
}

TEST(ScriptDocument, ReadsFlagsInArraysAndOnCommandLines) {
  auto doc = parse(kArrayScript);
  auto layers = doc->find("--num-layers");
  ASSERT_TRUE(layers);
  EXPECT_EQ(layers->value.kind, ValueKind::Int);
  EXPECT_EQ(layers->value.text, "32");
  EXPECT_EQ(layers->raw, "32");
  EXPECT_EQ(layers->line, 15);
  EXPECT_EQ(value_of(*doc, "--lr").text, "1.5e-4");
  EXPECT_EQ(value_of(*doc, "--lr").kind, ValueKind::Float);
  EXPECT_EQ(value_of(*doc, "--log-interval").as_int(), 10);  // on the torchrun line
  EXPECT_EQ(value_of(*doc, "--nnodes").as_int(), 2);         // stops before pretrain_gpt.py
}

TEST(ScriptDocument, BareFlagsAreTrueAndCommentedOutFlagsAreIgnored) {
  auto doc = parse(kArrayScript);
  auto swiglu = doc->find("--swiglu");
  ASSERT_TRUE(swiglu);
  EXPECT_EQ(swiglu->value.kind, ValueKind::Bool);
  EXPECT_EQ(swiglu->raw, "");
  EXPECT_EQ(value_of(*doc, "--sequence-parallel").as_bool(), true);  // trailing comment
  EXPECT_FALSE(doc->find("--num-query-groups"));
  for (const auto& e : doc->entries()) EXPECT_NE(e.path, "--num-query-groups");
}

TEST(ScriptDocument, SplitsQuotedArrayElementsLikeBash) {
  auto doc = parse(kArrayScript);
  EXPECT_EQ(value_of(*doc, "--mock-data").kind, ValueKind::Bool);
  auto split = doc->find("--split");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->value.text, "99,1,0");
  EXPECT_EQ(split->raw, "'99,1,0'");
  auto vocab = doc->find("--vocab-size");
  ASSERT_TRUE(vocab);
  EXPECT_EQ(vocab->value.as_int(), 128256);
  EXPECT_EQ(vocab->line, 38);  // the later of the two branches: argparse keeps the last
}

TEST(ScriptDocument, SeveralValueWordsFormAList) {
  auto doc = parse(kArrayScript);
  Value v = value_of(*doc, "--recompute-modules");
  ASSERT_EQ(v.kind, ValueKind::List);
  ASSERT_EQ(v.items.size(), 3u);
  EXPECT_EQ(v.items[0].text, "mlp");
  EXPECT_EQ(v.items[2].text, "layernorm");
}

TEST(ScriptDocument, ResolvesDefaultsAndArithmetic) {
  auto doc = parse(kArrayScript);
  auto tp = doc->find("--tensor-model-parallel-size");
  ASSERT_TRUE(tp);
  EXPECT_EQ(tp->value.as_int(), 1);
  EXPECT_EQ(tp->raw, "${TP}");
  EXPECT_EQ(value_of(*doc, "--micro-batch-size").as_int(), 2);
  EXPECT_EQ(value_of(*doc, "var.WORLD_SIZE").as_int(), 9);  // ((8 * 2) / 2 + 1)
  EXPECT_EQ(value_of(*doc, "var.NUM_NODES").as_int(), 2);
  EXPECT_EQ(value_of(*doc, "env.CUDA_DEVICE_MAX_CONNECTIONS").as_int(), 1);
  EXPECT_EQ(value_of(*doc, "--data-path").text, "/data/corpus");  // ${DATA_ROOT:-"/data"}
  EXPECT_EQ(value_of(*doc, "--nproc_per_node").as_int(), 8);
}

TEST(ScriptDocument, ArithmeticOnBareNamesAndItsFailures) {
  auto doc = parse("A=7\nB=$((A % 3 * -2))\nC=$(( A / 0 ))\nD=$(( $UNSET + 1 ))\n");
  EXPECT_EQ(value_of(*doc, "var.B").as_int(), -2);
  EXPECT_EQ(value_of(*doc, "var.C").text, "$(( A / 0 ))");
  EXPECT_EQ(value_of(*doc, "var.D").kind, ValueKind::String);
}

TEST(ScriptDocument, UnknownVariablesStayRawStrings) {
  auto doc = parse(kArrayScript);
  auto save = doc->find("--save");
  ASSERT_TRUE(save);
  EXPECT_EQ(save->value.kind, ValueKind::String);
  EXPECT_EQ(save->value.text, "$CHECKPOINT");  // CHECKPOINT=$1
  auto d = parse("A=(\n  --data-path \"${SLURM_DIR}/x\"\n)\n");
  EXPECT_EQ(value_of(*d, "--data-path").text, "${SLURM_DIR}/x");
}

TEST(ScriptDocument, FlagNamesMatchWithUnderscoresOrDashes) {
  auto doc = parse(kArrayScript);
  EXPECT_EQ(value_of(*doc, "--micro_batch_size").as_int(), 2);
  auto nproc = doc->find("--nproc-per-node");
  ASSERT_TRUE(nproc);
  EXPECT_EQ(nproc->path, "--nproc_per_node");  // the file's spelling
}

TEST(ScriptDocument, EntriesAreInFileOrderWithTheOccurrenceTheProgramReadsOnly) {
  auto doc = parse(kArrayScript);
  auto entries = doc->entries();
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries.front().path, "env.CUDA_DEVICE_MAX_CONNECTIONS");
  int vocab = 0;
  int last_line = 0;
  for (const auto& e : entries) {
    vocab += e.path == "--vocab-size" ? 1 : 0;
    EXPECT_GE(e.line, last_line) << e.path;
    last_line = e.line;
  }
  EXPECT_EQ(vocab, 1);
  EXPECT_EQ(entries.back().path, "--log-interval");
}

TEST(ScriptDocument, SetsALiteralValueInPlace) {
  auto doc = parse(kArrayScript);
  doc->set("--lr", Value::parse("3e-4"));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "--lr 1.5e-4", "--lr 3e-4"));
  EXPECT_EQ(value_of(*doc, "--lr").text, "3e-4");
}

TEST(ScriptDocument, EditsTheVariableAFlagReads) {
  auto doc = parse(kArrayScript);
  doc->set("--micro-batch-size", Value::integer(4));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "MBS=2\n", "MBS=4\n"));
  EXPECT_EQ(value_of(*doc, "--micro-batch-size").as_int(), 4);
}

TEST(ScriptDocument, EditsTheDefaultOfASelfReferencingVariable) {
  auto doc = parse(kArrayScript);
  doc->set("--tensor-model-parallel-size", Value::integer(4));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "TP=${TP:-1}", "TP=${TP:-4}"));
  doc->set("var.DATA_ROOT", Value::string("/lustre"));
  EXPECT_NE(doc->text().find("DATA_ROOT=${DATA_ROOT:-\"/lustre\"}\n"), std::string::npos);
  EXPECT_EQ(value_of(*doc, "--data-path").text, "/lustre/corpus");
}

TEST(ScriptDocument, FollowsAReassignmentToTheEarlierValue) {
  const std::string text = "GPUS=8\nGPUS=${GPUS:-8}\nA=(\n  --nproc_per_node $GPUS\n)\n";
  auto doc = parse(text);
  doc->set("--nproc_per_node", Value::integer(4));
  EXPECT_EQ(doc->text(), "GPUS=4\nGPUS=${GPUS:-8}\nA=(\n  --nproc_per_node $GPUS\n)\n");
  EXPECT_EQ(value_of(*doc, "--nproc_per_node").as_int(), 4);
}

TEST(ScriptDocument, ReplacesANonLiteralAssignmentOrMixedWord) {
  auto doc = parse(kArrayScript);
  doc->set("var.WORLD_SIZE", Value::integer(16));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "$(( ($GPUS_PER_NODE * $NUM_NODES) / 2 + 1 ))", "16"));
  auto mixed = parse("A=(\n  --save \"${ROOT}/ckpt\"\n)\n");
  mixed->set("--save", Value::string("/ckpt"));
  EXPECT_EQ(mixed->text(), "A=(\n  --save \"/ckpt\"\n)\n");
}

TEST(ScriptDocument, EditsEveryOccurrenceOfADuplicatedFlag) {
  auto doc = parse(kArrayScript);
  doc->set("--vocab-size", Value::integer(32000));
  std::string expected = kArrayScript;
  for (int i = 0; i < 2; ++i) expected.replace(expected.find("128256"), 6, "32000");
  EXPECT_EQ(doc->text(), expected);
}

TEST(ScriptDocument, EditsInsideQuotedElementsKeepingTheirQuotes) {
  auto doc = parse(kArrayScript);
  doc->set("--split", Value::string("98,1,1"));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "\"--split '99,1,0'\"", "\"--split '98,1,1'\""));
  doc->set("--mock-data", Value::string("yes"));
  EXPECT_NE(doc->text().find("\"--mock-data yes\""), std::string::npos);
}

TEST(ScriptDocument, SetsAListOfWords) {
  auto doc = parse(kArrayScript);
  doc->set("--recompute-modules", Value::list({Value::string("mlp"), Value::string("core_attn")}));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "--recompute-modules mlp moe layernorm",
                                  "--recompute-modules mlp core_attn"));
}

TEST(ScriptDocument, BoolTrueOnABareFlagChangesNothing) {
  auto doc = parse(kArrayScript);
  doc->set("--swiglu", Value::boolean(true));
  EXPECT_EQ(doc->text(), kArrayScript);
}

TEST(ScriptDocument, BoolFalseRemovesTheFlagLine) {
  auto doc = parse(kArrayScript);
  doc->set("--bf16", Value::boolean(false));
  doc->set("--global-batch-size", Value::boolean(false));
  doc->set("--mock-data", Value::boolean(false));
  std::string expected = replaced(kArrayScript, "    --bf16\n", "");
  expected = replaced(expected, "    --global-batch-size 256\n", "");
  expected = replaced(expected, "        \"--mock-data\"\n", "");
  EXPECT_EQ(doc->text(), expected);
  EXPECT_FALSE(doc->find("--bf16"));
}

TEST(ScriptDocument, RemovingTheLastFlagOfACommandKeepsContinuationsValid) {
  auto doc = parse(kCommandScript);
  doc->set("--bf16", Value::boolean(false));
  EXPECT_EQ(doc->text(), replaced(kCommandScript, "--num-layers 24 \\\n    --bf16\n", "--num-layers 24\n"));
  doc->set("--num-layers", Value::boolean(false));
  EXPECT_EQ(doc->text(), replaced(kCommandScript, " \\\n    --num-layers 24 \\\n    --bf16\n", "\n"));
  // What is left still parses as one command ending before `echo`.
  auto reparsed = parse(doc->text());
  EXPECT_EQ(value_of(*reparsed, "--tensor-model-parallel-size").as_int(), 2);
}

TEST(ScriptDocument, RemovesAFlagInTheMiddleOfALine) {
  auto doc = parse("P=(\n    --sample=none --trace=cuda \\\n)\n");
  EXPECT_TRUE(doc->remove("--sample"));
  EXPECT_EQ(doc->text(), "P=(\n    --trace=cuda \\\n)\n");
  EXPECT_TRUE(doc->remove("--trace"));
  EXPECT_EQ(doc->text(), "P=(\n)\n");
  EXPECT_FALSE(doc->remove("--trace"));
}

TEST(ScriptDocument, RemovesTwoOccurrencesOnOneLine) {
  auto doc = parse("A=(\n    --x 1 --x 2 --y\n)\n");
  doc->set("--x", Value::boolean(false));
  EXPECT_EQ(doc->text(), "A=(\n    --y\n)\n");
}

TEST(ScriptDocument, RemovesAPieceOfAQuotedElement) {
  auto doc = parse("A=(\n  \"--fp8-format hybrid --fp8-param-gather\"\n)\n");
  doc->set("--fp8-format", Value::boolean(false));
  EXPECT_EQ(doc->text(), "A=(\n  \"--fp8-param-gather\"\n)\n");
}

TEST(ScriptDocument, InsertsAnAbsentFlagNextToItsRelative) {
  auto doc = parse(kArrayScript);
  doc->set("--overlap-param-gather", Value::boolean(true));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "    --overlap-grad-reduce\n",
                                  "    --overlap-grad-reduce\n    --overlap-param-gather\n"));
  auto doc2 = parse(kArrayScript);
  doc2->set("--pipeline-model-parallel-size", Value::integer(2));
  EXPECT_EQ(doc2->text(), replaced(kArrayScript, "    --tensor-model-parallel-size ${TP}\n",
                                   "    --tensor-model-parallel-size ${TP}\n"
                                   "    --pipeline-model-parallel-size 2\n"));
  EXPECT_EQ(value_of(*doc2, "--pipeline-model-parallel-size").as_int(), 2);
}

TEST(ScriptDocument, InsertsAnUnrelatedFlagAtTheEndOfTheLastArray) {
  auto doc = parse(kArrayScript);
  doc->set("--fp8-format", Value::string("hybrid"));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "    --bf16\n)", "    --bf16\n    --fp8-format hybrid\n)"));
  doc->set("--nothing-here", Value::boolean(false));  // absent and false: no-op
  EXPECT_FALSE(doc->find("--nothing-here"));
}

TEST(ScriptDocument, InsertsAContinuationLineWhenThereAreNoArrays) {
  auto doc = parse(kCommandScript);
  doc->set("--seq-length", Value::integer(4096));
  EXPECT_EQ(doc->text(), replaced(kCommandScript, "    --tensor-model-parallel-size $TP \\\n",
                                  "    --tensor-model-parallel-size $TP \\\n    --seq-length 4096 \\\n"));
  auto doc2 = parse(kCommandScript);
  doc2->set("--bf16", Value::boolean(false));
  doc2->set("--fp16", Value::boolean(true));  // no relative, anchor line is now the last one
  EXPECT_EQ(value_of(*doc2, "--fp16").kind, ValueKind::Bool);
  EXPECT_EQ(value_of(*doc2, "--num-layers").as_int(), 24);
  EXPECT_NE(doc2->text().find("--tensor-model-parallel-size $TP \\\n    --fp16 \\\n    --num-layers 24\necho"),
            std::string::npos)
      << doc2->text();
}

TEST(ScriptDocument, InsertsIntoASingleLineArray) {
  auto doc = parse("A=(--lr 1 --bf16)\ntorchrun x.py ${A[@]}\n");
  doc->set("--lr-warmup-iters", Value::integer(10));
  EXPECT_EQ(doc->text(), "A=(--lr 1 --lr-warmup-iters 10 --bf16)\ntorchrun x.py ${A[@]}\n");
}

TEST(ScriptDocument, EditsAndInsertsExports) {
  auto doc = parse(kArrayScript);
  doc->set("env.CUDA_DEVICE_MAX_CONNECTIONS", Value::integer(8));
  doc->set("env.NCCL_DEBUG", Value::string("INFO"));
  std::string expected = replaced(kArrayScript, "export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}\n",
                                  "export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-8}\n"
                                  "export NCCL_DEBUG=INFO\n");
  EXPECT_EQ(doc->text(), expected);
  EXPECT_EQ(value_of(*doc, "env.NCCL_DEBUG").text, "INFO");
  EXPECT_TRUE(doc->remove("env.NCCL_DEBUG"));
  EXPECT_FALSE(doc->find("env.NCCL_DEBUG"));
}

TEST(ScriptDocument, InsertsTheFirstExportAfterTheHeaderComments) {
  auto doc = parse("#!/bin/bash\n# Runs a model\n\nA=(\n  --lr 1\n)\n");
  doc->set("env.NCCL_IB_TIMEOUT", Value::integer(19));
  EXPECT_EQ(doc->text(), "#!/bin/bash\n# Runs a model\nexport NCCL_IB_TIMEOUT=19\n\nA=(\n  --lr 1\n)\n");
}

TEST(ScriptDocument, InsertsAVariableAfterTheLastOneBeforeTheArrays) {
  auto doc = parse(kArrayScript);
  doc->set("var.PP", Value::integer(2));
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "CHECKPOINT=$1\n", "CHECKPOINT=$1\nPP=2\n"));
}

TEST(ScriptDocument, QuotesHostileValuesSoTheyStayLiteral) {
  const std::string hostile[] = {"$(rm -rf /)", "`reboot`", "1; rm -rf /", "it's", "a\"b", "*", "$HOME"};
  for (const std::string& v : hostile) {
    auto doc = parse(kArrayScript);
    doc->set("--log-interval", Value::string(v));      // a word on the torchrun line
    doc->set("--micro-batch-size", Value::string(v));  // through MBS=...
    doc->set("var.DATA_ROOT", Value::string(v));       // inside ${DATA_ROOT:-"..."}
    auto again = parse(doc->text());
    EXPECT_EQ(value_of(*again, "--log-interval").text, v);
    EXPECT_EQ(value_of(*again, "--micro-batch-size").text, v);
    EXPECT_EQ(value_of(*again, "var.DATA_ROOT").text, v);
  }
  auto doc = parse(kArrayScript);
  doc->set("--log-interval", Value::string("$(rm -rf /)"));
  doc->set("var.DATA_ROOT", Value::string("`id`;x"));
  std::string expected = replaced(kArrayScript, "--log-interval 10", "--log-interval '$(rm -rf /)'");
  EXPECT_EQ(doc->text(), replaced(expected, "${DATA_ROOT:-\"/data\"}", "${DATA_ROOT:-'`id`;x'}"));
}

TEST(ScriptDocument, QuotesHostileValuesInsideArrays) {
  auto doc = parse(kArrayScript);
  doc->set("--lr", Value::string("$(reboot)"));
  doc->set("--split", Value::string("`id`"));
  std::string expected = replaced(kArrayScript, "--lr 1.5e-4", "--lr '$(reboot)'");
  EXPECT_EQ(doc->text(), replaced(expected, "\"--split '99,1,0'\"", "\"--split '\\`id\\`'\""));
  EXPECT_EQ(value_of(*doc, "--lr").text, "$(reboot)");
  EXPECT_EQ(value_of(*doc, "--split").text, "`id`");
  // ${ARGS[@]} is expanded unquoted: bash would split a value with spaces.
  EXPECT_THROW(doc->set("--lr", Value::string("$(rm -rf /)")), InputError);
  EXPECT_THROW(doc->set("--split", Value::string("a b")), InputError);
  EXPECT_THROW(doc->set("--overlap-param-gather", Value::string("a b")), InputError);
  EXPECT_EQ(value_of(*doc, "--lr").text, "$(reboot)");  // failed edits leave the document as it was
}

TEST(ScriptDocument, RejectsPathsThatAreNotScriptKeys) {
  auto doc = parse(kArrayScript);
  EXPECT_THROW(doc->set("model.lr", Value::integer(1)), InputError);
  EXPECT_THROW(doc->set("--x;rm -rf /", Value::integer(1)), InputError);
  EXPECT_FALSE(doc->find("env.1BAD"));
  EXPECT_EQ(doc->text(), kArrayScript);
}

TEST(ScriptDocument, WritesNullLikeValuesAsTheirText) {
  auto doc = parse(kArrayScript);
  doc->set("--lr", Value::parse("None"));  // Megatron's own spelling for "unset"
  EXPECT_EQ(doc->text(), replaced(kArrayScript, "--lr 1.5e-4", "--lr None"));
  EXPECT_EQ(value_of(*doc, "--lr").kind, ValueKind::String);
}

TEST(ScriptDocument, EditsAFlagWithAnEqualsValue) {
  auto doc = parse("srun \\\n    --mpi=pmix -l \\\n    python train.py\n");
  EXPECT_EQ(value_of(*doc, "--mpi").text, "pmix");
  doc->set("--mpi", Value::string("none"));
  EXPECT_EQ(doc->text(), "srun \\\n    --mpi=none -l \\\n    python train.py\n");
}

TEST(ScriptDocument, ScansHeredocBodiesButNotSbatchComments) {
  const std::string text = R"(#!/bin/bash
IMAGE=${IMAGE:-"nvcr.io/nvidia/pytorch:24.01"}
sbatch <<EOF
#!/bin/bash
#SBATCH --nodes=4
srun \
    --container-image=${IMAGE} \
    python pretrain_gpt.py --num-layers 4 --micro-batch-size 2
EOF
)";
  auto doc = parse(text);
  EXPECT_EQ(doc->text(), text);
  EXPECT_FALSE(doc->find("--nodes"));
  EXPECT_EQ(value_of(*doc, "--container-image").text, "nvcr.io/nvidia/pytorch:24.01");
  EXPECT_EQ(value_of(*doc, "--num-layers").as_int(), 4);
  doc->set("--micro-batch-size", Value::integer(8));
  EXPECT_EQ(doc->text(), replaced(text, "--micro-batch-size 2", "--micro-batch-size 8"));
}

TEST(ScriptDocument, IgnoresCasePatternsAndEchoText) {
  const std::string text = R"(while [[ $# -gt 0 ]]; do
    case $1 in
        --checkpoint-path)
            CKPT="$2"
            shift 2
            ;;
        -h|--help)
            echo --help shows this
            exit 0
            ;;
    esac
done
)";
  auto doc = parse(text);
  EXPECT_FALSE(doc->find("--checkpoint-path"));
  EXPECT_FALSE(doc->find("--help"));
  EXPECT_EQ(value_of(*doc, "var.CKPT").text, "$2");
}

TEST(ScriptDocument, AScriptWithoutFlagsIsValid) {
  auto doc = parse("#!/bin/bash\necho hello\n");
  EXPECT_TRUE(doc->entries().empty());
  EXPECT_THROW(doc->set("--lr", Value::integer(1)), InputError);  // nowhere to put it
}

TEST(ScriptDocument, ReportsUnterminatedConstructsWithLineAndColumn) {
  try {
    parse("X=1\nARGS=(\n    --lr \"1e-4\n)\n");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "train.sh");
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.where().column, 10);
    EXPECT_NE(e.message().find("unterminated quote"), std::string::npos);
  }
  try {
    parse("A=1\nARGS=(\n    --lr 1\n");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 6);
    EXPECT_NE(e.message().find("unterminated array"), std::string::npos);
  }
  try {
    parse("D=$(date\n");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 1);
    EXPECT_EQ(e.where().column, 3);
    EXPECT_NE(e.message().find("unterminated $("), std::string::npos);
  }
}

TEST(ScriptDocument, CloneIsIndependent) {
  auto doc = parse(kArrayScript);
  auto copy = doc->clone();
  copy->set("--lr", Value::parse("1e-3"));
  EXPECT_EQ(doc->text(), kArrayScript);
  EXPECT_EQ(value_of(*doc, "--lr").text, "1.5e-4");
  EXPECT_EQ(value_of(*copy, "--lr").text, "1e-3");
}

}  // namespace
}  // namespace attune::recipe
