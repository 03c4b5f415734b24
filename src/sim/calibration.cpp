// Calibration: reads the published throughput measurements
// (calibration/throughput.csv), turns each row into a sim::Workload, asks a
// predictor for tokens/s/GPU and scores it (per-row error, median and p90 of
// |error|, Spearman rank correlation within model | GPU groups).
//
// The CSV's free-text columns (model, precision, recompute, notes) are mapped
// through small pattern tables below; a row whose text no table understands is
// reported as unsupported with the reason rather than guessed.
#include "attune/sim/calibration.h"

#include <cstdlib>
#include "attune/sim/step_model.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>
#include <type_traits>
#include <variant>

#include "attune/recipe/hardware.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/text.h"

namespace attune::sim {
namespace {

// ------------------------------------------------------------------ text helpers

std::string trim(std::string_view s) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// ------------------------------------------------------------------ CSV (RFC 4180)

struct CsvField {
  std::string text;
  int line = 0;    // where the field starts, for messages
  int column = 0;
};
using CsvRecord = std::vector<CsvField>;

// A small RFC-4180 reader: fields separated by commas, records by LF or CRLF;
// a quoted field may hold commas, line breaks and doubled quotes. Tracks line
// and column so a malformed file is reported where it breaks.
class CsvParser {
 public:
  CsvParser(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);  // UTF-8 BOM (spreadsheet exports)
  }

  std::vector<CsvRecord> records() {
    std::vector<CsvRecord> out;
    while (!at_end()) {
      if (at_eol()) {  // blank line
        skip_eol();
        continue;
      }
      out.push_back(record());
    }
    return out;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  bool at_eol() const {
    return !at_end() && (peek() == '\n' || (peek() == '\r' && text_.substr(pos_, 2) == "\r\n"));
  }
  void advance() {
    if (peek() == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  void skip_eol() {
    if (peek() == '\r') advance();
    advance();
  }
  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throw InputError(SourceLocation{file_, line, column}, "", message);
  }

  CsvRecord record() {
    CsvRecord r;
    while (true) {
      r.push_back(field());
      if (at_end()) return r;
      if (peek() == ',') {
        advance();
        continue;
      }
      skip_eol();
      return r;
    }
  }

  CsvField field() {
    CsvField f{"", line_, column_};
    if (!at_end() && peek() == '"') return quoted(f);
    while (!at_end() && peek() != ',' && !at_eol()) {
      if (peek() == '"') fail(line_, column_, "quote inside an unquoted field (quote the whole field)");
      f.text += peek();
      advance();
    }
    return f;
  }

  CsvField quoted(CsvField f) {
    advance();  // the opening quote
    while (true) {
      if (at_end()) fail(f.line, f.column, "quoted field is never closed");
      if (peek() == '"') {
        advance();
        if (at_end() || peek() != '"') break;  // closing quote; "" is a literal quote
      }
      f.text += peek();
      advance();
    }
    if (!at_end() && peek() != ',' && !at_eol()) {
      fail(line_, column_, "unexpected text after a closing quote");
    }
    return f;
  }

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

// ------------------------------------------------------------------ CSV -> CalibrationRow

using RowMember = std::variant<std::string CalibrationRow::*, int CalibrationRow::*,
                               long long CalibrationRow::*, double CalibrationRow::*>;
struct ColumnDef {
  const char* name;
  RowMember member;
};

// Every column throughput.csv has; all are required so a renamed column is an
// error, not a silent zero.
const ColumnDef kColumns[] = {
    {"source", &CalibrationRow::source},
    {"model", &CalibrationRow::model},
    {"gpu", &CalibrationRow::gpu},
    {"num_gpus", &CalibrationRow::num_gpus},
    {"tp", &CalibrationRow::tp},
    {"pp", &CalibrationRow::pp},
    {"vp", &CalibrationRow::vp},
    {"cp", &CalibrationRow::cp},
    {"ep", &CalibrationRow::ep},
    {"dp", &CalibrationRow::dp},
    {"mbs", &CalibrationRow::mbs},
    {"gbs", &CalibrationRow::gbs},
    {"seq_len", &CalibrationRow::seq_len},
    {"precision", &CalibrationRow::precision},
    {"recompute", &CalibrationRow::recompute},
    {"tokens_per_s_per_gpu", &CalibrationRow::tokens_per_s_per_gpu},
    {"tflops_per_gpu", &CalibrationRow::tflops_per_gpu},
    {"mfu", &CalibrationRow::mfu},
    {"notes", &CalibrationRow::notes},
};

[[noreturn]] void bad_number(const ColumnDef& col, const CsvField& field, const std::string& file,
                             const char* expected) {
  throw InputError(SourceLocation{file, field.line, field.column}, col.name,
                   std::string("expected ") + expected + ", got '" + trim(field.text) + "'");
}

// Stores one field into the row; empty numbers stay 0.
void store_field(const ColumnDef& col, const CsvField& field, const std::string& file, CalibrationRow& row) {
  const std::string text = trim(field.text);
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(row.*member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          row.*member = text;
        } else if (!text.empty()) {
          const std::optional<T> value = parse_number<T>(text);
          if (!value) bad_number(col, field, file, std::is_floating_point_v<T> ? "a number" : "an integer");
          row.*member = *value;
        }
      },
      col.member);
}

// Index of each known column in the header; throws for a missing one.
std::vector<size_t> column_indices(const CsvRecord& header, const std::string& file) {
  std::vector<size_t> out;
  for (const auto& col : kColumns) {
    auto it = std::find_if(header.begin(), header.end(),
                           [&](const CsvField& f) { return trim(f.text) == col.name; });
    if (it == header.end()) {
      throw InputError(SourceLocation{file, header.front().line, 0}, col.name, "missing column in the header");
    }
    out.push_back(static_cast<size_t>(it - header.begin()));
  }
  return out;
}

CalibrationRow row_from_record(const CsvRecord& record, const std::vector<size_t>& indices, size_t header_size,
                               const std::string& file) {
  const int line = record.front().line;
  if (record.size() != header_size) {
    const CsvField& where = record.size() > header_size ? record[header_size] : record.back();
    throw InputError(SourceLocation{file, line, where.column}, "",
                     "expected " + std::to_string(header_size) + " fields as in the header, found " +
                         std::to_string(record.size()));
  }
  CalibrationRow row;
  row.line = line;
  for (size_t i = 0; i < indices.size(); ++i) store_field(kColumns[i], record[indices[i]], file, row);
  return row;
}

// ------------------------------------------------------------------ model

// Spellings find_model_preset misses, mapped to a preset id. Every name in
// throughput.csv that has a preset already matches one of its aliases once the
// parenthesised annotation is dropped; these are the short forms benchmark
// tables also use. Compared ignoring case and punctuation.
struct ModelAlias {
  const char* spelling;
  const char* preset;
};
const ModelAlias kModelAliases[] = {
    {"Qwen3 30B", "qwen3-30b-a3b"},      // Qwen3's only 30B is the MoE
    {"Qwen3 235B", "qwen3-235b-a22b"},
    {"DSv3", "deepseek-v3"},
};

// Models the simulator cannot represent even though their architecture is
// known: the reason is clearer than "unknown model".
struct UnsupportedModel {
  const char* needle;  // lower-case substring of the model text
  const char* reason;
};
const UnsupportedModel kUnsupportedModels[] = {
    {"lora", "LoRA fine-tuning (frozen base weights, adapters only) is not modelled"},
};

// Fields of an explicit architecture "GPT-1.7B (h=2048,L=24,heads=16,vocab=131072)".
using SpecMember = int recipe::ModelSpec::*;
struct ArchField {
  const char* key;  // lower-case
  SpecMember member;
};
const ArchField kArchFields[] = {
    {"h", &recipe::ModelSpec::hidden},       {"hidden", &recipe::ModelSpec::hidden},
    {"l", &recipe::ModelSpec::layers},       {"layers", &recipe::ModelSpec::layers},
    {"heads", &recipe::ModelSpec::heads},    {"a", &recipe::ModelSpec::heads},
    {"kv_heads", &recipe::ModelSpec::kv_heads}, {"kv", &recipe::ModelSpec::kv_heads},
    {"ffn", &recipe::ModelSpec::ffn},        {"vocab", &recipe::ModelSpec::vocab},
    {"v", &recipe::ModelSpec::vocab},
};

// Megatron pads the GPT-2 vocabulary to 51200; the A100 papers (Korthikanti,
// Narayanan) state V=51200 and leave it out of the model name.
constexpr int kDefaultGptVocab = 51200;

struct ModelName {
  std::string base;        // "GPT-1.7B"
  std::string annotation;  // text inside the parentheses, "" if none
};

ModelName split_model_name(const std::string& text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return {trim(text), ""};
  return {trim(text.substr(0, open)), trim(text.substr(open + 1, close - open - 1))};
}

bool is_architecture(const std::string& annotation) { return contains(annotation, "="); }

// A GPT-style model from explicit k=v fields: MHA unless kv heads are given,
// FFN 4h, GeLU, tied embeddings (Megatron's GPT defaults).
std::optional<recipe::ModelSpec> explicit_model(const std::string& text, const ModelName& name, std::string& reason) {
  recipe::ModelSpec m;
  m.name = to_lower(name.base);
  m.display = text;
  m.activation = "gelu";
  m.tied_embeddings = true;
  for (const std::string& item : split(name.annotation, ',')) {
    const size_t eq = item.find('=');
    const std::string key = to_lower(trim(item.substr(0, eq)));
    const auto* field = std::find_if(std::begin(kArchFields), std::end(kArchFields),
                                     [&](const ArchField& f) { return key == f.key; });
    const auto value = eq == std::string::npos ? std::nullopt : parse_number<int>(trim(item.substr(eq + 1)));
    if (field == std::end(kArchFields) || !value || *value <= 0) {
      reason = "cannot read '" + item + "' in model '" + text + "'";
      return std::nullopt;
    }
    m.*(field->member) = *value;
  }
  if (m.hidden == 0 || m.layers == 0 || m.heads == 0) {
    reason = "model '" + text + "' needs h, L and heads for its architecture";
    return std::nullopt;
  }
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  if (m.ffn == 0) m.ffn = 4 * m.hidden;
  if (m.vocab == 0) m.vocab = kDefaultGptVocab;
  if (m.hidden % m.heads != 0 || m.heads % m.kv_heads != 0) {
    reason = "model '" + text + "': heads must divide h and kv heads must divide heads";
    return std::nullopt;
  }
  return m;
}

// Lower-case letters and digits only: "Qwen3-30B" and "qwen3 30b" are one name.
std::string letters_and_digits(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) out.push_back(static_cast<char>(std::tolower(u)));
  }
  return out;
}

const recipe::ModelSpec* preset_for(const std::string& base) {
  const std::string key = letters_and_digits(base);
  for (const auto& alias : kModelAliases) {
    if (key == letters_and_digits(alias.spelling)) return recipe::find_model_preset(alias.preset);
  }
  return recipe::find_model_preset(base);
}

std::optional<recipe::ModelSpec> resolve_model(const std::string& text, std::string& reason) {
  const std::string low = to_lower(text);
  for (const auto& u : kUnsupportedModels) {
    if (contains(low, u.needle)) {
      reason = u.reason;
      return std::nullopt;
    }
  }
  const ModelName name = split_model_name(text);
  if (is_architecture(name.annotation)) return explicit_model(text, name, reason);
  // Otherwise the parentheses only annotate ("MoE 128e top4"): the name decides.
  if (const recipe::ModelSpec* preset = preset_for(name.base)) return *preset;
  reason = "unknown model '" + text + "'";
  return std::nullopt;
}

// ------------------------------------------------------------------ GPU

// First match wins, so the longer names come first (gb200 before b200).
struct GpuPattern {
  const char* needle;  // lower-case substring of the gpu column
  const char* id;
};
const GpuPattern kGpus[] = {
    {"gb200", "gb200"}, {"b200", "b200"},
    {"h200", "h200"},
    // Meta Grand Teton H100 (HBM2e, 500 W), slower than H100 SXM: kept apart so
    // the simulator's catalog decides whether it models it.
    {"h100-96gb", "h100-96gb"},
    {"h100", "h100"},   {"a100", "a100"},
};

std::optional<std::string> resolve_gpu(const std::string& text) {
  const std::string low = to_lower(text);
  for (const auto& g : kGpus) {
    if (contains(low, g.needle)) return g.id;
  }
  return recipe::normalize_gpu(text);  // other spellings: p5.48xlarge, ...
}

// ------------------------------------------------------------------ layout

struct RowLayout {
  int tp = 1, pp = 1, vp = 1, cp = 1, ep = 1, dp = 0, mbs = 1;
};

// The row's parallel sizes with the CSV's blanks filled: a missing size is 1,
// a missing dp is what the other sizes leave (EP folds into DP, as in
// Megatron), a missing micro batch is assumed to be 1 (the Megatron-LM README
// and torchtitan PP rows do not state it).
RowLayout layout_of(const CalibrationRow& row) {
  const auto or_one = [](int v) { return v > 0 ? v : 1; };
  RowLayout l;
  l.tp = or_one(row.tp);
  l.pp = or_one(row.pp);
  l.vp = l.pp > 1 ? or_one(row.vp) : 1;  // no pipeline, no virtual stages
  l.cp = or_one(row.cp);
  l.ep = or_one(row.ep);
  l.mbs = or_one(row.mbs);
  const int model_parallel = l.tp * l.pp * l.cp;
  l.dp = row.dp > 0 ? row.dp : row.num_gpus / model_parallel;
  return l;
}

// Checks the sizes fit together; the empty string when they do.
std::string layout_problem(const CalibrationRow& row, const RowLayout& l) {
  if (row.num_gpus <= 0) return "no GPU count (num_gpus)";
  if (row.gbs <= 0) return "no global batch size (gbs)";
  if (row.seq_len <= 0) return "no sequence length (seq_len)";
  const long long product = 1LL * l.tp * l.pp * l.cp * l.dp;
  if (l.dp <= 0 || product != row.num_gpus) {
    return "tp*pp*cp*dp = " + std::to_string(product) + " does not match num_gpus " + std::to_string(row.num_gpus);
  }
  const long long per_step = 1LL * l.mbs * l.dp;
  if (row.gbs % per_step != 0) {
    return "gbs " + std::to_string(row.gbs) + " is not a multiple of mbs*dp = " + std::to_string(per_step);
  }
  return "";
}

// Which framework published the row, from the source column (first match).
// torchtitan and NeMo AutoModel shard data parallelism with FSDP2 by default,
// whether or not the row's notes say so.
struct FrameworkPattern {
  const char* needle;  // lower-case
  const char* framework;
  bool fsdp;
};
const FrameworkPattern kFrameworks[] = {
    {"torchtitan", "torchtitan", true}, {"megatron-bridge", "bridge", false},
    {"automodel", "automodel", true},   {"nemo", "nemo", false},
    {"megatron-lm", "megatron", false}, {"korthikanti", "megatron", false},
    {"narayanan", "megatron", false},
};

const FrameworkPattern* framework_of(const std::string& source) {
  const std::string low = to_lower(source);
  for (const auto& f : kFrameworks) {
    if (contains(low, f.needle)) return &f;
  }
  return nullptr;
}

// Every GPU node is taken as an 8-GPU box. GB200 NVL72 compute trays hold 4
// GPUs, but the NVLink domain is the 72-GPU rack, so "node" there means less;
// the simulator's catalog owns that distinction.
constexpr int kGpusPerNode = 8;

void fill_plan(const CalibrationRow& row, const RowLayout& l, recipe::Plan& p) {
  const FrameworkPattern* framework = framework_of(row.source);
  p.framework = framework ? framework->framework : "";
  p.world = row.num_gpus;
  p.world_source = "file";
  p.gpus_per_node = kGpusPerNode;
  p.nodes = (row.num_gpus + kGpusPerNode - 1) / kGpusPerNode;
  p.tp = l.tp;
  p.pp = l.pp;
  p.vp = l.vp;
  p.cp = l.cp;
  p.ep = l.ep;
  p.etp = 1;
  p.dp = l.dp;
  p.mbs = l.mbs;
  p.gbs = row.gbs;
  p.grad_accum = row.gbs / (1LL * l.mbs * l.dp);
  p.seq_len = row.seq_len;
  p.tokens_per_step = row.gbs * row.seq_len;
  p.gbs_rule = "explicit";
}

// ------------------------------------------------------------------ precision, recompute, knobs

// First match wins (mxfp8 before fp8, bf16 before fp16: "FP16/BF16 mixed" ran BF16).
struct PrecisionPattern {
  const char* needle;  // lower-case
  const char* precision;
  bool fp8;
};
const PrecisionPattern kPrecisions[] = {
    {"mxfp8", "mxfp8", true}, {"fp8-mx", "mxfp8", true}, {"fp8", "fp8", true},
    {"bf16", "bf16", false},  {"fp16", "fp16", false},   {"fp32", "fp32", false},
};

bool apply_precision(const CalibrationRow& row, Workload& w, std::string& reason) {
  const std::string low = to_lower(row.precision);
  for (const auto& p : kPrecisions) {
    if (contains(low, p.needle)) {
      w.plan.precision = p.precision;
      w.knobs.fp8 = p.fp8;
      w.knobs.mxfp8 = std::string(p.precision) == "mxfp8";
      return true;
    }
  }
  reason = row.precision.empty() ? "no precision" : "unknown precision '" + row.precision + "'";
  return false;
}

// First match wins. "core_attn" (Bridge's attention-only recompute) precedes
// "full" because its text says "no full recompute". Blank, "not stated" and a
// plain "recipe default" are taken as no recompute.
struct RecomputePattern {
  const char* needle;  // lower-case
  const char* granularity;
};
const RecomputePattern kRecomputes[] = {
    {"core_attn", "selective"}, {"selective", "selective"}, {"partial", "full"}, {"full", "full"},
    {"none", "none"},           {"not stated", "none"},     {"recipe default", "none"},
};

// "full, block, 5 layers" / "partial (4 layers)" -> 5 / 4; 0 (all layers) otherwise.
int recompute_layers(const std::string& low) {
  const size_t at = low.find("layer");
  if (at == std::string::npos) return 0;
  size_t end = at;
  while (end > 0 && low[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(low[begin - 1]))) --begin;
  return begin < end ? parse_number<int>(std::string_view(low).substr(begin, end - begin)).value_or(0) : 0;
}

// Megatron's selective recompute modules the text names ("selective:
// mla_up_proj, mlp"); core attention, its default, when it names none.
unsigned recompute_modules(const std::string& low) {
  using namespace recompute_module;
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  unsigned m = 0;
  for (const Name& n : names()) {
    // The name as a word ("mlp" alone, not inside another name).
    for (std::size_t at = low.find(n.name); at != std::string::npos; at = low.find(n.name, at + 1)) {
      const std::size_t end = at + n.name.size();
      if ((at == 0 || !word_char(low[at - 1])) && (end >= low.size() || !word_char(low[end]))) m |= n.bit;
    }
  }
  return m ? m : kCoreAttn;
}

bool apply_recompute(const CalibrationRow& row, Workload& w, std::string& reason) {
  const std::string low = to_lower(trim(row.recompute));
  const auto* match = std::find_if(std::begin(kRecomputes), std::end(kRecomputes),
                                   [&](const RecomputePattern& r) { return contains(low, r.needle); });
  if (!low.empty() && match == std::end(kRecomputes)) {
    reason = "unknown recompute '" + row.recompute + "'";
    return false;
  }
  const std::string granularity = low.empty() ? "none" : match->granularity;
  w.knobs.recompute_granularity = granularity;
  w.knobs.recompute_num_layers = granularity == "full" ? recompute_layers(low) : 0;
  w.knobs.recompute_modules = recompute_modules(low);
  w.knobs.recompute_unstated = low.empty() || contains(low, "not stated") || contains(low, "recipe default");
  w.plan.recompute = granularity;
  return true;
}

void use_tp_overlap(Workload& w) { w.knobs.set(Choice::TpCommOverlap, 1); }

void use_fsdp(Workload& w) {
  w.knobs.zero_stage = 3;
  w.plan.dp_shard = w.plan.dp;
}

// DeepEP is an expert-parallel dispatcher: a row that uses it without stating
// EP spread its experts over every rank of a pipeline stage, as AutoModel's
// DeepSeek-V3 benchmark recipe does (ep_size 64 = 256 GPUs / PP 4).
void use_deepep(Workload& w) {
  w.knobs.set(Choice::Dispatcher, dispatcher::kDeepEp);
  const int stage_ranks = w.plan.world / std::max(1, w.plan.pp);
  if (w.model.is_moe() && w.plan.ep == 1 && stage_ranks > 0 && w.model.experts % stage_ranks == 0)
    w.plan.ep = stage_ranks;
}

// An interleaved schedule whose stage count is not stated (torchtitan's 405B
// row): 2 stages per rank, the smallest interleaving, so the row differs from
// its plain 1F1B twin.
void use_interleaving(Workload& w) {
  if (w.plan.pp > 1 && w.plan.vp == 1) w.plan.vp = 2;
}

// Knobs stated in the notes (or, for torchtitan's float8 all-gather, in the
// precision column), matched case-insensitively. Needles are chosen so that a
// note reporting a variant ("with AsyncTP 876 tok/s") does not switch the knob
// for the measured run.
struct KnobPattern {
  const char* needle;  // lower-case
  void (*apply)(Workload&);
};
const KnobPattern kKnobs[] = {
    {"tp-comm-overlap on", use_tp_overlap},
    {"tp_comm_overlap", use_tp_overlap},
    {"tp comm overlap", use_tp_overlap},
    {", asynctp,", use_tp_overlap},
    {"fsdp", use_fsdp},
    {"cuda graph", [](Workload& w) { w.knobs.set(Choice::CudaGraphs, cuda_graphs::kLayers); }},
    {"deepep", use_deepep},
    {"hybridep", [](Workload& w) { w.knobs.set(Choice::Dispatcher, dispatcher::kDeepEp); }},
    {"expandable_segments:true", [](Workload& w) { w.knobs.set(Choice::Expandable, 1); }},
    {"float8 all-gather", [](Workload& w) { w.knobs.fp8_param_gather = true; }},
    {"interleaved 1f1b", use_interleaving},
};

// Sequence parallelism arrived with Korthikanti et al. 2022: the 2021 PTD-P
// run predates it, and that paper's full-recompute baseline rows run without it.
bool without_sequence_parallel(const CalibrationRow& row) {
  const std::string source = to_lower(row.source);
  if (contains(source, "narayanan")) return true;
  return contains(source, "korthikanti") && to_lower(trim(row.recompute)) == "full";
}

// torchtitan runs PyTorch SDPA attention, its "selective" is the per-op
// policy, and a row that says "eager" ran without torch.compile.
void apply_torchtitan(const CalibrationRow& row, Workload& w) {
  w.knobs.set(Choice::Attention, attention::kSdpa);
  w.knobs.per_op_selective = true;
  w.knobs.set(Choice::Compile, !contains(to_lower(row.notes), "eager"));
}

void apply_knobs(const CalibrationRow& row, Workload& w) {
  const FrameworkPattern* framework = framework_of(row.source);
  const std::string name = framework ? framework->framework : "";
  if (framework && framework->fsdp) use_fsdp(w);
  if (name == "torchtitan") apply_torchtitan(row, w);
  // AutoModel's benchmark recipes compute the loss on bf16 logits
  // (MaskedCrossEntropy fp32_upcast: false).
  if (name == "automodel") w.knobs.loss_fp32 = false;
  // NeMo and Megatron-Bridge performance recipes turn on TE's userbuffer
  // TP overlap whenever TP > 1 (their tp_comm_overlap configs per model/TP).
  const bool nemo = name == "bridge" || name == "nemo";
  if (nemo && w.plan.tp > 1 && w.knobs.sequence_parallel) use_tp_overlap(w);
  // Megatron-family launch scripts export CUDA_DEVICE_MAX_CONNECTIONS=1 (TP
  // and CP overlap need it before Blackwell).
  if (nemo || name == "megatron") w.knobs.set(Choice::MaxConnections, max_connections::k1);
  // NeMo's and Megatron-Bridge's performance executors set NCCL_NVLS_ENABLE=0
  // "to save memory" (NeMo scripts/performance executors.py, PERF_ENV_VARS).
  if (nemo) w.knobs.set(Choice::Nvls, 1);
  // Bridge's GB200/GB300 DeepSeek-V3 recipe family turns on the
  // precision-aware optimizer (bf16 Adam moments).
  if (contains(to_lower(row.recompute), "gb200/gb300 base config family")) w.knobs.bf16_moments = true;
  const std::string text = to_lower(row.notes + " | " + row.precision);
  for (const auto& k : kKnobs) {
    if (contains(text, k.needle)) k.apply(w);
  }
  if (without_sequence_parallel(row)) w.knobs.sequence_parallel = false;
}

// "tp2 pp1 cp1 ep1 dp48 mbs1 gbs192 s4096" (vp only when interleaved): the
// layout as the simulator saw it, blanks filled and notes applied.
std::string layout_text(const CalibrationRow& row) {
  std::string ignored;
  const auto w = workload_from_row(row, ignored);
  if (!w) return "";
  const recipe::Plan& p = w->plan;
  std::string out = "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp);
  if (p.vp > 1) out += " vp" + std::to_string(p.vp);
  out += " cp" + std::to_string(p.cp) + " ep" + std::to_string(p.ep) + " dp" + std::to_string(p.dp) + " mbs" +
         std::to_string(p.mbs) + " gbs" + std::to_string(p.gbs) + " s" + std::to_string(p.seq_len);
  return out;
}

// ------------------------------------------------------------------ statistics

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Nearest-rank percentile: the smallest value with at least p% of values at or below it.
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

// 1-based ranks; tied values share the average of the ranks they span.
std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i + j) / 2.0) + 1.0;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

// Spearman's rho as the Pearson correlation of average ranks (correct with
// ties); nullopt when either side has no spread.
std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const std::vector<double> rx = average_ranks(x), ry = average_ranks(y);
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    mx += rx[i] / n;
    my += ry[i] / n;
  }
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

// ------------------------------------------------------------------ scoring

CalibrationResult::Row score_row(const CalibrationRow& row, const Predictor& predict) {
  CalibrationResult::Row r;
  r.row = row;
  r.group = row.model + " | " + row.gpu;
  const auto workload = workload_from_row(row, r.reason);
  if (!workload) return r;
  // Group by resolved model and GPU so "LLAMA3-70B" and "Llama3-70B SFT" rank together.
  r.group = workload->model.name + " | " + workload->plan.gpu;
  if (!(row.tokens_per_s_per_gpu > 0)) {
    r.reason = "no measured tokens/s/GPU";
    return r;
  }
  std::string why;
  const auto predicted = predict(*workload, why);
  if (!predicted) {
    r.reason = why.empty() ? "no prediction" : why;
    return r;
  }
  if (!std::isfinite(*predicted) || *predicted < 0) {
    r.reason = "prediction is not a throughput: " + std::to_string(*predicted);
    return r;
  }
  r.predicted = *predicted;
  r.error = (r.predicted - row.tokens_per_s_per_gpu) / row.tokens_per_s_per_gpu;
  r.supported = true;
  return r;
}

void add_error_stats(CalibrationResult& result) {
  std::vector<double> abs_errors;
  for (const auto& r : result.rows) {
    if (r.supported) abs_errors.push_back(std::fabs(r.error));
  }
  result.median_abs_error = median(abs_errors);
  result.p90_abs_error = percentile(abs_errors, 90);
}

void add_rank_stats(CalibrationResult& result) {
  struct Series {
    std::vector<double> predicted, measured;
  };
  std::map<std::string, Series> groups;
  for (const auto& r : result.rows) {
    if (!r.supported) continue;
    groups[r.group].predicted.push_back(r.predicted);
    groups[r.group].measured.push_back(r.row.tokens_per_s_per_gpu);
  }
  double sum = 0;
  for (const auto& [name, s] : groups) {
    if (s.measured.size() < 3) continue;
    if (auto rho = spearman(s.predicted, s.measured)) {
      sum += *rho;
      ++result.spearman_groups;
    }
  }
  result.spearman = result.spearman_groups > 0 ? sum / result.spearman_groups : 0;
}

}  // namespace

std::string calibration_csv(const std::string& given) {
  if (!given.empty()) return given;
  const char* corpus = std::getenv("ATTUNE_CORPUS");
  if (!corpus) throw InputError({}, "--csv", "give the measurements file (throughput.csv) with --csv FILE");
  return std::string(corpus) + "/calibration/throughput.csv";
}

std::vector<CalibrationRow> read_calibration_csv(const std::string& path) {
  const std::string text = read_file(path);
  const std::vector<CsvRecord> records = CsvParser(text, path).records();
  if (records.empty()) throw InputError(SourceLocation{path, 1, 0}, "", "empty file: no header");
  const std::vector<size_t> indices = column_indices(records.front(), path);
  std::vector<CalibrationRow> rows;
  for (size_t i = 1; i < records.size(); ++i) {
    rows.push_back(row_from_record(records[i], indices, records.front().size(), path));
  }
  return rows;
}

std::optional<Workload> workload_from_row(const CalibrationRow& row, std::string& reason) {
  reason.clear();
  Workload w;
  auto model = resolve_model(row.model, reason);
  if (!model) return std::nullopt;
  w.model = std::move(*model);
  w.plan.model = w.model.name;
  auto gpu = resolve_gpu(row.gpu);
  if (!gpu) {
    reason = "unknown GPU '" + row.gpu + "'";
    return std::nullopt;
  }
  w.plan.gpu = *gpu;
  const RowLayout layout = layout_of(row);
  reason = layout_problem(row, layout);
  if (!reason.empty()) return std::nullopt;
  fill_plan(row, layout, w.plan);
  if (!apply_precision(row, w, reason) || !apply_recompute(row, w, reason)) return std::nullopt;
  // Published runs with layers not divisible by PP used an uneven first/last stage.
  if (w.plan.pp > 1 && w.model.layers % (w.plan.pp * std::max(1, w.plan.vp)) != 0) w.knobs.uneven_pipeline_split = true;
  apply_knobs(row, w);
  return w;
}

CalibrationResult calibrate(const std::vector<CalibrationRow>& rows, const Predictor& predict) {
  CalibrationResult result;
  for (const auto& row : rows) {
    result.rows.push_back(score_row(row, predict));
    if (result.rows.back().supported) {
      ++result.supported;
    } else {
      ++result.excluded;
    }
  }
  add_error_stats(result);
  add_rank_stats(result);
  return result;
}

nlohmann::json to_json(const CalibrationResult& r) {
  nlohmann::json per_row = nlohmann::json::array();
  nlohmann::json excluded = nlohmann::json::array();
  for (const auto& row : r.rows) {
    if (row.supported) {
      per_row.push_back({{"line", row.row.line},
                         {"model", row.row.model},
                         {"gpu", row.row.gpu},
                         {"group", row.group},
                         {"layout", layout_text(row.row)},
                         {"measured", row.row.tokens_per_s_per_gpu},
                         {"predicted", row.predicted},
                         {"error", row.error}});
    } else {
      excluded.push_back({{"line", row.row.line}, {"model", row.row.model}, {"reason", row.reason}});
    }
  }
  return {{"rows", r.rows.size()},
          {"supported", r.supported},
          {"excluded", r.excluded},
          {"median_abs_error", r.median_abs_error},
          {"p90_abs_error", r.p90_abs_error},
          {"spearman", r.spearman},
          {"spearman_groups", r.spearman_groups},
          {"per_row", per_row},
          {"excluded_rows", excluded}};
}

std::optional<double> simulator_predictor(const Workload& w, std::string& reason) {
  Prediction p = predict(w);
  // Megatron's memory-saving selective recompute (core attention and the
  // MLP intermediates), then full recompute.
  const std::pair<const char*, unsigned> retries[] = {
      {"selective", recompute_module::kCoreAttn | recompute_module::kMlp}, {"full", recompute_module::kCoreAttn}};
  for (const auto& [granularity, modules] : retries) {
    if (p.failure != "oom" || !w.knobs.recompute_unstated) break;
    Workload again = w;
    again.knobs.recompute_granularity = granularity;
    again.knobs.recompute_modules = modules;
    again.plan.recompute = granularity;
    p = predict(again);
  }
  if (!p.ok) {
    reason = p.failure + ": " + p.error;
    return std::nullopt;
  }
  return p.tokens_per_s_per_gpu;
}

}  // namespace attune::sim
