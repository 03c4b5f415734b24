// Megatron-Bridge parser: Megatron's iteration line and memory reports (MB
// or Bridge's GB report) plus Bridge's per-interval
// "Step Time : {t:.2f}s GPU utilization: {x:.1f}MODEL_TFLOP/s/GPU" line.
#include "parse_util.h"

namespace attune::diagnose::detail {

namespace {

struct StepTimeLine {
  std::optional<double> step_time_s;
  std::optional<double> tflops;
};

// "Step Time : 1.23s GPU utilization: 456.7MODEL_TFLOP/s/GPU" (older Bridge: "TFLOP/s/GPU").
std::optional<StepTimeLine> parse_step_time(std::string_view t) {
  std::size_t p = t.find("Step Time :");
  if (p == std::string_view::npos) return std::nullopt;
  StepTimeLine s;
  s.step_time_s = to_double(t.substr(p + 11));
  std::size_t u = t.find("GPU utilization:", p);
  if (u != std::string_view::npos) s.tflops = to_double(t.substr(u + 16));
  return s;
}

class BridgeParser : public LogParser {
 public:
  std::string framework() const override { return "bridge"; }

  int detect(std::string_view line) const override {
    int score = MegatronLines::detect(line);
    if (contains(line, "Step Time :") && contains(line, "TFLOP/s/GPU")) score += 30;
    if (contains(line, "mem-allocated-gigabytes")) score += 30;
    if (contains(line, "MODEL_TFLOP/s/GPU")) score += 10;
    if (contains(line, "megatron.bridge") || contains(line, "Megatron-Bridge")) score += 5;
    return score;
  }

  void finish(ParseSink& sink) override { lines_.flush_wrapped(sink); }

  void feed(const LogLine& line, ParseSink& sink) override {
    if (auto st = parse_step_time(line.text)) {
      pending_ = st;  // rank 0 prints it just before the iteration line
      return;
    }
    std::size_t before = sink.samples.size();
    if (!lines_.feed(line, sink) || sink.samples.size() == before || !pending_) return;
    StepSample& s = sink.samples.back();
    // Bridge's figure uses the FLOPs actually run in the interval, so it is
    // the better one when sequences are packed.
    if (pending_->tflops) {
      s.tflops_per_gpu = pending_->tflops;
      s.tflops_formula = LoggedFlops::Megatron;
    }
    if (!s.step_time_s) s.step_time_s = pending_->step_time_s;
    pending_.reset();
  }

 private:
  MegatronLines lines_;
  std::optional<StepTimeLine> pending_;
};

}  // namespace

std::unique_ptr<LogParser> make_bridge_parser() { return std::make_unique<BridgeParser>(); }

}  // namespace attune::diagnose::detail
