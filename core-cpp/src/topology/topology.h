// The validated, in-memory form of a topology file, and the parser that produces it.
//
// parse_topology_file() reads YAML with yaml-cpp, checks everything that can be checked
// without loading code (keys, types, sizes, policies, names, endpoints, hosts) and reports
// every mistake at once as "file:line:column: what is wrong, what would be right".
// Loading libraries and classes is checked later, by the runtime (runtime/loader.h), which
// reports against the marks kept here.
#ifndef SLUICE_TOPOLOGY_TOPOLOGY_H_
#define SLUICE_TOPOLOGY_TOPOLOGY_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/error.h"

namespace sluice::topo {

// A position in the topology file, 1-based. line == 0 means "no position" (e.g. the
// file itself, or a value that came from the command line).
struct Mark {
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  std::string file;
  Mark mark;
  std::string message;
  // "file:line:column: message" (or "file: message" without a position).
  std::string str() const;
};

// Thrown with every problem found. what() is all diagnostics, one per line.
class TopologyError : public Error {
 public:
  explicit TopologyError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

enum class Lang { kCpp, kJava };
enum class Policy { kRoundRobin, kDemandDriven, kByKey, kBroadcast };

const char* to_string(Lang lang);
const char* to_string(Policy policy);

// Limits that make a value "absurd" rather than merely large.
inline constexpr std::size_t kMaxBufferSize = std::size_t{1} << 30;  // 1 GiB
inline constexpr std::size_t kMaxDepth = 1 << 16;
inline constexpr int kMaxCopies = 1024;
inline constexpr std::size_t kDefaultBufferSize = 64 * 1024;
inline constexpr std::size_t kDefaultDepth = 16;

// The depth of a stream that neither sets one nor gets one from `defaults:`: the largest power
// of two of buffers that fits in 1 MiB, at least 16 and at most 1024 (16 at the default
// 64 KiB). A power of two because queues and credit windows round up to one: 514 would cost
// 1024. A small buffer's cost is the hand-off itself, and a shallow queue makes every few
// buffers a switch between producer and consumer: at 100 B a pair ran at 6-12 M buffers/s with
// depth 16 against 25-29 M with 256-1024, and a 3-stage chain at 2.2 M against 18 M
// (bench/RESULTS.md).
inline constexpr std::size_t kDefaultQueueBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxDefaultDepth = 1024;
inline std::size_t default_depth(std::size_t buffer_size) {
  const std::size_t fits = std::bit_floor(kDefaultQueueBytes / (buffer_size == 0 ? 1 : buffer_size));
  return fits < kDefaultDepth ? kDefaultDepth : fits > kMaxDefaultDepth ? kMaxDefaultDepth : fits;
}

struct Defaults {
  std::size_t buffer_size = kDefaultBufferSize;
  std::size_t depth = 0;  // 0: not set; each stream then takes default_depth(its buffer_size)
  bool encrypt = false;
};

struct HostSpec {
  std::string name;
  std::string address;  // "host:port" as written
  Mark mark;
};

struct FilterSpec {
  std::string name;
  Lang lang = Lang::kCpp;
  std::string class_name;
  std::string library;                 // absolute path, or "" for a class linked into the program
  std::vector<std::string> classpath;  // absolute paths (lang: java)
  std::map<std::string, std::string> args;
  int copies = 1;                                  // total over all hosts
  std::vector<std::pair<std::string, int>> place;  // host name -> copies, in file order
  Mark mark;          // the filter's key
  Mark class_mark;    // `class:` value
  Mark library_mark;  // `library:` value (or the filter's mark)
  Mark classpath_mark;
};

// `to: client`: the stream's consumer is the program that submitted the unit of work
// (sluice/application.h), not a filter. The name is reserved: no filter or host has it.
// Internally the client is a consumer "filter" of one copy with no port.
inline constexpr std::string_view kClient = "client";

struct PortRef {
  std::string filter;
  std::string port;  // "" for the client
  Mark mark;
  std::string str() const { return port.empty() ? filter : filter + "." + port; }
};

struct StreamSpec {
  PortRef from;
  PortRef to;
  Policy policy = Policy::kRoundRobin;
  std::size_t buffer_size = kDefaultBufferSize;
  std::size_t depth = kDefaultDepth;
  // Across hosts, this stream's buffers travel over TLS (in one process nothing crosses a
  // network, so it changes nothing there).
  bool encrypt = false;
  Mark mark;  // the stream's entry in `streams:`

  bool to_client() const { return to.filter == kClient; }
  // "a.out -> b.in": how messages, metrics and reports name the stream.
  std::string label() const { return from.str() + " -> " + to.str(); }
};

struct JvmSpec {
  std::size_t heap = 0;              // -Xmx, 0 = JVM default
  std::vector<std::string> options;  // extra flags, passed as written
  Mark mark{};                       // the jvm: key (line 0: the topology has none)
};

struct Topology {
  std::string name;
  std::string file;  // as given to the parser
  std::string dir;   // absolute directory relative paths were resolved against
  std::string text;  // the YAML as parsed (what the host daemons are sent)
  Defaults defaults;
  std::vector<HostSpec> hosts;  // empty: embedded (everything in one process)
  std::vector<FilterSpec> filters;
  std::vector<StreamSpec> streams;
  std::vector<std::string> work;  // UOW payloads; never empty after parsing ({""} by default)
  bool work_given = false;        // whether the file had work: (not the default)
  JvmSpec jvm;

  const FilterSpec* find_filter(std::string_view name) const;
  // Copies of a filter (1 for the client). REQUIRES: a filter of this topology, or kClient.
  int copies_of(std::string_view name) const;
  // The stream `to: client`, or null when there is none (there is at most one).
  const StreamSpec* client_stream() const;
  bool has_java() const;
};

// Parses and validates. Throws TopologyError listing every problem found.
Topology parse_topology_file(const std::string& path);
// Same, from text; `file` names it in diagnostics, relative paths resolve against base_dir.
Topology parse_topology_text(std::string_view text, const std::string& file,
                             const std::string& base_dir);

// What is wrong with `name` as a host's name, in hosts: or in the console's --hosts, or ""
// when nothing is: one rule for both.
std::string host_name_problem(const std::string& name);

}  // namespace sluice::topo

#endif  // SLUICE_TOPOLOGY_TOPOLOGY_H_
