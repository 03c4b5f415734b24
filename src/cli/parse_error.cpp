#include "attune/cli/parse_error.h"

#include <iostream>
#include <vector>

#include <fmt/format.h>

#include "attune/cli/flag_checks.h"

namespace attune::cli {

namespace {

// The commands given, outermost first: attune, then each subcommand parsed.
std::vector<const CLI::App*> command_chain(const CLI::App& app) {
  std::vector<const CLI::App*> chain{&app};
  for (;;) {
    const auto subs = chain.back()->get_subcommands();
    if (subs.empty()) return chain;
    chain.push_back(subs.front());
  }
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App* a) { return !a->get_name().empty() && !a->get_disabled(); })) {
    names.push_back(s->get_name());
  }
  return names;
}

std::string help_hint(const std::string& command) { return command + " --help"; }

bool is_option(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

// What `app` was given and did not take, less the `--` that ends the options.
std::vector<std::string> extras_of(const CLI::App& app) {
  std::vector<std::string> out;
  for (auto& a : app.remaining(false)) {
    if (a != "--") out.push_back(a);
  }
  return out;
}

// "unknown command 'x' (expected one of: ...)", "missing command ..." for a
// group that needs a subcommand and was given none it has.
std::string subcommand_message(const CLI::App& group) {
  const std::string path = command_path(group);
  const std::string where = group.get_parent() ? " for '" + path + "'" : "";
  const std::string expected = "(expected one of: " + join_names(subcommand_names(group)) + ")";
  const auto extras = extras_of(group);
  for (const auto& word : extras) {
    if (!is_option(word)) return fmt::format("unknown command '{}'{} {}", word, where, expected);
  }
  if (!extras.empty()) {
    return fmt::format("unknown option '{}'{}: give a command first {}", extras.front().substr(0, extras.front().find('=')),
                       where, expected);
  }
  return fmt::format("missing command{} {}", where, expected);
}

std::string required_message(const std::vector<const CLI::App*>& chain, const CLI::ParseError& e) {
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const CLI::App& app = **it;
    if (app.get_require_subcommand_min() > 0 && app.get_subcommands().empty()) return subcommand_message(app);
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const std::string path = command_path(**it);
    for (const CLI::Option* opt : (*it)->get_options()) {
      if (opt->get_required() && opt->count() == 0) {
        return fmt::format("missing {} for '{}' (see {})", opt->get_name(), path, help_hint(path));
      }
    }
  }
  return e.what();
}

std::string extras_message(const std::vector<const CLI::App*>& chain, const CLI::ParseError& e) {
  // An argument lands in a parent only when the command given could not take
  // it: name that command (the deepest), whichever app kept the argument.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const auto extras = extras_of(**it);
    if (!extras.empty() && !(*it)->get_allow_extras()) return unexpected_argument_message(command_path(*chain.back()), extras.front());
  }
  return e.what();
}

// The option a message names ("--nodes: ..."), looked up in the commands given.
const CLI::Option* option_named(const std::vector<const CLI::App*>& chain, const std::string& name) {
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (const CLI::Option* o = (*it)->get_option_no_throw(name)) return o;
  }
  return nullptr;
}

std::string kind_of_value(const CLI::Option* opt) {
  if (!opt) return "a value";
  const std::string type = opt->get_type_name();
  if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) return "a whole number";
  if (type.rfind("FLOAT", 0) == 0) return "a number";
  return "a value";
}

std::string conversion_message(const std::vector<const CLI::App*>& chain, const CLI::ParseError& e) {
  const std::string what = e.what();
  // "Could not convert: NAME = VALUE"
  const std::string prefix = "Could not convert: ";
  if (what.rfind(prefix, 0) == 0) {
    const std::size_t eq = what.find(" = ", prefix.size());
    if (eq != std::string::npos) {
      const std::string name = what.substr(prefix.size(), eq - prefix.size());
      const CLI::Option* opt = option_named(chain, name);
      if (opt && opt->get_expected_max() == 0) {
        return fmt::format("{} is a flag: give it alone, without a value (got '{}')", name, what.substr(eq + 3));
      }
      return fmt::format("{}: expected {}, got '{}'", name, kind_of_value(option_named(chain, name)), what.substr(eq + 3));
    }
  }
  // "NAME: too many inputs for a flag", "NAME: Should be true/false or a number"
  const std::size_t colon = what.find(": ");
  if (colon != std::string::npos && what.find("flag") != std::string::npos) {
    return what.substr(0, colon) + " is a flag: it takes no value";
  }
  if (colon != std::string::npos && what.find("true/false") != std::string::npos) {
    return what.substr(0, colon) + ": expected true or false";
  }
  return what;
}

std::string mismatch_message(const std::vector<const CLI::App*>& chain, const CLI::ParseError& e) {
  const std::string what = e.what();
  // "NAME: 1 required TYPE missing": the option ended the line without its value.
  const std::size_t colon = what.find(": ");
  if (colon != std::string::npos && what.find(" required ") != std::string::npos && what.size() >= 8 &&
      what.compare(what.size() - 8, 8, " missing") == 0) {
    const std::string name = what.substr(0, colon);
    return fmt::format("{} needs {} after it", name, kind_of_value(option_named(chain, name)));
  }
  if (colon != std::string::npos && what.find("flag override") != std::string::npos) {
    return what.substr(0, colon) + " is a flag: it takes no value";
  }
  return what;
}

}  // namespace

std::string command_path(const CLI::App& app) {
  if (!app.get_parent()) return "attune";
  return command_path(*app.get_parent()) + " " + app.get_name();
}

std::string unexpected_argument_message(const std::string& command, const std::string& arg) {
  if (is_option(arg)) {
    return fmt::format("unknown option '{}' for '{}' ({} lists its options)", arg.substr(0, arg.find('=')), command,
                       help_hint(command));
  }
  return fmt::format("unexpected argument '{}' for '{}' (see {})", arg, command, help_hint(command));
}

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e) {
  const auto chain = command_chain(app);
  if (dynamic_cast<const CLI::RequiredError*>(&e)) return required_message(chain, e);
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) return extras_message(chain, e);
  if (dynamic_cast<const CLI::ConversionError*>(&e)) return conversion_message(chain, e);
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) return mismatch_message(chain, e);
  // ValidationError: "NAME: message", the message one of flag_checks.h's.
  return e.what();
}

int report_parse_error(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
  std::cerr << "attune: error: " << parse_error_message(app, e) << "\n";
  return 2;
}

}  // namespace attune::cli
