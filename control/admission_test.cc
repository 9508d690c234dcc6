// Admission: the caps on connections that have not authenticated yet.
#include "control/admission.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice::control {
namespace {

TEST(Admission, CapsPerAddressAndInTotal) {
  Admission a(5, 2);
  std::string why;
  std::vector<Admission::Ticket> held;
  held.push_back(*a.admit("10.0.0.1", &why));
  held.push_back(*a.admit("10.0.0.1", &why));
  EXPECT_FALSE(a.admit("10.0.0.1", &why));
  EXPECT_EQ(why, "2 connections from 10.0.0.1 are authenticating already (the cap per address)");
  held.push_back(*a.admit("10.0.0.2", &why));
  held.push_back(*a.admit("10.0.0.3", &why));
  held.push_back(*a.admit("10.0.0.4", &why));
  EXPECT_FALSE(a.admit("10.0.0.5", &why));
  EXPECT_EQ(why, "5 connections are authenticating already (the cap)");
  EXPECT_EQ(a.pending(), 5u);
  EXPECT_EQ(a.refused(), 2u);
}

TEST(Admission, ATicketCountsUntilReleasedOnce) {
  Admission a(2, 1);
  std::string why;
  {
    auto t = a.admit("10.0.0.1", &why);
    ASSERT_TRUE(t);
    EXPECT_EQ(a.pending_from("10.0.0.1"), 1u);
    t->release();
    t->release();  // idempotent
    EXPECT_EQ(a.pending(), 0u);
    auto again = a.admit("10.0.0.1", &why);
    ASSERT_TRUE(again);
    Admission::Ticket moved = std::move(*again);
    EXPECT_EQ(a.pending(), 1u);
  }  // destroyed: released
  EXPECT_EQ(a.pending(), 0u);
  EXPECT_EQ(a.pending_from("10.0.0.1"), 0u);
  EXPECT_TRUE(a.admit("10.0.0.1", &why));
}

}  // namespace
}  // namespace sluice::control
