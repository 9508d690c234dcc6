#include "console/usage_problem.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "text/shortened.h"
#include "topology/suggest.h"

namespace sluice::console {
namespace {

std::vector<std::string> command_names(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(command->get_name());
  return names;
}

bool looks_like_a_topology(const std::string& word) {
  std::error_code ignored;
  return word.ends_with(".yaml") || word.ends_with(".yml") || std::filesystem::is_regular_file(word, ignored);
}

// The long names (--stall-timeout) of a command's options, for a guess.
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

}  // namespace

std::string unknown_command_problem(CLI::App& app, const std::string& word) {
  const std::vector<std::string> names = command_names(app);
  if (std::find(names.begin(), names.end(), word) != names.end()) return "";
  const std::string shown = text::shortened(word, 64);
  std::string guess;
  if (looks_like_a_topology(word)) {
    guess = "; to run that topology: sluice run " + shown;
  } else if (const std::string command = topo::closest_match(word, names); !command.empty()) {
    guess = "; did you mean '" + command + "'?";
  }
  return "sluice: unknown command '" + shown + "'" + guess + "\nthe commands: " + topo::join(names) +
         " (sluice --help says what each does)\n";
}

std::string option_before_command_problem(CLI::App& app, const std::string& word) {
  const std::string name = word.substr(0, word.find('='));
  if (name == "-h" || name == "--help" || name == "--version") return "";
  return "sluice: '" + text::shortened(name, 64) + "' is not an option of sluice itself; options go after the " +
         "command, e.g. sluice run TOPOLOGY --stall-timeout 30\nthe commands: " + topo::join(command_names(app)) +
         " (sluice COMMAND --help lists a command's options)\n";
}

std::string unexpected_arguments_problem(CLI::App& app) {
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    if (!command->parsed()) continue;
    const std::string prefix = "sluice " + command->get_name() + ": ";
    const std::vector<std::string> known = option_names(*command);
    // An unknown option's value (`--stal-timeout 3`) is an extra too: arguments are named only
    // when no option is unknown.
    std::string options;
    std::string arguments;
    for (const std::string& extra : command->remaining()) {
      if (extra.size() > 1 && extra[0] == '-') {
        const std::string name = extra.substr(0, extra.find('='));
        const std::string guess = topo::closest_match(name, known);
        options += prefix + "unknown option '" + text::shortened(name, 64) + "'" +
                   (guess.empty() ? "" : "; did you mean '" + guess + "'?") + "\n";
      } else {
        arguments += prefix + "unexpected argument '" + text::shortened(extra, 64) + "'\n";
      }
    }
    const std::string said = options.empty() ? arguments : options;
    if (said.empty()) return "";
    return said + "sluice " + command->get_name() + " --help lists its options\n";
  }
  return "";
}

}  // namespace sluice::console
