// The project templates of `sluice new` (console/templates/, embedded at build time by
// templates/embed.cmake). Immutable after first use; thread-safe.
#ifndef SLUICE_CONSOLE_TEMPLATES_H_
#define SLUICE_CONSOLE_TEMPLATES_H_

#include <string>
#include <vector>

namespace sluice::console {

struct TemplateFile {
  std::string path;      // "cpp/src/filters.cc": the kind, then the path in the new project
  std::string contents;  // with @NAME@, @PACKAGE@ and @SLUICE_VERSION@ to fill in
};

const std::vector<TemplateFile>& template_files();

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_TEMPLATES_H_
