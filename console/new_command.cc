// `sluice new cpp|java|topology NAME`: writes a project in the directory NAME from the templates.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "console/commands.h"
#include "console/exit_codes.h"
#include "console/templates.h"
#include "sluice/version.h"

namespace sluice::console {

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

int new_command(const std::string& kind, const std::string& name) {
  if (!std::regex_match(name, std::regex("[A-Za-z][A-Za-z0-9_-]*"))) {
    std::cerr << "sluice: new: '" << name << "' is not a usable project name; use letters, digits, '_' and '-', "
              << "starting with a letter (it names the directory, the library or jar, and the topology)\n";
    return kExitUsage;
  }
  const std::filesystem::path dir = name;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(dir, ec))) {
    std::cerr << "sluice: new: '" << name << "' already exists; nothing was written (choose another name, or "
              << "move it away)\n";
    return kExitUsage;
  }
  // Java package: the name in lower case, '-' as '_'.
  std::string package = name;
  for (char& c : package) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto fill = [&](std::string text) {
    text = replace_all(std::move(text), "@NAME@", name);
    text = replace_all(std::move(text), "@PACKAGE@", package);
    return replace_all(std::move(text), "@SLUICE_VERSION@", SLUICE_VERSION);
  };
  // A topology project holds a C++ project in cpp/ and a Java one in java/, and a topology
  // at its top that mixes them.
  std::vector<std::pair<std::string, std::filesystem::path>> parts;  // template kind, where
  if (kind == "topology") {
    parts = {{"cpp", dir / "cpp"}, {"java", dir / "java"}, {"topology", dir}};
  } else {
    parts = {{kind, dir}};
  }
  std::size_t written = 0;
  try {
    for (const auto& [part, where] : parts) {
      for (const TemplateFile& t : template_files()) {
        if (t.path.rfind(part + "/", 0) != 0) continue;
        std::string relative = t.path.substr(part.size() + 1);
        relative = replace_all(relative, "NAME.yaml", name + ".yaml");
        relative = replace_all(relative, "/PKG/", "/" + package + "/");
        const std::filesystem::path path = where / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream out(path, std::ios::binary);
        out << fill(t.contents);
        if (!out.flush()) throw std::runtime_error("cannot write '" + path.string() + "'");
        ++written;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "sluice: new: " << e.what() << "; check that the current directory is writable\n";
    return kExitRunFailed;
  }
  std::cout << "wrote " << written << " files in " << name << "/; next:\n";
  if (kind == "cpp") {
    std::cout << "  cd " << name << " && cmake -S . -B build && cmake --build build && ctest --test-dir build\n"
              << "  sluice run " << name << ".yaml\n";
  } else if (kind == "java") {
    std::cout << "  cd " << name << " && mvn package\n"
              << "  sluice run " << name << ".yaml\n";
  } else {
    std::cout << "  cd " << name << " && (cd cpp && cmake -S . -B build && cmake --build build) && (cd java && mvn package)\n"
              << "  sluice run " << name << ".yaml\n";
  }
  return kExitOk;
}

}  // namespace sluice::console
