// WrapperFile: the small attune file that says what a framework's own recipe
// file does not — which file, which framework, which model, what hardware, how
// to launch and how long to measure (design.md, "Recipes and levers").
#pragma once

#include <string>

#include "attune/recipe/hardware.h"
#include "attune/recipe/launch_settings.h"

namespace attune::recipe {

struct WrapperFile {
  std::string path;         // the wrapper file itself
  std::string framework;    // "" = detect from the config
  std::string framework_version;  // as the user declares it ("" = not said); attune reads no version itself
  std::string config;       // the framework file, resolved relative to the wrapper; "" when the
                            // recipe is the wrapper's own torchtitan command line (command_document.h)
  std::string model;        // preset name ("" = from the config)
  Hardware hardware;
  LaunchSettings launch;     // command, workdir, env, container, slurm
  MeasureSettings measure;   // steps, skip_first
};

// True when `text` (YAML) is a wrapper file: a top-level `config:` naming a file
// plus `framework:` or `hardware:`.
bool is_wrapper_file(const std::string& text);
// Parses a wrapper; InputError names the file, line and key on bad input.
WrapperFile parse_wrapper_file(const std::string& path, const std::string& text);

}  // namespace attune::recipe
