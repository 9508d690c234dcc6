// What `sluice` says when its command line names no command or an option it does not have:
// CLI11 alone would say "A subcommand is required" or "The following arguments were not
// expected", without a guess at what was meant.
#ifndef SLUICE_CONSOLE_USAGE_PROBLEM_H_
#define SLUICE_CONSOLE_USAGE_PROBLEM_H_

#include <string>

#include <CLI/CLI.hpp>

namespace sluice::console {

// What to say about `word`, given in the place of a command, when it names none ("" when it
// is one): the closest command, or `sluice run WORD` when the word is a topology file.
std::string unknown_command_problem(CLI::App& app, const std::string& word);

// What to say about an option given before any command (`sluice --bogus`), or "" when `word`
// is one of sluice's own (--help, --version).
std::string option_before_command_problem(CLI::App& app, const std::string& word);

// After app.parse threw CLI::ExtrasError: the arguments the parsed command did not take, each
// with the closest of its options when one is near ("" when no command was parsed).
std::string unexpected_arguments_problem(CLI::App& app);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_USAGE_PROBLEM_H_
