// The bar, shared by the embedded and the remote Application tests: 1,000 units
// from 4 client threads on one deployment of the test topology (src x2 -> stage -> client),
// every result set checked by ResultsCheck, and the source objects created once (each
// counts the units it ran, so it must have run exactly `index` of them). For gtest only.
#ifndef SLUICE_APPLICATION_THOUSAND_UNITS_H_
#define SLUICE_APPLICATION_THOUSAND_UNITS_H_

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "application/results_check.h"
#include "sluice/application.h"

namespace sluice {

// `big_every`: every so many units per thread carry 4000-byte results instead of 64 (0: never).
inline void submit_thousand_units(Application& app, int big_every = 0) {
  std::mutex mu;
  std::map<int, std::set<std::uint64_t>> object_ids;  // source copy -> object ids seen
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 250; ++i) {
        const std::uint64_t count = 1 + static_cast<std::uint64_t>((t * 250 + i) % 13);
        const std::uint64_t size = big_every != 0 && i % big_every == 0 ? 4000 : 64;
        Unit unit = app.submit("count=" + std::to_string(count) + " size=" + std::to_string(size));
        ResultsCheck check(unit.index(), 2, count, size);
        while (auto b = unit.results().read()) check.add(*b);
        const UnitReport report = unit.wait();
        if (!report.finished || !check.complete()) {
          ++failures;
          ADD_FAILURE() << report.str() << " " << check.problem();
          continue;
        }
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& [copy, id] : check.object_ids()) object_ids[copy].insert(id);
        for (const auto& [copy, seen] : check.units_seen()) EXPECT_EQ(seen, unit.index());
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(object_ids.size(), 2u);
  for (const auto& [copy, ids] : object_ids) EXPECT_EQ(ids.size(), 1u) << "source copy " << copy << " was created again";
}

}  // namespace sluice

#endif  // SLUICE_APPLICATION_THOUSAND_UNITS_H_
