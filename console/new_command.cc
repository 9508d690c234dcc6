// `sluice new cpp|java|topology NAME`: writes a project in the directory NAME from the templates.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
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

// Why `name` cannot name a project of `kind` although it is made of the right characters
// (a Java project's package, `package`, would be a keyword or `java`; a C++ project's library
// would be a target CMake reserves), or "".
std::string reserved_because(const std::string& kind, const std::string& name, const std::string& package) {
  static const std::set<std::string> java_words = {
      "abstract", "assert",   "boolean",    "break",     "byte",       "case",     "catch",    "char",
      "class",    "const",    "continue",   "default",   "do",         "double",   "else",     "enum",
      "extends",  "final",    "finally",    "float",     "for",        "goto",     "if",       "implements",
      "import",   "instanceof", "int",      "interface", "long",       "native",   "new",      "package",
      "private",  "protected", "public",    "return",    "short",      "static",   "strictfp", "super",
      "switch",   "synchronized", "this",   "throw",     "throws",     "transient", "try",     "void",
      "volatile", "while",    "true",       "false",     "null",       "_"};
  // Targets CMake makes itself in a project that enables testing, as the template does
  // (CMP0037); names are case-sensitive.
  static const std::set<std::string> cmake_targets = {"all",        "clean",         "help", "install", "test",
                                                      "edit_cache", "rebuild_cache", "list_install_components"};
  const bool java = kind == "java" || kind == "topology";
  const bool cpp = kind == "cpp" || kind == "topology";
  if (java && java_words.count(package) != 0) return "its Java package, '" + package + "', is a Java keyword";
  if (java && package == "java") return "its Java package, 'java', is the JDK's";
  if (cpp && cmake_targets.count(name) != 0) return "CMake reserves the target name '" + name + "'";
  return "";
}

// The install prefix's Maven repository tree (PREFIX/share/sluice/maven), when this program
// runs from an installed sluice; else "".
std::filesystem::path installed_maven_tree() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path tree = self.parent_path().parent_path() / "share" / "sluice" / "maven";
  return std::filesystem::is_directory(tree, ec) ? tree : std::filesystem::path{};
}

// " -DCMAKE_PREFIX_PATH=PREFIX" when this program runs from an installed sluice whose prefix
// CMake does not search by itself (not /usr or /usr/local), so find_package(Sluice) finds it.
std::string cmake_prefix_option() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path prefix = self.parent_path().parent_path();
  if (!std::filesystem::is_directory(prefix / "lib" / "cmake" / "Sluice", ec)) return "";
  if (prefix == "/usr" || prefix == "/usr/local") return "";
  return " -DCMAKE_PREFIX_PATH=" + prefix.string();
}

// What to do before `mvn package` can resolve org.sluice:jfilter, when the local Maven
// repository lacks it (it is not on Maven Central); "" when it is there.
std::string maven_setup_hint() {
  const char* home = std::getenv("HOME");
  const std::filesystem::path repo =
      std::filesystem::path(home != nullptr && *home != '\0' ? home : "/root") / ".m2" / "repository";
  std::error_code ec;
  if (std::filesystem::exists(repo / "org" / "sluice" / "jfilter" / SLUICE_VERSION, ec)) return "";
  const std::filesystem::path tree = installed_maven_tree();
  if (tree.empty()) {
    return "  (org.sluice:jfilter " SLUICE_VERSION " is not in ~/.m2 yet: from a sluice checkout, run\n"
           "   mvn -B install -pl jfilter -am -DskipTests; see docs/java.md, \"Building with Maven\")\n";
  }
  return "  mkdir -p ~/.m2/repository && cp -r '" + tree.string() +
         "/.' ~/.m2/repository/   # once: org.sluice:jfilter is not on Maven Central\n";
}

}  // namespace

int new_command(const std::string& kind, const std::string& name) {
  if (!std::regex_match(name, std::regex("[A-Za-z][A-Za-z0-9_-]*"))) {
    std::cerr << "sluice: new: '" << name << "' is not a usable project name; use letters, digits, '_' and '-', "
              << "starting with a letter (it names the directory, the library or jar, and the topology)\n";
    return kExitUsage;
  }
  // Java package: the name in lower case, '-' as '_'.
  std::string package = name;
  for (char& c : package) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (const std::string why = reserved_because(kind, name, package); !why.empty()) {
    std::cerr << "sluice: new: '" << name << "' would make a project that does not build: " << why
              << "; choose another name (e.g. my-" << name << ")\n";
    return kExitUsage;
  }
  const std::filesystem::path dir = name;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(dir, ec))) {
    std::cerr << "sluice: new: '" << name << "' already exists; nothing was written (choose another name, or "
              << "move it away)\n";
    return kExitUsage;
  }
  const auto fill = [&](std::string text) {
    text = replace_all(std::move(text), "@NAME@", name);
    text = replace_all(std::move(text), "@PACKAGE@", package);
    text = replace_all(std::move(text), "@CMAKE_PREFIX_OPTION@", cmake_prefix_option());
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
    std::cout << "  cd " << name << " && cmake -S . -B build" << cmake_prefix_option()
              << " && cmake --build build && ctest --test-dir build\n"
              << "  sluice run " << name << ".yaml\n";
  } else if (kind == "java") {
    std::cout << maven_setup_hint() << "  cd " << name << " && mvn package\n"
              << "  sluice run " << name << ".yaml\n";
  } else {
    std::cout << maven_setup_hint() << "  cd " << name << " && (cd cpp && cmake -S . -B build" << cmake_prefix_option()
              << " && cmake --build build) && (cd java && mvn package)\n"
              << "  sluice run " << name << ".yaml\n";
  }
  return kExitOk;
}

}  // namespace sluice::console
