// Writing a recipe as it will run: the framework's file with every edit, under
// its own file name, and beside it an attune wrapper that names it with the
// model, hardware, launch and measure settings, so the written pair loads back
// (Recipe::load) as the same recipe; and, where the framework's own launcher
// would turn the recipe into another file before training reads it
// (HyperPod's resolved recipe), that file too. A launched run's directory
// holds these. A recipe that is the wrapper's own command line (torchtitan's
// Python configs) is one file, config and wrapper at once.
#pragma once

#include <string>

#include "attune/recipe/recipe.h"

namespace attune::recipe {

struct WrittenRecipe {
  std::string dir;       // where they are
  std::string config;    // the framework file
  std::string wrapper;   // <stem>.attune.yaml beside it
  std::string launched;  // the file the training process reads: `config`, or its launcher's version of it
};

// Where an edited recipe asked to go to `out` is written: `out`, unless `out`
// is the wrapper the recipe was loaded from; the edit is then the framework
// file's, and goes into the file the wrapper names (a wrapper holds no recipe
// keys: writing the framework's file over it would lose it).
std::string edited_config_destination(const Recipe& recipe, const std::string& out);

// `attune recipe set`: loads `file`, applies one edit with its follow-ups
// (Recipe::set) and, when `out` is given, writes the edited framework file
// atomically where edited_config_destination() says.
struct FileEdit {
  EditResult edit;
  std::string written;  // the file written ("" when `out` was empty)
};
FileEdit edit_recipe_file(const std::string& file, const RecipeOptions& options, const std::string& lever,
                          const std::string& value, bool allow_new_key, const std::string& out);

// Writes the files into `dir` (created), each atomically. Throws
// std::runtime_error when a file cannot be written. Not `durable`: not fsynced.
WrittenRecipe write_recipe_files(const Recipe& recipe, const std::string& dir, bool durable = true);

}  // namespace attune::recipe
