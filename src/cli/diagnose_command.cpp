// `attune diagnose LOG...`: the steady-state throughput, memory, loss and
// failure of a run, read from its logs.
#include <memory>

#include "attune/cli/commands.h"
#include "attune/cli/diagnosis_output.h"
#include "attune/cli/flag_checks.h"
#include "attune/diagnose/diagnosis.h"
#include "attune/diagnose/log_parser.h"
#include "attune/diagnose/recipe_context.h"
#include "attune/recipe/recipe.h"
#include "attune/util/error.h"
#include "attune/util/input_file.h"

namespace attune::cli {

namespace {

struct DiagnoseArgs {
  std::vector<std::string> logs;
  std::string profile;
  std::string recipe;
  std::string framework;
  std::string model;
  std::string gpu;
  int world = 0;
  long long seq_len = 0;
  long long global_batch = 0;
  bool json = false;
};

diagnose::DiagnoseOptions options_from(const DiagnoseArgs& a) {
  diagnose::DiagnoseOptions o;
  if (!a.recipe.empty()) {
    regular_file_size(a.recipe, "recipe");  // a FIFO would block the load
    recipe::RecipeOptions ro;
    ro.model = a.model;
    ro.hardware.gpu = a.gpu;
    o = diagnose::options_for_recipe(recipe::Recipe::load(a.recipe, ro));
  }
  o.framework = a.framework;
  if (!a.model.empty()) {
    const recipe::ModelSpec* m = recipe::find_model_preset(a.model);
    if (!m) throw InputError({}, "--model", "unknown model preset '" + a.model + "'");
    if (!o.model) o.model = *m;
  }
  if (!a.gpu.empty()) {
    if (!recipe::normalize_gpu(a.gpu)) throw InputError({}, "--gpu", "expected h100, h200 or b200, got '" + a.gpu + "'");
    o.gpu = *recipe::normalize_gpu(a.gpu);
  }
  if (a.world > 0) o.world = a.world;
  if (a.seq_len > 0) o.seq_len = a.seq_len;
  if (a.global_batch > 0) o.global_batch = a.global_batch;
  return o;
}

int run_diagnose(const DiagnoseArgs& a) {
  // Every input is a regular file, checked before any is read: a FIFO or a
  // device among them is refused at once, not after the logs before it.
  for (const auto& log : a.logs) regular_file_size(log, "log file");
  if (!a.profile.empty()) regular_file_size(a.profile, "profile");
  diagnose::Diagnosis d;
  if (!a.logs.empty()) {
    d = diagnose::diagnose_logs(a.logs, options_from(a));
  } else if (a.profile.empty()) {
    throw InputError({}, "LOG", "give at least one log file, or --profile FILE");
  }
  if (!a.profile.empty()) d.profile = diagnose::read_profile(a.profile);
  if (a.json) {
    print_json(diagnose::to_json(d));
  } else if (a.logs.empty()) {
    print_profile(*d.profile);
  } else {
    print_diagnosis(d);
    if (d.profile) print_profile(*d.profile);
  }
  return 0;
}

}  // namespace

void add_diagnose_command(CLI::App& app) {
  auto args = std::make_shared<DiagnoseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose", "Read a run's logs (plain or gzip; several files are one run, in order): steady-state throughput, "
                  "noise, memory and headroom, loss, the framework's timers, and the failure with its evidence line; "
                  "with --profile, where the GPU time goes.");
  cmd->add_option("LOG", args->logs, "Log files of the run (may be omitted with --profile)");
  cmd->add_option("--profile", args->profile,
                  "A profile of the run: PyTorch profiler Chrome-trace JSON (.json or .json.gz, streamed), or an "
                  "`nsys stats --format csv` cuda_gpu_trace / cuda_gpu_kern_sum report: compute, communication, "
                  "exposed communication and idle time, top kernels");
  cmd->add_option("--framework", args->framework,
                  "The log's format, named by the framework that printed it, when it cannot be told from the text "
                  "(a log format, not a recipe framework), one of: " + join_names(diagnose::parser_names()))
      ->check(one_of(diagnose::parser_names(), "framework", "", " for the log format"));
  cmd->add_option("--recipe", args->recipe,
                  "The run's recipe: supplies global batch, sequence length, world size, model and GPU for "
                  "tokens/s, TFLOP/s and MFU");
  cmd->add_option("--model", args->model, "Model preset for the FLOPs when the recipe does not say");
  cmd->add_option("--gpu", args->gpu, "GPU type (h100, h200, b200): peak for MFU and HBM for headroom")
      ->check(gpu_type());
  cmd->add_option("--world", args->world, "GPUs in the job")->check(whole_number(1));
  cmd->add_option("--seq-len", args->seq_len, "Sequence length in tokens")->check(whole_number(1, LLONG_MAX));
  cmd->add_option("--global-batch", args->global_batch, "Global batch in samples per step")
      ->check(whole_number(1, LLONG_MAX));
  cmd->add_flag("--json", args->json,
                "Print JSON: {framework, steps, throughput: {tokens_per_s_per_gpu, step_time_s, tflops_per_gpu, mfu, "
                "flops_convention, tflops_source, logged_tflops_per_gpu, logged_mfu, logged_flops_convention}, "
                "noise: {cv}, memory: {...}, loss: [[step, value]], timers, failure, profile}");
  cmd->callback([args]() { command_status() = run_diagnose(*args); });
}

}  // namespace attune::cli
