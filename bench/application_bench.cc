// application_bench: what a unit of work costs when submitted to a deployed application
// (sluice/application.h), for bench/application.py.
//
//   application_bench --topology FILE --units N [--hosts a=ADDR:PORT,... --token-file F]
//
// Deploys FILE once (embedded, or on the host daemons given), runs one warm-up unit, then N
// units one after the other, each read to the end by this process (the `to: client` stream),
// and prints one line:
//   units N seconds S per_unit_us U buffers B bytes Y MBps M
// per_unit_us: wall time per submitted unit, round trip (submit -> results read -> report).
// MBps: result bytes read per second over the N units.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include <sluice/application.h>

#include <CLI/CLI.hpp>

#include "text/cli_options.h"

int main(int argc, char** argv) {
  std::string topology;
  sluice::ApplicationOptions options;
  long units = 100;
  CLI::App app_options{"application_bench: what a unit of work costs when submitted to a deployed application"};
  app_options.add_option("--topology", topology, "the application's topology")->type_name("FILE")->required();
  sluice::text::add_integer_option(app_options, "--units", &units, "units of work after the warm-up", 1L,
                                   100000000L);
  app_options.add_option("--hosts", options.hosts, "host daemons NAME=ADDR:PORT,... (default: embedded)")
      ->type_name("LIST");
  app_options.add_option("--token-file", options.token_file, "the host daemons' token")->type_name("FILE");
  try {
    app_options.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app_options.exit(e) == 0 ? 0 : 2;
  }
  try {
    sluice::Application app = sluice::Application::open(topology, options);
    app.start();
    auto run_unit = [&](std::uint64_t& buffers, std::uint64_t& bytes) {
      sluice::Unit unit = app.submit("bench");
      while (auto b = unit.results().read()) {
        ++buffers;
        bytes += b->size();
      }
      const sluice::UnitReport report = unit.wait();
      if (!report.finished) throw sluice::Error(report.str());
    };
    std::uint64_t buffers = 0, bytes = 0;
    run_unit(buffers, bytes);  // warm-up
    buffers = bytes = 0;
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < units; ++i) run_unit(buffers, bytes);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    app.stop();
    std::printf("units %ld seconds %.6f per_unit_us %.1f buffers %llu bytes %llu MBps %.1f\n", units, seconds,
                seconds / static_cast<double>(units) * 1e6, static_cast<unsigned long long>(buffers),
                static_cast<unsigned long long>(bytes), static_cast<double>(bytes) / seconds / 1e6);
  } catch (const std::exception& e) {
    std::cerr << "application_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
