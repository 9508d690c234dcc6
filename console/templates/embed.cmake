# Writes OUT, a C++ source holding every file under DIR (but this script) as
# {"kind/relative/path", R"(contents)"}: the project templates of `sluice new`, embedded in the
# console so that they travel with the binary. Run by console/CMakeLists.txt at build time.
file(GLOB_RECURSE files RELATIVE ${DIR} ${DIR}/*)
list(REMOVE_ITEM files embed.cmake)
list(SORT files)
set(body "// Generated from console/templates by embed.cmake: do not edit.\n#include \"console/templates.h\"\n\nnamespace sluice::console {\n\nconst std::vector<TemplateFile>& template_files() {\n  static const std::vector<TemplateFile> files = {\n")
foreach(f ${files})
  file(READ ${DIR}/${f} content)
  string(APPEND body "    {\"${f}\", R\"sluice_template(${content})sluice_template\"},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n\n}  // namespace sluice::console\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
